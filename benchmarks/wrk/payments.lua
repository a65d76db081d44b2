-- wrk script of benchmarks/run-http.sh: POST a small JSON payment; print one RESULT line and one
-- PERCENTILES line (percentile=microseconds, min and max as 0 and 100), the latency distribution
-- that benchmarks/tools/plot-svg.py draws.
-- Usage: wrk ... -s payments.lua http://127.0.0.1:PORT/<bare|first|replay>/payments -- <fresh|fixed>
-- fresh: a new Idempotency-Key per request (the first-call path); fixed: one key for the whole run
-- (the replay path). Every mode builds each request the same way, so the load generator does the
-- same work whichever endpoint it drives.

local threads = {}

function setup(thread)
  thread:set("id", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  mode = args[1] or "fresh"
  math.randomseed(os.time() * 1000 + id)
  prefix = string.format("%x-%d-%x", os.time(), id, math.random(0, 2147483646))
  counter = 0
  wrk.method = "POST"
  wrk.body = '{"orderNo":"A-1042","customerId":"c-42","amountCents":1999,"currency":"EUR"}'
  wrk.headers["Content-Type"] = "application/json"
  fixedKey = "replay-" .. (args[2] or "key")
end

function request()
  if mode == "fixed" then
    wrk.headers["Idempotency-Key"] = fixedKey
  else
    counter = counter + 1
    wrk.headers["Idempotency-Key"] = prefix .. "-" .. counter
  end
  return wrk.format()
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("RESULT requests=%d duration_us=%d p50_us=%d p99_us=%d errors=%d non2xx=%d\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write + e.timeout, e.status))
  local parts = { string.format("0=%d", latency.min) }
  for _, p in ipairs({ 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99 }) do
    table.insert(parts, string.format("%s=%d", p, latency:percentile(p)))
  end
  table.insert(parts, string.format("100=%d", latency.max))
  io.write("PERCENTILES " .. table.concat(parts, " ") .. "\n")
end
