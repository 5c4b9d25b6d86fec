"""The interactivity-trace experiment: 128 sysbench threads on one CPU,
which of them run and which starve (the ULE paper §5.2)."""

from ..registry import CLASSES, bench_info, experiment
from .series import TAP_NOT_OK, parse_series, series_experiment


ITRACE_MARK = "reproduce-itrace"
# A thread starves when it gets less than this fraction of an equal share
# of its CPU over the measured window.
ITRACE_STARVED_SHARE = 0.1
# The window starts this far into the run (threads created, the first
# scores settled) and ends at the last sample that saw every thread.
ITRACE_SETTLE = 0.4
ITRACE_BENCHES = {
    "starved threads": bench_info("threads", "difference", "more starved", "fewer starved",
                                  series=("s since sysbench started",
                                          "threads that ran in the last step")),
    "fairness": bench_info("Jain's index (1: equal)", "difference", "fairer", "less fair"),
}
# --quick: 16 threads for 3 s.
ITRACE_QUICK_ENV = "THREADS=16 RUN_S=3 "


def jain(values):
    """Jain's fairness index of non-negative values: 1 when all are equal,
    1/n when one value has everything."""
    total, squares = sum(values), sum(v * v for v in values)
    return round(total * total / (len(values) * squares), 4) if squares else None


def valid_threads(threads):
    """A sample's threads: [[tid, run_us, score or None], ...]."""
    return isinstance(threads, list) and all(
        isinstance(t, list) and len(t) == 3 and isinstance(t[0], int) and isinstance(t[1], int)
        and (t[2] is None or isinstance(t[2], int)) for t in threads)


def parse_itrace_run(lines, metrics):
    """One run of interactivity_series.sh, its TAP lines and its metrics:
    ({bench: value}, extra fields of the "starved threads" run, problems:
    failed TAP checks and malformed records). The first thread is
    sysbench's main thread, the others its workers; the window runs from
    ITRACE_SETTLE of the time between the first and last samples that saw
    every worker to the last of them. Extra: the threads that ran in each
    step over time, and per worker its run time (ms) and ULE score (None
    off ULE) at every sample, for the figures."""
    samples, head = [], None
    problems = [m[1] for line in lines if (m := TAP_NOT_OK.match(line))]
    for record in metrics:
        name = record.get("name")
        if name == "itrace" and isinstance(record.get("threads"), int):
            head = record["threads"]
        elif (name == "threads" and isinstance(record.get("t_cs"), int)
              and valid_threads(record.get("threads"))):
            samples.append((record["t_cs"], [tuple(t) for t in record["threads"][1:]]))
        elif name != "events":
            problems.append(f"a record the interactivity series does not write: {record}")
    full = [(t, th) for t, th in samples if head and len(th) == head]
    if not full or len(full) < 3:
        return {}, {}, problems + [f"fewer than 3 samples saw all {head} threads"]
    t0, t1 = full[0][0], full[-1][0]
    start = next(s for s in full if s[0] >= t0 + ITRACE_SETTLE * (t1 - t0))
    grown = [b[1] - a[1] for a, b in zip(start[1], full[-1][1])]
    share = sum(grown) / len(grown)
    values = {"starved threads": sum(1 for g in grown if g < ITRACE_STARVED_SHARE * share),
              "fairness": jain(grown)}
    ran = [[round((b[0] - t0) / 100, 2), sum(1 for x, y in zip(a[1], b[1]) if y[1] > x[1])]
           for a, b in zip(full, full[1:])]
    extra = {"series": ran, "marks": {"window": round((start[0] - t0) / 100, 2)},
             "per_thread": {"x": [round((t - t0) / 100, 2) for t, _ in full],
                         "run_ms": [[round(r / 1000, 1) for _, r, _ in th] for _, th in full],
                         "score": [[s for _, _, s in th] for _, th in full]}}
    return values, extra, problems


def parse_itrace(output, topology, files=None):
    """Raw runs and failures of the interactivity-trace experiment's guest
    output; per-thread samples are kept for the first round only."""
    runs, failures = parse_series(output, topology, ITRACE_MARK, parse_itrace_run,
                                  lambda name: ITRACE_BENCHES[name]["unit"], "starved threads",
                                  files=files)
    for run in runs:
        if run["round"] != 1:
            run.pop("per_thread", None)
    return runs, failures


@experiment(
    "interactivity-trace",
    title="128 sysbench threads on one CPU: who runs, who starves",
    seed="the ULE paper §5.2 (Figures 3 and 4)",
    published="On ULE sysbench's threads inherited the interactivity penalty of the main "
              "thread when created: 80 of 128 were interactive, ran, and saw their penalty "
              "fall to 0; the other 48 stayed above the threshold and never ran. CFS ran "
              "every thread.",
    classes=CLASSES, variants=CLASSES, base="cfs", timed_variants=3,
    default_topology="1x2",
    qemu_mode="icount", quick_qemu_mode="mttcg", seconds_per_round=61, quick_seconds=25)
def interactivity_trace(ctx, topology):
    """tools/testing/sched/interactivity_series.sh under each class in one
    boot: sysbench (sysbench_sleepers.lua: 1 ms of CPU, 4 ms asleep per
    event) with 128 threads on CPU 1 for 15 s; the threads that starve
    over the run's last 60 % and Jain's index of their run times, compared
    with CFS as differences; the first round's per-thread run time and
    score for the figures."""
    env = ITRACE_QUICK_ENV if ctx.quick else "RUN_S=15 "
    return series_experiment(ctx, topology, "interactivity-trace", "interactivity_series.sh",
                             env, ITRACE_MARK, parse_itrace, ITRACE_BENCHES)
