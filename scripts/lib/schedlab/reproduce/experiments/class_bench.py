"""The experiments of tools/testing/sched/class_bench.sh, as
scripts/bench-sched runs it: every class in one boot, per suite (wakeup,
bmq-thesis, muqss-thesis) and sysbench on 2, 8 and 32 vCPUs."""

from ... import bench, paths
from ..registry import CLASSES, SHARE_CLASSES, Outcome, ReproduceError, bench_info, experiment
from .inputs import apps_inputs


RESULT_ROUND = r"^result \S+ \S+ (\d+) "


def class_bench(ctx, topology, tag, suite, scale, benches, only="", suffix="",
                classes=CLASSES):
    """tools/testing/sched/class_bench.sh for every class in `classes` in
    one boot (classes switched through kernel.sched_class, order rotated
    each round), as scripts/bench-sched runs it; `benches` maps its
    benchmark names to bench_info(). Runs are named BENCH+suffix."""
    classes = ctx.classes or classes
    uleload = ctx.program("uleload") if suite in ("bmq", "muqss") else "''"
    apps = f" {apps_inputs()}" if suite == "muqss" else ""
    cmd = (f"sh {paths.GUEST_TESTS}/class_bench.sh '{' '.join(classes)}' {ctx.rounds} "
           f"{scale} {suite} {uleload} '{only}'{apps}")
    boot = ctx.runner.run(cmd, topology, tag, ctx.track(RESULT_ROUND), ctx.timeout())
    _, commands, failures = bench.parse(boot.output)
    rounds = bench.parse_rounds(boot.output)
    runs = [{"bench": name + suffix, "variant": cls, "round": int(rnd), "value": value,
             "unit": benches[name]["unit"], "topology": topology}
            for name, per_class in rounds.items() if name in benches
            for cls, values in per_class.items() for rnd, value in values.items()]
    failed = {(b, c, int(r)) for b, c, r in failures if str(r).isdigit()}
    missing = [(b, c, r) for b in commands for c in classes for r in range(1, ctx.rounds + 1)
               if str(r) not in rounds.get(b, {}).get(c, {}) and (b, c, r) not in failed]
    if not runs:
        raise ReproduceError(f"class_bench.sh gave no result on {topology} (exit "
                             f"{boot.status}); output in {boot.files}")
    return Outcome(
        runs=runs, benches={name + suffix: benches[name] for name in rounds if name in benches},
        commands={name + suffix: cmd for name, cmd in commands.items()},
        failures=[class_bench_failure(f, suffix) for f in failures] +
                 [{"bench": b + suffix, "variant": c, "round": r, "why": "no run"}
                  for b, c, r in missing],
        release=boot.release)


def class_bench_failure(failure, suffix):
    """A failure of bench.parse() as a record: a run whose tool failed, or
    stall-watchdog reports (after which every task ran on CFS, so later
    runs did not measure the class they name)."""
    name, cls, rnd = failure
    if name == "watchdog":
        return {"bench": "all", "variant": "all", "why": f"{rnd} stall-watchdog reports"}
    return {"bench": name + suffix, "variant": cls, "round": int(rnd), "why": "tool failed"}


WAKEUP = {name: bench_info("s") for name in
          ("hackbench", "pipe", "messaging", "sysbench-threads", "sysbench-mutex")}


@experiment(
    "wakeup",
    title="wakeup-heavy micro-benchmarks per class",
    seed="the ULE paper §6.3 (Figure 8: Sysbench, Hackb-10/800) and the BMQ thesis §5.1 "
         "(messaging, Figures 2-5)",
    published="ULE was slower than CFS on sysbench (13 % of CPU cycles scanning cores at "
              "wakeup, 32 cores) and within a few percent on hackbench; BMQ's perf bench "
              "sched messaging times were below CFS's in every configuration.",
    classes=CLASSES, variants=CLASSES, base="cfs", timed_variants=3,
    default_topology="1x2",
    seconds_per_round=75, quick_seconds=135)
def wakeup(ctx, topology):
    """bench-sched's wakeup suite: hackbench, perf bench sched pipe and
    messaging, sysbench threads and mutex; --scale 4 as the README's
    measurements (0, smoke sizes, with --quick)."""
    return class_bench(ctx, topology, f"wakeup-{topology}", "wakeup",
                       0 if ctx.quick else 4, WAKEUP)


BMQ_THESIS = {"messaging-g10": bench_info("s"), "messaging-g20": bench_info("s")}
BMQ_THESIS.update({f"frames-{n}": bench_info("% frames missed", "difference",
                                             "more missed", "fewer missed")
                   for n in (10, 20, 40)})


@experiment(
    "bmq-thesis",
    title="the BMQ thesis's latency and frame-deadline tests",
    seed="the BMQ thesis §5.1 (Figures 2-5) and §5.2 (Figure 6)",
    published="BMQ's perf bench sched messaging -p -t times were lower than CFS's with "
              "10 and 20 groups at 2000 and 4000 loops; frame drops were similar up to "
              "25 background tasks, above which BMQ dropped fewer frames.",
    classes=CLASSES, variants=CLASSES, base="cfs", timed_variants=3,
    default_topology="1x2",
    seconds_per_round=115, quick_seconds=140)
def bmq_thesis(ctx, topology):
    """bench-sched --suite bmq: messaging with 10 and 20 groups (loops 50
    and 100; the thesis's 2000/4000 would be --scale 40, hours under TCG)
    and the 24 fps frame task beside 10, 20 and 40 spinners; missed frames
    compare as a difference in percentage points."""
    return class_bench(ctx, topology, f"bmq-thesis-{topology}", "bmq",
                       0 if ctx.quick else 1, BMQ_THESIS)


MUQSS_THESIS = {"messaging-g20": bench_info("s"), "make-j1": bench_info("s"),
                "make-jN": bench_info("s"),
                "messaging-switches": bench_info("switches per message", worse="more",
                                                 better="fewer")}
MUQSS_THESIS.update({f"frames-{n}": bench_info("% frames missed", "difference",
                                               "more missed", "fewer missed")
                     for n in (10, 20, 30, 40, 50)})


@experiment(
    "muqss-thesis",
    title="the MuQSS thesis's latency, turnaround and frame-drop tests",
    seed="the MuQSS thesis §4.1-§4.3 (Figures 3-7)",
    published="On a 4-core i5 CFS had lower perf bench sched messaging -p -t -g 20 -l 2000 "
              "times than MuQSS in all 50 runs; make -j1 was a little faster on MuQSS, "
              "make -j4 the same; MuQSS dropped more frames of a 24 fps video than CFS "
              "beside every background load of 10 to 60 rt-app tasks, CFS staying low up "
              "to 40.",
    classes=SHARE_CLASSES, variants=SHARE_CLASSES, base="cfs", default_topology="1x2",
    timed_variants=4, seconds_per_round=270, quick_seconds=60)
def muqss_thesis(ctx, topology):
    """bench-sched --suite muqss: messaging with 20 groups (loops 100; the
    thesis's 2000 would be --scale 20), make -j1 and -jN of eight Lua
    objects (the applications experiment's tree), the 24 fps frame task
    beside 10 to 50 spinners standing in for rt-app's busy tasks (missed
    frames compare as a difference in percentage points), and the
    context switches per message of messaging with 2 groups. MuQSS runs
    twice: as booted (rqshare=mc) and with a queue per CPU."""
    return class_bench(ctx, topology, f"muqss-thesis-{topology}", "muqss",
                       0 if ctx.quick else 1, MUQSS_THESIS, classes=SHARE_CLASSES)


SCALING_TOPOLOGIES = ("1x2", "2x4", "4x8")
SCALING = {"sysbench-threads": bench_info("s"), "sysbench-mutex": bench_info("s")}


@experiment(
    "sysbench-scaling",
    title="sysbench threads and mutex at 2, 8 and 32 vCPUs per class",
    seed="the ULE paper §6.3 (Figure 8, Sysbench; the wakeup scan's cost)",
    published="On 32 cores ULE was slower than CFS on sysbench because its wakeup scanned "
              "the cores, up to three times, on most wakeups (13 % of CPU cycles); with a "
              "wakeup returning the previous CPU there was no difference.",
    classes=CLASSES, variants=CLASSES, base="cfs", timed_variants=3,
    topologies=SCALING_TOPOLOGIES,
    quick_topologies=("1x2",), qemu_mode="icount", quick_qemu_mode="mttcg",
    seconds_per_round=50, quick_seconds=35, estimates=(("1x2", 25), ("2x4", 45), ("4x8", 130)))
def sysbench_scaling(ctx, topology):
    """class_bench.sh's two sysbench runs on one topology; runs are named
    "sysbench-threads 2x4" and so on, so the topologies sit side by side."""
    return class_bench(ctx, topology, f"sysbench-scaling-{topology}", "wakeup",
                       0 if ctx.quick else 1, SCALING,
                       only="sysbench-threads,sysbench-mutex", suffix=f" {topology}")
