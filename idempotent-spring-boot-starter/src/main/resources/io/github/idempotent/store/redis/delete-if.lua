-- For operators: deletes a record by its state.
--
-- KEYS[1]: the record's key.
-- ARGV[1]: 'P' deletes a record in progress and keeps a completed one (3); 'C'
-- deletes a completed one, and one in progress whose lease ran out, and keeps
-- one in progress under its lease (2), which is held. ARGV[2]: the ms a
-- placeholder is kept after its lease (as for claim.lua: 7 bytes after the
-- fingerprint).
-- Answers 1 deleted, 0 none, 2 held, 3 completed.
--
-- A placeholder is replaced by a tombstone, not deleted: its owner, if alive,
-- renews within a third of the lease, and would otherwise write the vanished
-- record anew (the owner of a record that expired does so), undoing the deletion.
-- The tombstone makes that renewal, and the owner's completion, fail. It keeps
-- the placeholder's attempt and claim time ('D', 'tomb', 3 bytes, 1 byte), so
-- that the next claim knows it takes over an attempt that never finished, and
-- lives as long as the placeholder would have (the lease left, then ARGV[2]). A
-- tombstone is no record: left alone (0). A value that starts with 'P' or 'p'
-- but is too short or too long for a placeholder is deleted either way: it holds
-- no call, and a tombstone of it would say nothing true. Any other value (a
-- completed record, damage, a value of another type) is deleted with 'C' and
-- kept with 'P'.
local v = redis.pcall('GET', KEYS[1])
if not v then
  return 0
end
local s = (type(v) == 'table') and 0 or string.byte(v)
if s == 68 and #v == 9 and string.sub(v, 2, 5) == 'tomb' then
  return 0
end
local rest = -1
if (s == 80 or s == 112) and #v >= 10 then
  rest = #v - 9 - ((s == 80) and 32 or (1 + string.byte(v, 10)))
end
if rest ~= 7 then
  if ARGV[1] == 'C' or s == 80 or s == 112 then
    redis.call('DEL', KEYS[1])
    return 1
  end
  return 3
end
local ttl = redis.call('PTTL', KEYS[1])
if ARGV[1] == 'C' and not (ttl >= 0 and ttl <= tonumber(ARGV[2])) then
  return 2
end
if ttl <= 0 then
  redis.call('DEL', KEYS[1])
else
  redis.call('SET', KEYS[1], 'Dtomb' .. string.sub(v, -7, -5) .. string.sub(v, -4, -4), 'PX', ttl)
end
return 1
