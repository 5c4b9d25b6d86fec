"""How scripts/reproduce runs an experiment: the two runners (a QEMU
guest of the built kernel, or this machine with --host), the context an
adapter receives, and every boot of one experiment, on each topology and
reference kernel, their rounds numbered on."""

import dataclasses
import os
import re
import subprocess
import threading
from pathlib import Path

from .. import build, paths, reference, vm
from .metadata import config_hash, host_config_path
from .progress import Progress
from .registry import SCHED_CLASS, Outcome, compares_classes

# Seconds a boot costs beyond its rounds (boot, probe, power-off), for the
# estimate of time left.
BOOT_SECONDS = 40
QUICK_TIMEOUT_MIN = 300    # s, a --quick boot's shortest limit


RELEASE_MARK = "reproduce-uname-r"


@dataclasses.dataclass
class Boot:
    output: str
    release: str
    status: int
    files: Path


def release_of(output):
    m = re.search(rf"^{RELEASE_MARK} (\S+)$", output, re.M)
    return m[1] if m else ""


class _Tail(threading.Thread):
    """Hands each new line of a growing file to `on_line`: the guest's
    output file fills while it runs, which is how progress sees rounds."""

    def __init__(self, path, on_line):
        super().__init__(daemon=True)
        self.path, self.on_line, self.stop = path, on_line, threading.Event()

    def run(self):
        pos, rest = 0, ""
        while not self.stop.wait(1.0):
            try:
                with open(self.path, errors="replace") as f:
                    f.seek(pos)
                    chunk = f.read()
                    pos = f.tell()
            except FileNotFoundError:
                continue
            *lines, rest = (rest + chunk).split("\n")
            for line in lines:
                self.on_line(line.rstrip("\r"))


def sysctl_command(sysctls):
    """Shell that sets each kernel.NAME to its value, or ends the guest's
    command with status 2 and one line if it cannot."""
    return "".join(f"{{ echo {v} >/proc/sys/kernel/{k} || {{ echo 'reproduce: cannot set "
                   f"kernel.{k}={v}'; exit 2; }}; }}; " for k, v in sysctls.items())


class GuestRunner:
    """Boots the kernel of `config` under QEMU for each adapter's command;
    the guest's shared folder for a boot is workdir/TAG, /tmp/out inside."""

    def __init__(self, config, qemu_mode, workdir):
        self.config, self.mode, self.workdir = config, qemu_mode, Path(workdir)
        self.kernel = paths.kernel_image(config)
        self.accel = None
        self.sysctls = {}   # kernel.NAME: value, set before each command

    def config_sha256(self):
        return config_hash(paths.obj_dir(self.config) / ".config")

    def for_reference(self, name):
        """A runner of the same mode that boots reference kernel `name`
        (scripts/reference-kernel), its guests' folders in workdir/NAME."""
        other = GuestRunner(self.config, self.mode, self.workdir / name)
        other.kernel = reference.kernel_image(name)
        other.config_sha256 = lambda: config_hash(reference.ROOT / name / "obj" / ".config")
        return other

    def run(self, command, topology, tag, on_line=lambda line: None, timeout=3600):
        outdir = self.workdir / tag
        outdir.mkdir(parents=True, exist_ok=True)
        tail = _Tail(outdir / "output.log", on_line)
        tail.start()
        try:
            self.accel = vm.resolve_accel(self.kernel, self.mode)
            res = vm.boot(f"echo {RELEASE_MARK} $(uname -r); {sysctl_command(self.sysctls)}"
                          f"{command}", topology, "",
                          kernel=self.kernel, timeout=timeout, outdir=outdir,
                          qemu_mode=self.mode, accel=self.accel)
        finally:
            tail.stop.set()
        return Boot(res.output, release_of(res.output), res.status, outdir)

    def shared_dir(self, tag):
        return "/tmp/out"


class HostRunner:
    """Runs each adapter's command on this machine (--host), which must run
    the patched kernel: classes are switched through kernel.sched_class."""

    mode = "host"
    config = "host"
    accel = None

    def __init__(self, workdir):
        self.workdir = Path(workdir)

    def config_sha256(self):
        path = host_config_path(os.uname().release)
        return config_hash(path) if path else None

    def run(self, command, topology, tag, on_line=lambda line: None, timeout=3600):
        outdir = self.workdir / tag
        outdir.mkdir(parents=True, exist_ok=True)
        proc = subprocess.Popen(["sh", "-c", command], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, cwd=outdir)
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        lines = []
        try:
            for line in proc.stdout:
                lines.append(line)
                on_line(line.rstrip("\n"))
            status = proc.wait()
        finally:
            timer.cancel()
        output = "".join(lines)
        (outdir / "output.log").write_text(output)
        return Boot(output, os.uname().release, status, outdir)

    def shared_dir(self, tag):
        return str(self.workdir / tag)


def host_refusal(sched_class=SCHED_CLASS, euid=None):
    """Why --host cannot run here, or None: it needs the patched kernel's
    run-time switch, and root to write it."""
    if not Path(sched_class).exists():
        return (f"--host needs a kernel with ULE and BMQ ({sched_class} does not exist "
                f"on this kernel, {os.uname().release})")
    if (os.geteuid() if euid is None else euid) != 0:
        return f"--host needs root to write {sched_class}"
    return None


@dataclasses.dataclass
class Context:
    """What an adapter needs: rounds, sizes, the runner, programs, progress."""
    rounds: int
    quick: bool
    runner: object
    progress: Progress = None
    boot_estimate: float = 600.0
    boots: int = 1
    classes: tuple = ()             # the classes of the boots under way: the
    #                                 experiment's, or a reference kernel's variant
    references: dict = dataclasses.field(default_factory=dict)   # name: info

    def program(self, name):
        """tools/testing/sched/NAME.c built for the guest. Even without
        building, a binary older than its sources is rebuilt (seconds): a
        stale one would run without the code the parsers expect."""
        return build.guest_program(name)

    def track(self, pattern):
        """on_line callback: a line matching `pattern` (round in group 1)
        moves the progress to that round."""
        regex = re.compile(pattern)

        def on_line(line):
            m = regex.match(line)
            if m and self.progress:
                self.progress.at_round(int(m[1]))
        return on_line

    def timeout(self):
        """The current boot's limit: generous against its estimate, since a
        guest that never ends must not hold the run forever. Smoke sizes
        take a third of their estimate or less, and a hung guest must not
        cost a test run (CI) a quarter of an hour."""
        if self.quick:
            return int(max(QUICK_TIMEOUT_MIN, 2 * self.boot_estimate + 120))
        return int(max(900, 4 * self.boot_estimate + 300))


def boot_shares(rounds, boots):
    """Rounds per boot: `rounds` split as evenly as `boots` allow, the
    first boots taking one more when it does not divide."""
    return [rounds // boots + (b < rounds % boots) for b in range(boots)]


def references_for(exp, references):
    """The reference kernels (name: info) that run `exp` as one more
    variant: experiments that compare classes, when they run the class the
    kernel is the original of (any, for a kernel of no class of ours)."""
    if not compares_classes(exp):
        return {}
    return {name: info for name, info in references.items()
            if reference.LIKE.get(info.get("scheduler")) in exp.variants + (None,)}


def plan_of(experiments, rounds, quick, override, host, boots=1, references=None):
    """[(name, [estimated seconds per boot])] for Progress; a reference
    kernel's boot runs one variant of the experiment's."""
    plan = []
    for exp in experiments:
        kernels = [1.0] + [1 / len(exp.variants) for _ in references_for(exp, references or {})]
        per_boot = [BOOT_SECONDS + share * exp.estimate(t, quick) * part
                    for part in kernels
                    for t in exp.topologies_for(override, quick, host)
                    for share in boot_shares(rounds, boots)]
        plan.append((exp.name, per_boot))
    return plan


def run_experiment(exp, index, ctx, override, host):
    """Every boot of one experiment (per topology, ctx.boots boots that
    share its rounds), then the same on each reference kernel that runs
    it (ctx.references, references_for()) with its one variant; runs,
    benches and commands merged, the rounds of later boots numbered on
    from the earlier ones' (a reference kernel's rounds pair with the
    same rounds of the main kernel's boots)."""
    merged = Outcome(runs=[], benches={})
    topologies = exp.topologies_for(override, ctx.quick, host)
    runner, boot = ctx.runner, 0
    refs = references_for(exp, ctx.references)
    kernels = [(None, runner)] + [(name, runner.for_reference(name)) for name in refs]
    sysctls = getattr(runner, "sysctls", None)
    if sysctls is not None:
        runner.sysctls = reference.original_sysctls(refs)
    try:
        for name, ctx.runner in kernels:
            ctx.classes = (name,) if name else exp.classes
            for topology in topologies:
                boot = _topology_boots(exp, index, ctx, topology, merged, boot, name)
    finally:
        ctx.runner, ctx.classes = runner, ()
        if sysctls is not None:
            runner.sysctls = sysctls
    return merged, topologies


def _topology_boots(exp, index, ctx, topology, merged, boot, kernel=None):
    """run_experiment()'s boots on one topology with ctx.runner; returns
    the index in the plan of the next boot."""
    rounds, workdir = ctx.rounds, getattr(ctx.runner, "workdir", None)
    shares = boot_shares(rounds, ctx.boots)
    done = 0
    try:
        for b, share in enumerate(shares):
            ctx.rounds = share
            label = topology if ctx.boots == 1 else f"{topology} boot {b + 1}/{ctx.boots}"
            label += f" ({kernel})" if kernel else ""
            if ctx.boots > 1 and workdir is not None:
                ctx.runner.workdir = workdir / f"boot-{b + 1}"
            part = 1 / len(exp.variants) if kernel else 1.0
            ctx.boot_estimate = BOOT_SECONDS + share * exp.estimate(topology, ctx.quick) * part
            if ctx.progress:
                ctx.progress.begin(index, boot, label, share)
            outcome = exp.run(ctx, topology)
            if ctx.progress:
                ctx.progress.end_boot()
            boot += 1
            for record in outcome.runs + outcome.failures:
                if isinstance(record.get("round"), int):
                    record["round"] += done
                if ctx.boots > 1:
                    record["boot"] = b + 1
            done += share
            merged.runs += outcome.runs
            merged.benches.update(outcome.benches)
            if not kernel:
                merged.commands.update(outcome.commands)
            merged.failures += outcome.failures
            if kernel:
                merged.references.setdefault(kernel, {})["kernel_release"] = outcome.release
            else:
                merged.release = merged.release or outcome.release
    finally:
        ctx.rounds = rounds
        if workdir is not None:
            ctx.runner.workdir = workdir
    return boot
