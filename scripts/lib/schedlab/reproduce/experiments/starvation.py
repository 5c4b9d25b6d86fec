"""The starvation experiment: a CPU hog beside 80 mostly sleeping
threads on one CPU, its share before, beside and after them (the ULE paper
§5.1)."""

from ..registry import CLASSES, bench_info, experiment
from .series import TAP_NOT_OK, parse_series, series_experiment


STARVATION_MARK = "reproduce-starvation"
POOL_EVENTS = ("launch", "start", "end", "gone")
SHARE_UNIT = "% of CPU 1"
STARVATION_BENCHES = {
    "hog alone": bench_info(SHARE_UNIT, "difference", "higher share", "lower share"),
    "hog beside the pool": bench_info(SHARE_UNIT, "difference", "higher share", "lower share",
                                      series=("s since the pool's threads started",
                                              "hog's share of CPU 1 (%)")),
    "hog after the pool": bench_info(SHARE_UNIT, "difference", "higher share", "lower share"),
}
# --quick: a 4 s pool between 2 s alone and 2 s after (10 s, 4 s and 3 s).
STARVATION_QUICK_ENV = "POOL_S=4 ALONE_S=2 AFTER_S=2 "


def share_between(samples, low, high):
    """The hog's share of its CPU in percent from the first to the last
    of its (centiseconds, run ns) samples within [low, high]; None with
    fewer than two there."""
    inside = [(t, ns) for t, ns in samples if low <= t <= high]
    if len(inside) < 2 or inside[-1][0] <= inside[0][0]:
        return None
    (t0, n0), (t1, n1) = inside[0], inside[-1]
    return round((n1 - n0) / ((t1 - t0) * 1e5), 3)


def share_series(samples, origin):
    """[[seconds since `origin`, share in percent]] over each interval
    between two samples, dated at its end: the Figure's curve."""
    return [[round((t1 - origin) / 100, 2), round((n1 - n0) / ((t1 - t0) * 1e5), 2)]
            for (t0, n0), (t1, n1) in zip(samples, samples[1:]) if t1 > t0]


def parse_starvation_run(lines, metrics):
    """One run of starvation_series.sh, its TAP lines and its metrics:
    ({bench: share or None}, extra fields of the "beside" run, problems:
    failed TAP checks and malformed records). Windows: alone from 0.5 s
    after the start to the pool's launch; beside from 1 s after the
    latest its threads can have started to 0.25 s before the earliest
    they can have ended (the script records those bounds); after from
    0.5 s after the pool is gone to the end."""
    samples, pool = [], {}
    problems = [m[1] for line in lines if (m := TAP_NOT_OK.match(line))]
    for record in metrics:
        name, t = record.get("name"), record.get("t_cs")
        if not isinstance(t, int):
            problems.append(f"a {name} record without an integer t_cs: {record}")
        elif name == "hog" and isinstance(record.get("run_ns"), int):
            samples.append((t, record["run_ns"]))
        elif name == "pool" and record.get("event") in POOL_EVENTS:
            pool[record["event"]] = t
        else:
            problems.append(f"a record the starvation series does not write: {record}")
    if not samples:
        return {}, {}, problems + ["no samples"]
    values = {
        "hog alone": share_between(samples, samples[0][0] + 50, pool["launch"])
        if "launch" in pool else None,
        "hog beside the pool": share_between(
            samples, pool["start"] + 100, min(pool["end"], pool.get("gone", pool["end"])) - 25)
        if "start" in pool and "end" in pool else None,
        "hog after the pool": share_between(samples, pool["gone"] + 50, samples[-1][0])
        if "gone" in pool else None,
    }
    origin = pool.get("start", samples[0][0])
    marks = {label: round((pool[key] - origin) / 100, 2)
             for key, label in (("launch", "pool launched"), ("start", "threads start"),
                                ("end", "threads end")) if key in pool}
    return values, {"series": share_series(samples, origin), "marks": marks}, problems


def parse_starvation(output, topology, files=None):
    """Raw runs and failures of the starvation experiment's guest output
    and the metrics files in the boot's shared folder `files`."""
    return parse_series(output, topology, STARVATION_MARK, parse_starvation_run,
                        lambda name: SHARE_UNIT, "hog beside the pool", files=files)


@experiment(
    "starvation",
    title="a CPU hog beside 80 mostly sleeping threads on one CPU",
    seed="the ULE paper §5.1 (Figure 1, Table 2)",
    published="On CFS fibo kept accumulating run time while sysbench's 80 mostly sleeping "
              "threads shared its core, at a bit less than half the core; on ULE those "
              "threads stayed interactive and fibo got no CPU at all while they ran (the "
              "starvation is not bounded), then ran alone again.",
    classes=CLASSES, variants=CLASSES, base="cfs", timed_variants=3,
    default_topology="1x2",
    # icount scatters least (reproduction.rst, "Spread per QEMU mode"); under
    # icount the debug kernel's 80-thread pool overruns its phase.
    qemu_mode="icount", quick_qemu_mode="mttcg", seconds_per_round=70, quick_seconds=45)
def starvation(ctx, topology):
    """tools/testing/sched/starvation_series.sh under each class in one
    boot: the hog's share of CPU 1 alone, beside the pool and after it,
    compared with CFS as a difference (ULE's share can be 0), with the
    share over time kept in the "beside" runs for the figure."""
    return series_experiment(ctx, topology, "starvation", "starvation_series.sh",
                             STARVATION_QUICK_ENV if ctx.quick else "", STARVATION_MARK,
                             parse_starvation, STARVATION_BENCHES)
