"""scripts/check-series: does every patch of the series build?

The series is exported as scripts/export writes it (a cover letter, then
the commits git am applies to 6.1.192: the maintainer's series, or with
--development the development one), then applied one commit at a time
to a worktree of the prepared tree at its "pristine" tag
(build/check-series/linux). After each commit kernel/sched/ is built with
W=1 in build/check-series/obj, configured as check-configs' cells are
(base.config without what only lets the guests boot) with every option
of kernel/Kconfig.sched that has a prompt turned on, as far as Kconfig
keeps it: each class, observer and fix that exists at that step. A step
is clean when the commit applies, make succeeds and no warning points at
a line the series owns at that step. The objects are kept between steps
and between runs, so a step rebuilds what its commit touched.
"""

import json
import os
import re
import shutil
import sys
import time
from dataclasses import dataclass, field

from . import build, check_configs, command, partition, paths, tree

WORK = "check-series"
TARGET = "kernel/sched/"
KCONFIG = "kernel/Kconfig.sched"


def work_dir():
    return paths.BUILD / WORK


def results_path():
    return work_dir() / "results.json"


@dataclass
class Step:
    number: int
    subject: str
    applied: bool = False
    configured: bool = False
    status: str = "not run"
    options: list = field(default_factory=list)
    ours: list = field(default_factory=list)
    errors: list = field(default_factory=list)
    seconds: int = 0

    @property
    def clean(self):
        return self.status == "clean"


def prompted_options(text):
    """The options of a Kconfig file that a user can turn on: a config
    entry (not a choice member) whose type line has a prompt."""
    options, name, in_choice = [], None, 0
    for line in text.splitlines():
        word = line.split("#", 1)[0].strip()
        if word == "choice":
            in_choice += 1
        elif word == "endchoice":
            in_choice = max(0, in_choice - 1)
        m = re.match(r"^(?:menu)?config\s+(\w+)$", word)
        if m:
            name = None if in_choice else m.group(1)
            continue
        if name and re.match(r"^(?:bool|tristate|string|int|hex|def_bool|def_tristate)\b",
                             word):
            if re.match(r'^(?:bool|tristate)\s+"', word):
                options.append(name)
            name = None
        elif not line.startswith((" ", "\t")) and word:
            name = None
    return options


def patch_subject(path):
    """The subject of a format-patch file, without its [PATCH n/m]."""
    subject = []
    for line in path.read_text(errors="replace").splitlines():
        if subject:
            if line.startswith(" "):
                subject.append(line.strip())
                continue
            break
        if line.startswith("Subject: "):
            subject.append(line[len("Subject: "):])
    return re.sub(r"^\[PATCH[^\]]*\]\s*", "", " ".join(subject))


def touches_kconfig(path):
    return any(re.match(r"^diff --git a/\S*Kconfig\S* ", line)
               for line in path.read_text(errors="replace").splitlines())


def run_steps(patches, apply, configure, make, first=1, log=build.say):
    """Apply each patch in turn and build from `first` (1-based) on; the
    list of Steps. apply(path) -> error or None; configure(step) -> error
    or None, asked at the first built step and after a commit that touches
    a Kconfig file, fills step.options, which the steps after it keep;
    make(step) fills step.status, .ours and .errors. A
    commit that does not apply ends the run: nothing after it can."""
    steps, stale, options = [], True, []
    for number, path in enumerate(patches, 1):
        step = Step(number, patch_subject(path))
        steps.append(step)
        start = time.monotonic()
        problem = apply(path)
        if problem:
            step.status = f"does not apply: {problem}"
            step.errors = [problem]
            log(f"check-series: {number:04d} {step.subject}: {step.status}")
            break
        step.applied = True
        stale = stale or touches_kconfig(path)
        if number < first:
            step.status = "applied, not built"
            continue
        if stale:
            problem = configure(step)
            if problem:
                step.status = f"not configured: {problem}"
                step.seconds = round(time.monotonic() - start)
                log(f"check-series: {number:04d} {step.subject}: {step.status}")
                continue
            step.configured, stale, options = True, False, step.options
        step.options = options
        make(step)
        step.seconds = round(time.monotonic() - start)
        log(f"check-series: {number:04d} {step.subject}: {step.status} "
            f"({build.minutes(step.seconds)})")
    return steps


class Worktree:
    """build/check-series/linux: the prepared tree's pristine commit,
    checked out once, and the series applied to it with git am."""

    def __init__(self, jobs=None, verbose=False, log=build.say):
        self.dir = work_dir() / "linux"
        self.obj = work_dir() / "obj"
        self.jobs, self.verbose, self.log = jobs, verbose, log

    def reset(self):
        if (self.dir / ".git").exists():
            tree.git(self.dir, "am", "--abort", check=False)
            tree.git(self.dir, "reset", "-q", "--hard", "pristine")
            tree.git(self.dir, "clean", "-qfdx")
        else:
            shutil.rmtree(self.dir, ignore_errors=True)
            tree.git(paths.TREE, "worktree", "prune")
            tree.git(paths.TREE, "worktree", "add", "-q", "--detach", str(self.dir), "pristine")
        self.obj.mkdir(parents=True, exist_ok=True)

    def apply(self, path):
        proc = tree.git(self.dir, "am", "-q", "--keep-cr", str(path), check=False)
        if proc.returncode:
            tree.git(self.dir, "am", "--abort", check=False)
            return (proc.stdout + proc.stderr).strip().splitlines()[0]
        return None

    def make(self, log_file, *args):
        return check_configs.make_in(self.obj, self.dir, log_file, *args, what="check-series",
                                     jobs=self.jobs, verbose=self.verbose, log=self.log)

    def configure(self, step):
        """allnoconfig, check-configs' cell base and every prompted option
        of kernel/Kconfig.sched; records which ones Kconfig kept."""
        kconfig = self.dir / KCONFIG
        wanted = prompted_options(kconfig.read_text()) if kconfig.exists() else []
        problem = check_configs.configure_obj(
            self.obj, self.dir, ["CONFIG_KUNIT=y"] + [f"CONFIG_{o}=y" for o in wanted],
            "check-series", self.jobs, self.verbose, self.log)
        if problem:
            return problem
        have = build.read_config(self.obj / ".config")
        step.options = [o for o in wanted if have.get(f"CONFIG_{o}") == "y"]
        return None

    def build(self, step):
        log_file = self.obj / f"step-{step.number:04d}.log"
        log_file.write_text("")
        status = self.make(log_file, "W=1", TARGET)
        text = log_file.read_text(errors="replace")
        step.ours = check_configs.ours(text, check_configs.our_lines(self.dir), self.dir)
        if status:
            step.status = f"make failed (exit {status})"
            step.errors = list(dict.fromkeys(
                line.strip() for line in text.splitlines() if "error" in line))[:5]
        elif step.ours:
            step.status = f"{len(step.ours)} warnings in our code"
        else:
            step.status = "clean"


def table(steps):
    rows = ["| # | patch | result | options on | minutes |", "|---|---|---|---|---|"]
    for s in steps:
        options = ", ".join(o.replace("SCHED_", "").lower() for o in s.options)
        rows.append(f"| {s.number} | {s.subject} | {s.status} | {options} | "
                    f"{s.seconds / 60:.1f} |")
    return "\n".join(rows)


def parser():
    ap = command.Parser(
        prog="check-series", description=__doc__,
        epilog=command.epilog(command.OK, command.FAILED, command.USAGE))
    ap.add_argument("--from", dest="first", type=command.positive_int, default=1, metavar="N",
                    help="build from the Nth commit on (the cover letter is not one); "
                         "the ones before are applied only (default: 1)")
    ap.add_argument("-j", "--jobs", type=command.positive_int, default=os.cpu_count(),
                    help="parallel make jobs (default: the CPU count)")
    ap.add_argument("--development", action="store_true",
                    help="check the development series (scripts/export --development) "
                         "instead of the maintainer's")
    ap.add_argument("-v", "--verbose", action="store_true", help="show make's output")
    return ap


def main(argv=None):
    a = parser().parse_args(argv)
    # The export's commits: the maintainer's plan, or one that adds the
    # new files and then the development series.
    try:
        if a.development:
            commits = len(tree.read_series(paths.REPO, check=False)) + 1
        else:
            commits = len(partition.Plan.load(paths.REPO / partition.PLAN).patches)
    except tree.TreeError as e:
        print(f"check-series: {e}", file=sys.stderr)
        return command.FAILED
    if a.first > commits:
        return command.usage_error("check-series",
                                   f"--from {a.first}: the series has {commits} commits")
    start = time.time()
    try:
        t = tree.Tree()
        t.prepare(log=build.say)
        export = work_dir() / "export"
        shutil.rmtree(export, ignore_errors=True)
        if a.development:
            written = t.export(export, log=build.say)
        else:
            written = partition.export(t, export, log=build.say)
        patches = [p for p in written if not p.name.startswith("0000-")]
        wt = Worktree(a.jobs, a.verbose)
        wt.reset()
    except tree.TreeError as e:
        print(f"check-series: {e}", file=sys.stderr)
        return command.FAILED
    steps = run_steps(patches, wt.apply, wt.configure, wt.build, a.first)
    results_path().write_text(json.dumps([s.__dict__ for s in steps], indent=1) + "\n")
    for s in steps:
        for entry in s.ours + [e for e in s.errors if e not in s.ours]:
            print(f"check-series: {s.number:04d}: {entry}")
    print(table(steps))
    built = [s for s in steps if s.number >= a.first]
    broken = [s for s in built if not s.clean]
    print(f"check-series: {len(built) - len(broken)} of {len(built)} commits clean in "
          f"{build.minutes(time.time() - start)}"
          + (f"; first not clean: {broken[0].number:04d} {broken[0].subject}" if broken else ""))
    return command.FAILED if broken or len(steps) < len(patches) else command.OK
