#!/usr/bin/env bash
# What a first call's two commands cost redis-server itself, by its own accounting (INFO commandstats,
# usec_per_call), against the same writes with no library: on a private redis-server, KEYS fresh keys
# each get a first call's claim (SET key placeholder NX PX 30000 GET) and then a completion, sent
# through redis-cli --pipe (execution time inside the server does not depend on the client). Variants:
#   floor       the completion as a plain SET key record XX PX (no fencing: what storing costs)
#   evalsha     the store's complete.lua by EVALSHA (what the library sends)
#   fcall       the same Lua as a Redis 7 function (FUNCTION LOAD + FCALL)
#   getrange    complete.lua reading only the state and token (GETRANGE 0 8) instead of the whole value
#   small       evalsha after a 44-byte placeholder (Redis's embedded strings end at 44 bytes) not 48
# and a PING phase. Prints one Markdown row per round and variant, then each variant's median and
# lowest (the least disturbed by other processes) server µs per first call over the rounds.
# Usage: benchmarks/run-redis-floor.sh   (KEYS=100000 ROUNDS=7 RECORD=250 PLACEHOLDER=48)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
KEYS=${KEYS:-100000}
ROUNDS=${ROUNDS:-7}
RECORD=${RECORD:-250}
PLACEHOLDER=${PLACEHOLDER:-48}
VARIANTS=${VARIANTS:-floor evalsha fcall getrange small}
script="$here/../idempotent-spring-boot-starter/src/main/resources/io/github/idempotent/store/redis/complete.lua"
out=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no >"$out/redis.log" 2>&1 &
redis_pid=$!
trap 'kill $redis_pid 2>/dev/null || true; wait $redis_pid 2>/dev/null || true; rm -rf "$out"' EXIT
r() { redis-cli -p "$port" "$@"; }
for _ in $(seq 50); do r PING >/dev/null 2>&1 && break; sleep 0.1; done
sha=$(r SCRIPT LOAD "$(cat "$script")")
range_script=$(sed "s/redis.pcall('GET', KEYS\[1\])/redis.pcall('GETRANGE', KEYS[1], 0, 8)/; s/if not v then/if not v or v == '' then/; s/if v == ARGV\[2\] then/if redis.call('GET', KEYS[1]) == ARGV[2] then/" "$script")
range_sha=$(r SCRIPT LOAD "$range_script")
function_body=$(printf '#!lua name=idempotent_floor\nredis.register_function("complete", function(KEYS, ARGV)\n%s\nend)\n' \
	"$(grep -v '^--' "$script")")
r FUNCTION LOAD REPLACE "$function_body" >/dev/null

# commands VARIANT ROUND: the RESP commands of KEYS first calls.
commands() {
	python3 - "$1" "$2" "$KEYS" "$RECORD" "$PLACEHOLDER" "$sha" "$range_sha" <<'PY'
import sys
variant, rnd, n, record, placeholder, sha, range_sha = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6], sys.argv[7]
token = b'ABCDEFGH'
if variant == 'small':
    placeholder = 44
p = b'P' + token + b'x' * (placeholder - 9)
c = b'C' + token + b'y' * (record - 9)
def resp(*args):
    args = [a if isinstance(a, bytes) else str(a).encode() for a in args]
    return b'*%d\r\n' % len(args) + b''.join(b'$%d\r\n%s\r\n' % (len(a), a) for a in args)
out = sys.stdout.buffer
for i in range(n):
    if variant == 'ping':
        out.write(resp('PING'))
        continue
    k = b'first:%s:%s:%d' % (variant.encode(), rnd.encode(), i)
    out.write(resp('SET', k, p, 'NX', 'PX', 30000, 'GET'))
    if variant == 'floor':
        out.write(resp('SET', k, c, 'XX', 'PX', 86400000))
    elif variant == 'fcall':
        out.write(resp('FCALL', 'complete', 1, k, token, c, 86400000))
    elif variant == 'getrange':
        out.write(resp('EVALSHA', range_sha, 1, k, token, c, 86400000))
    else:
        out.write(resp('EVALSHA', sha, 1, k, token, c, 86400000))
PY
}

echo "| round | variant | commands per first call: calls, usec_per_call | server µs per first call |"
echo "|---|---|---|---:|"
for round in $(seq "$ROUNDS"); do
	for variant in $VARIANTS ping; do
		commands "$variant" "$round" >"$out/commands"
		r FLUSHALL >/dev/null
		r CONFIG RESETSTAT >/dev/null
		r --pipe <"$out/commands" >"$out/pipe.log"
		grep -q 'errors: 0' "$out/pipe.log" || { cat "$out/pipe.log" >&2; exit 1; }
		# Inside a script, GET and SET are counted under their own names too, and their time
		# within the script's: the total counts the client's commands (set beyond the scripts',
		# evalsha, fcall, ping) only.
		r INFO commandstats | tr -d '\r' | awk -F'[:=,]' -v round="$round" -v variant="$variant" -v keys="$KEYS" '
			/^cmdstat_/ { name = substr($1, 9); if (name ~ /^(config|info|flushall|echo)/) next
				calls[name] = $3; usec[name] = $5; cmds = cmds sprintf("%s %.2f x %.2f µs; ", name, $3 / keys, $7) }
			END {
				scripts = calls["evalsha"] + calls["fcall"]
				total = usec["evalsha"] + usec["fcall"] + usec["ping"]
				if (calls["set"] > 0) total += usec["set"] * (calls["set"] - scripts) / calls["set"]
				printf "| %s | %s | %s | %.2f |\n", round, variant, cmds, total / keys }' | tee -a "$out/rows"
	done
done
echo
echo "| variant | server µs per first call, median of $ROUNDS rounds | lowest |"
echo "|---|---:|---:|"
for variant in $VARIANTS ping; do
	awk -F'|' -v variant="$variant" '$3 == " " variant " " { print $5 + 0 }' "$out/rows" | sort -n |
		awk -v variant="$variant" '{ a[NR] = $1 } END { printf "| %s | %.2f | %.2f |\n", variant, a[int((NR + 1) / 2)], a[1] }'
done
