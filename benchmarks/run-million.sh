#!/usr/bin/env bash
# A million completed records, measured: Redis used_memory per record against MEMORY USAGE,
# PostgreSQL table and index bytes per row, the JDBC purge of a million expired rows with the
# latency of concurrent first calls and replays during it against the same load without it,
# and the Actuator listing of records in progress with a million records present.
# Usage: benchmarks/run-million.sh   (RECORDS=1000000, SHAPES=small,2kb, LOAD=20 seconds of load
# without the purge, THREADS=4; POSTGRESQL=postgres URL of the server, empty to skip it; REDIS= to
# skip Redis).
# Redis: a private redis-server on a free loopback port. PostgreSQL: a database `million` of its
# own on the server, created and dropped.
set -euo pipefail
cd "$(dirname "$0")"
if [[ "${SKIP_BUILD:-}" != "1" ]]; then
	(cd .. && ./mvnw -B -q -ntp -Pbenchmarks -pl benchmarks -am package -DskipTests)
fi
CLASSPATH="target/classes:$(cat target/classpath.txt)"
port=$((20000 + RANDOM % 30000))
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --daemonize yes \
	--pidfile "/tmp/idempotent-million-$port.pid" --logfile "/tmp/idempotent-million-$port.log"
pg="${POSTGRESQL-postgresql://postgres@127.0.0.1:5432}"
cleanup() {
	kill "$(cat "/tmp/idempotent-million-$port.pid")" 2>/dev/null || true
	[[ -n "$pg" ]] && psql -q "$pg/postgres" -c 'DROP DATABASE IF EXISTS million' || true
}
trap cleanup EXIT
for _ in $(seq 1 50); do (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
echo "redis-server $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/'), $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores"
redis="127.0.0.1:$port"; [[ "${REDIS-1}" == "" ]] && redis=""
args=("redis=$redis" "records=${RECORDS:-1000000}" "shapes=${SHAPES:-small,2kb}" "load=${LOAD:-20}"
	"threads=${THREADS:-4}")
if [[ -n "$pg" ]]; then
	psql -q "$pg/postgres" -c 'DROP DATABASE IF EXISTS million' -c 'CREATE DATABASE million'
	echo "$(psql -tA "$pg/postgres" -c 'SHOW server_version')"
	args+=("postgresql=jdbc:${pg/postgres@/}/million?user=postgres")
fi
# Not exec: the EXIT trap must stop the private redis-server and drop the database.
java -Xmx2g -cp "$CLASSPATH" io.github.idempotent.benchmarks.size.MillionRecords "${args[@]}"
