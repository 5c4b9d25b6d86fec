"""The main job: prepare, build, boot an emulated NUMA VM, run a short mixed
workload and show which class scheduled it and what every CPU did."""

import shutil
import subprocess
import sys

from . import build, paths, vm

WORKLOAD = paths.REPO / "tools" / "testing" / "sched" / "mixed_workload.py"
SCHED_VIS = paths.REPO / "tools" / "sched-vis" / "sched-vis"

# Record the workload with the event recorder and the sanity checker on,
# then leave the dump in the shared folder for sched-vis on the host.
RECORDED = """E=/sys/kernel/debug/sched/events
echo fill >$E/mode; echo 4096 >$E/buffer_kb; echo start >$E/control
echo 1 >/proc/sys/kernel/sched_sanity
{command}
rc=$?
echo stop >$E/control
cat $E/dump >/tmp/out/events.bin
echo "sanity checker: $(sed -n 2p /proc/sched_sanity)"
exit $rc"""


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
    command = RECORDED.format(command=f"python3 {WORKLOAD} --seconds {a.seconds}")
    try:
        res = vm.boot(command if not a.shell else "true",
                      topo, cmdline, a.config, timeout=900, interactive=a.shell,
                      outdir=paths.BUILD / "demo-guest")
    except vm.GuestError as e:
        print(f"demo: {e}", file=sys.stderr)
        return 1
    if a.shell:
        return 0
    for line in res.kernel_log():
        if line.startswith("sched:"):
            print(f"kernel: {line}")
    sys.stdout.write(res.output)
    show_events(res.outdir / "events.bin", topo)
    print(f"demo: guest ran {res.seconds:.1f} s in all, exit status {res.status}")
    return res.status


def show_events(dump, topo):
    """Keep the recording, draw it and summarise idle-while-overloaded time."""
    if not dump.exists():
        print("demo: no event recording came back", file=sys.stderr)
        return
    kept = paths.BUILD / "demo-events.bin"
    shutil.copyfile(dump, kept)
    dump.unlink()
    png = paths.BUILD / "demo-heatmap.png"
    for args in (["heatmap", kept, "--migrations", "--violations", "-o", png,
                  "--title", f"demo workload on {topo.name}"],
                 ["idle-overload", kept, "--top", "3"]):
        r = subprocess.run([sys.executable, str(SCHED_VIS), *map(str, args)],
                           capture_output=True, text=True)
        sys.stdout.write(r.stdout)
        if r.returncode:
            print(f"demo: sched-vis {args[0]}: {r.stderr.strip()}", file=sys.stderr)
    print(f"events: {kept}; heatmap: {png}")
