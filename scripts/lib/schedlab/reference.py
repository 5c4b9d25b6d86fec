"""scripts/reference-kernel: an original scheduler's own kernel, to measure
beside our port of it.

The kernel is the same pristine 6.1.192 tree our series applies to, plus a
patch file the user supplies (Project C's 0009-prjc.patch for BMQ or PDS;
it is not ours to ship), plus the small fix-ups that patch needs on
6.1.192 (FIXUPS), configured from configs/base.config without this
project's options and with configs/reference.config, and built into
build/ref/NAME/obj. build/ref/NAME/info.json records what went in; the
experiments of scripts/reproduce (--reference) and tests/test_reference.py
boot the bzImage as one more variant, NAME (docs/bmq.rst,
"Beside Project C").
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from . import build, command, paths
from .tree import Tree, TreeError, git

ROOT = paths.BUILD / "ref"
NAME_RE = re.compile(r"[a-z0-9][a-z0-9-]*")
# The schedulers a Project C patch offers (its Kconfig choice under
# SCHED_ALT); "none" takes the patch's defaults, for a patch that is not
# Project C's (the suite's stand-in).
SCHEDULERS = {"bmq": ["CONFIG_SCHED_ALT=y", "CONFIG_SCHED_BMQ=y"],
              "pds": ["CONFIG_SCHED_ALT=y", "CONFIG_SCHED_PDS=y"],
              "none": []}
# The class of ours each scheduler is the original of: scripts/reproduce
# compares a reference kernel's variant with it (None: with the base).
LIKE = {"bmq": "bmq", "pds": None, "none": "cfs"}
# The switches that make that class of ours decide as the original does
# (its documented deviations that have one: bmq.rst, "Differences"): our
# kernel's boots set them while a reference kernel runs the experiment.
ORIGINAL_SYSCTLS = {"bmq": {"sched_bmq_kernel_boost": 0}}
FRAGMENT = paths.REPO / "configs" / "reference.config"
WHERE = ("Project C's patch is not shipped here: linux-tkg's "
         "linux-tkg-patches/6.1/0009-prjc.patch (github.com/Frogging-Family/linux-tkg) "
         "or the 6.1 patch of gitlab.com/alfredchen/projectc")


def original_sysctls(infos):
    """{kernel sysctl: value} our kernel's boots set beside the reference
    kernels `infos` (name: what scripts/reference-kernel recorded)."""
    out = {}
    for info in infos.values():
        out.update(ORIGINAL_SYSCTLS.get(info.get("scheduler"), {}))
    return out


class ReferenceError(Exception):
    pass


# What Project C's 6.1.160 rebase needs on 6.1.192: (file, text as the
# patch has it, text 6.1.192 needs, why). A fix-up whose text is absent
# is skipped, so a patch rebased later (or the stand-in) needs none.
FIXUPS = [
    ("kernel/sched/alt_core.c", "cpuset_read_lock()", "cpuset_lock()",
     "6.1.192 calls cpuset_read_lock() cpuset_lock()"),
    ("kernel/sched/alt_core.c", "cpuset_read_unlock()", "cpuset_unlock()",
     "6.1.192 calls cpuset_read_unlock() cpuset_unlock()"),
    ("kernel/sched/alt_core.c",
     "int task_can_attach(struct task_struct *p,\n\t\t    const struct cpumask *cs_effective_cpus)",
     "int task_can_attach(struct task_struct *p)",
     "6.1.192's task_can_attach() has no cpumask argument"),
    ("kernel/cgroup/cpuset.c",
     "\t\t\tcs->sum_migrate_dl_bw += task->dl.dl_bw;\n",
     "#ifndef CONFIG_SCHED_ALT\n\t\t\tcs->sum_migrate_dl_bw += task->dl.dl_bw;\n#endif\n",
     "6.1.192's cpuset counts deadline bandwidth in task->dl, which Project C has not"),
]
# Project C accounts no deadline bandwidth: 6.1.192's cpuset calls these.
DL_BW_STUBS = """
/* scripts/reference-kernel: 6.1.192's cpuset reserves deadline bandwidth. */
int dl_bw_alloc(int cpu, u64 dl_bw)
{
\treturn 0;
}

void dl_bw_free(int cpu, u64 dl_bw)
{
}
"""


def apply_fixups(tree, log=print):
    """Apply FIXUPS (and the deadline-bandwidth stubs when cpuset calls
    dl_bw_alloc() and Project C's core defines none) to a tree with
    Project C's core (kernel/sched/alt_core.c); returns their reasons."""
    done = []
    core = tree / "kernel/sched/alt_core.c"
    if not core.exists():
        return done
    for rel, old, new, why in FIXUPS:
        path = tree / rel
        text = path.read_text() if path.exists() else ""
        # A fix-up that wraps its text is done once its result is there.
        if old in text and not (old in new and new in text):
            path.write_text(text.replace(old, new))
            done.append(why)
    cpuset = tree / "kernel/cgroup/cpuset.c"
    if cpuset.exists() and "dl_bw_alloc(" in cpuset.read_text() and \
            "int dl_bw_alloc(" not in core.read_text():
        core.write_text(core.read_text() + DL_BW_STUBS)
        done.append("Project C defines no dl_bw_alloc()/dl_bw_free(): empty ones")
    for why in done:
        log(f"reference-kernel: fix-up: {why}")
    return done


def kconfig_symbols(tree):
    """Every symbol the tree's Kconfig files define."""
    found = set()
    pattern = re.compile(r"^\s*(?:menu)?config\s+(\w+)\s*$", re.M)
    for path in tree.rglob("Kconfig*"):
        if path.is_file():
            found.update(pattern.findall(path.read_text(errors="replace")))
    return found


def fragment_lines(symbols, scheduler):
    """The reference configuration: base.config's lines whose symbol the
    reference tree defines (our classes, tracepoints and their tests are
    not in it), then reference.config and the scheduler's choice.
    Returns (lines, symbols the scheduler needs that the tree lacks)."""
    def symbol(line):
        m = re.match(r"^(?:# )?CONFIG_(\w+)(?:=| is not set)", line)
        return m and m.group(1)
    ours = [line for line in FRAGMENT.read_text().splitlines() if symbol(line)]
    ours += SCHEDULERS[scheduler]
    # Project C's choice reuses our class's name (SCHED_BMQ): base.config's
    # line for it must not pick BMQ when PDS is asked for.
    taken = {symbol(line) for line in ours} | {
        symbol(line) for choice in SCHEDULERS.values() for line in choice}
    lines = [line for line in (paths.REPO / "configs" / "base.config").read_text().splitlines()
             if symbol(line) in symbols and symbol(line) not in taken]
    missing = [line for line in SCHEDULERS[scheduler] if symbol(line) not in symbols]
    return lines + ours, missing


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def patch_subject(path):
    for line in Path(path).read_text(errors="replace").splitlines()[:40]:
        if line.startswith("Subject:"):
            return line.removeprefix("Subject:").strip()
    return ""


def kernel_image(name):
    return ROOT / name / "obj" / "arch/x86/boot/bzImage"


def info_of(name):
    """build/ref/NAME/info.json, or None when NAME was never built."""
    path = ROOT / name / "info.json"
    return json.loads(path.read_text()) if path.exists() else None


def worktree(name, log=print):
    """build/ref/NAME/linux: a git worktree of the prepared tree at its
    pristine commit (the tree is extracted first if needed)."""
    main = Tree()
    if not (main.tree / ".git").exists():
        log(f"reference-kernel: extracting {main.source} into {main.tree}")
        main.extract()
    tree = ROOT / name / "linux"
    if not (tree / ".git").exists():
        tree.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(tree, ignore_errors=True)
        git(main.tree, "worktree", "prune")
        git(main.tree, "worktree", "add", "-q", "--detach", "-f", str(tree), "pristine")
    else:
        git(tree, "reset", "-q", "--hard", "pristine")
        git(tree, "clean", "-q", "-fdx")
    return tree


def apply_patch(tree, patch):
    # No fuzz: a hunk that needs its context bent is a different kernel.
    proc = subprocess.run(["patch", "-p1", "--forward", "--batch", "--fuzz=0", "-s", "-i",
                           str(patch)],
                          cwd=tree, capture_output=True, text=True)
    if proc.returncode:
        rejects = [str(p.relative_to(tree)) for p in tree.rglob("*.rej")]
        raise ReferenceError(f"{patch} does not apply to 6.1.192"
                             + (f" (rejected: {', '.join(sorted(rejects)[:8])})" if rejects
                                else f": {(proc.stdout + proc.stderr).strip()[-400:]}"))


def make(tree, obj, targets, jobs, verbose, log):
    args = build.make_command(obj, jobs, tree)
    rc, compiled = build.run_make(args + list(targets), f"reference {' '.join(targets)}",
                                  verbose, log)
    if rc:
        raise ReferenceError(f"make {' '.join(targets)} failed in {tree} (scripts/"
                             "reference-kernel -v shows why)")
    return compiled


def configure(tree, obj, scheduler, jobs, verbose, log):
    lines, missing = fragment_lines(kconfig_symbols(tree), scheduler)
    if missing:
        raise ReferenceError(f"--scheduler {scheduler}: the patch defines no "
                             f"{', '.join(m.split('=')[0] for m in missing)} (not Project C's "
                             "patch? --scheduler none builds a patch's own defaults)")
    frag = obj / "reference.fragment"
    frag.write_text("\n".join(lines) + "\n")
    make(tree, obj, ["allnoconfig"], jobs, verbose, log)
    lost = build.merge_fragments(tree, obj, [frag],
                                 lambda: make(tree, obj, ["olddefconfig"], jobs, verbose, log))
    if lost:
        raise ReferenceError("Kconfig did not keep these settings of the reference "
                             "configuration:\n  " + "\n  ".join(lost))


def build_reference(patch, name, scheduler="bmq", target="bzImage", jobs=None,
                    verbose=False, log=build.say):
    """Build NAME from `patch`; returns the info dict. The tree is made
    again only when the patch, the fix-ups or the configuration changed."""
    start = time.time()
    patch = Path(patch).resolve()
    jobs = jobs or os.cpu_count()
    digest = hashlib.sha256()
    digest.update(patch.read_bytes())
    digest.update(Path(__file__).read_bytes())
    digest.update(scheduler.encode())
    digest.update(FRAGMENT.read_bytes())
    digest.update((paths.REPO / "configs" / "base.config").read_bytes())
    stamp = ROOT / name / "tree.sha256"
    obj = ROOT / name / "obj"
    info = info_of(name)
    if not stamp.exists() or stamp.read_text() != digest.hexdigest() or info is None:
        stamp.unlink(missing_ok=True)
        log(f"reference-kernel: {name}: 6.1.192 + {patch.name}")
        tree = worktree(name, log)
        apply_patch(tree, patch)
        fixups = apply_fixups(tree, log)
        obj.mkdir(parents=True, exist_ok=True)
        configure(tree, obj, scheduler, jobs, verbose, log)
        info = {"name": name, "patch": str(patch), "patch_sha256": sha256(patch),
                "patch_subject": patch_subject(patch), "scheduler": scheduler,
                "base": Tree().source.name, "fixups": fixups}
        (ROOT / name / "info.json").write_text(json.dumps(info, indent=1) + "\n")
        stamp.write_text(digest.hexdigest())
    tree = ROOT / name / "linux"
    compiled = make(tree, obj, [target], jobs, verbose, log)
    if target == "bzImage":
        info["kernel"] = str(kernel_image(name))
        (ROOT / name / "info.json").write_text(json.dumps(info, indent=1) + "\n")
    log(f"reference-kernel: {name} {target} done in {build.minutes(time.time() - start)}, "
        f"{compiled} objects compiled"
        + (f": {kernel_image(name)}" if target == "bzImage" else ""))
    return info


def add_args(p):
    p.description = ("Build an original scheduler's own kernel to measure beside ours: "
                     "pristine 6.1.192 plus a patch you supply (Project C's "
                     "0009-prjc.patch: BMQ or PDS), with the fix-ups it needs on "
                     "6.1.192, configured like our base kernel without our options. "
                     f"{WHERE}. Output: build/ref/NAME/obj/arch/x86/boot/bzImage; "
                     "scripts/reproduce --reference NAME runs it as one more variant.")
    p.epilog = command.epilog(command.OK, command.FAILED, command.USAGE)
    p.add_argument("--patch", required=True, type=patch_arg,
                   help="the original's patch against 6.1, e.g. 0009-prjc.patch "
                        "(default: none; required)")
    p.add_argument("--scheduler", choices=sorted(SCHEDULERS), default="bmq",
                   help="which of Project C's schedulers to configure; none: the "
                        "patch's own defaults (a patch that is not Project C's)")
    p.add_argument("--name", type=name_arg,
                   help="name of the kernel and of its variant in results "
                        "(default: prjc-SCHEDULER)")
    p.add_argument("--target", default="bzImage", type=build.target_arg,
                   help="make target: bzImage, or an object such as kernel/sched/")
    p.add_argument("-j", "--jobs", type=command.positive_int, default=os.cpu_count(),
                   help="parallel make jobs")
    p.add_argument("-v", "--verbose", action="store_true", help="show make's output")
    p.set_defaults(fn=main)


def patch_arg(text):
    path = Path(text)
    if path.is_file():
        return path
    raise argparse.ArgumentTypeError(f"no such file: {text!r} ({WHERE})")


def name_arg(text):
    if NAME_RE.fullmatch(text) and len(text) <= 40:
        return text
    raise argparse.ArgumentTypeError(f"{text!r}: a name such as prjc-bmq "
                                     "(lower-case letters, digits, dashes)")


def main(a):
    name = a.name or f"prjc-{a.scheduler}"
    try:
        build_reference(a.patch, name, a.scheduler, a.target, a.jobs, a.verbose)
    except (ReferenceError, TreeError, build.BuildError) as e:
        print(f"reference-kernel: {e}", file=sys.stderr)
        return command.FAILED
    return command.OK
