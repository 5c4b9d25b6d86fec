"""The barrier-hpc experiment: a barrier-synchronised stencil with one
thread per CPU, its completion time and barrier wait (the ULE paper §6.3)."""

from ..registry import CLASSES, bench_info, experiment
from .series import TAP_NOT_OK, parse_series, series_experiment


BARRIER_MARK = "reproduce-barrier"
STENCIL_COUNTS = ("threads", "iterations", "cells")
BARRIER_BENCHES = {
    "completion time": bench_info("s"),
    "barrier wait": bench_info("% of the run, mean over threads", "difference",
                               "more waiting", "less waiting"),
}
# --quick: 40 sweeps of 4096 cells.
BARRIER_QUICK_ENV = "ITERATIONS=40 CELLS=4096 "


def parse_barrier_run(lines, metrics):
    """One run of barrier_series.sh, its TAP lines and stencil's record:
    ({bench: value}, extra fields, problems: failed TAP checks and
    malformed records); the checksum is kept, every run must record the
    same one for the same sizes."""
    values, extra = {}, {}
    problems = [m[1] for line in lines if (m := TAP_NOT_OK.match(line))]
    for record in metrics:
        if (record.get("name") == "stencil"
                and all(isinstance(record.get(k), int) for k in STENCIL_COUNTS)
                and all(isinstance(record.get(k), (int, float))
                        for k in ("elapsed_ms", "wait_pct"))
                and isinstance(record.get("checksum"), str)):
            values = {"completion time": record["elapsed_ms"] / 1000,
                      "barrier wait": float(record["wait_pct"])}
            extra = {k: record[k] for k in (*STENCIL_COUNTS, "checksum")}
        else:
            problems.append(f"a record the barrier series does not write: {record}")
    if not values and not problems:
        problems.append("no stencil result")
    return values, extra, problems


def parse_barrier(output, topology, files=None):
    """Raw runs and failures of the barrier-hpc experiment's output; runs
    whose checksum differs from the most common one are failures (the
    stencil computed something else)."""
    runs, failures = parse_series(output, topology, BARRIER_MARK, parse_barrier_run,
                                  lambda name: BARRIER_BENCHES[name]["unit"], "completion time",
                                  files=files)
    sums = [r["checksum"] for r in runs if "checksum" in r]
    if sums:
        common = max(set(sums), key=sums.count)
        bad = {(r["variant"], r["round"]) for r in runs if r.get("checksum", common) != common}
        failures += [{"bench": "all", "variant": v, "round": n, "why": "wrong checksum"}
                     for v, n in sorted(bad)]
        runs = [r for r in runs if (r["variant"], r["round"]) not in bad]
    return runs, failures


@experiment(
    "barrier-hpc",
    title="a barrier-synchronised stencil, one thread per CPU",
    seed="the ULE paper §6.3 (Figure 8, NAS MG and the other barrier-bound HPC codes)",
    published="On 32 cores NAS MG, one thread per core meeting at barriers, was 73 % "
              "faster on ULE than on CFS: ULE placed one thread per core and never moved "
              "them, while CFS now and then put two on one core and every barrier waited "
              "for them (threads alone on their cores slept after 100 ms of spinning and "
              "had to be woken); FT and UA gained for the same reason.",
    classes=CLASSES, variants=CLASSES, base="cfs", timed_variants=3,
    default_topology="2x4",
    quick_topologies=("1x2",), seconds_per_round=45, quick_seconds=20)
def barrier_hpc(ctx, topology):
    """tools/testing/sched/barrier_series.sh under each class in one boot:
    stencil.c with one thread per CPU, 400 sweeps of 16384 cells per
    thread; the completion time as a ratio to CFS and the mean share of
    the run each thread waited at barriers as a difference. MTTCG, whose
    completion-time ratios scatter least (reproduction.rst)."""
    return series_experiment(ctx, topology, "barrier-hpc", "barrier_series.sh",
                             BARRIER_QUICK_ENV if ctx.quick else "", BARRIER_MARK,
                             parse_barrier, BARRIER_BENCHES, programs=("stencil",))
