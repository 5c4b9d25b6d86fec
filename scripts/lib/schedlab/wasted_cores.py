"""The scenarios of "a decade of wasted cores" on an emulated NUMA machine,
each fix off then on in one boot.

    scripts/wasted-cores [-t 8x8] [--config base] [--seed 1] [--repeat N] [SCENARIO...]

Scenarios: group-imbalance, overload-on-wakeup (measured: job time and the
time CPUs sat idle while another had waiting work, from the event
recorder), missing-domains, group-construction (regression checks that
must pass on 6.1). Default: all four. Builds the kernel and the guest
workload (tools/testing/sched/wcload.c) if needed, prints one table per
scenario and writes build/wasted-cores/ (recordings, results.json and
heatmaps of the group-imbalance runs). See
Documentation/scheduler/sched-wasted-cores.rst.
"""
import argparse
import sys

from schedlab import build, command, paths, vm, wasted


def scenario(text):
    if text not in wasted.SCENARIOS:
        raise argparse.ArgumentTypeError(f"unknown scenario {text!r}; choose from "
                                         f"{', '.join(wasted.SCENARIOS)}")
    return text


def parser():
    ap = command.Parser(prog="wasted-cores", description=__doc__, epilog=command.epilog())
    ap.add_argument("scenarios", nargs="*", metavar="SCENARIO", type=scenario,
                    help=f"any of {', '.join(wasted.SCENARIOS)} (default: all)")
    ap.add_argument("-t", "--topology", default="8x8", type=vm.topology_arg,
                    help=f"{', '.join(vm.PRESETS)} or NODESxCORES[xTHREADS]")
    ap.add_argument("--config", default="base", choices=build.BOOTABLE,
                    help="kernel configuration (base: no lockdep)")
    ap.add_argument("--seed", type=command.non_negative_int, default=1,
                    help="workload seed")
    ap.add_argument("--units", type=command.positive_int, help="work units of the "
                    "group-imbalance job (default: 60 per CPU)")
    ap.add_argument("--repeat", type=command.positive_int, help="rounds of fix off and on "
                    "per measured scenario, alternating which goes first; tables show "
                    "every run and the medians (default: 1)")
    ap.add_argument("--rounds", type=command.positive_int, help="barrier rounds of the "
                    "overload-on-wakeup pool (default: 100)")
    ap.add_argument("--outdir", type=command.folder, default=paths.BUILD / "wasted-cores",
                    help="recordings, results.json and heatmaps")
    vm.add_build_and_boot_args(ap)
    return ap


def main(argv=None):
    args = parser().parse_args(argv)
    vm.set_accel(args.accel)
    topo = vm.topology(args.topology)

    if build.build(args.config, verbose=args.verbose) != 0:
        print("wasted-cores: kernel build failed", file=sys.stderr)
        return command.FAILED
    env = {}
    if args.units:
        env["JOB_UNITS"] = args.units
    if args.rounds:
        env["POOL_ROUNDS"] = args.rounds
    if args.repeat:
        env["REPEAT"] = args.repeat
    try:
        measured, regression, result = wasted.run(args.scenarios or wasted.SCENARIOS,
                                                   args.topology, args.config, args.seed,
                                                   args.outdir, args.timeout, env,
                                                   verbose=args.verbose)
    except build.BuildError as err:
        print(f"wasted-cores: {err}", file=sys.stderr)
        return command.FAILED
    except vm.GuestError as err:
        print(f"wasted-cores: {err}", file=sys.stderr)
        return command.GUEST
    print(f"{args.topology}: {topo.cpus} vCPUs on {topo.nodes} nodes, {args.config} kernel, "
          f"seed {args.seed}, one boot of {result.seconds:.0f} s")
    print(wasted.table(measured, regression))
    for png in wasted.heatmaps(args.outdir, measured):
        print(f"heatmap: {png}")
    print(f"recordings and results.json: {args.outdir}")
    failed = [n for n, r in regression.items() if r["verdict"] != "pass"]
    missing = [s for s in (args.scenarios or wasted.SCENARIOS)
               if s not in measured and s not in regression]
    if missing:
        print(result.output[-3000:])
        print(f"wasted-cores: no result from {', '.join(missing)}", file=sys.stderr)
    if result.status != 0:
        return command.guest_status("wasted-cores", result.status, result.seconds)
    return command.FAILED if failed or missing else command.OK

