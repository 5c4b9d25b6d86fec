"""Classes for normal tasks compared in one boot: hackbench, perf bench
sched pipe and messaging, sysbench threads and mutex (--suite wakeup), the
BMQ thesis's messaging and 24 fps frame-deadline tests (--suite bmq), or
the MuQSS thesis's latency, turnaround and frame-drop tests (--suite muqss),
or a switch's cost with the other CPUs idle (--suite pick), or the other
CPUs' service while thousands of threads wait on two (--suite walk).

    scripts/bench-sched [-t 2x4] [--classes cfs,ule[:FEAT],muqss[:rqshare=MODE]]
                        [--rounds 10] [--scale 1]
                        [--suite wakeup|bmq|muqss|pick|walk] [--only BENCH,...]
                        [--qemu-mode mttcg|tcg|icount]

--suite bmq runs perf bench sched messaging -p -t -g 10 and -g 20 (loops
50 and 100 times --scale; --scale 40 is the thesis's -l 2000/4000) and a
periodic frame task (24 fps, 3 ms of CPU per frame) beside 10, 20 and 40
spinners, reporting the percentage of frames that missed their deadline.
--suite muqss runs perf bench sched messaging -p -t -g 20 (loops 100 times
--scale), make -j1 and -jN of eight objects of Lua 5.4 (downloaded from
Debian once, into build/apps), the frame task beside 10 to 50 spinners,
and the context switches per message of messaging -g 2 (loops 100 times
--scale): how often a sync wakeup preempts its waker.
--suite pick runs perf bench sched pipe pinned to CPU 0 (20000 round trips
times --scale), microseconds per round trip: every pick happens on CPU 0
while the others idle, so a pick that reads every CPU's queue pays for the
topology's size (-t 8x8 --qemu-mode icount shows it best).
--suite walk keeps 5000 spinning threads pinned to CPUs 0-1 for the whole
boot and runs perf bench sched pipe (20000 round trips times --scale,
microseconds per round trip) and cyclictest (4 SCHED_FIFO threads, 5 s times --scale;
its 99th percentile and maximum, us) on the other CPUs: the walks over a
queue with its lock held (ULE's idle steal, MuQSS's look across queues, the
stall watchdog's check) meet those threads whenever one of them idles.

Builds the base configuration (no lockdep: its cost would swamp what is
measured), boots the topology once and runs
tools/testing/sched/class_bench.sh, which moves every normal task between
the classes through kernel.sched_class and alternates which class goes
first each round. Prints the median time per benchmark and class and the
ratio of each class to CFS (above 1: slower than CFS): the median of the
per-round ratios, with the spread of the runs and a bootstrap 95 %
interval that says "no difference measured" when it includes 1; results
also go to build/bench-sched.json. Ratios only: the host
is shared and emulated, so absolute times mean little. More vCPUs than host
cores adds host stalls: use -t 2 for latency-bound figures (pipe) and a
bigger topology for the cost of the wakeup search. --qemu-mode icount
makes guest time follow instruction counts, so host load does not stretch
it (about 2x slower in wall time).
"""
import argparse
import json
import re
import sys

from schedlab import bench, build, command, paths, vm
from schedlab.tree import TreeError

KNOWN = vm.SCHED_CLASSES
SUITES = ("wakeup", "bmq", "muqss", "pick", "walk")
BENCHES = {"wakeup": ("hackbench", "pipe", "messaging", "sysbench-threads", "sysbench-mutex"),
           "bmq": ("messaging-g10", "messaging-g20", "frames-10", "frames-20", "frames-40"),
           "muqss": ("messaging-g20", "make-j1", "make-jN",
                     *(f"frames-{n}" for n in (10, 20, 30, 40, 50)), "messaging-switches"),
           "pick": ("pipe-cpu0",),
           "walk": ("pipe-beside", "cyclictest-p99", "cyclictest-max")}
# What each suite's class_bench.sh takes as its helper program.
HELPER = {"walk": "tasks"}


def class_list(text):
    """CLASS[:FEAT[+FEAT...]] items separated by commas: a class, and
    scheduler features set while it runs (cfs and a variant of cfs, or of
    another class, compare a feature off and on in one boot)."""
    classes = [c for c in text.split(",") if c]
    option = r"((NO_)?[A-Z][A-Z0-9_]*|rqshare=(none|smt|llc|mc|smp|all))"
    bad = [c for c in classes if c.split(":")[0] not in KNOWN or
           (":" in c and not re.fullmatch(rf"[a-z]+:{option}(\+{option})*", c)) or
           ("rqshare=" in c and not c.startswith("muqss:"))]
    if bad or "cfs" not in classes or len(classes) < 2 or len(set(classes)) < len(classes):
        raise argparse.ArgumentTypeError(
            f"want cfs and at least one other of {', '.join(KNOWN)}, each optionally "
            f"with :FEATURE[+FEATURE] (bmq:NO_HRTICK_BMQ), muqss also with :rqshare=MODE "
            f"(muqss:rqshare=none): {text}")
    return classes


def parser():
    ap = command.Parser(prog="bench-sched", description=__doc__, epilog=command.epilog())
    ap.add_argument("-t", "--topology", default="2x4", type=vm.topology_arg,
                    help=f"{', '.join(vm.PRESETS)} or NODESxCORES[xTHREADS]")
    ap.add_argument("--classes", type=class_list, default="cfs,ule",
                    help="classes to compare, cfs and others of " + ", ".join(KNOWN)
                         + ", each optionally CLASS:FEATURE[+FEATURE]; muqss:rqshare=MODE "
                           "runs MuQSS with its queues shared as MODE says")
    ap.add_argument("--rounds", type=command.positive_int, default=10,
                    help="runs of every benchmark per class")
    ap.add_argument("--scale", type=command.positive_int, default=1,
                    help="multiplies each benchmark's loops")
    ap.add_argument("--suite", choices=SUITES, default="wakeup", help="benchmark suite")
    ap.add_argument("--config", default="base", choices=build.BOOTABLE,
                    help="kernel configuration (base: no lockdep)")
    ap.add_argument("--only", default="",
                    help="comma-separated benchmarks of the suite to run (default: all)")
    ap.add_argument("--qemu-mode", choices=vm.QEMU_MODES, default="mttcg",
                    help="how QEMU runs the vCPUs: mttcg, tcg (one thread) or "
                         "icount (one thread, guest time from instruction counts)")
    vm.add_build_and_boot_args(ap)
    return ap


def main(argv=None):
    ap = parser()
    args = ap.parse_args(argv)
    problem = vm.accel_problem(args.accel, args.qemu_mode)
    if problem:
        ap.error(problem)
    vm.set_accel(args.accel)
    unknown = [b for b in args.only.split(",") if b and b not in BENCHES[args.suite]]
    if unknown:
        ap.error(f"--only: not in suite {args.suite}: {', '.join(unknown)} "
                 f"(one of {', '.join(BENCHES[args.suite])})")

    if args.suite == "walk" and vm.topology(args.topology).cpus < 4:
        ap.error(f"--suite walk needs 4 CPUs or more (-t {args.topology} has "
                 f"{vm.topology(args.topology).cpus})")
    try:
        known = build.sched_features()
    except (build.BuildError, TreeError) as err:
        print(f"bench-sched: {err}", file=sys.stderr)
        return command.FAILED
    unknown = [f for c in args.classes for f in c.partition(":")[2].split("+")
               if f and not f.startswith("rqshare=") and f.removeprefix("NO_") not in known]
    if unknown:
        ap.error(f"--classes: no scheduler feature {', '.join(unknown)} in "
                 f"kernel/sched/features.h (e.g. bmq:NO_HRTICK_BMQ)")
    if build.build(args.config, verbose=args.verbose) != 0:
        print("bench-sched: kernel build failed", file=sys.stderr)
        return command.FAILED
    apps = ""
    if args.suite == "muqss":
        from schedlab.reproduce.experiments.inputs import apps_inputs
        from schedlab.reproduce.registry import ReproduceError
        try:
            apps = f" {apps_inputs()}"
        except ReproduceError as err:
            print(f"bench-sched: {err}", file=sys.stderr)
            return command.FAILED
    try:
        cmd = (f"sh {paths.GUEST_TESTS}/class_bench.sh '{' '.join(args.classes)}' "
               f"{args.rounds} {args.scale} {args.suite} "
               f"{build.guest_program(HELPER.get(args.suite, 'uleload'))} "
               f"'{args.only}'{apps}")
        result = vm.boot(cmd, args.topology, "", kernel=paths.kernel_image(args.config),
                         timeout=args.timeout, qemu_mode=args.qemu_mode, verbose=args.verbose)
    except build.BuildError as err:
        print(f"bench-sched: {err}", file=sys.stderr)
        return command.FAILED
    except vm.GuestError as err:
        print(f"bench-sched: {err}", file=sys.stderr)
        return command.GUEST
    runs, commands, failures = bench.parse(result.output)
    missing = [(b, c) for b in commands for c in args.classes if not runs.get(b, {}).get(c)]
    if result.status != 0:
        print(result.output)
        return command.guest_status("bench-sched", result.status, result.seconds)
    if not commands or missing:
        print(result.output)
        print(f"bench-sched: the guest did not finish (missing {missing})", file=sys.stderr)
        return command.FAILED

    summary = bench.summarise(runs, rounds=bench.parse_rounds(result.output))
    print(f"{args.rounds} rounds per class in one boot, {args.topology}, {args.config} "
          f"kernel, QEMU {args.qemu_mode}; classes switched through kernel.sched_class")
    for name, line in commands.items():
        print(f"  {name}: {line}")
    print(bench.table(summary, args.classes))
    if failures:
        print(f"failed runs (left out): {failures}")
    out = paths.BUILD / "bench-sched.json"
    out.write_text(json.dumps({"topology": args.topology, "config": args.config,
                               "qemu_mode": args.qemu_mode,
                               "suite": args.suite,
                               "rounds": args.rounds, "scale": args.scale, "only": args.only,
                               "commands": commands, "results": summary,
                               "failures": failures}, indent=1) + "\n")
    print(f"saved {out}")
    return command.OK

