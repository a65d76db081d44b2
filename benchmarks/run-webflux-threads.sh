#!/usr/bin/env bash
# Which threads guarded WebFlux bodies share: eight concurrent requests to a Mono endpoint whose body
# holds its thread for 250 ms, without and with @Idempotent (a fresh key each), against a private
# redis-server. Without the annotation the bodies run on Reactor Netty's event loops (four on a
# two-core machine: two waves, about 0.5 s); with it they must run there too, not on the store
# client's one I/O thread (eight waves, about 2 s). Prints the wall time of each round and the
# medians, and their ratio.
# Usage: benchmarks/run-webflux-threads.sh   (ROUNDS=7 CONCURRENCY=8 SKIP_BUILD=1)
set -euo pipefail

log() { echo "[run-webflux-threads] $*" >&2; }
here=$(cd "$(dirname "$0")" && pwd)
ROUNDS=${ROUNDS:-7}
CONCURRENCY=${CONCURRENCY:-8}
command -v redis-server >/dev/null || { log "redis-server is needed (apt-get install redis-server)"; exit 1; }
command -v curl >/dev/null || { log "curl is needed"; exit 1; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

if [[ "${SKIP_BUILD:-}" != "1" ]]; then
	log "building"
	(cd "$here/.." && ./mvnw -B -q -Pbenchmarks -pl benchmarks -am package -DskipTests)
fi
out=$(mktemp -d)
redis_port=$(free_port)
redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no >"$out/redis.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do redis-cli -p "$redis_port" PING >/dev/null 2>&1 && break; sleep 0.1; done
app_port=$(free_port)
java -Xms256m -Xmx256m -cp "$here/target/classes:$(cat "$here/target/classpath.txt")" \
	io.github.idempotent.benchmarks.webflux.WebFluxBenchmarkApplication \
	--server.port="$app_port" --spring.data.redis.port="$redis_port" >"$out/app.log" 2>&1 &
pids+=($!)
app_pid=$!
body='{"orderNo":"o","customerId":"c","amountCents":1,"currency":"EUR"}'
post() { curl -s -m 30 -o /dev/null -w '%{http_code}\n' -X POST -H 'Content-Type: application/json' -H "Idempotency-Key: $2" -d "$body" "http://127.0.0.1:$app_port/$1/slow-payments"; }
for _ in $(seq 120); do
	[[ "$(post bare warm 2>/dev/null)" == "201" ]] && break
	kill -0 "$app_pid" 2>/dev/null || { cat "$out/app.log" >&2; exit 1; }
	sleep 0.5
done

# Wall seconds for CONCURRENCY requests at once to ENDPOINT, each with a key of its own.
wave() {
	local endpoint=$1 start end requests=()
	start=$(date +%s.%N)
	for i in $(seq "$CONCURRENCY"); do
		post "$endpoint" "$(cat /proc/sys/kernel/random/uuid)" >"$out/$endpoint.$i" &
		requests+=($!)
	done
	wait "${requests[@]}"
	end=$(date +%s.%N)
	if grep -qv '^201$' "$out/$endpoint".*; then
		log "a request of $endpoint did not answer 201: $(cat "$out/$endpoint".* | tr '\n' ' ')"
		tail -20 "$out/app.log" >&2
		exit 1
	fi
	echo "$end - $start" | bc
}
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

wave bare >/dev/null; wave first >/dev/null # warm-up
: >"$out/times-bare"; : >"$out/times-first"
for round in $(seq "$ROUNDS"); do
	b=$(wave bare); f=$(wave first)
	echo "$b" >>"$out/times-bare"; echo "$f" >>"$out/times-first"
	log "round $round: without @Idempotent ${b}s, with ${f}s"
done
mb=$(median <"$out/times-bare"); mf=$(median <"$out/times-first")
echo "| $CONCURRENCY x 250 ms, WebFlux | without @Idempotent | with @Idempotent | ratio |"
echo "|---|---|---|---|"
printf '| median of %s rounds | %.2f s | %.2f s | %.2f |\n' "$ROUNDS" "$mb" "$mf" "$(echo "$mf / $mb" | bc -l)"
