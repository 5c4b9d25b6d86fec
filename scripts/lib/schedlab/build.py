"""Kernel and selftest builds for the prepared tree.

Configurations: "base" (allnoconfig + configs/base.config: boots under QEMU,
used for benchmarks), "debug" (base + configs/debug.config: lockdep and
friends, used by the test suite) and "distro" (Debian's 6.1 config +
configs/distro.config: for Debian packages on real hardware).
"""

import fcntl
import hashlib
import lzma
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from . import paths
from .tree import Tree

CONFIGS = {
    "base": ["base.config"],
    "debug": ["base.config", "debug.config"],
    "distro": ["distro.config"],
}
DEBIAN_CONFIG = "/usr/src/linux-config-6.1/config.amd64_none_amd64.xz"

# The kernel selftests the guests run: tools/testing/sched/selftests.list.
SELFTEST_LIST = paths.REPO / "tools" / "testing" / "sched" / "selftests.list"


def selftest_targets():
    """Collections named in the list, in order of first use."""
    names = [line.split()[0] for line in SELFTEST_LIST.read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    return list(dict.fromkeys(names))


class BuildError(Exception):
    pass


def add_args(p):
    p.add_argument("--config", choices=sorted(CONFIGS), default="base")
    p.add_argument("--target", default="bzImage",
                   help="make target: bzImage (default), bindeb-pkg, selftests, ...")
    p.add_argument("-j", "--jobs", type=int, default=os.cpu_count())
    p.set_defaults(fn=lambda a: build(a.config, a.target, a.jobs))


def fragments(config):
    return [paths.REPO / "configs" / f for f in CONFIGS[config]]


def make_env():
    env = dict(os.environ)
    # Relative paths in ccache's hash let clones in other folders share it.
    env.setdefault("CCACHE_BASEDIR", str(paths.BUILD.parent))
    env.setdefault("KBUILD_BUILD_USER", "schedlab")
    env.setdefault("KBUILD_BUILD_HOST", "schedlab")
    return env


def make(config, *targets, jobs=None, log=print):
    args = ["make", "-s", "-C", str(paths.TREE), f"O={paths.obj_dir(config)}",
            f"-j{jobs or os.cpu_count()}"]
    if shutil.which("ccache"):
        args.append("CC=ccache gcc")
    args += list(targets)
    proc = subprocess.run(args, env=make_env())
    if proc.returncode:
        raise BuildError(f"make {' '.join(targets)} failed for the {config} config")


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


def configure(config, log=print):
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
    if config == "distro":
        (obj / ".config").write_bytes(lzma.open(DEBIAN_CONFIG).read())
    else:
        make(config, "allnoconfig")
    merge = paths.TREE / "scripts/kconfig/merge_config.sh"
    proc = subprocess.run(["sh", str(merge), "-m", "-O", str(obj), str(obj / ".config"),
                           *map(str, frags)], capture_output=True, text=True)
    if proc.returncode:
        raise BuildError(proc.stdout + proc.stderr)
    make(config, "olddefconfig")
    have = read_config(obj / ".config")
    want = {}
    for f in frags:
        want.update({k: (v, f.name) for k, v in parse_fragment(f).items()})
    missing = [f"{key}={val} (got {have.get(key)}) from {name}"
               for key, (val, name) in want.items() if have.get(key) != val]
    if missing:
        raise BuildError("Kconfig did not keep these settings (a dependency is "
                         "missing from the fragment):\n  " + "\n  ".join(missing))
    stamp.write_text(digest.hexdigest())


def build(config="base", target="bzImage", jobs=None, log=print):
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
        configure(config, log)
        if target == "selftests":
            build_selftests(config, jobs)
        else:
            make(config, target, jobs=jobs)
    except BuildError as e:
        print(f"build: {e}", file=sys.stderr)
        return 1
    log(f"build: {config} {target} done in {time.time() - start:.0f} s"
        + (f": {paths.kernel_image(config)}" if target == "bzImage" else ""))
    return 0


def selftests_dir():
    return paths.BUILD / "kselftest"


def build_selftests(config="debug", jobs=None, targets=None):
    """Build and install the scheduling-related kernel selftests."""
    obj = paths.obj_dir(config)
    make(config, "headers", jobs=jobs)
    install = selftests_dir()
    env = make_env()
    args = ["make", "-s", "-C", str(paths.TREE / "tools/testing/selftests"),
            f"-j{jobs or os.cpu_count()}", f"O={paths.BUILD / 'kselftest-obj'}",
            f"KHDR_INCLUDES=-isystem {obj / 'usr/include'}",
            f"TARGETS={' '.join(targets or selftest_targets())}",
            f"INSTALL_PATH={install}", "install"]
    proc = subprocess.run(args, env=env)
    if proc.returncode:
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


def guest_program(name):
    """Compile tools/testing/sched/NAME.c for the guest (which shares the
    host's root and libraries) into build/tools/NAME, when out of date."""
    src = paths.GUEST_TESTS / f"{name}.c"
    out = paths.BUILD / "tools" / name
    if not out.exists() or out.stat().st_mtime < src.stat().st_mtime:
        out.parent.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", "-Werror",
                               "-Wno-unused-parameter", "-pthread", "-o", str(out),
                               str(src)], capture_output=True, text=True)
        if proc.returncode:
            raise BuildError(f"compiling {src.name} failed:\n{proc.stderr}")
    return out
