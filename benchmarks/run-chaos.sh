#!/usr/bin/env bash
# The chaos campaign, long form: N instances of a small @Idempotent app on one store, each behind
# a FaultProxy, clients retrying the same keys on any instance, faults drawn from a printed seed;
# a verdict per key from ledgers kept outside the store (docs/reliability.md, benchmarks/RELIABILITY.md).
# Usage: benchmarks/run-chaos.sh [redis|sentinel|cluster|postgres|postgres-failover|mariadb] [duration in s,
# default 300] [seed]
# Environment: INSTANCES (2), CLIENTS (4), LEASE_MS (2000), WAIT_REPLICAS (0, Sentinel only:
# idempotent.store.redis.wait-replicas; the store refuses it on Cluster), REPLICA_LAG_MS (0, Cluster
# and postgres-failover: the killed primary's replica is cut off that long before the kill),
# SYNCHRONOUS_COMMIT (off, or on: postgres-failover's primary waits for its replica), FAULTS (all, or a comma
# list of cut, stall, stall_past_lease, pause, pause_past_lease, kill, force_delete, store_restart,
# memory_pressure; a form of its own, not in all: memory_pressure_past_max_duration, every write
# refused for longer than idempotent.max-duration, which the instances get as three leases unless
# APP_PROPERTIES sets it), WEB (servlet, or reactive: WebFlux instances with a Mono handler), REDIS_CLIENT
# (lettuce, or jedis), CLIENT (loop: the campaign's own retries; interceptor: RestClient calls
# retried by the starter's IdempotentRetryInterceptor), PARTITION (0, or 1 on Cluster: each
# instance reaches one node through its proxy, so cuts and stalls partition it from that node
# only), LOAD_RPS (0, or a rate: the clients are one open-loop load of that many requests/s, one attempt each,
# and the faults come one at a time LOAD_GAP_S (12) apart; the report adds throughput, p99, recovery and
# outstanding requests before, during and after each fault kind), LOAD_MAX_OUTSTANDING (500: more are
# skipped and counted, not queued), APP_PROPERTIES (a comma list of settings every instance gets, e.g.
# idempotent.store.jdbc.claim-reads-first=false; named in the report's title), ISOLATION (postgres and mariadb:
# read_committed, repeatable_read or serializable, the JDBC pool's default isolation, Hikari's
# transaction-isolation; added to APP_PROPERTIES). The store is a server of the campaign's own on free loopback ports: a
# redis-server 7 (on the PATH); a primary, a replica and a sentinel, whose store restart is a
# failover; a Redis Cluster of three primaries with one replica each, whose store restart is a
# primary failover (no cuts or stalls unless PARTITION=1: the instances reach the nodes directly); or a PostgreSQL
# initdb'ed as the postgres user (binaries under /usr/lib/postgresql); or such a primary with a
# streaming replica made with pg_basebackup, whose store restart is a failover (the primary
# crashed, the replica promoted, the instances' proxies moved to it, a fresh replica made); or a MariaDB made with
# mariadb-install-db, mariadbd on the PATH, whose restart is a kill -9. Writes the Markdown report
# and the fault timeline to idempotent-spring-boot-starter/target/chaos/ and prints the report.
# SVG=docs/images/chaos-timeline-redis.svg draws the run's timeline (fault windows by kind over the
# answers clients got per second, from the campaign's -faults.csv and -answers.csv) with
# benchmarks/tools/plot-svg.py, the command, date, machine and load average in its caption.
set -euo pipefail
cd "$(dirname "$0")/.."
store="${1:-redis}"
duration="${2:-300}"
seed="${3:-}"
app_properties="${APP_PROPERTIES:-}"
if [[ -n "${ISOLATION:-}" ]]; then
	app_properties+="${app_properties:+,}spring.datasource.hikari.transaction-isolation=TRANSACTION_${ISOLATION^^}"
fi
# Without the Java 25 row's profile: -Dtest would run the campaign a second time on Java 25.
args=(-ntp -q -pl idempotent-spring-boot-starter test -P '!java-25-row' -Dtest=ChaosCampaignTests
	-Dsurefire.failIfNoSpecifiedTests=false -Dchaos.store="$store" -Dchaos.duration="$duration"
	-Dchaos.faults="${FAULTS:-all}" -Dchaos.instances="${INSTANCES:-2}" -Dchaos.clients="${CLIENTS:-4}"
	-Dchaos.lease-ms="${LEASE_MS:-2000}" -Dchaos.wait-replicas="${WAIT_REPLICAS:-0}"
	-Dchaos.replica-lag-ms="${REPLICA_LAG_MS:-0}" -Dchaos.web="${WEB:-servlet}"
	-Dchaos.redis-client="${REDIS_CLIENT:-lettuce}" -Dchaos.client="${CLIENT:-loop}"
	-Dchaos.synchronous-commit="${SYNCHRONOUS_COMMIT:-off}"
	-Dchaos.load-rps="${LOAD_RPS:-0}" -Dchaos.load-gap="${LOAD_GAP_S:-12}"
	-Dchaos.load-max-outstanding="${LOAD_MAX_OUTSTANDING:-500}" -Dchaos.app-properties="$app_properties"
	-Dchaos.partition="$([[ "${PARTITION:-0}" == 1 ]] && echo true || echo false)" -Dsurefire.timeout=0)
[[ -n "$seed" ]] && args+=(-Dchaos.seed="$seed")
# A violation fails the test, which is the finding: keep going to print the report.
output=idempotent-spring-boot-starter/target/surefire-reports/io.github.idempotent.chaos.ChaosCampaignTests-output.txt
rm -f "$output"
# Only a report of this run: one that failed before writing its own prints none.
marker=$(mktemp)
trap 'rm -f "$marker"' EXIT
status=0
./mvnw "${args[@]}" || status=$?
[[ -f "$output" ]] || exit "$status"
grep -h '^\[chaos ' "$output" || true
latest=$(find idempotent-spring-boot-starter/target/chaos -name "chaos-$store-*[0-9].md" -newer "$marker" 2>/dev/null | head -1)
[[ -n "$latest" ]] && cat "$latest"
if [[ -n "${SVG:-}" && -n "$latest" ]]; then
	title=$(head -1 "$latest" | sed 's/^### //')
	command="${FAULTS:+FAULTS=$FAULTS }SVG=$SVG benchmarks/run-chaos.sh $store $duration $(sed -n 's/.*, seed \([0-9]*\),.*/\1/p' <<<"$title")"
	cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
	python3 benchmarks/tools/plot-svg.py timeline -o "$SVG" --title "Chaos campaign, $title" \
		--caption "$command" \
		--caption "$(sed -n 3p "$latest")" \
		--caption "$(nproc) cores ($cpu), shared machine: load average $(cut -d' ' -f1-3 /proc/loadavg) at the end" \
		--faults "${latest%.md}-faults.csv" --answers "${latest%.md}-answers.csv"
	echo "[run-chaos] timeline picture in $SVG" >&2
fi
exit "$status"
