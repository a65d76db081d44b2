#!/usr/bin/env bash
# Bytes per idempotency record in Redis (MEMORY USAGE), PostgreSQL and MariaDB, for a record in
# progress, completed records with a 20-byte, a 2 KB and a 10 KB result, and HTTP responses as recorded
# (H) and as typed ResponseEntity values were stored before (V); prints a Markdown table.
# Usage: benchmarks/run-sizes.sh   (RECORDS=1000 per shape; POSTGRESQL_URL / MARIADB_URL override
# the local servers, empty to skip one). Redis: a private redis-server on a free loopback port.
set -euo pipefail
cd "$(dirname "$0")"
if [[ "${SKIP_BUILD:-}" != "1" ]]; then
	(cd .. && ./mvnw -B -q -ntp -Pbenchmarks -pl benchmarks -am package -DskipTests)
fi
CLASSPATH="target/classes:$(cat target/classpath.txt)"
port=$((20000 + RANDOM % 30000))
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --daemonize yes \
	--pidfile "/tmp/idempotent-sizes-$port.pid" --logfile "/tmp/idempotent-sizes-$port.log"
trap 'kill "$(cat /tmp/idempotent-sizes-'"$port"'.pid)" 2>/dev/null || true' EXIT
for _ in $(seq 1 50); do (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
echo "redis-server $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/'), $(date -u +%Y-%m-%dT%H:%MZ)"
args=("redis=127.0.0.1:$port" "records=${RECORDS:-1000}")
pg="${POSTGRESQL_URL-jdbc:postgresql://127.0.0.1:5432/test?user=postgres}"
mdb="${MARIADB_URL-jdbc:mariadb://127.0.0.1:3306/test?user=root}"
[[ -n "$pg" ]] && args+=("postgresql=$pg")
[[ -n "$mdb" ]] && args+=("mariadb=$mdb")
# Not exec: the EXIT trap must stop the private redis-server.
java -cp "$CLASSPATH" io.github.idempotent.benchmarks.size.RecordSizes "${args[@]}"
