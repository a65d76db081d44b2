#!/usr/bin/env bash
# JMH benchmarks of the per-call cost of @Idempotent (in-memory store), next to a direct call.
# Usage: benchmarks/run-jmh.sh [JMH options]   (default: one fork, 5 x 1 s warm-up, 5 x 2 s measurement)
# Example with a profile: benchmarks/run-jmh.sh -prof jfr IdempotentCallBenchmark.firstCall
set -euo pipefail
cd "$(dirname "$0")"
if [[ "${SKIP_BUILD:-}" != "1" ]]; then
	(cd .. && ./mvnw -B -q -Pbenchmarks -pl benchmarks -am package -DskipTests)
fi
CLASSPATH="target/classes:$(cat target/classpath.txt)"
if [[ $# -eq 0 ]]; then
	set -- -f 1 -wi 5 -i 5 -w 1s -r 2s -jvmArgsAppend "-Xms1g -Xmx1g" IdempotentCallBenchmark
fi
exec java -cp "$CLASSPATH" org.openjdk.jmh.Main "$@"
