"""The wakeup-latency experiment: cyclictest, rt-app and wakelat beside
CPU-bound load, their p50, p99 and p99.9 per class."""

import math

from ..registry import CLASSES, bench_info, experiment
from .series import TAP_NOT_OK, parse_series, series_experiment


LATENCY_MARK = "reproduce-latency"
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


def valid_bins(bins):
    """A histogram record's bins, [[us, count], ...] of whole numbers."""
    return isinstance(bins, list) and all(
        isinstance(b, list) and len(b) == 2 and all(isinstance(v, int) for v in b)
        for b in bins)


def parse_latency_run(lines, metrics):
    """One run of latency_series.sh, its TAP lines and its metrics:
    ({"PROBE pXX": us}, extra fields, problems: failed TAP checks and
    malformed records). cyclictest's and rt-app's histograms are turned
    into percentiles here; wakelat records its own."""
    values, extra = {}, {"samples": {}}
    problems = [m[1] for line in lines if (m := TAP_NOT_OK.match(line))]
    for record in metrics:
        name = record.get("name")
        if (name == "hist" and record.get("probe") in LATENCY_PROBES
                and valid_bins(record.get("bins"))):
            hist = {us: count for us, count in record["bins"] if count}
            if hist:
                probe = record["probe"]
                extra["samples"][probe] = sum(hist.values())
                for pname, pct in PERCENTILES:
                    values[f"{probe} {pname}"] = percentile(hist, pct)
        elif name == "wakelat" and all(isinstance(record.get(k), int) for k in
                                       ("samples", "p50_us", "p99_us", "p999_us")):
            extra["samples"]["wakelat"] = record["samples"]
            values.update({"wakelat p50": record["p50_us"], "wakelat p99": record["p99_us"],
                           "wakelat p99.9": record["p999_us"]})
        else:
            problems.append(f"a record the latency series does not write: {record}")
    if not values:
        problems.append("no latencies")
    return values, extra, problems


def parse_latency(output, topology, files=None):
    """Raw runs and failures of the wakeup-latency experiment's output."""
    return parse_series(output, topology, LATENCY_MARK, parse_latency_run,
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
