"""The main job: prepare, build, boot an emulated NUMA VM, run a short mixed
workload and show which class scheduled it and what every CPU did."""

import shutil
import subprocess
import sys

from . import build, command, paths, vm

WORKLOAD = paths.REPO / "tools" / "testing" / "sched" / "mixed_workload.py"
SCHED_VIS = paths.REPO / "tools" / "sched-vis" / "sched-vis"
SETUP = paths.REPO / "scripts" / "setup"
# Seconds the guest may take, boot and workload included.
GUEST_TIMEOUT = 900

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
    p.description = ("The main job: install what is missing (scripts/setup), prepare "
                     "the tree, build the kernel, boot an emulated NUMA VM and run a "
                     "short mixed workload (hackbench and spinners) with the event "
                     "recorder and the sanity checker on; then show which class ran "
                     "it and what every CPU did, and draw build/demo-heatmap.png.")
    p.epilog = command.epilog()
    p.add_argument("--sched", choices=vm.SCHED_CLASSES,
                   help="class for normal tasks, as sched=NAME (default: the Kconfig "
                        "choice, cfs)")
    p.add_argument("-t", "--topology", default="2x4", type=vm.topology_arg,
                   help=f"{', '.join(vm.PRESETS)} or NODESxCORES[xTHREADS]")
    p.add_argument("--config", default="base", choices=build.BOOTABLE,
                   help="kernel configuration")
    p.add_argument("--seconds", type=command.positive_float, default=3.0,
                   help="workload length in seconds")
    p.add_argument("--shell", action="store_true",
                   help="open an interactive shell in the VM instead of the workload")
    p.add_argument("--append", default="", help="extra kernel command line")
    vm.add_accel_arg(p)
    p.add_argument("-v", "--verbose", action="store_true",
                   help="show make's output and the kernel console")
    p.set_defaults(fn=main)


def main(a):
    vm.set_accel(a.accel)
    # Arguments are checked by now: only then install what is missing.
    if subprocess.run([str(SETUP)]).returncode:
        print("demo: scripts/setup failed", file=sys.stderr)
        return command.FAILED
    if build.build(a.config, verbose=a.verbose) != 0:
        return command.FAILED
    cmdline = " ".join(filter(None, [f"sched={a.sched}" if a.sched else "", a.append]))
    topo = vm.topology(a.topology)
    print(f"demo: booting the {a.config} kernel on {topo.name} ({topo.cpus} CPUs, "
          f"{topo.nodes} nodes){' with sched=' + a.sched if a.sched else ''}", flush=True)
    command_line = RECORDED.format(command=f"python3 {WORKLOAD} --seconds {a.seconds}")
    try:
        res = vm.boot(command_line if not a.shell else "true",
                      topo, cmdline, a.config, timeout=GUEST_TIMEOUT, interactive=a.shell,
                      outdir=paths.BUILD / "demo-guest", verbose=a.verbose)
    except vm.GuestError as e:
        print(f"demo: {e}", file=sys.stderr)
        return command.GUEST
    if a.shell:
        return command.OK
    for line in res.kernel_log():
        if line.startswith("sched:"):
            print(f"kernel: {line}")
    sys.stdout.write(res.output)
    show_events(res.outdir / "events.bin", topo)
    print(f"demo: guest ran {res.seconds:.1f} s in all, exit status {res.status}")
    return command.guest_status("demo", res.status) if res.status else command.OK


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
