#!/usr/bin/env bash
# Which of the starter's classes one Spring MVC POST on Redis passes through, in order: starts the
# demo (demo-app, POST /api/payments, @Idempotent, the Redis store) with JDWP, warms it up with
# WARMUP payments on keys of their own (each replayed twice), then traces, with
# benchmarks/CallPathTracer.java (JDI, run by the JDK's single-file launcher), the method entries
# and exits of every class under io.github.idempotent. while no request runs (idle: the background
# work, such as the local cache's tracking ticks, that the later phases mark), then during one first
# call with a fresh key and payload, its replay (same key and payload) and a second replay, each
# sent by curl; each phase lasts until SETTLE_MS after the response. Prints, per
# phase and thread: the distinct classes in the order of their first entry (nested and lambda
# classes counted under their top-level class, and apart), entries per class, the packages in
# order and their changes, the calls from one package into another and any call back into a
# package already on the stack. The demo's own classes (io.github.idempotent.demo.) are listed
# apart, and so are the starter's classes that the demo's code calls (its StateMachine, the
# @Idempotent shipping listener on its @Async thread).
#
# Usage: benchmarks/trace-call-path.sh   (about 2 minutes per value of LOCAL_CACHE, after the build)
# Settings (environment): LOCAL_CACHE="off on" (idempotent.local-cache.enabled of each run: off is the
#   plain path to Redis; on, the default with Redis, serves the second replay from the local cache)
#   WARMUP=20 SETTLE_MS=1500 (how long after the response the events stay on, for work on other
#   threads) REDIS_HOST=127.0.0.1 REDIS_PORT=6379 (a running Redis; the demo's embedded fallback is
#   off) SKIP_BUILD=1 (reuse demo-app/target/demo-app-*.jar) APP_ARGS="" (more demo arguments)
# Output: the reports on the console and, with every entry per thread (events.tsv), in
# benchmarks/target/call-path-<time>/cache-<off|on>/.
set -euo pipefail

log() { echo "[trace-call-path] $*" >&2; }

LOCAL_CACHE=${LOCAL_CACHE:-off on}
WARMUP=${WARMUP:-20}
SETTLE_MS=${SETTLE_MS:-1500}
REDIS_HOST=${REDIS_HOST:-127.0.0.1}
REDIS_PORT=${REDIS_PORT:-6379}
APP_ARGS=${APP_ARGS:-}

for cache in $LOCAL_CACHE; do
	if [[ "$cache" != "off" && "$cache" != "on" ]]; then
		log "LOCAL_CACHE takes off and on, not '$cache'"
		exit 2
	fi
done

here="$(cd "$(dirname "$0")" && pwd)"
root="$here/.."
out="$here/target/call-path-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"

command -v curl >/dev/null || { log "curl is needed"; exit 1; }
if ! (echo >"/dev/tcp/$REDIS_HOST/$REDIS_PORT") 2>/dev/null; then
	log "no Redis answers at $REDIS_HOST:$REDIS_PORT"
	exit 1
fi

if [[ "${SKIP_BUILD:-}" != "1" ]]; then
	log "building the demo"
	(cd "$root" && ./mvnw -B -q -pl demo-app -am package -Dmaven.test.skip=true)
fi
jar=$(ls "$root"/demo-app/target/demo-app-*.jar | grep -v -- '-plain\.jar$' | head -1)

app_pid=""
cleanup() {
	if [[ -n "$app_pid" ]]; then
		kill "$app_pid" 2>/dev/null || true
		wait "$app_pid" 2>/dev/null || true
	fi
}
trap cleanup EXIT

# pay KEY ORDER: POSTs a payment of ORDER with KEY, prints the status
pay() {
	curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$app_port/api/payments" \
		-H "Idempotency-Key: $1" -H 'Content-Type: application/json' -d "{\"orderNo\": \"$2\"}"
}
# order ORDER: creates ORDER (100 minor units, account 1), prints the status
order() {
	curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$app_port/api/orders" \
		-H 'Content-Type: application/json' -d "{\"orderNo\": \"$1\", \"accountId\": 1, \"amount\": 100}"
}
expect() {
	if [[ "$2" != "$1" ]]; then
		log "expected $1, got $2 ($3); the demo's log: $run/app.log"
		exit 1
	fi
}

for cache in $LOCAL_CACHE; do
	run="$out/cache-$cache"
	mkdir -p "$run"
	enabled=$([[ "$cache" == "on" ]] && echo true || echo false)
	# Ports of the JVM's choosing (0), read from its log; no Actuator over HTTP.
	# shellcheck disable=SC2086
	java -agentlib:jdwp=transport=dt_socket,server=y,suspend=n,address=127.0.0.1:0 -jar "$jar" \
		--server.port=0 --management.server.port=-1 \
		--spring.data.redis.host="$REDIS_HOST" --spring.data.redis.port="$REDIS_PORT" \
		--demo.redis.embedded-fallback=false --idempotent.local-cache.enabled="$enabled" $APP_ARGS \
		>"$run/app.log" 2>&1 &
	app_pid=$!
	for _ in $(seq 240); do
		grep -q 'Started DemoApplication' "$run/app.log" && break
		kill -0 "$app_pid" 2>/dev/null || { cat "$run/app.log" >&2; exit 1; }
		sleep 0.5
	done
	jdwp_port=$(sed -n 's/^Listening for transport dt_socket at address: \([0-9]*\).*/\1/p' "$run/app.log" | head -1)
	# The only Tomcat: the Actuator's port of its own is off (-1).
	app_port=$(sed -n 's/.*Tomcat started on port \([0-9]*\).*/\1/p' "$run/app.log" | head -1)
	if [[ -z "$jdwp_port" || -z "$app_port" ]]; then
		log "no JDWP or HTTP port in $run/app.log"
		exit 1
	fi
	log "local cache $cache: demo on 127.0.0.1:$app_port, JDWP on $jdwp_port; $WARMUP warm-up payments"
	run_id="$(date +%s)-$$-$cache"
	for i in $(seq "$WARMUP"); do
		expect 201 "$(order "W-$run_id-$i")" "warm-up order $i"
		expect 201 "$(pay "warm-$run_id-$i" "W-$run_id-$i")" "warm-up payment $i"
		expect 201 "$(pay "warm-$run_id-$i" "W-$run_id-$i")" "warm-up replay $i"
		expect 201 "$(pay "warm-$run_id-$i" "W-$run_id-$i")" "warm-up second replay $i"
	done
	# The traced order is created before tracing: only the payment is traced.
	expect 201 "$(order "T-$run_id")" "the traced payment's order"
	payment="curl -s -i -X POST http://127.0.0.1:$app_port/api/payments -H 'Idempotency-Key: trace-$run_id'"
	payment+=" -H 'Content-Type: application/json' -d '{\"orderNo\": \"T-$run_id\"}'"
	java --add-modules jdk.jdi "$here/CallPathTracer.java" --port "$jdwp_port" --out "$run" --settle-ms "$SETTLE_MS" \
		idle=true first="$payment" replay="$payment" replay2="$payment" |
		sed "s/^## \(.*\)/## \1 (local cache $cache)/" | tee "$run/report.md"
	kill "$app_pid"
	wait "$app_pid" 2>/dev/null || true
	app_pid=""
done
log "reports and every entry (*.events.tsv) in $out"
