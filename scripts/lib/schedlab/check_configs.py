"""scripts/check-configs: build the series under the small configurations
that exercise the #ifdefs it touches, as the kernel's test robots do, and
check that our code is clean under W=1 and sparse.

Each cell is base.config without the options that only let the guests
boot (BOOT_ONLY), plus a few lines (CELLS). For a cell the script
configures build/check-configs/obj-CELL, checks that Kconfig kept the
cell's own settings, builds vmlinux, then rebuilds kernel/sched/ with W=1
and runs sparse (C=2) on it (--ci: kernel/sched/ alone, with W=1). A
warning counts when it points into a file the series adds or at a line
its patches add (git diff against the prepared tree's "pristine" tag);
upstream's own warnings are not ours.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import build, command, paths, tree

# The folder that holds every C file the series adds or changes.
OUR_DIR = "kernel/sched/"


@dataclass
class Cell:
    name: str
    what: str
    lines: list
    # Settings Kconfig must keep for the cell to test what it says;
    # None: must be off.
    must: dict = field(default_factory=dict)


def _cell(name, what, lines):
    must = {}
    for line in lines:
        off = re.match(r"^# (CONFIG_\w+) is not set$", line)
        if off:
            must[off.group(1)] = None
        else:
            key, value = line.split("=", 1)
            must[key] = value
    return Cell(name, what, lines, must)


CELLS = {c.name: c for c in [
    _cell("up", "uniprocessor (SMP=n; the recorder and checker need SMP)",
          ["# CONFIG_SMP is not set"]),
    _cell("numa-off", "no NUMA", ["# CONFIG_NUMA is not set"]),
    # No smt-off cell: x86 has SCHED_SMT as "def_bool y if SMP", so the
    # only kernel without it is the uniprocessor one, which up builds.
    _cell("preempt-none", "PREEMPT_NONE",
          ["CONFIG_PREEMPT_NONE=y", "# CONFIG_PREEMPT_VOLUNTARY is not set"]),
    _cell("nohz-full", "NO_HZ_FULL (adaptive ticks)",
          ["CONFIG_NO_HZ_FULL=y", "# CONFIG_NO_HZ_IDLE is not set"]),
    # SCHED_AUTOGROUP selects CGROUP_SCHED.
    _cell("cgroup-sched-off", "no CGROUP_SCHED (no task groups, no autogroup)",
          ["# CONFIG_CGROUP_SCHED is not set", "# CONFIG_SCHED_AUTOGROUP is not set"]),
    # Kconfig.sched keeps ULE, BMQ and MuQSS out of a core-scheduling kernel.
    _cell("sched-core", "SCHED_CORE=y (ULE, BMQ and MuQSS then off, as Kconfig says)",
          ["CONFIG_SCHED_CORE=y", "# CONFIG_SCHED_ULE is not set",
           "# CONFIG_SCHED_BMQ is not set", "# CONFIG_SCHED_MUQSS is not set"]),
    _cell("ule-only", "ULE without BMQ or MuQSS",
          ["CONFIG_SCHED_ULE=y", "# CONFIG_SCHED_BMQ is not set",
           "# CONFIG_SCHED_MUQSS is not set"]),
    _cell("bmq-only", "BMQ without ULE or MuQSS",
          ["# CONFIG_SCHED_ULE is not set", "CONFIG_SCHED_BMQ=y",
           "# CONFIG_SCHED_MUQSS is not set"]),
    _cell("muqss-only", "MuQSS without ULE or BMQ",
          ["# CONFIG_SCHED_ULE is not set", "# CONFIG_SCHED_BMQ is not set",
           "CONFIG_SCHED_MUQSS=y"]),
    _cell("neither", "CFS only, the observability tools still in",
          ["# CONFIG_SCHED_ULE is not set", "# CONFIG_SCHED_BMQ is not set",
           "# CONFIG_SCHED_MUQSS is not set", "CONFIG_SCHED_EVENTS=y",
           "CONFIG_SCHED_SANITY=y"]),
]}
# The one CI builds: the most #ifdefs differ from what the tests boot.
CI_CELL = "up"
# base.config's options that only let the guests boot (firmware tables,
# PCI, virtio, the network 9p rides on, the serial console): a cell drops
# them, which halves its build, and keeps NUMA with NUMA_EMU instead of
# ACPI's tables. No file of the series depends on them.
BOOT_ONLY = re.compile(r"^(?:# )?CONFIG_(?:ACPI|X86_64_ACPI_NUMA|PCI|VIRTIO\w*|NET|NET_9P\w*|"
                       r"UNIX|INET|9P_FS\w*|SERIAL_8250\w*)[= ]")
CELL_BASE_EXTRA = ["CONFIG_NUMA_EMU=y"]


def cell_base():
    """base.config without BOOT_ONLY, plus CELL_BASE_EXTRA: each cell's start."""
    lines = (paths.REPO / "configs" / "base.config").read_text().splitlines()
    return [line for line in lines if not BOOT_ONLY.match(line)] + CELL_BASE_EXTRA

WARNING_RE = re.compile(r"^(?P<file>[^\s:]+\.[ch]):(?P<line>\d+)(?::\d+)?: "
                        r"(?P<kind>warning|error): (?P<text>.*)$")


def cell_dir(name):
    return paths.BUILD / "check-configs" / f"obj-{name}"


def results_path():
    return paths.BUILD / "check-configs" / "results.json"


def our_lines(tree_dir=None):
    """{path: set of line numbers or None (whole file)}: what the series
    owns in the prepared tree."""
    tree_dir = tree_dir or paths.TREE
    owned = {f: None for f in tree.overlay_files(paths.REPO) if f.endswith((".c", ".h"))}
    diff = tree.git(tree_dir, "diff", "-U0", "pristine", "--", "*.c", "*.h").stdout
    current = None
    for line in diff.splitlines():
        if line.startswith("+++ "):
            current = line[6:] if line.startswith("+++ b/") else None
            if current and current not in owned:
                owned[current] = set()
        m = re.match(r"^@@ -\S+ \+(\d+)(?:,(\d+))? @@", line)
        if m and current and owned.get(current) is not None:
            start, count = int(m.group(1)), int(m.group(2) or 1)
            owned[current].update(range(start, start + count))
    return owned


def relative(path, tree_dir=None):
    """A compiler's file name, relative to the tree."""
    tree_dir = str(tree_dir or paths.TREE)
    path = os.path.normpath(path)
    if path.startswith(tree_dir + "/"):
        return path[len(tree_dir) + 1:]
    return re.sub(r"^(?:\.\./)+(?:linux/)?", "", path)


# Sparse warnings our lines share with upstream's own code, by the source
# line they point at: in 6.1 a sched_domain's parent and child are __rcu,
# and for_each_domain() (like fair.c's walks) follows ->parent without
# rcu_dereference(), so sparse flags every domain walk in the scheduler.
# Counted and shown apart, not as ours to fix.
UPSTREAM_PATTERNS = [
    (re.compile(r"for_each_domain\(|\b\w*sd->(?:parent|child)\b"),
     "different address spaces", "sched_domain ->parent/->child walk (__rcu in 6.1)"),
]


def upstream_pattern(source_line, text):
    """The reason a warning is upstream's pattern, or None."""
    for pattern, words, why in UPSTREAM_PATTERNS:
        if words in text and pattern.search(source_line):
            return why
    return None


def ours(log_text, owned, tree_dir=None, accepted=None):
    """The warnings and errors of a make log that point at our code, once
    each, in order. Those on an UPSTREAM_PATTERNS line go to `accepted`
    (a list) instead, when given."""
    tree_dir = tree_dir or paths.TREE
    found, sources = [], {}
    for line in log_text.splitlines():
        m = WARNING_RE.match(line.strip())
        if not m:
            continue
        path = relative(m.group("file"), tree_dir)
        if path not in owned:
            continue
        lines = owned[path]
        number = int(m.group("line"))
        if lines is not None and number not in lines:
            continue
        entry = f"{path}:{number}: {m.group('kind')}: {m.group('text')}"
        if accepted is not None:
            if path not in sources:
                try:
                    sources[path] = (Path(tree_dir) / path).read_text(errors="replace").splitlines()
                except OSError:
                    sources[path] = []
            text = sources[path][number - 1] if number <= len(sources[path]) else ""
            why = upstream_pattern(text, m.group("text"))
            if why:
                if f"{entry} [{why}]" not in accepted:
                    accepted.append(f"{entry} [{why}]")
                continue
        if entry not in found:
            found.append(entry)
    return found


def make_in(obj, tree_dir, log_file, *args, what, jobs=None, verbose=False, log=build.say):
    """make on tree_dir with objects in obj and stderr appended to
    log_file; the exit status."""
    wrapped = ["sh", "-c", 'log=$1; shift; exec "$@" 2>>"$log"', "sh", str(log_file),
               *build.make_command(obj, jobs, tree=tree_dir), *args]
    return build.run_make(wrapped, f"{what} {' '.join(args)}", verbose, log)[0]


def make_logged(name, log_file, *args, jobs=None, verbose=False, log=build.say):
    """make in the cell's folder with stderr appended to log_file; the
    exit status."""
    return make_in(cell_dir(name), paths.TREE, log_file, *args, what=f"check-configs {name}",
                   jobs=jobs, verbose=verbose, log=log)


def configure_obj(obj, tree_dir, lines, what, jobs=None, verbose=False, log=build.say):
    """allnoconfig + cell_base() + `lines` in obj for tree_dir; None or the
    problem."""
    obj.mkdir(parents=True, exist_ok=True)
    base = obj / "cell-base.config"
    base.write_text("\n".join(cell_base()) + "\n")
    frag = obj / "cell.config"
    frag.write_text("\n".join(lines) + "\n")
    log_file = obj / "configure.log"
    log_file.write_text("")
    opts = {"what": what, "jobs": jobs, "verbose": verbose, "log": log}
    if make_in(obj, tree_dir, log_file, "allnoconfig", **opts):
        return "make allnoconfig failed"
    merge = tree_dir / "scripts/kconfig/merge_config.sh"
    proc = subprocess.run(["sh", str(merge), "-m", "-O", str(obj), str(obj / ".config"),
                           str(base), str(frag)],
                          capture_output=True, text=True)
    if proc.returncode:
        return "merge_config.sh failed: " + (proc.stdout + proc.stderr).strip()[-300:]
    if make_in(obj, tree_dir, log_file, "olddefconfig", **opts):
        return "make olddefconfig failed"
    return None


def configure(cell, jobs=None, verbose=False, log=build.say):
    """allnoconfig + cell_base() + the cell's lines; None or the problem."""
    obj = cell_dir(cell.name)
    problem = configure_obj(obj, paths.TREE, cell.lines, f"check-configs {cell.name}",
                            jobs, verbose, log)
    if problem:
        return problem
    have = build.read_config(obj / ".config")
    lost = [f"{k}={v or 'n'} (got {have.get(k) or 'n'})" for k, v in cell.must.items()
            if have.get(k) != v]
    return f"Kconfig did not keep {', '.join(lost)}" if lost else None


def check_cell(cell, jobs=None, sparse=True, w1=True, verbose=False, log=build.say,
               whole=True):
    """Configure, build vmlinux, then W=1 and sparse on kernel/sched/; a
    result dict. whole=False (--ci) builds kernel/sched/ alone, with W=1:
    our objects compile and warn nothing, without the rest of vmlinux and
    its link."""
    start = time.time()
    obj = cell_dir(cell.name)
    result = {"cell": cell.name, "what": cell.what, "lines": cell.lines, "build": None,
              "w1": None, "sparse": None, "ours": {}, "seconds": None}
    problem = configure(cell, jobs, verbose, log)
    if problem:
        result["build"] = f"not configured: {problem}"
        return result
    have = build.read_config(obj / ".config")
    result["classes"] = [c for c in ("SCHED_ULE", "SCHED_BMQ", "SCHED_MUQSS", "SCHED_EVENTS",
                                     "SCHED_SANITY")
                         if have.get(f"CONFIG_{c}") == "y"]
    owned = our_lines()
    result["target"] = "vmlinux" if whole else OUR_DIR
    if whole:
        steps = [("build", ["vmlinux"])] + ([("w1", ["W=1", OUR_DIR])] if w1 else [])
    else:
        # One pass over kernel/sched/: with W=1 its build is the W=1 check.
        steps = [("build", (["W=1"] if w1 else []) + [OUR_DIR])]
    if sparse:
        steps.append(("sparse", ["C=2", "CHECK=sparse", OUR_DIR]))
    for step, args in steps:
        log_file = obj / f"{step}.log"
        log_file.write_text("")
        log(f"check-configs: {cell.name}: make {' '.join(args)}")
        status = make_logged(cell.name, log_file, *args, jobs=jobs, verbose=verbose, log=log)
        accepted = []
        found = ours(log_file.read_text(errors="replace"), owned, accepted=accepted)
        result["ours"][step] = found
        if accepted:
            result.setdefault("upstream_pattern", {})[step] = accepted
        if status:
            result[step] = f"failed (make exit {status})"
            tail = list(dict.fromkeys(line for line in log_file.read_text(
                errors="replace").splitlines() if "error" in line))[:5]
            result.setdefault("errors", {})[step] = tail
            break
        result[step] = "clean" if not found else f"{len(found)} in our code"
        if accepted:
            result[step] += f" ({len(accepted)} upstream-pattern)"
    if not whole and w1:
        result["w1"] = result["build"]
    result["seconds"] = round(time.time() - start)
    return result


def clean(result):
    return all((result.get(k) or "").split(" (")[0] in ("clean", "skipped")
               for k in ("build", "w1", "sparse"))


def table(results):
    """The README's table: a row per cell."""
    rows = ["| cell | what | classes built | vmlinux | W=1 | sparse | minutes |",
            "|---|---|---|---|---|---|---|"]
    for name in CELLS:
        r = results.get(name)
        if not r:
            rows.append(f"| `{name}` | {CELLS[name].what} | | not run | not run | not run | |")
            continue
        classes = ", ".join(c.replace("SCHED_", "").lower() for c in r.get("classes", [])) or "-"
        mins = f"{r['seconds'] / 60:.1f}" if r.get("seconds") else ""
        built = r["build"] or "not run"
        if r.get("target", "vmlinux") != "vmlinux":
            built = f"not built ({r['target']} {built})"
        rows.append(f"| `{name}` | {r['what']} | {classes} | {built} | "
                    f"{r['w1'] or 'not run'} | {r['sparse'] or 'not run'} | {mins} |")
    return "\n".join(rows)


def load_results():
    try:
        return json.loads(results_path().read_text())
    except (OSError, ValueError):
        return {}


def cell_list(text):
    """argparse type: comma-separated cell names."""
    names = [n for n in text.split(",") if n]
    bad = [n for n in names if n not in CELLS]
    if bad or not names:
        raise argparse.ArgumentTypeError(f"unknown cell {', '.join(bad) or text!r}: "
                                         f"one of {', '.join(CELLS)}")
    return names


def parser():
    ap = command.Parser(
        prog="check-configs", description=__doc__,
        epilog=command.epilog(command.OK, command.FAILED, command.USAGE))
    ap.add_argument("cells", nargs="*", type=cell_list, metavar="CELL",
                    help=f"cells to build, also comma-separated (default: all): "
                         f"{', '.join(CELLS)}")
    ap.add_argument("--ci", action="store_true",
                    help=f"only the cell CI builds ({CI_CELL}), kernel/sched/ alone with "
                         "W=1 (not vmlinux), without sparse")
    ap.add_argument("--no-sparse", action="store_true", help="skip sparse (C=2)")
    ap.add_argument("--no-w1", action="store_true", help="skip the W=1 rebuild")
    ap.add_argument("--table", action="store_true",
                    help="print the table of the last results and build nothing")
    ap.add_argument("--list", action="store_true", help="list the cells and exit")
    ap.add_argument("-j", "--jobs", type=command.positive_int, default=os.cpu_count(),
                    help="parallel make jobs")
    ap.add_argument("-v", "--verbose", action="store_true", help="show make's output")
    return ap


def main(argv=None):
    a = parser().parse_args(argv)
    if a.list:
        for c in CELLS.values():
            print(f"{c.name:17} {c.what}: {'; '.join(c.lines)}")
        return command.OK
    if a.table:
        print(table(load_results()))
        return command.OK
    names = [n for group in a.cells for n in group] or ([CI_CELL] if a.ci else list(CELLS))
    sparse = not (a.no_sparse or a.ci)
    if sparse and not shutil.which("sparse"):
        print("check-configs: sparse is missing: run scripts/setup (or --no-sparse)",
              file=sys.stderr)
        return command.USAGE
    try:
        tree.Tree().prepare(log=build.say)
    except tree.TreeError as e:
        print(f"check-configs: {e}", file=sys.stderr)
        return command.FAILED
    results = load_results()
    failed = []
    for name in dict.fromkeys(names):
        r = check_cell(CELLS[name], a.jobs, sparse=sparse, w1=not a.no_w1, verbose=a.verbose,
                       whole=not a.ci)
        if not sparse:
            r["sparse"] = "skipped"
        if a.no_w1:
            r["w1"] = "skipped"
        results[name] = r
        results_path().write_text(json.dumps(results, indent=1) + "\n")
        for step, found in r["ours"].items():
            for entry in found:
                print(f"check-configs: {name}: {step}: {entry}")
        for step, entries in r.get("upstream_pattern", {}).items():
            for entry in entries:
                print(f"check-configs: {name}: {step}: accepted: {entry}")
        for step, lines in r.get("errors", {}).items():
            for line in lines:
                print(f"check-configs: {name}: {step}: {line}")
        verdict = "clean" if clean(r) else "NOT clean"
        print(f"check-configs: {name}: {verdict} ({r['target']} {r['build']}, W=1 {r['w1']}, "
              f"sparse {r['sparse']}) in {build.minutes(r['seconds'] or 0)}", flush=True)
        if not clean(r):
            failed.append(name)
    print(table({n: results[n] for n in results if n in CELLS}))
    print(f"check-configs: {len(names) - len(failed)} clean, {len(failed)} not clean"
          + (f": {', '.join(failed)}" if failed else ""))
    return command.FAILED if failed else command.OK
