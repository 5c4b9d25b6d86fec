"""How much of the kernel outside each class's own files names the class:
the measure of issue 39's class layer (see
Documentation/scheduler/sched-class-select.rst, "Where the classes plug in").

A line counts for a class if it names it (ule, bmq, muqss in any case) or
sits inside an #if that names its CONFIG_SCHED_* option; comments count
too. "Code" lines are those of the core .c files that name a class
outside comments and preprocessor lines. SCHED_ISO, MuQSS's policy, has
a column of its own (SCHED_ISO, iso_policy, CONFIG_SCHED_POLICY_ISO): a
policy stays in core as SCHED_BATCH does, whichever class implements it.
"""

import json
import re
from pathlib import Path

from schedlab import command, paths

CLASSES = ("ule", "bmq", "muqss")
# What the table counts: the classes, then the policies a class brought.
COLUMNS = CLASSES + ("iso",)
HEADS = {"ule": "ULE", "bmq": "BMQ", "muqss": "MuQSS", "iso": "ISO"}
# The prepared tree's files that are not a class's own.
FILES = (
    "kernel/sched/core.c", "kernel/sched/sched.h", "kernel/sched/fair.c",
    "kernel/sched/pelt.c", "kernel/sched/pelt.h", "kernel/sched/debug.c",
    "kernel/sched/features.h", "kernel/sched/topology.c",
    "kernel/sched/build_policy.c", "kernel/sched/cpufreq_schedutil.c",
    "kernel/exit.c", "include/linux/sched.h", "include/uapi/linux/sched.h",
    "include/asm-generic/vmlinux.lds.h", "kernel/sched/class_select.c",
    "kernel/sched/sanity.c", "kernel/sched/events.c",
)
CORE_C = re.compile(r"(core|fair|pelt|debug|topology)\.c$")
NAMES = {
    "ule": re.compile(r"(?<![A-Za-z0-9])(ule|ULE)(?![A-Za-z0-9])"),
    "bmq": re.compile(r"(?<![A-Za-z0-9])(bmq|BMQ)(?![A-Za-z0-9])"),
    "muqss": re.compile(r"(?<![A-Za-z0-9])(muqss|MuQSS|MUQSS)(?![A-Za-z0-9])"),
    "iso": re.compile(r"SCHED_ISO|iso_policy|SCHED_POLICY_ISO"),
}
IF = re.compile(r"^\s*#\s*if")
ENDIF = re.compile(r"^\s*#\s*endif")
GATE = re.compile(r"CONFIG_SCHED_(ULE|BMQ|MUQSS|POLICY_ISO)")
NOT_CODE = re.compile(r"^\s*(/?\*|//|#)")


def named(line):
    return {c for c, pat in NAMES.items() if pat.search(line)}


def count_file(path, core_c):
    """{class: lines} and {class: code lines} of one file."""
    lines = dict.fromkeys(COLUMNS, 0)
    code = dict.fromkeys(COLUMNS, 0)
    gates = []
    for line in path.read_text(errors="replace").splitlines():
        own = named(line)
        if IF.match(line):
            gates.append(own if GATE.search(line) else set())
        inside = set().union(own, *gates)
        if ENDIF.match(line) and gates:
            gates.pop()
        for c in inside:
            lines[c] += 1
        if core_c and not NOT_CODE.match(line):
            for c in own:
                code[c] += 1
    return lines, code


def count(tree):
    """{"files": {path: {class: lines}}, "total": {class: lines},
    "code": {class: code lines in core .c files}} for a prepared tree."""
    tree = Path(tree)
    files, total, code = {}, dict.fromkeys(COLUMNS, 0), dict.fromkeys(COLUMNS, 0)
    for rel in FILES:
        path = tree / rel
        if not path.exists():
            continue
        lines, named_code = count_file(path, bool(CORE_C.search(rel)))
        if any(lines.values()):
            files[rel] = lines
        for c in COLUMNS:
            total[c] += lines[c]
            code[c] += named_code[c]
    return {"files": files, "total": total, "code": code}


def table(result):
    rows = [f"{'file':38} " + " ".join(f"{HEADS[c]:>5}" for c in COLUMNS)]
    for rel, lines in sorted(result["files"].items()):
        rows.append(f"{rel:38} " + " ".join(f"{lines[c]:5d}" for c in COLUMNS))
    rows.append(f"{'total':38} " + " ".join(f"{result['total'][c]:5d}" for c in COLUMNS))
    rows.append(f"{'code lines naming it in core .c':38} "
                + " ".join(f"{result['code'][c]:5d}" for c in COLUMNS))
    return "\n".join(rows)


# scripts/class-hooks
COMMAND_DOC = """Lines outside each class's own files that name the class (ULE, BMQ,
MuQSS), per file of the prepared tree: what a class costs the core.

    scripts/class-hooks [--tree DIR] [--json]

Run scripts/prepare first (scripts/build does it). See
scripts/lib/schedlab/classhooks.py for what counts.
"""


def parser():
    ap = command.Parser(prog="class-hooks", description=COMMAND_DOC, epilog=command.epilog())
    ap.add_argument("--tree", type=command.folder, default=paths.TREE,
                    help="prepared kernel tree")
    ap.add_argument("--json", action="store_true", help="print JSON, not a table")
    return ap


def main(argv=None):
    args = parser().parse_args(argv)
    if not (Path(args.tree) / "kernel/sched/core.c").exists():
        return command.usage_error("class-hooks", f"{args.tree} is not a prepared kernel "
                                   "tree (run scripts/prepare)")
    result = count(args.tree)
    print(json.dumps(result, indent=1) if args.json else table(result))
    return 0

