#!/usr/bin/env bash
# What PostgreSQL alone spends on the JDBC store's claim, by pgbench: the forms a claim can take,
# each run by one client with server-side prepared statements (-M prepared) and
# synchronous_commit off, so that no commit waits for the disk and what is left is the server's
# work and one loopback round trip per statement. On a table of the script's own, made from the
# shipped schema (schema-postgresql.sql) and filled with ROWS completed records, dropped at the end.
# Prints the mean latency per claim (pgbench's "latency average") of every form in every round.
#
# The forms, for a replay (a key whose row is there) and a first call (a new key):
#   select            the store's read of a row alone: the floor of a replay (statements1)
#   replay-2          the claim as two statements: INSERT ... ON CONFLICT DO NOTHING, then select
#   replay-claim      the claim as the store sends it on PostgreSQL: one WITH ... INSERT ... SELECT
#   replay-readfirst  the same with the row read in a WITH before the INSERT, which then runs only
#                     when the read found nothing (not the store's: measured to compare)
#   first-insert      INSERT ... ON CONFLICT DO NOTHING of a new row: the floor of a first claim
#   first-claim       the store's claim of a new key
#   first-readfirst   the read-first form of a new key
# The claim's SQL is copied from JdbcDialect.POSTGRESQL_CLAIM (keep them the same).
#
# Usage: benchmarks/run-pg-claim.sh   (about 2 minutes)
# Settings (environment): PGHOST=127.0.0.1 PGPORT=5432 PGUSER=postgres PGDATABASE=test
#   ROUNDS=2 DURATION=8 ROWS=100000
set -euo pipefail

log() { echo "[run-pg-claim] $*" >&2; }

export PGHOST=${PGHOST:-127.0.0.1} PGPORT=${PGPORT:-5432} PGUSER=${PGUSER:-postgres} PGDATABASE=${PGDATABASE:-test}
ROUNDS=${ROUNDS:-2}
DURATION=${DURATION:-8}
ROWS=${ROWS:-100000}

here="$(cd "$(dirname "$0")" && pwd)"
schema="$here/../idempotent-spring-boot-starter/src/main/resources/io/github/idempotent/store/jdbc/schema-postgresql.sql"
command -v pgbench >/dev/null || { log "pgbench is missing (Debian: postgresql-contrib, or the server package)"; exit 1; }
psql -qAt -c "SELECT 1" >/dev/null || { log "cannot reach PostgreSQL at $PGHOST:$PGPORT/$PGDATABASE as $PGUSER"; exit 1; }

table="idempotent_claim_$$"
work=$(mktemp -d)
cleanup() {
	psql -q -c "DROP TABLE IF EXISTS $table" >/dev/null 2>&1 || log "could not drop the table $table"
	rm -rf "$work"
}
trap cleanup EXIT

sed "s/idempotency_record/$table/g" "$schema" | psql -q -v ON_ERROR_STOP=1 >/dev/null
psql -q -v ON_ERROR_STOP=1 >/dev/null <<SQL
INSERT INTO $table SELECT 'replay:' || g, 'C', '00000000000000000000000000000001', 'sha256-fingerprint',
  convert_to(repeat('x', 250), 'UTF8'), statement_timestamp() + INTERVAL '1 day' FROM generate_series(1, $ROWS) g;
VACUUM ANALYZE $table;
SQL

now="statement_timestamp()"
plus_lease="$now + CAST(60000 AS BIGINT) * INTERVAL '1 millisecond'"
millis_left="CAST(FLOOR(EXTRACT(EPOCH FROM (expires_at - $now)) * 1000) AS BIGINT)"
columns="state, owner_token, fingerprint, result, $millis_left AS millis_left, CASE WHEN expires_at <= $now THEN 1 ELSE 0 END AS expired"
touched="CASE WHEN xmax::text = '0' THEN 0 ELSE 1 END"
insert_values="INSERT INTO $table (idempotency_key, state, owner_token, fingerprint, expires_at) VALUES (:k, 'P', '00000000000000000000000000000002', 'sha256-fingerprint', $plus_lease) ON CONFLICT (idempotency_key) DO NOTHING"
nothing="NULL AS state, NULL AS owner_token, NULL AS fingerprint, NULL AS result, 0 AS millis_left, 0 AS expired, 0 AS touched"

# form NAME KIND SQL...: one pgbench script, in which :k is the key of a completed row (KIND
# replay) or a new key (KIND first); pgbench sends :n as a parameter of the prepared statement.
form() {
	local name=$1 kind=$2 range=$ROWS
	shift 2
	[[ "$kind" == "replay" ]] || range=2000000000
	{
		echo "\\set n random(1, $range)"
		printf '%s;\n' "$@" | sed "s/:k/'$kind:' || :n/g"
	} >"$work/$name.sql"
}

form select replay "SELECT $columns FROM $table WHERE idempotency_key = :k"
form replay-2 replay "$insert_values" "SELECT $columns FROM $table WHERE idempotency_key = :k"
claim="WITH inserted AS ($insert_values RETURNING 1) SELECT 1 AS inserted, $nothing FROM inserted UNION ALL SELECT 0, $columns, $touched FROM $table WHERE idempotency_key = :k AND NOT EXISTS (SELECT 1 FROM inserted)"
readfirst="WITH existing AS (SELECT $columns, $touched AS touched FROM $table WHERE idempotency_key = :k), inserted AS (INSERT INTO $table (idempotency_key, state, owner_token, fingerprint, expires_at) SELECT :k, 'P', '00000000000000000000000000000002', 'sha256-fingerprint', $plus_lease WHERE NOT EXISTS (SELECT 1 FROM existing) ON CONFLICT (idempotency_key) DO NOTHING RETURNING 1) SELECT 1 AS inserted, $nothing FROM inserted UNION ALL SELECT 0, state, owner_token, fingerprint, result, millis_left, expired, touched FROM existing"
form replay-claim replay "$claim"
form replay-readfirst replay "$readfirst"
form first-insert first "$insert_values"
form first-claim first "$claim"
form first-readfirst first "$readfirst"

forms="select replay-2 replay-claim replay-readfirst first-insert first-claim first-readfirst"
declare -A latency
for round in $(seq "$ROUNDS"); do
	for name in $forms; do
		log "round $round: $name, ${DURATION}s"
		ms=$(PGOPTIONS="-c synchronous_commit=off" pgbench -n -M prepared -c1 -T"$DURATION" -f "$work/$name.sql" 2>&1 |
			sed -n 's/^latency average = \([0-9.]*\) ms$/\1/p' || true)
		[[ -n "$ms" ]] || { log "pgbench failed on $name:"; PGOPTIONS="-c synchronous_commit=off" pgbench -n -M prepared -c1 -t1 -f "$work/$name.sql" >&2 || true; exit 1; }
		latency[$name]="${latency[$name]:+${latency[$name]}, }$ms"
	done
done

version=$(psql -qAt -c "SHOW server_version")
echo "pgbench -n -M prepared -c1 -T$DURATION, synchronous_commit off, PostgreSQL $version, $ROWS rows; $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| form | ms per claim, rounds 1..$ROUNDS |"
echo "|---|---|"
for name in $forms; do
	echo "| $name | ${latency[$name]} |"
done
