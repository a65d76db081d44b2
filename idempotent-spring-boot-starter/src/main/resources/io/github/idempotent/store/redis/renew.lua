-- Renews the lease of a call in progress.
--
-- KEYS[1]: the record's key.
-- ARGV[1]: the owner's token (8 bytes); ARGV[2]: the key's expiry in ms (the
-- lease, then the time a placeholder is kept after it); ARGV[3]: the in-progress
-- record, written only if the record has vanished.
-- Answers 1 renewed, 2 written anew, 3 completed by this owner, 0 fenced. Fenced
-- as complete.lua says.
--
-- A record completed under the renewing token (3) is still this owner's: a
-- completion whose reply was lost landed, and the renewal between its attempts
-- must not report the key as taken from it. Nothing is written then.
local v = redis.pcall('GET', KEYS[1])
if not v then
  redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[2])
  return 2
end
if type(v) == 'table' then
  return 0
end
local s = string.byte(v)
if (s == 80 or s == 112) and string.sub(v, 2, 9) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if (s == 67 or s == 99) and string.sub(v, 2, 9) == ARGV[1] then
  return 3
end
return 0
