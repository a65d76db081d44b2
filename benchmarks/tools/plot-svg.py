#!/usr/bin/env python3
"""The pictures of docs/benchmarks.md and benchmarks/RELIABILITY.md, drawn as plain SVG (no plotting library).

latency: percentile curves of wrk runs (the PERCENTILES line of benchmarks/wrk/payments.lua), x = percentile
on the log scale of 1 / (1 - p) as HdrHistogram plots draw it, y = milliseconds. Called by benchmarks/run-http.sh.

  plot-svg.py latency -o OUT.svg --title T [--caption LINE]... LABEL=WRK_OUTPUT[:dashed]...

timeline: a chaos campaign's fault windows (shaded bands, one row per kind) over the answers its clients got,
per second, stacked by class. Called by benchmarks/run-chaos.sh with the CSV files the campaign writes.

  plot-svg.py timeline -o OUT.svg --title T [--caption LINE]... --faults F.csv --answers A.csv
"""

import argparse
import csv
import math
import sys
from xml.sax.saxutils import escape

FONT = 'font-family="sans-serif"'
COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]


def text(x, y, s, size=12, anchor="start", extra=""):
    return f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" {FONT} {extra}>{escape(s)}</text>'


def svg(width, height, body):
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}">\n<rect width="100%" height="100%" fill="white"/>\n'
            + "\n".join(body) + "\n</svg>\n")


def header(title, captions, width):
    body = [text(width / 2, 24, title, 16, "middle", 'font-weight="bold"')]
    for i, line in enumerate(captions):
        body.append(text(width / 2, 44 + 15 * i, line, 11, "middle", 'fill="#444"'))
    return body, 44 + 15 * len(captions)


def nice_step(span, ticks=6):
    raw = span / ticks
    power = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * power:
            return m * power
    return 10 * power


def y_ticks(left, right, y_max, step, sy):
    """Grid lines and labels of a linear y axis from 0 to y_max."""
    body, tick = [], 0.0
    while tick <= y_max + 1e-9:
        y = sy(tick)
        body.append(f'<line x1="{left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="#eee"/>')
        body.append(text(left - 6, y + 4, f"{tick:g}", 11, "end"))
        tick += step
    return body


def read_percentiles(path):
    with open(path) as f:
        for line in f:
            if line.startswith("PERCENTILES "):
                return [(float(p), int(us) / 1000.0) for p, us in (kv.split("=") for kv in line.split()[1:])]
    sys.exit(f"no PERCENTILES line in {path}")


def latency(args):
    # Wide enough for the longest caption line (about 7 px a character at 11 px).
    width, height = max(900, 40 + 7 * max([len(line) for line in args.caption] + [0])), 560
    body, top = header(args.title, args.caption, width)
    left, right, top, bottom = 70, width - 200, top + 15, height - 50
    series = []
    for spec in args.series:
        label, path = spec.split("=", 1)
        dashed = path.endswith(":dashed")
        series.append((label, dashed, read_percentiles(path[:-7] if dashed else path)))
    # x: log10(1 / (1 - p/100)); 100 (the maximum) is drawn at 99.999.
    def px(p):
        return math.log10(1 / (1 - min(p, 99.999) / 100))
    x_max = px(99.999)
    # y: milliseconds on a log scale, whole decades, so that the median and the tail both show.
    values = [ms for _, _, points in series for _, ms in points if ms > 0]
    y_lo = 10 ** math.floor(math.log10(min(values)))
    y_hi = 10 ** math.ceil(math.log10(max(values)))

    def sx(p):
        return left + (right - left) * px(p) / x_max

    def sy(ms):
        v = math.log10(max(ms, y_lo))
        return bottom - (bottom - top) * (v - math.log10(y_lo)) / (math.log10(y_hi) - math.log10(y_lo))

    body.append(f'<rect x="{left}" y="{top}" width="{right - left}" height="{bottom - top}" fill="none" stroke="#999"/>')
    for p, label in ((0, "0%"), (50, "50%"), (90, "90%"), (99, "99%"), (99.9, "99.9%"), (99.99, "99.99%"), (99.999, "max")):
        x = sx(p)
        body.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{bottom}" stroke="#ddd"/>')
        body.append(text(x, bottom + 16, label, 11, "middle"))
    decade = y_lo
    while decade <= y_hi * 1.001:
        for m in (1, 2, 5):
            if decade * m <= y_hi * 1.001:
                y = sy(decade * m)
                body.append(f'<line x1="{left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="{"#ddd" if m == 1 else "#f2f2f2"}"/>')
                body.append(text(left - 6, y + 4, f"{decade * m:g}", 11 if m == 1 else 9, "end"))
        decade *= 10
    body.append(text(left + (right - left) / 2, height - 12, "percentile (log scale of 1 / (1 - p))", 12, "middle"))
    body.append(text(18, top + (bottom - top) / 2, "latency (ms, log scale)", 12, "middle",
                     f'transform="rotate(-90 18 {top + (bottom - top) / 2:.1f})"'))
    colours = {}
    for i, (label, dashed, points) in enumerate(series):
        name = label.split(",")[0]
        colour = colours.setdefault(name, COLOURS[len(colours) % len(COLOURS)])
        path = " ".join(f"{sx(p):.1f},{sy(ms):.1f}" for p, ms in points)
        dash = ' stroke-dasharray="6 4"' if dashed else ""
        body.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>')
        ly = top + 10 + 20 * i
        body.append(f'<line x1="{right + 12}" y1="{ly}" x2="{right + 40}" y2="{ly}" stroke="{colour}" stroke-width="2"{dash}/>')
        body.append(text(right + 46, ly + 4, label, 11))
    with open(args.output, "w") as f:
        f.write(svg(width, height, body))


ANSWER_CLASSES = [("200", "#2ca02c"), ("409", "#ff7f0e"), ("5xx", "#d62728"), ("other 4xx", "#f7b6d2"),
                  ("no answer", "#333333")]
# Fault kinds in colours that none of the answer classes uses.
FAULT_COLOURS = ["#1f77b4", "#9467bd", "#8c564b", "#17becf", "#bcbd22", "#e377c2", "#393b79", "#7f7f7f", "#637939",
                 "#aec7e8", "#c5b0d5"]


def timeline(args):
    with open(args.answers) as f:
        answers = list(csv.DictReader(f))
    with open(args.faults) as f:
        faults = list(csv.DictReader(f))
    kinds = sorted({row["kind"] for row in faults})
    seconds = [int(row["second"]) for row in answers]
    span = max(seconds + [int(float(row["end_ms"]) / 1000) for row in faults] + [1]) + 1
    width = max(1000, 40 + 7 * max([len(line) for line in args.caption] + [0]))
    band = 18
    body, top = header(args.title, args.caption, width)
    left, right = 110, width - 130
    chart_top = top + 15
    chart_bottom = chart_top + 220
    faults_top = chart_bottom + 30
    height = faults_top + band * max(1, len(kinds)) + 50

    def sx(t):
        return left + (right - left) * t / span

    totals = [sum(int(row[c]) for c, _ in ANSWER_CLASSES) for row in answers]
    y_max = max(totals + [1]) * 1.1
    step = nice_step(y_max, 4)
    y_max = math.ceil(y_max / step) * step

    def sy(n):
        return chart_bottom - (chart_bottom - chart_top) * n / y_max

    fault_colours = {kind: FAULT_COLOURS[i % len(FAULT_COLOURS)] for i, kind in enumerate(kinds)}
    for row in faults:
        x1, x2 = sx(float(row["start_ms"]) / 1000), sx(float(row["end_ms"]) / 1000)
        w = max(x2 - x1, 1.5)
        colour = fault_colours[row["kind"]]
        y = faults_top + band * kinds.index(row["kind"])
        title = f'{row["kind"]} {row["target"]}: {row["start_ms"]}..{row["end_ms"]} ms'
        body.append(f'<rect x="{x1:.1f}" y="{y + 2}" width="{w:.1f}" height="{band - 4}" fill="{colour}" '
                    f'fill-opacity="0.8"><title>{escape(title)}</title></rect>')
    for i, kind in enumerate(kinds):
        body.append(text(left - 6, faults_top + band * i + band / 2 + 4, kind, 11, "end"))
    body.append(f'<rect x="{left}" y="{chart_top}" width="{right - left}" height="{chart_bottom - chart_top}" '
                f'fill="none" stroke="#999"/>')
    body += y_ticks(left, right, y_max, step, sy)
    body.append(text(30, chart_top + (chart_bottom - chart_top) / 2, "answers / s", 12, "middle",
                     f'transform="rotate(-90 30 {chart_top + (chart_bottom - chart_top) / 2:.1f})"'))
    bar = (right - left) / span
    for row, second in zip(answers, seconds):
        base = 0
        for name, colour in ANSWER_CLASSES:
            n = int(row[name])
            if n:
                body.append(f'<rect x="{sx(second):.1f}" y="{sy(base + n):.1f}" width="{max(bar - 0.5, 0.5):.1f}" '
                            f'height="{sy(base) - sy(base + n):.1f}" fill="{colour}"/>')
                base += n
    # Fault windows reach up over the answers, lightly, so that a dip lines up with its cause.
    for row in faults:
        x1, x2 = sx(float(row["start_ms"]) / 1000), sx(float(row["end_ms"]) / 1000)
        body.append(f'<rect x="{x1:.1f}" y="{chart_top}" width="{max(x2 - x1, 1.5):.1f}" '
                    f'height="{chart_bottom - chart_top}" fill="{fault_colours[row["kind"]]}" fill-opacity="0.18"/>')
    axis = faults_top + band * max(1, len(kinds)) + 4
    tstep = nice_step(span, 10)
    t = 0.0
    while t <= span:
        body.append(f'<line x1="{sx(t):.1f}" y1="{chart_top}" x2="{sx(t):.1f}" y2="{axis}" stroke="#ccc" '
                    f'stroke-dasharray="2 3"/>')
        body.append(text(sx(t), axis + 14, f"{t:g}", 11, "middle"))
        t += tstep
    body.append(text(left + (right - left) / 2, axis + 32, "seconds since the clients started", 12, "middle"))
    for i, (name, colour) in enumerate(ANSWER_CLASSES):
        y = chart_top + 8 + 18 * i
        body.append(f'<rect x="{right + 12}" y="{y - 9}" width="12" height="12" fill="{colour}"/>')
        body.append(text(right + 30, y + 1, name, 11))
    body.append(text(right + 12, faults_top - 8, "faults injected", 11))
    with open(args.output, "w") as f:
        f.write(svg(width, height, body))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("latency", "timeline"):
        p = sub.add_parser(name)
        p.add_argument("-o", "--output", required=True)
        p.add_argument("--title", required=True)
        p.add_argument("--caption", action="append", default=[])
        if name == "latency":
            p.add_argument("series", nargs="+", help="LABEL=WRK_OUTPUT, :dashed at the end for a dashed line")
        else:
            p.add_argument("--faults", required=True)
            p.add_argument("--answers", required=True)
    args = parser.parse_args()
    latency(args) if args.command == "latency" else timeline(args)


if __name__ == "__main__":
    main()
