#!/usr/bin/env python3
"""Hot methods of a JFR recording (JDK 17's jfr tool has no 'view'): self and total samples.

Usage: jfr print --json --events jdk.ExecutionSample rec.jfr | tools/jfr-hot-methods.py [TOP] [FILTER]
FILTER keeps only the stacks that contain a frame whose name contains it (e.g. io.github.idempotent).
"""
import collections
import json
import sys

top = int(sys.argv[1]) if len(sys.argv) > 1 else 30
only = sys.argv[2] if len(sys.argv) > 2 else None
events = json.load(sys.stdin)["recording"]["events"]
self_counts = collections.Counter()
total_counts = collections.Counter()
samples = 0
for event in events:
    frames = event["values"]["stackTrace"]["frames"] if event["values"].get("stackTrace") else []
    names = [f["method"]["type"]["name"].replace("/", ".") + "." + f["method"]["name"] for f in frames]
    if only and not any(only in n for n in names):
        continue
    samples += 1
    if names:
        self_counts[names[0]] += 1
    for name in set(names):
        total_counts[name] += 1
print(f"{samples} samples")
print("--- self ---")
for name, count in self_counts.most_common(top):
    print(f"{100.0 * count / samples:6.2f}%  {name}")
print("--- total (inclusive) ---")
for name, count in total_counts.most_common(top):
    print(f"{100.0 * count / samples:6.2f}%  {name}")
