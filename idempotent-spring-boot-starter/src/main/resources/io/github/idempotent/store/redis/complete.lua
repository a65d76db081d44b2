-- Completes a call: writes the completed record over its owner's placeholder.
--
-- KEYS[1]: the record's key.
-- ARGV[1]: the owner's token (8 bytes); ARGV[2]: the completed record; ARGV[3]:
-- the TTL in ms.
-- Answers 1 completed, 2 written anew (the record had vanished), 0 fenced.
--
-- Fencing: only the holder of the token may complete, release or renew. A
-- record that expired with nobody claiming it since is written anew by its
-- owner (2): only a take-over, which writes another token, makes the owner lose
-- (0). A completed record keeps the token of the owner that completed it, so
-- that the same completion sent again (after a broken connection, see
-- claim.lua) finds the very value it would write and succeeds instead of
-- reporting a lost lease; nothing else can change it. A tombstone (an
-- operator's forced delete) is no vanished record: its owner is fenced (0) like
-- any other (no token equals its bytes 2-9, 'tomb' and an attempt), so the key
-- stays free for a retry and never gets the deleted call's result. release.lua and renew.lua fence it the same way:
-- neither writes over a value. A placeholder past its lease is still its
-- owner's until someone takes it over: complete, release and renew do not look
-- at the lease.
local v = redis.pcall('GET', KEYS[1])
if not v then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return 2
end
if type(v) == 'table' or string.sub(v, 2, 9) ~= ARGV[1] then
  return 0
end
local s = string.byte(v)
if s == 80 or s == 112 then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return 1
end
if v == ARGV[2] then
  return 1
end
return 0
