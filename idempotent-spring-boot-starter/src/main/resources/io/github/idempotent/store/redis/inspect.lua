-- Read-only, for operators: the record whole, or the type of a value that is
-- not a string, with its PTTL (Java tells the lease left of a placeholder from
-- it).
--
-- KEYS[1]: the record's key.
-- Answers {0} for none, {1, PTTL, value} for a string, {3, PTTL, type} for a
-- value of another Redis type.
local v = redis.pcall('GET', KEYS[1])
if not v then
  return {0}
end
if type(v) == 'table' then
  return {3, redis.call('PTTL', KEYS[1]), redis.call('TYPE', KEYS[1])['ok']}
end
return {1, redis.call('PTTL', KEYS[1]), v}
