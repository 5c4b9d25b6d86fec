"""scripts/reproduce's metadata: everything needed to tell two results
apart and to redo one (git revision, configuration hash, host CPU...),
and the result folder's name."""

import hashlib
import os
import platform
import shlex
import subprocess
from datetime import datetime, timezone
from pathlib import Path

from .. import paths

RESULTS = paths.REPO / "results"


def git_state(repo=paths.REPO):
    """(short revision, dirty): dirty when a tracked file differs from the
    commit, so a result never passes for one of a clean tree."""
    def git(*args):
        proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True,
                              text=True)
        return proc.stdout.strip() if proc.returncode == 0 else None
    rev = git("rev-parse", "--short", "HEAD") or "unknown"
    status = git("status", "--porcelain", "--untracked-files=no")
    return rev, bool(status) if status is not None else True


def cpu_model(cpuinfo=Path("/proc/cpuinfo")):
    """The host CPU's model name: emulated times depend on it."""
    try:
        for line in cpuinfo.read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name":
                return value.strip()
    except OSError:
        pass
    return "unknown"


def config_hash(config_path):
    """sha256 of the .config a kernel was built from (None without one):
    two results are comparable only with the same configuration."""
    try:
        return hashlib.sha256(Path(config_path).read_bytes()).hexdigest()
    except OSError:
        return None


def host_config_path(release):
    """This machine's kernel configuration, where distributions keep it."""
    path = Path(f"/boot/config-{release}")
    return path if path.exists() else None


# The Debian packages of the tools a run uses (the guest shares the
# host's root), whose versions the metadata records.
TOOL_PACKAGES = ("qemu-system-x86", "gcc-12", "linux-perf", "sysbench", "stress-ng",
                 "rt-tests", "rt-app", "trace-cmd")


def tool_versions(packages=TOOL_PACKAGES):
    """{package: version} of the installed ones, and Python's."""
    versions = {"python3": platform.python_version()}
    try:
        proc = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${Version}\\n",
                               *packages], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return versions
    for line in proc.stdout.splitlines():
        name, _, version = line.partition(" ")
        if version:
            versions[name] = version
    return versions


def metadata(exp, *, release, config, config_sha256, topologies, qemu_mode, rounds, quick,
             argv, git=None, cpu=None, now=None, boots=1, accel=None, tools=None):
    """Everything needed to tell two results apart, and to redo one:
    besides the kernel run, the host's kernel, how QEMU ran the vCPUs
    (accelerator and mode) and the tools' versions."""
    rev, dirty = git or git_state()
    return {
        "git_revision": rev, "git_dirty": dirty, "kernel_release": release,
        "config": config, "config_sha256": config_sha256,
        "topology": topologies[0] if len(topologies) == 1 else list(topologies),
        "classes": list(exp.classes), "features": list(exp.features),
        "host_cpu": cpu or cpu_model(), "host_cpus": os.cpu_count(),
        "qemu_mode": qemu_mode, "rounds": rounds, "boots": boots, "quick": quick,
        "date": (now or datetime.now(timezone.utc)).isoformat(timespec="seconds"),
        "command_line": " ".join(shlex.quote(a) for a in argv),
        "host_kernel": platform.release(), "accelerator": accel,
        "tools": tool_versions() if tools is None else tools,
    }


def result_dir(root=RESULTS, now=None, git=None):
    """results/<date>-<rev>[-dirty]/, or with -2, -3... when that folder
    already holds results: a run never overwrites an earlier one."""
    rev, dirty = git or git_state()
    stem = f"{(now or datetime.now()).strftime('%Y-%m-%d')}-{rev}{'-dirty' if dirty else ''}"
    folder, n = Path(root) / stem, 1
    while folder.exists() and any(folder.iterdir()):
        n += 1
        folder = Path(root) / f"{stem}-{n}"
    return folder
