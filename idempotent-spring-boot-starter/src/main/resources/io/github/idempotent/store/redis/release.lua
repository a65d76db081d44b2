-- Releases a call that failed: frees the key its owner holds.
--
-- KEYS[1]: the record's key.
-- ARGV[1]: the owner's token (8 bytes).
-- Answers 1 released, 2 none there, 0 fenced (another token, a completed
-- record, a tombstone, a value of another type). Fenced as complete.lua says.
--
-- A released first attempt is deleted: the key is free, and the next claim is
-- attempt 1 again. A released takeover (a placeholder whose attempt is above 1) is replaced by the tombstone of its own attempt and claim
-- time instead, as a forced delete writes it, for as long as the placeholder
-- would have lived (PTTL: the lease left, then the time it is kept after it):
-- deleting it would erase what only it still remembers, that an earlier attempt
-- never finished, and the next claim, told it is attempt 1, would skip its
-- lookup and repeat that attempt's side effects. The tombstone fences the owner
-- as a forced delete's does.
local v = redis.pcall('GET', KEYS[1])
if not v then
  return 2
end
if type(v) == 'table' then
  return 0
end
local s = string.byte(v)
if (s == 80 or s == 112) and string.sub(v, 2, 9) == ARGV[1] then
  local rest = -1
  if #v >= 10 then
    rest = #v - 9 - ((s == 80) and 32 or (1 + string.byte(v, 10)))
  end
  if rest == 7 and string.byte(v, -4) > 1 then
    local ttl = redis.call('PTTL', KEYS[1])
    if ttl > 0 then
      redis.call('SET', KEYS[1], 'Dtomb' .. string.sub(v, -7, -5) .. string.sub(v, -4, -4), 'PX', ttl)
      return 1
    end
  end
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
