"""The wakeup-latency experiment: cyclictest, rt-app and wakelat beside
CPU-bound load, their p50, p99 and p99.9 per class."""

import math
import re

from ..registry import CLASSES, bench_info, experiment
from .series import TAP_NOT_OK, parse_series, series_experiment


LATENCY_MARK = "reproduce-latency"
LATENCY_HIST = re.compile(r"^# hist (\S+)((?: \d+:\d+)*)$")
LATENCY_WAKELAT = re.compile(r"^wakelat .* samples (\d+) p50_us (\d+) p90_us \d+ "
                             r"p99_us (\d+) p999_us (\d+) max_us (\d+)")
LATENCY_PROBES = ("cyclictest", "rt-app", "wakelat")
PERCENTILES = (("p50", 50.0), ("p99", 99.0), ("p99.9", 99.9))
LATENCY_BENCHES = {f"{probe} {name}": bench_info("us", worse="higher", better="lower")
                   for probe in LATENCY_PROBES for name, _ in PERCENTILES}
# --quick: 1 s per probe.
LATENCY_QUICK_ENV = "RUN_S=1 "


def percentile(hist, pct):
    """Nearest-rank percentile of a histogram {value: count}: the smallest
    value with at least pct % of the samples at or below it."""
    total = sum(hist.values())
    rank, seen = max(1, math.ceil(round(pct * total / 100, 6))), 0   # 99.9 % of 1000: 999
    for value in sorted(hist):
        seen += hist[value]
        if seen >= rank:
            return value
    raise ValueError("empty histogram")


def parse_latency_run(lines):
    """One run of latency_series.sh: ({"PROBE pXX": us}, extra fields,
    failed TAP checks). cyclictest and rt-app print histograms whose
    percentiles are taken here; wakelat prints its own."""
    values, extra, problems = {}, {"samples": {}}, []
    for line in lines:
        if m := LATENCY_HIST.match(line):
            hist = {int(v): int(c) for v, c in (f.split(":") for f in m[2].split())}
            if hist:
                extra["samples"][m[1]] = sum(hist.values())
                for name, pct in PERCENTILES:
                    values[f"{m[1]} {name}"] = percentile(hist, pct)
        elif m := LATENCY_WAKELAT.match(line):
            extra["samples"]["wakelat"] = int(m[1])
            values.update({"wakelat p50": int(m[2]), "wakelat p99": int(m[3]),
                           "wakelat p99.9": int(m[4])})
        elif m := TAP_NOT_OK.match(line):
            problems.append(m[1])
    if not values:
        problems.append("no latencies")
    return values, extra, problems


def parse_latency(output, topology, files=None):
    """Raw runs and failures of the wakeup-latency experiment's output."""
    return parse_series(output, topology, LATENCY_MARK, lambda lines, _metrics: parse_latency_run(lines),
                        lambda name: "us", "", files=files)


@experiment(
    "wakeup-latency",
    title="wakeup latency percentiles beside CPU-bound load",
    seed="the latency claims of the BMQ thesis §5.1, the MuQSS thesis §4.1 and the ULE "
         "paper §5 (cyclictest, rt-app, a schbench-like benchmark)",
    published="No seed gives percentiles. The BMQ thesis measured BMQ's messaging latency below "
              "CFS's; the MuQSS thesis measured hackbench latency about 4 times lower on CFS than on "
              "MuQSS; the ULE paper shows ULE running the tasks it deems interactive first.",
    classes=CLASSES, variants=CLASSES, base="cfs", timed_variants=3,
    default_topology="1x2",
    seconds_per_round=120, quick_seconds=35)
def wakeup_latency(ctx, topology):
    """tools/testing/sched/latency_series.sh under each class in one boot:
    beside one spinner per CPU, cyclictest, rt-app and wakelat for 10 s
    each; p50, p99 and p99.9 of each, as ratios to CFS. 2 vCPUs by
    default: more vCPUs than host cores add host stalls of tens of ms."""
    return series_experiment(ctx, topology, "wakeup-latency", "latency_series.sh",
                             LATENCY_QUICK_ENV if ctx.quick else "", LATENCY_MARK,
                             parse_latency, LATENCY_BENCHES, ("uleload", "wakelat"))
