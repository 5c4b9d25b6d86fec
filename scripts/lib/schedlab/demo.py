"""The main job: prepare, build, boot an emulated NUMA VM, run a short mixed
workload and show which class scheduled it and what every CPU did."""

import sys

from . import build, paths, vm

WORKLOAD = paths.REPO / "tools" / "testing" / "sched" / "mixed_workload.py"


def add_args(p):
    p.add_argument("--sched", help="scheduler for normal tasks (default: the Kconfig choice)")
    p.add_argument("-t", "--topology", default="2x4", help="topology preset (default: 2x4)")
    p.add_argument("--config", default="base", choices=sorted(build.CONFIGS),
                   help="kernel configuration (default: base)")
    p.add_argument("--seconds", type=float, default=3.0, help="workload length")
    p.add_argument("--shell", action="store_true",
                   help="open an interactive shell in the VM instead of the workload")
    p.add_argument("--append", default="", help="extra kernel command line")
    p.set_defaults(fn=main)


def main(a):
    if build.build(a.config) != 0:
        return 1
    cmdline = " ".join(filter(None, [f"sched={a.sched}" if a.sched else "", a.append]))
    topo = vm.topology(a.topology)
    print(f"demo: booting the {a.config} kernel on {topo.name} ({topo.cpus} CPUs, "
          f"{topo.nodes} nodes){' with sched=' + a.sched if a.sched else ''}", flush=True)
    try:
        res = vm.boot(f"python3 {WORKLOAD} --seconds {a.seconds}" if not a.shell else "true",
                      topo, cmdline, a.config, timeout=900, interactive=a.shell)
    except vm.GuestError as e:
        print(f"demo: {e}", file=sys.stderr)
        return 1
    if a.shell:
        return 0
    for line in res.kernel_log():
        if line.startswith("sched:"):
            print(f"kernel: {line}")
    sys.stdout.write(res.output)
    print(f"demo: guest ran {res.seconds:.1f} s in all, exit status {res.status}")
    return res.status
