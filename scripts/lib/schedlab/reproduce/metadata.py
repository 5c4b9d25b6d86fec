"""scripts/reproduce's metadata: everything needed to tell two results
apart and to redo one (git revision, configuration hash, host CPU...),
and the result folder's name."""

import hashlib
import os
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


def metadata(exp, *, release, config, config_sha256, topologies, qemu_mode, rounds, quick,
             argv, git=None, cpu=None, now=None, boots=1):
    """Everything needed to tell two results apart, and to redo one."""
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
