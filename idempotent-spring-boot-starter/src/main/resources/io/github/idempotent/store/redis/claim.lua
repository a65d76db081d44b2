-- Claims a key, in one step: the idempotency store's claim when the native
-- SET key placeholder NX PX expiry GET cannot decide (a tombstone, a placeholder
-- of another owner, whose lease this script checks), and every claim on a
-- server that refuses NX with GET (before Redis 7.0).
--
-- KEYS[1]: the record's key.
-- ARGV[1]: the placeholder of a first attempt; ARGV[2]: its key's expiry in ms
-- (the lease plus ARGV[3]); ARGV[3]: the ms a placeholder is kept after its lease
-- (RecordLayout.REMEMBERED).
-- Answers {1} for a first attempt, {1, attempt, claim time of the last} after a
-- takeover, {2, record, lease left in ms}, {3, value} for Java to judge, {6, type}
-- for a value of another Redis type.
--
-- A placeholder ends with 7 bytes after its fingerprint: its claim time (3), its
-- attempt (1) and the claim time of the attempt it took over (3, zero if none or
-- unknown); its key expires ARGV[3] ms (RecordLayout.REMEMBERED) after its lease,
-- so that the lease left is PTTL - ARGV[3]. A value that starts with P or p and
-- ends otherwise is no placeholder: Java calls it damaged.
--
-- A placeholder whose lease ran out is taken over: its owner died or hangs, and
-- nobody else holds the key. The new placeholder is attempt n + 1, and the claim
-- answers its number and when attempt n was claimed, so the method can look for
-- what that attempt did. Its owner is fenced from then on by the new token, as
-- before; an owner past its lease that nobody took over still renews and
-- completes (its token still holds).
--
-- A tombstone ('D', 'tomb', the claim time and the attempt of a placeholder an
-- operator deleted or a takeover released: 9 bytes) is a call that never finished
-- too: the claim takes it over as the next attempt, GET and SET in one script, so
-- of two claimers that both saw it only the first wins, the second finds its
-- placeholder.
--
-- A claim sent again for the same token finds its own placeholder and wins, with
-- the attempt the first send wrote: Lettuce sends a command again on the new
-- connection when the old one broke before the reply (at-least-once), and the
-- first send may have run.
local v = redis.pcall('GET', KEYS[1])
if not v then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return {1}
end
if type(v) == 'table' then
  return {6, redis.call('TYPE', KEYS[1])['ok']}
end
-- ARGV[1] with its attempt and the last attempt's claim time (its last 4
-- bytes) written anew: the count goes on from takeover to takeover.
local function takeOver(n, started)
  n = math.min(n, 255)
  redis.call('SET', KEYS[1], string.sub(ARGV[1], 1, -5) .. string.char(n) .. started, 'PX', ARGV[2])
  return {1, n, started}
end
local s = string.byte(v)
if s == 68 and #v == 9 and string.sub(v, 2, 5) == 'tomb' then
  return takeOver(string.byte(v, 9) + 1, string.sub(v, 6, 8))
end
if s == 80 or s == 112 then
  -- Bytes after the fingerprint (32 bytes for 'P', a length byte and text
  -- for 'p'); -1 for a value too short to have one.
  local rest = -1
  if #v >= 10 then
    rest = #v - 9 - ((s == 80) and 32 or (1 + string.byte(v, 10)))
  end
  if rest ~= 7 then
    return {3, v}
  end
  if string.sub(v, 2, 9) == string.sub(ARGV[1], 2, 9) then
    return {1, string.byte(v, -4), string.sub(v, -3)}
  end
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl >= 0 and ttl - tonumber(ARGV[3]) <= 0 then
    return takeOver(string.byte(v, -4) + 1, string.sub(v, -7, -5))
  end
  return {2, v, math.max(0, ttl - tonumber(ARGV[3]))}
end
return {3, v}
