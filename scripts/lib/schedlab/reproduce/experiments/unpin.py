"""The unpin-spread experiment: one spinner per CPU pinned to CPU 0,
then unpinned, and how soon each CPU runs one (the ULE paper §6.1)."""

import math
import os
import statistics

from ... import vm
from ..registry import CLASSES, bench_info, experiment
from .series import TAP_NOT_OK, parse_series, series_experiment


UNPIN_MARK = "reproduce-unpin"
UNPIN_STEP = 0.25
UNPIN_BENCHES = {
    "time to one per CPU": bench_info("s", series=("s since the unpinning",
                                                   "CPUs running a spinner")),
    "CPUs without a spinner": bench_info("CPUs, mean over the window", "difference",
                                         "more idle", "fewer idle"),
}


def unpin_window(cpus, quick):
    """Seconds to sample after the unpinning: long enough for ULE's
    periodic balancer alone (no idle CPU woken to steal), which moves one
    spinner off CPU 0 per pass every 0.5 to 1.5 s, to fill every CPU at
    its slowest: 1.5 s per CPU to fill, at least 15 s; 5 s with --quick,
    which checks only that the experiment completes."""
    return 5 if quick else max(15, math.ceil(1.5 * (cpus - 1)))


def parse_unpin_run(lines, metrics):
    """One run of unpin_series.sh, its TAP lines and its metrics:
    ({bench: value}, extra fields of the time run, problems: failed TAP
    checks and malformed records). The time is that of the first sample
    with one spinner on every CPU; without one, the window's length,
    flagged "censored". Settled at the first sample, the time is only
    how long that sample took to come ("settled_at_first_sample"). The
    series starts with the pinned state at 0."""
    head, pinned, samples = None, [], []
    problems = [m[1] for line in lines if (m := TAP_NOT_OK.match(line))]
    for record in metrics:
        name = record.get("name")
        if (name == "unpin" and isinstance(record.get("cpus"), int)
                and isinstance(record.get("window_cs"), int)):
            head = (record["cpus"], record["window_cs"], str(record.get("always_steal")))
        elif name == "pinned" and isinstance(record.get("cpus"), (str, int)):
            pinned = [[0.0, len(set(str(record["cpus"]).split()) - {"-"})]]
        elif (name == "spread" and isinstance(record.get("t_cs"), int)
              and isinstance(record.get("cpus"), list)):
            samples.append((record["t_cs"],
                            ["-" if c is None else str(c) for c in record["cpus"]]))
        else:
            problems.append(f"a record the unpin series does not write: {record}")
    if not head or not samples:
        return {}, {}, problems + ["no samples"]
    n, window_cs, always_steal = head
    occupied = [len(set(cpus) - {"-"}) for _, cpus in samples]
    settled = next((t for (t, cpus), k in zip(samples, occupied)
                    if k == n and len(cpus) == n), None)
    values = {"time to one per CPU": (settled if settled is not None else window_cs) / 100,
              "CPUs without a spinner": round(statistics.mean(n - k for k in occupied), 3)}
    extra = {"censored": settled is None, "cpus": n, "always_steal": always_steal,
             "first_sample": samples[0][0] / 100,
             "settled_at_first_sample": settled == samples[0][0],
             "series": pinned + [[t / 100, k] for (t, _), k in zip(samples, occupied)],
             "threads_per_cpu": [[cpus.count(str(c)) for c in range(n)] for _, cpus in samples],
             "marks": {"unpinned": 0}}
    return values, extra, problems


def parse_unpin(output, topology, files=None):
    """Raw runs and failures of the unpin-spread experiment's guest output
    and the metrics files in the boot's shared folder `files`."""
    return parse_series(output, topology, UNPIN_MARK, parse_unpin_run,
                        lambda name: UNPIN_BENCHES[name]["unit"], "time to one per CPU",
                        files=files)


@experiment(
    "unpin-spread",
    title="one spinner per CPU pinned to CPU 0, then unpinned",
    seed="the ULE paper §6.1 (Figure 6)",
    published="After 512 spinners pinned to core 0 of 32 were unpinned, ULE's idle cores "
              "each stole one at once and its periodic balancer then moved one thread per "
              "invocation, about 240 s to balance; CFS moved more than 380 threads within "
              "0.2 s but never balanced perfectly (nodes differing by 25 % in load kept "
              "18 vs 15 threads per core).",
    classes=CLASSES, variants=CLASSES, base="cfs", timed_variants=3,
    default_topology="2x4",
    quick_topologies=("2x2",), qemu_mode="tcg", quick_qemu_mode="mttcg",
    seconds_per_round=70, quick_seconds=45, estimates=(("4x8", 200),))
def unpin_spread(ctx, topology):
    """tools/testing/sched/unpin_series.sh under each class in one boot:
    the time from the unpinning until every CPU runs exactly one spinner
    (a ratio to CFS) and the mean number of CPUs without one over the
    window (a difference), the CPUs in use over time kept for the figure."""
    cpus = os.cpu_count() if topology == "host" else vm.topology(topology).cpus
    env = f"WINDOW_S={unpin_window(cpus, ctx.quick)} STEP={UNPIN_STEP} "
    return series_experiment(ctx, topology, "unpin-spread", "unpin_series.sh", env,
                             UNPIN_MARK, parse_unpin, UNPIN_BENCHES)
