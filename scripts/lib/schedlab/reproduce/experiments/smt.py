"""The smt-spread experiment: 1 to 8 spinners on 4 cores x 2 SMT threads
under each class, their placement and the SMT note's modelled throughput."""

from ..registry import SHARE_CLASSES, bench_info, experiment
from .series import parse_series, series_experiment


SMT_FIELDS = ("spinners", "misplaced", "samples", "longest_cs", "busy_cores")
SMT_MARK = "reproduce-smt"


SMT_CORES = 4
MISPLACED = "fraction of samples"
THROUGHPUT = "modelled throughput"
THROUGHPUT_UNIT = "fraction of ideal"
# Spinner counts and sampling: every count of the SMT note's figure, 8 samples
# after 2 s each; --quick: two counts (2 and 5), 2 samples after 1 s.
SMT_COUNTS = tuple(range(1, 9))
SMT_QUICK_COUNTS = (2, 5)


def smt_env(counts, settle_s, samples):
    """smt_spread.sh's environment for these counts and sampling."""
    return (f"REPAIR=0 SETTLE_S={settle_s} SAMPLES={samples} "
            f"COUNTS='{' '.join(map(str, counts))}' ")


SMT_ENV = smt_env(SMT_COUNTS, 2, 8)
SMT_QUICK_ENV = smt_env(SMT_QUICK_COUNTS, 1, 2)


def parse_smt_run(lines, metrics, cores=SMT_CORES):
    """One run of smt_spread.sh, its metrics: ({bench: value}, extra,
    problems). Per count of two or more spinners, the fraction of samples
    in which fewer cores ran one than could (two shared a core while a
    core ran none). Over all counts, the SMT note's modelled throughput: a
    spinner runs at full speed alone on a core and gains nothing from a
    busy sibling (its model of a random scheduler; emulated siblings share
    no execution units, so nothing else is measurable here), so throughput
    is the mean number of cores running a spinner, summed over the counts,
    as a fraction of the ideal sum of min(N, cores); its run carries the
    curve (N, cores' worth) and every count's samples. smt_spread.sh's TAP
    failures are misplacements, the measurement itself, not problems; a
    record it does not write is one."""
    values, curve, counts, problems = {}, [], {}, []
    busy_total = ideal_total = 0.0
    for record in metrics:
        if record.get("name") != "smt" or not all(isinstance(record.get(k), int)
                                                  for k in SMT_FIELDS):
            problems.append(f"a record the smt series does not write: {record}")
            continue
        n, bad, samples = record["spinners"], record["misplaced"], record["samples"]
        if samples == 0:
            continue
        mean = record["busy_cores"] / samples
        counts[n] = {"samples": samples, "misplaced": bad, "longest_cs": record["longest_cs"],
                     "busy_cores": round(mean, 3)}
        if n >= 2:
            values[f"{n} spinners"] = round(bad / samples, 4)
        curve.append([n, round(mean, 3)])
        busy_total, ideal_total = busy_total + mean, ideal_total + min(n, cores)
    if not counts:
        return {}, {}, problems + ["no samples"]
    if ideal_total:
        values[THROUGHPUT] = round(busy_total / ideal_total, 4)
    return values, {"series": curve, "counts": counts}, problems


def parse_smt(output, topology, files=None):
    """Raw runs and failures of the smt-spread experiment's guest output
    and the metrics files in the boot's shared folder `files`."""
    return parse_series(output, topology, SMT_MARK, parse_smt_run,
                        lambda name: THROUGHPUT_UNIT if name == THROUGHPUT else MISPLACED,
                        THROUGHPUT, files=files)


def smt_benches(counts):
    """Misplacement per count of two or more, and the modelled throughput
    over all counts (bench_info's words name the sign of a difference:
    for throughput higher is better)."""
    info = {f"{n} spinners": bench_info(MISPLACED, "difference", "more misplaced",
                                        "less misplaced") for n in counts if n >= 2}
    info[THROUGHPUT] = bench_info(THROUGHPUT_UNIT, "difference", "higher", "lower",
                                  series=("spinners", "modelled throughput (cores' worth)"))
    return info


@experiment(
    "smt-spread",
    title="1 to 8 independent spinners on 4 cores x 2 SMT threads: placement and throughput",
    seed="the SMT note (SMT placement and throughput against the number of instances)",
    published="CFS placed up to 4 instances one per core, as manual affinity did: "
              "throughput rose linearly to 4 instances and stayed flat to 8; BFS doubled "
              "up on a core while another idled, losing throughput between 2 and 6 "
              "instances, about halfway between ideal and random placement.",
    classes=SHARE_CLASSES, variants=SHARE_CLASSES, base="cfs", timed_variants=3,
    topologies=("smt",),
    qemu_mode="tcg", quick_qemu_mode="mttcg", seconds_per_round=195,
    quick_seconds=120)
def smt_spread(ctx, topology):
    """tools/testing/sched/smt_spread.sh with 1 to 8 spinners under each
    class, switched at run time: per count the fraction of misplaced
    samples, and the SMT note's modelled throughput over all counts, each
    compared with CFS as a difference."""
    quick = ctx.quick
    return series_experiment(ctx, topology, "smt-spread", "smt_spread.sh",
                             SMT_QUICK_ENV if quick else SMT_ENV, SMT_MARK, parse_smt,
                             smt_benches(SMT_QUICK_COUNTS if quick else SMT_COUNTS),
                             classes=SHARE_CLASSES)
