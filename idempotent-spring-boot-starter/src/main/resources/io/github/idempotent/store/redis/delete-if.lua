-- For operators: deletes a record by its state.
--
-- KEYS[1]: the record's key.
-- ARGV[1]: 'P' deletes a record in progress and keeps a completed one (3); 'C'
-- deletes a completed one, and one in progress whose lease ran out, and keeps
-- one in progress under its lease (2), which is held. ARGV[2]: the ms a
-- placeholder of this layout is kept after its lease (as for claim.lua: 7 bytes
-- after the fingerprint; one of the previous layout expires with its lease, so
-- while it is there it is held).
-- Answers 1 deleted, 0 none, 2 held, 3 completed.
--
-- A placeholder is replaced by a tombstone, not deleted: its owner, if alive,
-- renews within a third of the lease, and would otherwise write the vanished
-- record anew (the owner of a record that expired does so), undoing the deletion.
-- The tombstone makes that renewal, and the owner's completion, fail. It keeps
-- the placeholder's attempt and claim time ('D', 'tomb', 3 bytes, 1 byte: 9
-- bytes, as the previous version's tombstone, which that version takes as free),
-- so that the next claim knows it takes over an attempt that never finished, and
-- lives as long as the placeholder would have (the lease left, then ARGV[2]). A
-- tombstone is no record: left alone (0). A record in progress of the previous
-- layouts, a hash, is deleted: its owner runs a version that knows no tombstone.
-- A value too short to be a placeholder is deleted: a tombstone of it would say
-- nothing true.
local v = redis.pcall('GET', KEYS[1])
if not v then
  return 0
end
if type(v) == 'table' then
  local inProgress = (redis.pcall('HGET', KEYS[1], 's') == 'P')
  if inProgress == (ARGV[1] == 'P') then
    redis.call('DEL', KEYS[1])
    return 1
  end
  if inProgress then
    return 2
  end
  return 3
end
local s = string.byte(v)
if s == 68 and #v == 9 then
  return 0
end
if s ~= 80 and s ~= 112 then
  if ARGV[1] == 'C' then
    redis.call('DEL', KEYS[1])
    return 1
  end
  return 3
end
local rest = -1
if #v >= 10 then
  rest = #v - 9 - ((s == 80) and 32 or (1 + string.byte(v, 10)))
end
local ttl = redis.call('PTTL', KEYS[1])
local leaseOver = rest == 7 and ttl >= 0 and ttl <= tonumber(ARGV[2])
if ARGV[1] == 'C' and not leaseOver then
  return 2
end
local started, n, px = string.char(0, 0, 0), 1, ttl + tonumber(ARGV[2])
if rest == 7 then
  started, n, px = string.sub(v, -7, -5), string.byte(v, -4), ttl
elseif rest == 3 then
  started = string.sub(v, -3)
end
if rest < 0 or ttl < 0 or px <= 0 then
  redis.call('DEL', KEYS[1])
else
  redis.call('SET', KEYS[1], 'Dtomb' .. started .. string.char(n), 'PX', px)
end
return 1
