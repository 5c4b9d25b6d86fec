"""Boot a built kernel under QEMU TCG with a named NUMA topology, run one
command in the guest and return its output and exit status.

The guest's root filesystem is the host's, shared read-only over virtio-9p
(the approach of virtme-ng, without its extra layers), so every packaged
tool on the host (hackbench, perf, rt-app, sysbench, stress-ng, numactl,
python3, ...) runs in the guest unchanged. A second, writable 9p share
carries the command in and its exit status and files out. Kernel messages
go to the first serial port, the command's output to the second, so the
two never interleave.

Any oops, BUG, WARNING, lockdep report, hung task or RCU stall in the
console raises KernelSplat, even when the command itself succeeded.
"""

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import build, command, paths

GUEST_INIT = paths.REPO / "scripts" / "guest" / "init"

# Console lines that mean the kernel is in trouble. Benign lines mention
# "lockdep" and "stall" too, so these are matched precisely.
SPLAT_PATTERNS = [
    r"BUG:", r"WARNING:", r"Oops", r"Kernel panic", r"general protection fault",
    r"kernel BUG at",
    r"INFO: task .* blocked for more than", r"rcu: INFO: .* detected stall",
    r"rcu_.* detected stalls", r"soft lockup", r"hard LOCKUP",
    r"possible circular locking", r"inconsistent lock state",
    r"possible recursive locking", r"possible irq lock inversion",
    r"suspicious RCU usage", r"DEBUG_LOCKS_WARN_ON", r"scheduling while atomic",
    r"sleeping function called from invalid context", r"UBSAN:",
]
SPLAT_RE = re.compile("|".join(SPLAT_PATTERNS))
TIMESTAMP_RE = re.compile(r"^\[\s*\d+\.\d+\]\s?")


class GuestError(Exception):
    """The guest did not run the command to completion."""

    def __init__(self, msg, console=""):
        tail = "\n".join(console.splitlines()[-40:])
        super().__init__(f"{msg}\n--- last console lines ---\n{tail}" if console else msg)
        self.console = console


class QemuCrash(GuestError):
    """QEMU itself died of a signal before the guest's command started."""


class GuestTimeout(GuestError):
    pass


class BootHang(GuestError):
    """The guest never said it was ready (see boot_limit())."""


class HostLockStall(GuestError):
    """The command finished, but RCU reported a stall of vCPUs that were
    spinning for a lock (see host_lock_stall())."""


class KernelSplat(GuestError):
    """The kernel reported a problem; .splats holds the offending lines."""

    def __init__(self, splats, console, result=None):
        self.splats = splats
        self.result = result
        super().__init__("kernel reported trouble:\n  " + "\n  ".join(splats[:20]), console)


@dataclass(frozen=True)
class Topology:
    name: str
    nodes: int
    cores: int                      # per node
    threads: int = 1                # per core
    distances: tuple = ()           # (src, dst, distance) for src < dst
    memory_mb: int = 0              # 0: from the CPU count
    note: str = ""

    @property
    def cpus(self):
        return self.nodes * self.cores * self.threads

    @property
    def memory(self):
        return self.memory_mb or max(2048, 256 * self.nodes, 64 * self.cpus)

    def cpus_of_node(self, node):
        per = self.cores * self.threads
        return list(range(node * per, (node + 1) * per))

    def qemu_args(self):
        args = ["-smp", f"{self.cpus},sockets={self.nodes},cores={self.cores},"
                f"threads={self.threads}", "-m", f"{self.memory}M"]
        per_node = self.memory // self.nodes
        for n in range(self.nodes):
            args += ["-object", f"memory-backend-ram,size={per_node}M,id=mem{n}",
                     "-numa", f"node,nodeid={n},memdev=mem{n}"]
        for n in range(self.nodes):
            args += ["-numa", f"cpu,node-id={n},socket-id={n}"]
        for src, dst, val in self.distances:
            args += ["-numa", f"dist,src={src},dst={dst},val={val}"]
        return args


def hop_distances(nodes, links, local=10, per_hop=6):
    """Distance matrix from a link list: 10 local, 16 one hop, 22 two hops."""
    hops = {}
    for src in range(nodes):
        seen, frontier, d = {src: 0}, [src], 0
        while frontier:
            d += 1
            nxt = []
            for a in frontier:
                for x, y in links:
                    for b in ((y,) if x == a else (x,) if y == a else ()):
                        if b not in seen:
                            seen[b] = d
                            nxt.append(b)
            frontier = nxt
        for dst in range(src + 1, nodes):
            hops[(src, dst)] = seen[dst]
    return tuple((s, d, local + per_hop * h) for (s, d), h in sorted(hops.items()))


# The 8-node AMD Bulldozer machine of "A Decade of Wasted Cores", Figure 4:
# node 0 reaches 1, 2, 4 and 6 in one hop, node 3 reaches 1, 2, 4, 5 and 7,
# nodes 1 and 2 are two hops apart, every node is within two hops.
BULLDOZER_LINKS = [(0, 1), (0, 2), (0, 4), (0, 6), (1, 3), (2, 3), (3, 4), (3, 5),
                   (3, 7), (1, 5), (1, 7), (2, 4), (2, 6), (4, 5), (5, 6), (5, 7),
                   (6, 7)]

PRESETS = {t.name: t for t in [
    Topology("1", 1, 1, note="one CPU"),
    Topology("2", 1, 2, note="latency and interactivity (no host overcommit)"),
    Topology("2x4", 2, 4, note="8 CPUs on 2 nodes: the default"),
    Topology("4x8", 4, 8, distances=((0, 1, 16), (0, 2, 22), (0, 3, 22),
                                     (1, 2, 22), (1, 3, 22), (2, 3, 16)),
             note="32 CPUs on 4 nodes, 16 within a package, 22 across: the Opteron 6172 of the ULE paper"),
    Topology("8x8", 8, 8, distances=hop_distances(8, BULLDOZER_LINKS),
             note="64 CPUs on 8 nodes, some two hops apart: Figure 4 of the wasted-cores paper"),
    Topology("8x2", 8, 2, distances=hop_distances(8, BULLDOZER_LINKS),
             note="8x8's node graph with 2 CPUs per node: topology checks the debug kernel "
                  "can boot quickly"),
    Topology("smt", 1, 4, threads=2, note="4 cores x 2 SMT threads"),
]}


# The classes sched= and kernel.sched_class accept (kernel/sched/class_select.c).
SCHED_CLASSES = ("cfs", "ule", "bmq", "muqss")


def parse_cpulist(text):
    """A kernel CPU list ("0-3,8") as a sorted list of CPU numbers."""
    cpus = set()
    for part in text.strip().split(","):
        if part:
            lo, _, hi = part.partition("-")
            cpus.update(range(int(lo), int(hi or lo) + 1))
    return sorted(cpus)


def topology(name):
    """A preset, or NODESxCORES[xTHREADS] with QEMU's default distances."""
    if isinstance(name, Topology):
        return name
    if name in PRESETS:
        return PRESETS[name]
    m = re.fullmatch(r"(\d+)x(\d+)(?:x(\d+))?", name)
    if not m or not all(int(g) > 0 for g in m.groups() if g):
        raise ValueError(f"unknown topology {name!r}: use one of "
                         f"{', '.join(PRESETS)} or NODESxCORES[xTHREADS]")
    return Topology(name, int(m[1]), int(m[2]), int(m[3] or 1))


def topology_arg(text):
    """argparse type: a topology name that topology() knows, kept as text."""
    try:
        topology(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return text


@dataclass
class GuestResult:
    output: str
    status: int
    console: str
    seconds: float
    outdir: Path
    splats: list = field(default_factory=list)

    def kernel_log(self):
        return [TIMESTAMP_RE.sub("", line) for line in self.console.splitlines()]


def find_splats(console):
    return [TIMESTAMP_RE.sub("", line).strip() for line in console.splitlines()
            if SPLAT_RE.search(line)]


RCU_STALL_LINE = "rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:"
NMI_RIP_RE = re.compile(r"NMI backtrace for cpu \d+\n(?:.*\n){0,3}?.*RIP: 0010:(\S+)\+")


def host_lock_stall(splats, console):
    """True when the only trouble is RCU stall reports whose stalled CPUs
    all sat in queued_spin_lock_slowpath: with 8 vCPUs on 2 host cores the
    host can leave a lock holder's vCPU unscheduled while the waiters spin
    (seen twice in hackbench, the command finishing 20 times slower)."""
    lines = [TIMESTAMP_RE.sub("", l) for l in console.splitlines()]
    # Each report must name a stalled CPU ("rcu: <tab>N-....: ..."), not
    # only tasks blocked in read-side sections (a starved task is no host
    # artifact).
    reports = with_cpu = 0
    for i, line in enumerate(lines):
        if line.strip() == RCU_STALL_LINE:
            reports += 1
            for nxt in lines[i + 1:i + 10]:
                if "(detected by" in nxt:
                    break
                if re.match(r"rcu:\s+\d+-", nxt):
                    with_cpu += 1
                    break
    rips = NMI_RIP_RE.findall("\n".join(lines))
    return (bool(splats) and all(s == RCU_STALL_LINE for s in splats) and bool(rips)
            and reports == with_cpu
            and all(r.endswith("queued_spin_lock_slowpath") for r in rips))


# vCPUs per host CPU beyond which the host may leave a vCPU unscheduled for
# tens of seconds (seen with 64 vCPUs on 2 cores: soft lockups at boot).
OVERCOMMIT = 8


def watchdog_args(topo, host_cpus=None):
    """Longer lockup, hung-task and RCU-stall thresholds for heavily
    overcommitted guests, so that a vCPU the host did not run is not
    reported as a kernel bug; real lockups still are, later."""
    if topo.cpus <= OVERCOMMIT * (host_cpus or os.cpu_count() or 1):
        return []
    return ["watchdog_thresh=60", "rcupdate.rcu_cpu_stall_timeout=120",
            "sysctl.kernel.hung_task_timeout_secs=300"]


# How QEMU emulates the vCPUs. mttcg: a host thread per vCPU (fastest;
# host load stretches guest time). tcg: one host thread runs the vCPUs in
# turn. icount: one thread, and guest time follows the instructions run,
# not the host's clock (about 2x slower in wall time; host load no longer
# stretches what the guest measures). Measured spreads: ule.rst, bmq.rst.
QEMU_MODES = {
    "mttcg": ["-accel", "tcg,thread=multi"],
    "tcg": ["-accel", "tcg,thread=single"],
    "icount": ["-accel", "tcg,thread=single", "-icount", "shift=auto,sleep=off"],
}


# --accel: "tcg" emulates the vCPUs (QEMU_MODES says how); "kvm" runs them
# on /dev/kvm, where the host has one that works; "auto" boots a short
# probe guest on /dev/kvm first and uses KVM if it finishes in time, else
# TCG. Some hosts offer a /dev/kvm whose guests hang before the kernel
# starts (see tooling notes): that is why auto boots instead of opening it.
ACCELS = ("auto", "tcg", "kvm")
ACCEL_ENV = "SCHEDLAB_ACCEL"
KVM_PROBE_SECONDS = 30
KVM_DEVICE = "/dev/kvm"
# The --accel of this process, and what auto resolved to per _probe_key().
_accel = {"choice": None, "resolved": {}}


def add_accel_arg(p):
    """--accel for a command that boots guests."""
    p.add_argument("--accel", choices=ACCELS, default=os.environ.get(ACCEL_ENV) or "auto",
                   help="how QEMU runs the vCPUs: auto (KVM if a probe boot on /dev/kvm "
                        "finishes within %d s, else TCG), tcg or kvm (default: auto, or "
                        "$%s)" % (KVM_PROBE_SECONDS, ACCEL_ENV))


def add_build_and_boot_args(p):
    """--timeout, --accel and -v of a command that builds a kernel and
    runs one long guest (benchmarks, wasted-cores)."""
    p.add_argument("--timeout", type=command.positive_int, default=3600,
                   help="seconds the guest may take")
    add_accel_arg(p)
    p.add_argument("-v", "--verbose", action="store_true",
                   help="show make's output and the kernel console")


def accel_problem(accel, qemu_mode):
    """Why --accel and --qemu-mode cannot go together, or None."""
    if accel == "kvm" and qemu_mode not in (None, "mttcg"):
        return f"--qemu-mode {qemu_mode} is a TCG mode: it cannot run with --accel kvm"
    return None


def set_accel(accel):
    """Choose the accelerator for every later boot of this process."""
    if accel not in ACCELS:
        raise ValueError(f"unknown accelerator {accel!r}: one of {', '.join(ACCELS)}")
    _accel.update(choice=accel, resolved={})


def _probe_cache():
    return paths.BUILD / "accel-probe.json"


def _probe_key():
    """What decides whether KVM works: the host kernel and QEMU."""
    qemu = shutil.which("qemu-system-x86_64") or ""
    stamp = int(os.stat(qemu).st_mtime) if qemu else 0
    return f"{os.uname().release} {qemu}@{stamp}"


def kvm_usable(kernel, log=None):
    """(True or False, reason): whether a 1x2 guest of `kernel` boots and
    runs a command on /dev/kvm within KVM_PROBE_SECONDS. The answer is kept
    in build/accel-probe.json for this host kernel and QEMU binary."""
    if not os.access(KVM_DEVICE, os.R_OK | os.W_OK):
        return False, f"no usable {KVM_DEVICE}"
    cache, key = _probe_cache(), _probe_key()
    try:
        known = json.loads(cache.read_text())
    except (OSError, ValueError):
        known = {}
    if key in known:
        ok, why = known[key]
        return ok, f"{why} (probed before; delete {_shown(cache)} to probe again)"
    if log:
        log(f"vm: --accel auto: probing KVM with a short boot (at most {KVM_PROBE_SECONDS} s)")
    outdir = tempfile.mkdtemp(prefix="schedlab-kvm-probe-")
    try:
        res = _boot_once("true", "1x2", kernel=kernel, timeout=KVM_PROBE_SECONDS,
                         outdir=outdir, accel="kvm")
        ok = res.status == 0
        why = (f"KVM probe boot ran in {res.seconds:.0f} s" if ok else
               f"KVM probe guest's command failed with status {res.status}")
    except GuestTimeout:
        ok, why = False, f"KVM probe boot did not finish within {KVM_PROBE_SECONDS} s"
    except GuestError as e:
        ok, why = False, f"KVM probe boot failed: {str(e).splitlines()[0].split('; files in')[0]}"
    finally:
        shutil.rmtree(outdir, ignore_errors=True)
    known[key] = [ok, why]
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(known, indent=1) + "\n")
    return ok, why


def resolve_accel(kernel, qemu_mode="mttcg", accel=None, log=None):
    """"kvm" or "tcg" for a boot of `kernel`; says on stderr what auto chose
    and why, once per process."""
    accel = accel or _accel["choice"] or os.environ.get(ACCEL_ENV) or "auto"
    if accel not in ACCELS:
        raise GuestError(f"unknown accelerator {accel!r} (from ${ACCEL_ENV}?): "
                         f"one of {', '.join(ACCELS)}")
    problem = accel_problem(accel, qemu_mode)
    if problem:
        raise GuestError(problem)
    if accel != "auto":
        return accel
    if qemu_mode != "mttcg":
        return "tcg"
    key = _probe_key()
    if key not in _accel["resolved"]:
        log = log or (lambda m: print(m, file=sys.stderr, flush=True))
        ok, why = kvm_usable(kernel, log)
        _accel["resolved"][key] = "kvm" if ok else "tcg"
        log(f"vm: --accel auto: {why}; using {'KVM' if ok else 'TCG'}")
    return _accel["resolved"][key]


def accel_args(accel, mode):
    """QEMU's accelerator and CPU model arguments."""
    if accel == "kvm":
        # The host's CPU model: an Intel host shows SMT siblings with it,
        # as qemu64 with an Intel vendor does under TCG.
        return ["-accel", "kvm", "-cpu", "host"]
    return [*QEMU_MODES[mode], "-cpu", "qemu64,vendor=GenuineIntel"]


# PCI interrupts routed from the firmware's PIRQ table, not ACPI's link
# devices: on the lockdep kernel each of the four links took 1.4-2.2 s of
# AML under TCG, 5-10 s a boot (README, "boot").
GUEST_IRQ_ROUTING = "acpi=noirq"


def qemu_command(kernel, topo, cmdline, outdir, interactive=False, mode="mttcg", accel="tcg"):
    append = " ".join([
        "console=ttyS0", "root=/dev/root", "rootfstype=9p",
        "rootflags=trans=virtio,version=9p2000.L,msize=262144,cache=loose", "ro",
        f"init={GUEST_INIT}", "panic=-1", "tsc=reliable", "no_timer_check",
        GUEST_IRQ_ROUTING, *watchdog_args(topo), cmdline]).strip()
    cmd = ["qemu-system-x86_64", *accel_args(accel, mode), *topo.qemu_args(),
           "-kernel", str(kernel), "-append", append,
           "-nodefaults", "-no-reboot", "-display", "none",
           "-device", "virtio-rng-pci",
           "-virtfs", "local,id=root,path=/,mount_tag=/dev/root,security_model=none,"
                      "readonly=on,multidevs=remap",
           "-virtfs", f"local,id=out,path={outdir},mount_tag=schedlab_out,"
                      "security_model=none,multidevs=remap"]
    for tag, path in (("repo", paths.REPO), ("build", paths.BUILD)):
        cmd += ["-virtfs", f"local,id={tag},path={path},mount_tag=schedlab_{tag},"
                           "security_model=none,readonly=on,multidevs=remap"]
    if interactive:
        cmd += ["-serial", "mon:stdio", "-serial", "null"]
    else:
        cmd += ["-serial", f"file:{outdir}/console.log",
                "-serial", f"file:{outdir}/output.log"]
    return cmd


def boot(*args, **kw):
    """Boot, run `command` (a shell string) and return a GuestResult; see
    _boot_once(). QEMU (TCG, multi-threaded) has been seen to die of SIGSEGV
    while the guest was still probing PCI, before our command or any of our
    kernel code ran: that one boot is retried once, saying so. So is a boot
    whose command finished but whose only trouble is an RCU stall of vCPUs
    spinning for a lock (host_lock_stall()); a real deadlock would not let
    the command finish, and a second such report fails. And so is a boot
    that never reached the point where our command starts (boot_limit()):
    TCG has been seen to lose a freshly started vCPU's timer, which stalls
    RCU and with it the whole boot."""
    try:
        return _boot_once(*args, **kw)
    except (QemuCrash, HostLockStall, BootHang) as e:
        print(f"vm: {str(e).splitlines()[0]}; booting once more", file=sys.stderr)
        return _boot_once(*args, **kw, _retried=True)


def _boot_once(command="true", topology_name="2x4", cmdline="", config="debug", kernel=None,
               timeout=300, files=None, outdir=None, allow_splats=False, verbose=False,
               interactive=False, qemu_mode="mttcg", accel=None, _retried=False):
    """Boot, run `command` (a shell string) and return a GuestResult.

    files: {name: text} written to the guest's /tmp/out before boot.
    outdir: keep the shared folder there (default: a temporary folder that
    is removed unless an error is raised).
    """
    topo = topology(topology_name)
    kernel = Path(kernel or paths.kernel_image(config))
    if not kernel.exists():
        raise GuestError(f"{kernel} does not exist: run scripts/build --config {config}")
    if not shutil.which("qemu-system-x86_64"):
        raise GuestError("qemu-system-x86_64 is missing: run scripts/setup")
    keep = outdir is not None
    outdir = Path(outdir or tempfile.mkdtemp(prefix="schedlab-guest-")).resolve()
    outdir.mkdir(parents=True, exist_ok=True)
    for name in ("rc", "console.log", "output.log"):
        (outdir / name).unlink(missing_ok=True)
    (outdir / "cmd.sh").write_text(command + "\n")
    env = {"SCHEDLAB_REPO": str(paths.REPO), "SCHEDLAB_BUILD": str(paths.BUILD),
           "SCHEDLAB_OUT": "/tmp/out", "SCHEDLAB_TOPOLOGY": topo.name,
           "SCHEDLAB_INTERACTIVE": "1" if interactive else "0"}
    (outdir / "env").write_text("".join(f"export {k}={shlex.quote(v)}\n" for k, v in env.items()))
    for name, text in (files or {}).items():
        (outdir / name).write_text(text)

    accel = resolve_accel(kernel, qemu_mode, accel)
    cmd = qemu_command(kernel, topo, cmdline, outdir, interactive, qemu_mode, accel)
    start = time.time()
    print(f"vm: booting {topo.name} ({_count(topo.cpus, 'CPU')}, {_count(topo.nodes, 'node')}) "
          f"with {_shown(kernel)}" + (" on KVM" if accel == "kvm" else ""),
          file=sys.stderr, flush=True)
    if interactive:
        subprocess.run(cmd)
        rc = _read(outdir / "rc").strip()
        return GuestResult("", int(rc) if rc else -1, "", time.time() - start, outdir)
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    stop, ready = threading.Event(), threading.Event()
    watcher = threading.Thread(target=_watch, args=(outdir / "console.log", stop, start,
                                                     topo.name, verbose, ready), daemon=True)
    watcher.start()
    limit = boot_limit(topo.cpus)
    try:
        qemu_out = _wait_ready(proc, ready, limit) if limit < timeout else None
        if qemu_out is None:
            qemu_out, _ = proc.communicate(timeout=max(timeout - (time.time() - start), 1))
    except BootHangExpired:
        proc.kill()
        proc.communicate()
        console = _read(outdir / "console.log")
        raise BootHang(f"guest was not ready within {limit:.0f} s of booting "
                       f"(topology {topo.name}); files in {outdir}", console)
    except subprocess.TimeoutExpired:
        proc.kill()
        qemu_out, _ = proc.communicate()
        console = _read(outdir / "console.log")
        raise GuestTimeout(f"guest did not finish within {timeout} s "
                           f"(topology {topo.name}, command {command!r}); files in {outdir}",
                           console)
    finally:
        stop.set()
        watcher.join(timeout=WATCH_SECONDS * 10)
    seconds = time.time() - start
    console = _read(outdir / "console.log")
    output = _read(outdir / "output.log").replace("\r\n", "\n")
    rc_file = outdir / "rc"
    result = GuestResult(output, -1, console, seconds, outdir, find_splats(console))
    if (result.splats and not allow_splats and not _retried and rc_file.exists()
            and host_lock_stall(result.splats, console)):
        raise HostLockStall(f"RCU stall of vCPUs spinning for a lock; files in {outdir}",
                            console)
    if result.splats and not allow_splats:
        raise KernelSplat(result.splats, console, result)
    if not rc_file.exists():
        if proc.returncode < 0 and not output:
            raise QemuCrash(f"qemu died of signal {-proc.returncode} before the command "
                            f"started; files in {outdir}", console)
        raise GuestError(f"guest ended without running the command to completion "
                         f"(qemu exit {proc.returncode}: {qemu_out.strip()[-500:]}); "
                         f"files in {outdir}", console)
    result.status = int(rc_file.read_text().strip() or -1)
    if not keep:
        shutil.rmtree(outdir, ignore_errors=True)
    return result


class BootHangExpired(Exception):
    pass


def boot_limit(cpus):
    """Seconds a guest may take to say it is ready: its boots here take 6 s
    (8 vCPUs) to 20 s (64), so this is ten times that and more."""
    return BOOT_LIMIT_BASE + BOOT_LIMIT_PER_CPU * cpus


BOOT_LIMIT_BASE = 180
BOOT_LIMIT_PER_CPU = 2


def _wait_ready(proc, ready, limit):
    """Wait until the guest is ready (None) or QEMU has ended (its output);
    raise BootHangExpired when neither happens within limit seconds."""
    deadline = time.time() + limit
    while not ready.is_set():
        left = deadline - time.time()
        if left <= 0:
            raise BootHangExpired()
        try:
            out, _ = proc.communicate(timeout=min(left, WATCH_SECONDS))
            return out
        except subprocess.TimeoutExpired:
            pass
    return None


def _read(path):
    try:
        return path.read_text(errors="replace")
    except FileNotFoundError:
        return ""


def _count(n, what):
    return f"{n} {what}{'s' if n != 1 else ''}"


def _shown(path):
    """A kernel image's path, relative to the repository when inside it."""
    try:
        return str(Path(path).resolve().relative_to(paths.REPO))
    except ValueError:
        return str(path)


# The console line scripts/guest/init writes once the guest is up, and how
# often the console file is read for it.
READY_LINE = "schedlab: guest ready"
WATCH_SECONDS = 0.5


def _watch(path, stop, start, name, verbose, ready_event=None):
    """Say on stderr when the guest has booted, so a long boot is not
    silence, and set ready_event; with verbose, copy the whole console there
    as it grows."""
    pos, tail, ready = 0, "", False
    while True:
        last = stop.is_set()
        if path.exists():
            with open(path, errors="replace") as f:
                f.seek(pos)
                chunk = f.read()
                pos = f.tell()
            if verbose and chunk:
                sys.stderr.write(chunk)
                sys.stderr.flush()
            tail = (tail + chunk)[-4096:]
            if not ready and READY_LINE in tail:
                ready = True
                if ready_event is not None:
                    ready_event.set()
                print(f"vm: {name} booted in {time.time() - start:.0f} s; running the command",
                      file=sys.stderr, flush=True)
        if last:
            return
        stop.wait(WATCH_SECONDS)


def add_args(p):
    p.description = ("Boot a built kernel under QEMU with a NUMA topology, run one "
                     "shell command in the guest and print its output.")
    p.epilog = command.epilog(command.OK, command.USAGE, command.GUEST, command.COMMAND)
    p.add_argument("--config", choices=build.BOOTABLE,
                   help="kernel configuration whose bzImage boots, as scripts/build "
                        "--config names it (default: debug, or the one built if debug is "
                        "not, as after scripts/demo, which builds base)")
    p.add_argument("--kernel", type=command.existing_file,
                   help="bzImage to boot (default: the --config one, "
                        "build/obj-CONFIG/arch/x86/boot/bzImage)")
    p.add_argument("-t", "--topology", default="2x4", type=topology_arg,
                   help=f"{', '.join(PRESETS)} or NODESxCORES[xTHREADS]")
    p.add_argument("--sched", choices=SCHED_CLASSES,
                   help="class for normal tasks, as sched=NAME (default: the kernel's "
                        "Kconfig choice)")
    p.add_argument("--append", default="", help="extra kernel command line")
    p.add_argument("--timeout", type=command.positive_int, default=600,
                   help="seconds the guest may take, boot included")
    p.add_argument("--shell", action="store_true",
                   help="interactive shell on the console instead of a command")
    p.add_argument("--outdir", type=command.folder,
                   help="keep the guest's shared folder here (default: a temporary "
                        "folder, removed)")
    add_accel_arg(p)
    p.add_argument("-v", "--verbose", action="store_true",
                   help="show the whole kernel console as it boots")
    p.add_argument("--list", action="store_true", help="list the topology presets and exit")
    p.add_argument("command", nargs=argparse.REMAINDER,
                   help="shell command to run in the guest (default: true)")
    p.set_defaults(fn=main, check=check_args)


# The kernel a boot without --config takes: the first of these built.
BOOT_PREFERENCE = ("debug", "base", "distro-small")


def check_args(a):
    """The problem with a combination of arguments, or None. Without
    --config, picks the configuration to boot."""
    if a.list:
        return None
    if a.shell and a.command:
        return "--shell runs no command: drop the command or --shell"
    if a.config is None:
        built = [c for c in BOOT_PREFERENCE if paths.kernel_image(c).exists()]
        a.config = built[0] if built and not a.kernel else "debug"
        a.config_chosen = a.config != "debug"
    kernel = a.kernel or paths.kernel_image(a.config)
    if not kernel.exists():
        return (f"no {a.config} kernel at {kernel}: run scripts/build --config {a.config} "
                "or give --kernel")
    return None


def kernel_cmdline(a):
    return " ".join(filter(None, [f"sched={a.sched}" if a.sched else "", a.append]))


def main(a):
    if a.list:
        for t in PRESETS.values():
            print(f"{t.name:5} {t.cpus:3} CPUs  {t.nodes} node(s)  {t.memory} MiB  {t.note}")
        return command.OK
    set_accel(a.accel)
    if getattr(a, "config_chosen", False):
        print(f"boot: no debug kernel built: booting the {a.config} one "
              f"(scripts/build --config debug builds the lockdep kernel)", file=sys.stderr)
    words = a.command[1:] if a.command[:1] == ["--"] else a.command
    cmd = " ".join(words) or "true"
    try:
        res = boot(cmd, a.topology, kernel_cmdline(a), a.config, a.kernel, a.timeout,
                   outdir=a.outdir, verbose=a.verbose, interactive=a.shell)
    except GuestError as e:
        print(f"boot: {e}", file=sys.stderr)
        return command.GUEST
    sys.stdout.write(res.output)
    return command.guest_status("boot", res.status, res.seconds)
