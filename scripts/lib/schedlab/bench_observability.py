"""Overhead of the sanity checker, the event recorder and the sched_events
tracepoints, measured with hackbench in one boot against nothing enabled.

    scripts/bench-observability [-t 4x8] [--rounds 5] [--groups 4] [--loops 100]

Builds the base configuration (no lockdep: its own cost would swamp what is
measured), boots the topology (default 4x8, 32 vCPUs) and runs
tools/testing/sched/obs_overhead.sh. Prints the median hackbench time per
mode and its ratio to "off" with the spread of the runs, the checker's own
time in its timer as a share of CPU time, and the recorder's event rate.
Results also go to build/bench-observability.json. Ratios only: the host
is shared and emulated, so absolute times mean little.
"""
import json
import statistics
import sys

from schedlab import build, command, paths, vm

MODES = ("off", "checker", "flight", "ftrace")


def parse(output):
    runs = {m: [] for m in MODES}
    records = {m: [] for m in MODES}
    info, checker = {}, {}
    for line in output.splitlines():
        f = line.split()
        if f[:1] == ["run"] and len(f) == 4 and f[1] in runs:
            runs[f[1]].append(float(f[2]))
            records[f[1]].append(int(f[3]))
        elif f[:1] == ["cpus"]:
            info = dict(zip(f[0::2], map(int, f[1::2])))
        elif f[:1] == ["checker"]:
            checker = dict(zip(f[1::2], map(int, f[2::2])))
    return runs, records, info, checker


def parser():
    ap = command.Parser(prog="bench-observability", description=__doc__,
                        epilog=command.epilog())
    ap.add_argument("-t", "--topology", default="4x8", type=vm.topology_arg,
                    help=f"{', '.join(vm.PRESETS)} or NODESxCORES[xTHREADS]")
    ap.add_argument("--rounds", type=command.positive_int, default=5,
                    help="hackbench runs per mode")
    ap.add_argument("--groups", type=command.positive_int, default=4,
                    help="hackbench groups (-g)")
    ap.add_argument("--loops", type=command.positive_int, default=100,
                    help="hackbench loops (-l)")
    ap.add_argument("--config", default="base", choices=build.BOOTABLE,
                    help="kernel configuration (base: no lockdep, whose cost would "
                         "swamp what is measured)")
    vm.add_build_and_boot_args(ap)
    return ap


def main(argv=None):
    args = parser().parse_args(argv)
    vm.set_accel(args.accel)

    if build.build(args.config, verbose=args.verbose) != 0:
        print("bench-observability: kernel build failed", file=sys.stderr)
        return command.FAILED
    cmd = (f"sh {paths.GUEST_TESTS}/obs_overhead.sh {args.rounds} {args.groups} "
           f"{args.loops}")
    try:
        result = vm.boot(cmd, args.topology, "", kernel=paths.kernel_image(args.config),
                         timeout=args.timeout, verbose=args.verbose)
    except vm.GuestError as err:
        print(f"bench-observability: {err}", file=sys.stderr)
        return command.GUEST
    if result.status != 0:
        print(result.output)
        return command.guest_status("bench-observability", result.status, result.seconds)
    runs, records, info, checker = parse(result.output)
    if not all(runs.values()):
        print(result.output)
        print("bench-observability: the guest did not finish every mode", file=sys.stderr)
        return command.FAILED

    base = statistics.median(runs["off"])
    print(f"hackbench -g {args.groups} -l {args.loops}, {info.get('cpus')} vCPUs "
          f"({args.topology}), {args.rounds} runs per mode, one boot, {args.config} kernel")
    print(f"{'mode':8} {'median s':>9} {'min s':>7} {'max s':>7} {'vs off':>8}")
    summary = {"topology": args.topology, "config": args.config, "groups": args.groups,
               "loops": args.loops, "rounds": args.rounds, "modes": {}}
    for mode in MODES:
        med = statistics.median(runs[mode])
        print(f"{mode:8} {med:9.3f} {min(runs[mode]):7.3f} {max(runs[mode]):7.3f} "
              f"{med / base:8.3f}")
        summary["modes"][mode] = {"runs": runs[mode], "median": med, "ratio": med / base}

    # The checker's own work is timed in the kernel: compare it with the
    # CPU time of the runs it was on for; this figure is free of host noise.
    cpu_ns = sum(runs["checker"]) * 1e9 * info.get("cpus", 1)
    share = checker.get("cost_ns", 0) / cpu_ns if cpu_ns else 0
    print(f"checker: {checker.get('checks', 0)} checks, {checker.get('cost_ns', 0) / 1e3:.0f} us "
          f"in its timer = {share * 100:.5f} % of the CPU time of its runs")
    rate = sum(records["flight"]) / sum(runs["flight"])
    print(f"recorder: {rate:,.0f} records/s ({rate * 16 / 1e6:.2f} MB/s) while recording")
    summary.update(checker=checker, checker_cpu_share=share, records_per_s=rate)
    out = paths.BUILD / "bench-observability.json"
    out.write_text(json.dumps(summary, indent=1) + "\n")
    print(f"saved {out}")
    return command.OK

