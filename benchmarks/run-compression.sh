#!/usr/bin/env bash
# Bytes saved against microseconds spent by deflating recorded responses of 200 B to 16 KB, for choosing
# idempotent.result-compression.threshold: stored sizes, bytes per record in Redis (MEMORY USAGE, on a private
# redis-server on a free loopback port) and the CPU time of storing and reading back each size, with and without
# deflating; prints Markdown tables. Usage: benchmarks/run-compression.sh   (RECORDS=200 per shape in Redis,
# ROUNDS=15 timing rounds; SKIP_BUILD=1 reuses the last build). About 2 minutes.
set -euo pipefail
cd "$(dirname "$0")"
if [[ "${SKIP_BUILD:-}" != "1" ]]; then
	(cd .. && ./mvnw -B -q -ntp -Pbenchmarks -pl benchmarks -am package -DskipTests)
fi
CLASSPATH="target/classes:$(cat target/classpath.txt)"
port=$((20000 + RANDOM % 30000))
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --daemonize yes \
	--pidfile "/tmp/idempotent-compression-$port.pid" --logfile "/tmp/idempotent-compression-$port.log"
trap 'kill "$(cat /tmp/idempotent-compression-'"$port"'.pid)" 2>/dev/null || true' EXIT
for _ in $(seq 1 50); do (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
echo "redis-server $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/'), $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
# Not exec: the EXIT trap must stop the private redis-server.
java -Xms256m -Xmx256m -cp "$CLASSPATH" io.github.idempotent.benchmarks.size.CompressionThreshold \
	"redis=127.0.0.1:$port" "records=${RECORDS:-200}" "rounds=${ROUNDS:-15}"
echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
