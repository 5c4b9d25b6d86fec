"""Kernel and selftest builds for the prepared tree.

Configurations: "base" (allnoconfig + configs/base.config: boots under QEMU,
used for benchmarks), "debug" (base + configs/debug.config: lockdep and
friends, used by the test suite), "distro" (Debian's 6.1 config +
configs/distro.config: for Debian packages on real hardware) and
"distro-small" (distro with every module and the debug information off
and the guests' drivers built in: builds in reasonable time on a small
machine and boots under QEMU).
"""

import argparse
import fcntl
import hashlib
import lzma
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

from . import command, paths
from .tree import Tree, TreeError

CONFIGS = {
    "base": ["base.config"],
    "debug": ["base.config", "debug.config"],
    "distro": ["distro.config"],
    "distro-small": ["distro.config", "distro-small.config"],
}
# Configurations built from Debian's, and those whose modules are turned
# off first (make mod2noconfig).
DEBIAN_BASED = ("distro", "distro-small")
NO_MODULES = ("distro-small",)
DEBIAN_CONFIG = "/usr/src/linux-config-6.1/config.amd64_none_amd64.xz"
# Configurations whose bzImage boots the guests: distro's needs its modules
# (9p among them) installed, so it is for real hardware only; distro-small
# has what the guests need built in.
BOOTABLE = ("base", "debug", "distro-small")

# The kernel selftests the guests run: tools/testing/sched/selftests.list.
SELFTEST_LIST = paths.REPO / "tools" / "testing" / "sched" / "selftests.list"


def selftest_targets():
    """Collections named in the list, in order of first use."""
    names = [line.split()[0] for line in SELFTEST_LIST.read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    return list(dict.fromkeys(names))


class BuildError(Exception):
    pass


# Make targets --target takes by name; a folder (kernel/sched/) or one file
# in it (kernel/sched/ule.o) is taken too, so that a typo fails here and
# not after the tree is extracted and configured.
TARGETS = ("bzImage", "vmlinux", "modules", "headers", "bindeb-pkg", "selftests", "stap",
           "clean")
PATH_TARGET_RE = re.compile(r"(?:[\w+-]+/)+(?:[\w+-]+\.(?:o|i|s|lst|ko))?")


def target_arg(text):
    """argparse type: a target from TARGETS or a kernel folder or object."""
    if text in TARGETS or PATH_TARGET_RE.fullmatch(text):
        return text
    raise argparse.ArgumentTypeError(f"unknown target {text!r}: one of {', '.join(TARGETS)}, "
                                     "a folder (kernel/sched/) or an object in one "
                                     "(kernel/sched/ule.o)")


def add_args(p):
    p.description = ("Build the prepared tree (scripts/prepare runs first if needed) out "
                     "of tree in build/obj-CONFIG with ccache. Prints a progress line "
                     f"every {PROGRESS_SECONDS} s; -v shows make's own output.")
    p.epilog = command.epilog(command.OK, command.FAILED, command.USAGE)
    p.add_argument("--config", choices=sorted(CONFIGS), default="base",
                   help="base (boots under QEMU), debug (base + lockdep and friends), "
                        "distro (Debian's config, for real hardware) or distro-small "
                        "(distro without modules or debug information; boots under QEMU)")
    p.add_argument("--target", default="bzImage", type=target_arg,
                   help=f"make target: {', '.join(TARGETS)}, a folder or an object")
    p.add_argument("-j", "--jobs", type=command.positive_int, default=os.cpu_count(),
                   help="parallel make jobs")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="show make's output instead of a progress line every "
                        f"{PROGRESS_SECONDS} s")
    p.set_defaults(fn=lambda a: build(a.config, a.target, a.jobs, verbose=a.verbose))


def say(msg):
    """print(), flushed: progress must show when stdout is a pipe (CI)."""
    print(msg, flush=True)


def fragments(config):
    return [paths.REPO / "configs" / f for f in CONFIGS[config]]


def make_env():
    env = dict(os.environ)
    # Relative paths in ccache's hash let clones in other folders share it.
    env.setdefault("CCACHE_BASEDIR", str(paths.BUILD.parent))
    env.setdefault("KBUILD_BUILD_USER", "schedlab")
    env.setdefault("KBUILD_BUILD_HOST", "schedlab")
    return env


# A cold build is about ten minutes of make: a progress line this often.
PROGRESS_SECONDS = 30
# make's lines for one compiled object: Kbuild's short form ("CC", "CC [M]",
# "AS", "HOSTCC" and the file, indented) and the full gcc command lines the
# selftests' makefiles print.
COMPILED_RE = re.compile(r"^(?:\s+(?:CC|AS|CXX|HOSTCC|HOSTCXX)(?: \[M\])?\s+\S"
                         r"|(?:gcc|cc|clang|ccache gcc)\s)")


def minutes(seconds):
    seconds = int(seconds)
    return f"{seconds // 60} min {seconds % 60} s" if seconds >= 60 else f"{seconds} s"


def run_make(args, what, verbose=False, log=say):
    """Run make without -s and return (exit status, objects compiled).
    Its output is counted, and every PROGRESS_SECONDS a line says how many
    objects are compiled so far: a cold build is no longer ten silent
    minutes. verbose copies make's output instead. Errors and warnings go
    to stderr, which is not captured."""
    proc = subprocess.Popen(args, env=make_env(), stdout=subprocess.PIPE, text=True,
                            errors="replace", bufsize=1)
    compiled = [0]

    def read():
        for line in proc.stdout:
            if COMPILED_RE.match(line):
                compiled[0] += 1
            if verbose:
                sys.stdout.write(line)
                sys.stdout.flush()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    start = time.monotonic()
    while True:
        try:
            proc.wait(timeout=PROGRESS_SECONDS)
            break
        except subprocess.TimeoutExpired:
            if not verbose:
                log(f"build: {what}: {compiled[0]} objects compiled so far, "
                    f"{minutes(time.monotonic() - start)}")
    reader.join()
    return proc.returncode, compiled[0]


def make_command(obj, jobs=None, tree=None):
    """make on `tree` (default: the prepared tree) with objects in `obj`,
    through ccache when it is installed."""
    args = ["make", "-C", str(tree or paths.TREE), f"O={obj}", f"-j{jobs or os.cpu_count()}"]
    if shutil.which("ccache"):
        args.append("CC=ccache gcc")
    return args


def make(config, *targets, jobs=None, verbose=False, log=say):
    """Run make on the prepared tree for one configuration; returns the
    number of objects compiled."""
    args = make_command(paths.obj_dir(config), jobs) + list(targets)
    rc, compiled = run_make(args, f"{config} {' '.join(targets)}", verbose, log)
    if rc:
        raise BuildError(f"make {' '.join(targets)} failed for the {config} config")
    return compiled


def parse_fragment(path):
    want = {}
    for line in path.read_text().splitlines():
        m = re.match(r"^(CONFIG_\w+)=(.*)$", line)
        if m:
            want[m.group(1)] = m.group(2)
        m = re.match(r"^# (CONFIG_\w+) is not set$", line)
        if m:
            want[m.group(1)] = None
    return want


def read_config(path):
    have = {}
    for line in path.read_text().splitlines():
        m = re.match(r"^(CONFIG_\w+)=(.*)$", line)
        if m:
            have[m.group(1)] = m.group(2)
    return have


def configure(config, log=say, verbose=False):
    obj = paths.obj_dir(config)
    obj.mkdir(parents=True, exist_ok=True)
    frags = fragments(config)
    digest = hashlib.sha256()
    for f in frags:
        digest.update(f.read_bytes())
    for kconfig in (paths.REPO / "kernel").rglob("Kconfig*"):
        digest.update(kconfig.read_bytes())
    stamp = obj / ".schedlab-config"
    if (obj / ".config").exists() and stamp.exists() and stamp.read_text() == digest.hexdigest():
        return
    log(f"build: configuring {config} from {', '.join(f.name for f in frags)}")
    if config in DEBIAN_BASED:
        (obj / ".config").write_bytes(lzma.open(DEBIAN_CONFIG).read())
        if config in NO_MODULES:
            make(config, "mod2noconfig", verbose=verbose, log=log)
    else:
        make(config, "allnoconfig", verbose=verbose, log=log)
    missing = merge_fragments(paths.TREE, obj, frags,
                              lambda: make(config, "olddefconfig", verbose=verbose, log=log))
    if missing:
        raise BuildError("Kconfig did not keep these settings (a dependency is "
                         "missing from the fragment):\n  " + "\n  ".join(missing))
    stamp.write_text(digest.hexdigest())


def merge_fragments(tree, obj, frags, olddefconfig):
    """Merge the fragments into obj/.config with the tree's merge_config.sh,
    run `olddefconfig()`, and return the settings Kconfig did not keep."""
    merge = tree / "scripts/kconfig/merge_config.sh"
    proc = subprocess.run(["sh", str(merge), "-m", "-O", str(obj), str(obj / ".config"),
                           *map(str, frags)], capture_output=True, text=True)
    if proc.returncode:
        raise BuildError(proc.stdout + proc.stderr)
    olddefconfig()
    have = read_config(obj / ".config")
    want = {}
    for f in frags:
        want.update({k: (v, f.name) for k, v in parse_fragment(f).items()})
    return [f"{key}={val} (got {have.get(key)}) from {name}"
            for key, (val, name) in want.items() if have.get(key) != val]


def build(config="base", target="bzImage", jobs=None, log=say, verbose=False):
    """Prepare, configure and make; returns an exit status (FAILED with
    the reason on stderr)."""
    start = time.time()
    paths.BUILD.mkdir(parents=True, exist_ok=True)
    lock = open(paths.BUILD / f".lock-{config}", "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        log(f"build: waiting for another build of the {config} config to finish")
        fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        Tree().prepare(log=log)
        configure(config, log, verbose)
        if target == "selftests":
            build_selftests(config, jobs, verbose=verbose, log=log)
            compiled = None
        elif target == "stap":
            compiled = make(config, "bzImage", "modules", jobs=jobs, verbose=verbose, log=log)
            for module in stap_modules(config, log).values():
                log(f"build: {module}")
        else:
            compiled = make(config, target, jobs=jobs, verbose=verbose, log=log)
    except (BuildError, TreeError) as e:
        print(f"build: {e}", file=sys.stderr)
        return command.FAILED
    log(f"build: {config} {target} done in {minutes(time.time() - start)}"
        + (f", {compiled} objects compiled" if compiled is not None else "")
        + (f": {paths.kernel_image(config)}" if target == "bzImage" else ""))
    return command.OK


FEATURE_RE = re.compile(r"^\s*SCHED_FEAT\((\w+),", re.M)


def sched_features(log=say):
    """The scheduler feature names of the prepared tree's features.h
    (every class's, whatever the config), preparing the tree if needed."""
    Tree().prepare(log=log)
    return set(FEATURE_RE.findall((paths.TREE / "kernel" / "sched" / "features.h").read_text()))


def selftests_dir():
    return paths.BUILD / "kselftest"


def build_selftests(config="debug", jobs=None, targets=None, verbose=False, log=say):
    """Build and install the scheduling-related kernel selftests."""
    obj = paths.obj_dir(config)
    make(config, "headers", jobs=jobs, verbose=verbose, log=log)
    install = selftests_dir()
    args = ["make", "-C", str(paths.TREE / "tools/testing/selftests"),
            f"-j{jobs or os.cpu_count()}", f"O={paths.BUILD / 'kselftest-obj'}",
            f"KHDR_INCLUDES=-isystem {obj / 'usr/include'}",
            f"TARGETS={' '.join(targets or selftest_targets())}",
            f"INSTALL_PATH={install}", "install"]
    if run_make(args, f"{config} selftests", verbose, log)[0]:
        raise BuildError("building the kernel selftests failed")
    # A collection that lists a built binary in TEST_PROGS (6.1's sched
    # does) makes "install" look for it in the source folder with O=: copy it.
    built = paths.BUILD / "kselftest-obj" / "kselftest"
    missing = []
    for entry in (install / "kselftest-list.txt").read_text().split():
        rel = Path(*entry.split(":", 1))
        if not (install / rel).exists():
            if (built / rel).exists():
                shutil.copy2(built / rel, install / rel)
            else:
                missing.append(entry)
    if missing:
        raise BuildError("kernel selftests not built: " + ", ".join(missing))
    return install


# The kernel's selftest harness, from the prepared tree (scripts/prepare).
SELFTESTS_INCLUDE = paths.TREE / "tools" / "testing" / "selftests"


def guest_program(name):
    """Compile tools/testing/sched/NAME.c for the guest (which shares the
    host's root and libraries) into build/tools/NAME, when out of date.
    A program on kselftest_harness.h gets the prepared tree's selftests
    folder on its include path."""
    src = paths.GUEST_TESTS / f"{name}.c"
    out = paths.BUILD / "tools" / name
    text = src.read_text()
    # The headers of its own folder it includes (sched_test.h) count too.
    sources = [src] + [src.parent / h for h in re.findall(r'^#include "([^"/]+)"', text, re.M)
                       if (src.parent / h).exists()]
    if not out.exists() or out.stat().st_mtime < max(p.stat().st_mtime for p in sources):
        out.parent.mkdir(parents=True, exist_ok=True)
        include = []
        if any('#include "kselftest_harness.h"' in p.read_text() for p in sources):
            if not (SELFTESTS_INCLUDE / "kselftest_harness.h").exists():
                raise BuildError(f"{src.name} needs the prepared tree: run scripts/prepare")
            include = ["-I", str(SELFTESTS_INCLUDE)]
        proc = subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", "-Werror",
                               "-Wno-unused-parameter", "-pthread", *include, "-o", str(out),
                               str(src)], capture_output=True, text=True)
        if proc.returncode:
            raise BuildError(f"compiling {src.name} failed:\n{proc.stderr}")
    return out


# SystemTap scripts of the series: tools/systemtap/NAME.stp.
STAP_DIR = paths.REPO / "tools" / "systemtap"
STAP_RUNTIME = Path("/usr/share/systemtap/runtime")
# Two changes to the runtime of Debian 12's SystemTap 4.8, made in a copy
# (build/stap/runtime) that the modules are compiled against:
# - 6.1.y renamed task_work_cancel(task, func) to task_work_cancel_func()
#   and gave the old name a new meaning (cancel one callback_head, return
#   bool); the runtime calls the old one by name. Only for a kernel that
#   has the new name.
# - Its context trylock looks at this CPU's context before it disables
#   preemption, from the control file's read() among others: harmless (it
#   only tests for NULL), but a DEBUG_PREEMPT kernel reports every call as
#   a BUG. The early look uses raw_smp_processor_id(), as such checks do.
STAP_RUNTIME_FIXES = [
    ("task_work_cancel_func", "stp_task_work.c", "typeof(&task_work_cancel)",
     "typeof(&task_work_cancel_func)"),
    ("task_work_cancel_func", "stp_task_work.c", 'kallsyms_lookup_name("task_work_cancel")',
     'kallsyms_lookup_name("task_work_cancel_func")'),
    (None, "linux/runtime_context.h",
     "if (unlikely(_stp_runtime_get_context() == NULL))",
     "if (unlikely(per_cpu(contexts, raw_smp_processor_id()) == NULL))"),
]


def stap_runtime(tree_dir=None):
    """A copy of the SystemTap runtime in build/stap/runtime with
    STAP_RUNTIME_FIXES applied (those whose kernel symbol, if any, the
    tree's include/linux/task_work.h declares)."""
    header = (Path(tree_dir or paths.TREE) / "include/linux/task_work.h").read_text()
    fixes = [f for f in STAP_RUNTIME_FIXES if f[0] is None or f[0] in header]
    out = paths.BUILD / "stap" / "runtime"
    stamp = out / ".schedlab-fixes"
    want = repr(fixes)
    if stamp.exists() and stamp.read_text() == want and \
            stamp.stat().st_mtime >= STAP_RUNTIME.stat().st_mtime:
        return out
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(STAP_RUNTIME, out)
    for _, name, old, new in fixes:
        text = (out / name).read_text()
        if old not in text:
            raise BuildError(f"SystemTap runtime {name} has no {old!r}: a SystemTap "
                             "this script does not know; see STAP_RUNTIME_FIXES")
        (out / name).write_text(text.replace(old, new))
    stamp.write_text(want)
    return out


def stap_modules(config="debug", log=say):
    """Compile each tools/systemtap script into a module for the kernel of
    `config` (stap -r against its build folder), in build/stap/CONFIG/, when
    the script or the kernel is newer than the module; {script name: .ko}.
    The kernel needs CONFIG_MODULES and a Module.symvers (make modules)."""
    obj = paths.obj_dir(config)
    if not shutil.which("stap"):
        raise BuildError("stap is missing: run scripts/setup (package systemtap)")
    if not (obj / "Module.symvers").exists():
        raise BuildError(f"{obj}/Module.symvers is missing: the {config} kernel needs "
                         f"CONFIG_MODULES and scripts/build --config {config} --target modules")
    out = paths.BUILD / "stap" / config
    out.mkdir(parents=True, exist_ok=True)
    kernel_time = (obj / "vmlinux").stat().st_mtime
    runtime = stap_runtime()
    modules = {}
    for script in sorted(STAP_DIR.glob("*.stp")):
        name = script.stem.replace("-", "_")
        ko = out / f"{name}.ko"
        newest = max(script.stat().st_mtime, kernel_time,
                     (runtime / ".schedlab-fixes").stat().st_mtime)
        if not ko.exists() or ko.stat().st_mtime < newest:
            log(f"build: stap -r {obj.name} -p4 {script.name}")
            ko.unlink(missing_ok=True)     # a failed compile must not leave the old one
            proc = subprocess.run(["stap", "-r", str(obj), "-p4", "-m", name,
                                   "-R", str(runtime), str(script)],
                                  cwd=out, capture_output=True, text=True)
            if proc.returncode or not ko.exists():
                raise BuildError(f"stap could not build {script.name}:\n"
                                 f"{(proc.stdout + proc.stderr).strip()[-2000:]}")
        modules[script.stem] = ko
    return modules
