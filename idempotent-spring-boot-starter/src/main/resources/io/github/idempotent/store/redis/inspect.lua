-- Read-only, for operators: the record whole, or a hash of the previous layout's
-- fields, or the type of a value that is neither, with its PTTL (Java tells the
-- lease left of a placeholder from it).
--
-- KEYS[1]: the record's key.
-- Answers {0} for none, {1, PTTL, value} for a string, {2, PTTL, s, f, r} for a
-- hash of the previous layout, {3, PTTL, type} for a value of another Redis type.
local v = redis.pcall('GET', KEYS[1])
if not v then
  return {0}
end
if type(v) == 'table' then
  local t = redis.call('TYPE', KEYS[1])['ok']
  if t ~= 'hash' then
    return {3, redis.call('PTTL', KEYS[1]), t}
  end
  local r = redis.call('HMGET', KEYS[1], 's', 'f', 'r')
  return {2, redis.call('PTTL', KEYS[1]), r[1] or '', r[2] or '', r[3]}
end
return {1, redis.call('PTTL', KEYS[1]), v}
