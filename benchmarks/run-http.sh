#!/usr/bin/env bash
# HTTP load benchmark of @Idempotent: one Spring Boot app with three endpoints doing the same work
# (bare, @Idempotent with a fresh key per request, @Idempotent replaying one key; and, for reference,
# bare plus one and two Redis PINGs, what round trips alone cost, and bare plus a first call's two
# writes as plain SET commands, what storing costs Redis before any library work), driven by wrk on
# loopback against a private redis-server. Runs the endpoints in turn, ROUNDS times, then once more
# each over a single connection for unloaded latency; prints Markdown tables with requests/s, p50/p99,
# CPU time per request of each process, the ratios to bare and to the references from the same round,
# and Redis round trips per request from INFO commandstats (reset before each phase: the server is
# this script's own, never a shared one).
# STORE=jdbc measures the JDBC store on PostgreSQL instead, with no redis-server: its references are
# bare plus a first call's two statements (INSERT of a row in progress, UPDATE to completed) and bare
# plus a replay's one (SELECT of a completed row), on a table of the run's own, dropped at the end.
# STORE=jdbc DATABASE=mariadb does the same on MariaDB (or MySQL) instead of PostgreSQL.
#
# Usage: benchmarks/run-http.sh            (about 6 minutes; every phase is bounded by -d and timeout)
#        STORE=jdbc benchmarks/run-http.sh (about 5 minutes; POSTGRESQL_URL, a JDBC URL whose
#   parameters psql accepts too, default jdbc:postgresql://127.0.0.1:5432/test?user=postgres; the local
#   cache is off, as it is by default for every store but Redis)
#        STORE=jdbc DATABASE=mariadb benchmarks/run-http.sh (MARIADB_URL, default
#   jdbc:mariadb://127.0.0.1:3306/test?user=root, host, port, database and user read by the mariadb client)
# Settings (environment): DURATION=15 WARMUP=10 LATENCY_DURATION=10 ROUNDS=2 CONNECTIONS=16 THREADS=1
#   HEAP=512m SKIP_BUILD=1 APP_ARGS="--idempotent.local-cache.enabled=false"
#   (APP_ARGS is empty by default: replays then come from the Redis store's tracked local cache,
#   on by default, after each key's first replay; set enabled=false to measure the network path)
#   PROFILE=1 records the app with JFR (JFR_SETTINGS=profile, or a .jfc file) into the output folder;
#   ENDPOINTS="first" measures only some endpoints (the ratio table needs bare, first and replay)
#   WEB=reactive measures the WebFlux (Netty, Mono) endpoints instead, the same six with the PING and
#   plain-write references through the reactive connection (Redis only; it sets APP_CLASS to
#   io.github.idempotent.benchmarks.webflux.WebFluxBenchmarkApplication)
#   SVG=docs/images/latency-redis.svg draws the latency distributions of bare, first and replay (one
#   connection, solid; the last round's CONNECTIONS, dashed) with benchmarks/tools/plot-svg.py, the
#   command, date, machine and load average in its caption; every wrk output keeps its PERCENTILES line
# With Redis, a second table gives redis-server's own accounting of each phase (INFO commandstats,
# reset before it): every command's calls per request and usec_per_call, the claim (SET), the
# completion (EVALSHA, and the GET and SET it runs inside), the PINGs and the plain writes alike.
set -euo pipefail

log() { echo "[run-http] $*" >&2; }

STORE=${STORE:-redis}
case "$STORE" in
redis) all_endpoints="bare roundtrip1 roundtrip2 writes2 first replay" ;;
jdbc) all_endpoints="bare statements1 statements2 first replay" ;;
*)
	log "STORE must be redis or jdbc, not '$STORE'"
	exit 2
	;;
esac

DURATION=${DURATION:-15}
WARMUP=${WARMUP:-10}
LATENCY_DURATION=${LATENCY_DURATION:-10}
ROUNDS=${ROUNDS:-2}
CONNECTIONS=${CONNECTIONS:-16}
THREADS=${THREADS:-1}
HEAP=${HEAP:-512m}
APP_ARGS=${APP_ARGS:-}
ENDPOINTS=${ENDPOINTS:-$all_endpoints}
JFR_SETTINGS=${JFR_SETTINGS:-profile}
WEB=${WEB:-servlet}
case "$WEB" in
servlet) APP_CLASS=${APP_CLASS:-io.github.idempotent.benchmarks.http.BenchmarkApplication} ;;
reactive) APP_CLASS=${APP_CLASS:-io.github.idempotent.benchmarks.webflux.WebFluxBenchmarkApplication} ;;
*)
	log "WEB must be servlet or reactive, not '$WEB'"
	exit 2
	;;
esac
POSTGRESQL_URL=${POSTGRESQL_URL:-jdbc:postgresql://127.0.0.1:5432/test?user=postgres}
MARIADB_URL=${MARIADB_URL:-jdbc:mariadb://127.0.0.1:3306/test?user=root}
DATABASE=${DATABASE:-postgresql}
case "$DATABASE" in
postgresql | mariadb) ;;
*)
	log "DATABASE must be postgresql or mariadb, not '$DATABASE'"
	exit 2
	;;
esac

for endpoint in $ENDPOINTS; do
	if [[ " $all_endpoints " != *" $endpoint "* ]]; then
		log "STORE=$STORE has the endpoints $all_endpoints, not '$endpoint'"
		exit 2
	fi
done
if [[ "$STORE" == "jdbc" && "$APP_CLASS" != "io.github.idempotent.benchmarks.http.BenchmarkApplication" ]]; then
	log "STORE=jdbc runs io.github.idempotent.benchmarks.http.BenchmarkApplication only"
	exit 2
fi

here="$(cd "$(dirname "$0")" && pwd)"
out="$here/target/http-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"

install_package() {
	local sudo=""
	if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
	$sudo apt-get install -y "$1" >/dev/null 2>&1 || { $sudo apt-get update >/dev/null && $sudo apt-get install -y "$1" >/dev/null; }
}

command -v wrk >/dev/null || { log "installing wrk"; install_package wrk; }
if [[ "$STORE" == "redis" ]]; then
	command -v redis-server >/dev/null || { log "installing redis-server"; install_package redis-server; }
	command -v redis-cli >/dev/null || { log "installing redis-tools"; install_package redis-tools; }
elif [[ "$DATABASE" == "postgresql" ]]; then
	command -v psql >/dev/null || { log "installing postgresql-client"; install_package postgresql-client; }
else
	command -v mariadb >/dev/null || { log "installing mariadb-client"; install_package mariadb-client; }
fi
command -v curl >/dev/null || { log "installing curl"; install_package curl; }

free_port() {
	local port
	while true; do
		port=$((20000 + RANDOM % 30000))
		if ! (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			echo "$port"
			return
		fi
	done
}

pids=()
table=""
cleanup() {
	for pid in "${pids[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in "${pids[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	if [[ -n "$table" ]]; then
		db_sql "DROP TABLE IF EXISTS $table" || log "could not drop the table $table"
	fi
}
trap cleanup EXIT

if [[ "${SKIP_BUILD:-}" != "1" ]]; then
	log "building"
	(cd "$here/.." && ./mvnw -B -q -Pbenchmarks -pl benchmarks -am package -DskipTests)
fi

app_port=$(free_port)
if [[ "$STORE" == "redis" ]]; then
	redis_port=$(free_port)
	redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no >"$out/redis.log" 2>&1 &
	pids+=($!)
	redis_pid=$!
	redis() { redis-cli -p "$redis_port" "$@"; }
	for _ in $(seq 50); do redis PING >/dev/null 2>&1 && break; sleep 0.1; done
	redis PING >/dev/null
	store_args=(--spring.data.redis.port="$redis_port")
	store_name="redis-server"
	store_description="Redis: a private redis-server on 127.0.0.1:$redis_port"
	# The processes whose CPU time is the store's.
	store_pids() { echo "$redis_pid"; }
elif [[ "$DATABASE" == "postgresql" ]]; then
	db_sql() { psql "${POSTGRESQL_URL#jdbc:}" -X -q -At -v ON_ERROR_STOP=1 -c "$1"; }
	db_sql "SELECT 1" >/dev/null || { log "cannot reach PostgreSQL at $POSTGRESQL_URL"; exit 1; }
	# A table of the run's own (the store creates it, cleanup drops it), and a name for the
	# app's connections, by which their server processes are found.
	table="idempotent_http_$(date +%Y%m%d_%H%M%S)_$$"
	app_name="idempotent-run-http-$$"
	separator="?"
	[[ "$POSTGRESQL_URL" == *"?"* ]] && separator="&"
	store_args=(--idempotent.store.type=jdbc --spring.datasource.url="$POSTGRESQL_URL${separator}ApplicationName=$app_name"
		--idempotent.store.jdbc.table-name="$table")
	store_name="postgres"
	store_description="JDBC on PostgreSQL ($POSTGRESQL_URL, table $table, Boot's Hikari pool); local cache off (the app's default with the JDBC store, unless APP_ARGS sets idempotent.local-cache.enabled)"
	# The server processes of the app's pooled connections (found only when the server runs
	# on this machine); not the server's background processes (WAL writer, checkpointer,
	# autovacuum).
	store_pids() { db_sql "SELECT pid FROM pg_stat_activity WHERE application_name = '$app_name'" | tr '\n' ' '; }
else
	# jdbc:mariadb://HOST[:PORT]/DATABASE?user=USER[&...]
	mariadb_address=${MARIADB_URL#jdbc:*://}
	mariadb_host=${mariadb_address%%/*}
	mariadb_port=3306
	if [[ "$mariadb_host" == *:* ]]; then
		mariadb_port=${mariadb_host##*:}
		mariadb_host=${mariadb_host%:*}
	fi
	mariadb_database=${mariadb_address#*/}
	mariadb_database=${mariadb_database%%\?*}
	mariadb_user=root
	if [[ "$MARIADB_URL" =~ [?\&]user=([^\&]*) ]]; then mariadb_user=${BASH_REMATCH[1]}; fi
	db_sql() { mariadb -h "$mariadb_host" -P "$mariadb_port" -u "$mariadb_user" -N -B "$mariadb_database" -e "$1"; }
	db_sql "SELECT 1" >/dev/null || { log "cannot reach MariaDB at $MARIADB_URL"; exit 1; }
	table="idempotent_http_$(date +%Y%m%d_%H%M%S)_$$"
	store_args=(--idempotent.store.type=jdbc --spring.datasource.url="$MARIADB_URL" --idempotent.store.jdbc.table-name="$table")
	store_name="mariadbd"
	store_description="JDBC on MariaDB ($MARIADB_URL, table $table, Boot's Hikari pool); local cache off (the app's default with the JDBC store, unless APP_ARGS sets idempotent.local-cache.enabled)"
	# The server threads of the app's pooled connections (one thread per connection, the
	# server's default; found only when the server runs on this machine), by the client
	# ports of the app's sockets; not the server's background threads (purge, page cleaner).
	# Each as PID/task/TID: /proc/TID/stat of a thread that does not lead its process reads
	# the whole process's CPU time, which summed over the pool counted mariadbd once per
	# connection.
	store_pids() {
		local ports tid path
		ports=$(ss -Htnp "dport = :$mariadb_port" | awk -v pid="pid=$app_pid," 'index($0, pid) { n = split($4, a, ":"); print "'"'"'" a[n] "'"'"'" }' |
			paste -sd, -)
		[[ -n "$ports" ]] || return 0
		for tid in $(db_sql "SELECT TID FROM information_schema.PROCESSLIST WHERE SUBSTRING_INDEX(HOST, ':', -1) IN ($ports)"); do
			for path in /proc/[0-9]*/task/"$tid"; do
				if [[ -e "$path" ]]; then printf '%s ' "${path#/proc/}"; fi
			done
		done
	}
fi

jvm_args=(-Xms"$HEAP" -Xmx"$HEAP" -XX:+AlwaysPreTouch)
if [[ "${PROFILE:-}" == "1" ]]; then
	jvm_args+=(-XX:StartFlightRecording=filename="$out/app.jfr",settings="$JFR_SETTINGS")
fi
# shellcheck disable=SC2086
java "${jvm_args[@]}" -cp "$here/target/classes:$(cat "$here/target/classpath.txt")" \
	"$APP_CLASS" \
	--server.port="$app_port" "${store_args[@]}" $APP_ARGS >"$out/app.log" 2>&1 &
pids+=($!)
app_pid=$!

url() { echo "http://127.0.0.1:$app_port/$1/payments"; }
for _ in $(seq 120); do
	if curl -s -o /dev/null -X POST -H 'Content-Type: application/json' -d '{"orderNo":"warm","customerId":"c","amountCents":1,"currency":"EUR"}' "$(url bare)"; then
		break
	fi
	kill -0 "$app_pid" 2>/dev/null || { cat "$out/app.log" >&2; exit 1; }
	sleep 0.5
done
log "app on 127.0.0.1:$app_port (heap $HEAP), store $store_description, output in $out"

mode_of() { [[ "$1" == "replay" ]] && echo fixed || echo fresh; }

# CPU time (utime + stime, in clock ticks) the processes PIDS... have used so far, those that have
# ended left out; cpu_sys_ticks: stime only.
proc_stats() { for pid in "$@"; do cat "/proc/$pid/stat" 2>/dev/null || true; done; }
cpu_ticks() { proc_stats "$@" | awk '{ t += $14 + $15 } END { print t + 0 }'; }
cpu_sys_ticks() { proc_stats "$@" | awk '{ t += $15 } END { print t + 0 }'; }
ticks_per_second=$(getconf CLK_TCK)

# run_wrk ENDPOINT SECONDS THREADS CONNECTIONS: prints
# "requests duration_us p50_us p99_us errors non2xx wrk_cpu_ticks"
run_wrk() {
	local file="$out/wrk-$1-$2s-c$4-$(date +%s%N).txt"
	# wrk runs as the child of its own shell, whose cutime + cstime are then wrk's CPU time.
	timeout $(($2 + 30)) bash -c 'wrk "$@" >"$0" 2>&1; awk "{ print \$16 + \$17 }" /proc/$$/stat' "$file" \
		-t"$3" -c"$4" -d"$2"s --latency -s "$here/wrk/payments.lua" "$(url "$1")" -- "$(mode_of "$1")" "$$" \
		>"$file.cpu"
	echo "$(sed -n 's/^RESULT //p' "$file" | tr ' ' '\n' | cut -d= -f2 | tr '\n' ' ') $(cat "$file.cpu")"
}

# Client commands (round trips: EVALSHA, EVAL, the claims' SET ... NX GET on Redis 7, and the PINGs of
# /roundtrip*) and any other command since the last reset; script-internal commands (GET, SET, ... run
# by the Lua scripts inside the server, and counted by commandstats too) are not round trips, nor is
# the set-up of a new pooled connection (HELLO, CLIENT SETINFO, ...). The claims sent as SET are
# counted as the SETs beyond the GETs: exact for these endpoints, where every script run (the
# completion, or the claim before Redis 7) reads its record once and writes it once, and nothing
# else reads; a release, a fenced completion, a claim of a record in progress or the local cache's
# reads would each hide one.
redis_counts() {
	redis INFO commandstats | tr -d '\r' | awk -F'[:=,]' '
		/^cmdstat_/ {
			name = substr($1, 9)
			sub(/\|.*/, "", name)
			if (name == "evalsha" || name == "eval") { trips += $3; usec += $5 }
			else if (name == "ping") { pings += $3; usec += $5 }
			else if (name == "set") { sets += $3; set_usec += $5 }
			else if (name == "get") { gets += $3 }
			else if (name !~ /^(getrange|type|exists|hmget|hget|hset|hdel|pexpire|pttl|del|info|config|hello|client|select|auth)$/) other += $3
		}
		END {
			claims = (sets > gets) ? sets - gets : 0
			if (claims > 0) { usec += set_usec * claims / sets }
			printf "%d %d %d", trips + pings + claims, other, usec
		}'
}

# Each command of the phase: "name calls-per-request x usec_per_call µs", separated by "; ".
redis_commands() {
	redis INFO commandstats | tr -d '\r' | awk -F'[:=,]' -v requests="$1" '
		/^cmdstat_/ {
			name = substr($1, 9)
			if (name ~ /^(config|info|hello|client|select|auth)/) next
			printf "%s%s %.2f x %.2f µs", separator, name, $3 / requests, $7
			separator = "; "
		}'
}

log "warm-up: ${WARMUP}s per endpoint"
for endpoint in $ENDPOINTS; do
	run_wrk "$endpoint" "$WARMUP" "$THREADS" "$CONNECTIONS" >/dev/null
done
if [[ "$STORE" == "jdbc" ]]; then
	read -ra backends <<<"$(store_pids)"
	if [[ ${#backends[@]} -eq 0 || ! -e "/proc/${backends[0]}" ]]; then
		log "the pool's server processes are not on this machine: the $store_name CPU column will read 0"
	else
		log "${#backends[@]} pooled connections, server processes ${backends[*]}"
	fi
fi

load=$(cut -d' ' -f1-3 /proc/loadavg)
declare -A rps p50 p99 trips errors cpu cpu_total commands
per_request_us() { awk -v t="$1" -v r="$2" -v hz="$ticks_per_second" 'BEGIN { printf "%.0f", t * 1e6 / hz / r }'; }
for round in $(seq "$ROUNDS"); do
	for endpoint in $ENDPOINTS; do
		log "round $round: $endpoint, ${DURATION}s, $CONNECTIONS connections"
		if [[ "$STORE" == "redis" ]]; then redis CONFIG RESETSTAT >/dev/null; fi
		read -ra store_pids_now <<<"$(store_pids)"
		app_before=$(cpu_ticks "$app_pid")
		app_sys_before=$(cpu_sys_ticks "$app_pid")
		store_before=$(cpu_ticks "${store_pids_now[@]}")
		read -r requests duration p50_us p99_us errs non2xx wrk_ticks <<<"$(run_wrk "$endpoint" "$DURATION" "$THREADS" "$CONNECTIONS")"
		app_ticks=$(($(cpu_ticks "$app_pid") - app_before))
		app_sys_ticks=$(($(cpu_sys_ticks "$app_pid") - app_sys_before))
		store_ticks=$(($(cpu_ticks "${store_pids_now[@]}") - store_before))
		key="$round,$endpoint"
		errors[$key]=$((errs + non2xx))
		# trips: the Redis column with its separator (none with the JDBC store, whose statements are
		# counted by no server statistic of this run's own).
		if [[ "$STORE" == "redis" ]]; then
			read -r round_trips other executing_us <<<"$(redis_counts)"
			commands[$key]=$(redis_commands "$requests")
			trips[$key]="$(awk -v t="$round_trips" -v r="$requests" -v u="$executing_us" 'BEGIN { printf "%.2f (%.1f µs)", t / r, u / r }') | "
			errors[$key]=$((errors[$key] + other))
		fi
		cpu_total[$key]=$(per_request_us $((app_ticks + store_ticks + wrk_ticks)) "$requests")
		cpu[$key]="$(per_request_us "$app_ticks" "$requests") ($(per_request_us "$app_sys_ticks" "$requests") sys) / $(per_request_us "$store_ticks" "$requests") / $(per_request_us "$wrk_ticks" "$requests")"
		rps[$key]=$(awk -v r="$requests" -v d="$duration" 'BEGIN { printf "%.0f", r * 1e6 / d }')
		p50[$key]=$(awk -v v="$p50_us" 'BEGIN { printf "%.2f", v / 1000 }')
		p99[$key]=$(awk -v v="$p99_us" 'BEGIN { printf "%.2f", v / 1000 }')
	done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
record_sizes=""
if [[ "$STORE" == "redis" && " $ENDPOINTS " == *" first "* ]]; then
	# The length of one record /first completed, beside the value writes2 writes in its place.
	for _ in $(seq 50); do
		sample=$(redis RANDOMKEY)
		if [[ -n "$sample" && "$sample" != writes2:* && "$(redis GETRANGE "$sample" 0 0)" == [Cc] ]]; then
			record_sizes="A record /first completed: $(redis STRLEN "$sample") bytes (writes2 writes $(redis STRLEN \
				"$(redis --scan --pattern 'writes2:*' | head -1 || true)") in its place)."
			break
		fi
	done
fi

declare -A lat50 lat99
for endpoint in $ENDPOINTS; do
	log "latency: $endpoint, ${LATENCY_DURATION}s, 1 connection"
	read -r _ _ p50_us p99_us _ _ _ <<<"$(run_wrk "$endpoint" "$LATENCY_DURATION" 1 1)"
	lat50[$endpoint]=$(awk -v v="$p50_us" 'BEGIN { printf "%.3f", v / 1000 }')
	lat99[$endpoint]=$(awk -v v="$p99_us" 'BEGIN { printf "%.3f", v / 1000 }')
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
# against A B: A's throughput over B's in this round, by requests/s and by CPU per request
# ("-" when either endpoint was not measured)
against() {
	if [[ -z "${rps[$round,$1]:-}" || -z "${rps[$round,$2]:-}" ]]; then
		echo "-"
		return
	fi
	echo "$(ratio "${rps[$round,$1]}" "${rps[$round,$2]}"), $(ratio "${cpu_total[$round,$2]}" "${cpu_total[$round,$1]}")"
}
minus() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.3f", a - b }'; }
{
	echo "Throughput: wrk -t$THREADS -c$CONNECTIONS -d${DURATION}s, after ${WARMUP}s of warm-up per endpoint;"
	echo "load average $load before the rounds, $load_after after. APP_ARGS: ${APP_ARGS:-none}."
	echo "Store: $store_description. ${record_sizes}"
	echo
	if [[ "$STORE" == "redis" ]]; then
		echo "| round | endpoint | requests/s | p50 ms | p99 ms | Redis round trips / request (µs executing them) | CPU µs / request: app (of which kernel) / redis / wrk | errors |"
		echo "|---|---|---:|---:|---:|---:|---:|---:|"
	else
		echo "| round | endpoint | requests/s | p50 ms | p99 ms | CPU µs / request: app (of which kernel) / $store_name (the pool's server processes or threads) / wrk | errors |"
		echo "|---|---|---:|---:|---:|---:|---:|"
	fi
	for round in $(seq "$ROUNDS"); do
		for endpoint in $ENDPOINTS; do
			key="$round,$endpoint"
			echo "| $round | $endpoint | ${rps[$key]} | ${p50[$key]} | ${p99[$key]} | ${trips[$key]:-}${cpu[$key]} | ${errors[$key]} |"
		done
	done
	if [[ "$STORE" == "redis" ]]; then
		echo
		echo "Inside redis-server (INFO commandstats, reset before each phase): each command's calls per request"
		echo "x its usec_per_call. A script's GET and SET are counted under their own names too, their time"
		echo "inside the script's."
		echo
		echo "| round | endpoint | commands per request x µs per call |"
		echo "|---|---|---|"
		for round in $(seq "$ROUNDS"); do
			for endpoint in $ENDPOINTS; do
				echo "| $round | $endpoint | ${commands[$round,$endpoint]:-} |"
			done
		done
	fi
	if [[ " $ENDPOINTS " != *" bare "* || " $ENDPOINTS " != *" first "* || " $ENDPOINTS " != *" replay "* ]]; then
		exit 0
	fi
	echo
	echo "| round | first / bare (requests/s) | replay / bare (requests/s) | p50 first - bare (ms) | p50 replay - bare (ms) | first / bare (by CPU per request) | replay / bare (by CPU per request) |"
	echo "|---|---:|---:|---:|---:|---:|---:|"
	for round in $(seq "$ROUNDS"); do
		echo "| $round | $(ratio "${rps[$round,first]}" "${rps[$round,bare]}") | $(ratio "${rps[$round,replay]}" "${rps[$round,bare]}") |" \
			"$(minus "${p50[$round,first]}" "${p50[$round,bare]}") | $(minus "${p50[$round,replay]}" "${p50[$round,bare]}") |" \
			"$(ratio "${cpu_total[$round,bare]}" "${cpu_total[$round,first]}") | $(ratio "${cpu_total[$round,bare]}" "${cpu_total[$round,replay]}") |"
	done
	echo
	echo "Against the reference endpoints of the same round (requests/s, then by CPU per request):"
	echo
	if [[ "$STORE" == "redis" ]]; then
		echo "| round | first / roundtrip2 | replay / roundtrip1 | first / writes2 | writes2 / roundtrip2 |"
		echo "|---|---:|---:|---:|---:|"
		for round in $(seq "$ROUNDS"); do
			echo "| $round | $(against first roundtrip2) | $(against replay roundtrip1) | $(against first writes2) |" \
				"$(against writes2 roundtrip2) |"
		done
	else
		echo "| round | first / statements2 | replay / statements1 |"
		echo "|---|---:|---:|"
		for round in $(seq "$ROUNDS"); do
			echo "| $round | $(against first statements2) | $(against replay statements1) |"
		done
	fi
	echo
	echo "By CPU per request: total CPU time (app + $store_name + wrk) of a bare request over that of the"
	echo "other, the throughput ratio the machine would show with nothing else running on it."
	echo
	echo "Latency without queueing: one connection (wrk -t1 -c1 -d${LATENCY_DURATION}s), one request at a time."
	echo
	echo "| endpoint | p50 ms | p99 ms | p50 added to bare (ms) |"
	echo "|---|---:|---:|---:|"
	for endpoint in $ENDPOINTS; do
		echo "| $endpoint | ${lat50[$endpoint]} | ${lat99[$endpoint]} | $(minus "${lat50[$endpoint]}" "${lat50[bare]}") |"
	done
} | tee "$out/results.md"
# latest_wrk ENDPOINT SECONDS CONNECTIONS: the newest wrk output of that endpoint and shape
latest_wrk() { find "$out" -name "wrk-$1-$2s-c$3-*.txt" -printf '%T@ %p\n' | sort -n | tail -1 | cut -d' ' -f2; }
if [[ -n "${SVG:-}" ]]; then
	series=()
	for endpoint in bare first replay; do
		[[ " $ENDPOINTS " == *" $endpoint "* ]] || continue
		series+=("$endpoint, 1 connection=$(latest_wrk "$endpoint" "$LATENCY_DURATION" 1)")
		series+=("$endpoint, $CONNECTIONS connections=$(latest_wrk "$endpoint" "$DURATION" "$CONNECTIONS"):dashed")
	done
	command="STORE=$STORE DURATION=$DURATION WARMUP=$WARMUP LATENCY_DURATION=$LATENCY_DURATION ROUNDS=$ROUNDS CONNECTIONS=$CONNECTIONS${APP_ARGS:+ APP_ARGS=\"$APP_ARGS\"} SVG=$SVG benchmarks/run-http.sh"
	cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
	python3 "$here/tools/plot-svg.py" latency -o "$SVG" \
		--title "@Idempotent over HTTP, $([[ "$STORE" == redis ]] && echo Redis || echo "JDBC on PostgreSQL"): latency of bare, first call and replay" \
		--caption "$command" \
		--caption "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores ($cpu), shared machine: load average $load before, $load_after after" \
		--caption "solid: one connection, one request at a time (${LATENCY_DURATION}s); dashed: $CONNECTIONS connections (${DURATION}s, last round)" \
		"${series[@]}"
	log "latency picture in $SVG"
fi
log "wrk outputs, app log and results.md in $out"
