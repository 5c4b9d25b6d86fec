"""Command-line entry points behind the scripts in scripts/: scripts/NAME
runs `cli.py NAME` for prepare, refresh, export, build, reference-kernel,
boot and demo."""

import argparse
import sys
from pathlib import Path

from schedlab import command, paths
from schedlab.tree import PATCH_NAME_RE, Tree, TreeError, read_series

TREE_STATUSES = command.epilog(command.OK, command.FAILED, command.USAGE)


def tree_args(p):
    p.add_argument("--tree", type=Path, default=paths.TREE, help="prepared tree")
    p.add_argument("--source", type=Path, default=paths.SOURCE_TARBALL,
                   help="kernel source tarball the tree is extracted from")
    p.add_argument("--repo", type=Path, default=paths.REPO, help=argparse.SUPPRESS)


def not_prepared(a):
    if not (a.tree / ".git").is_dir():
        return f"--tree {a.tree} is not a prepared tree: run scripts/prepare"
    return None


def check_prepare(a):
    if a.tree.exists() and not a.tree.is_dir():
        return f"--tree {a.tree} is not a folder"
    if not (a.tree / ".git").exists() and not a.source.is_file():
        return (f"--source {a.source} does not exist, and the tree is extracted from "
                "it: run scripts/setup (it installs linux-source-6.1)")
    return None


def check_refresh(a):
    if problem := not_prepared(a):
        return problem
    series = read_series(a.repo, check=False)
    if a.patch and a.patch not in series:
        return f"--patch {a.patch!r} is not in patches/series"
    if a.new:
        if not PATCH_NAME_RE.fullmatch(a.new):
            return f"--new {a.new!r}: patch names look like sched-thing.patch"
        if a.new in series:
            return f"--new {a.new!r} is already in patches/series"
        if not (a.subject or "").strip() or not (a.body or "").strip():
            return "--new needs --subject and --body (the body says why)"
    elif a.subject or a.body:
        return "--subject and --body describe a --new patch"
    return None


def check_export(a):
    if problem := not_prepared(a):
        return problem
    if a.outdir.exists() and (not a.outdir.is_dir() or any(a.outdir.iterdir())):
        return f"{a.outdir} is not an empty folder"
    return None


def cmd_prepare(a):
    Tree(a.repo, a.tree, a.source).prepare(discard=a.discard)


def cmd_refresh(a):
    Tree(a.repo, a.tree, a.source).refresh(patch=a.patch, new=a.new,
                                            subject=a.subject, body=a.body)


def cmd_export(a):
    t = Tree(a.repo, a.tree, a.source)
    if a.development:
        t.export(a.outdir)
    else:
        from schedlab import partition
        partition.export(t, a.outdir)


def parser():
    """The commands' parsers; each subparser's prog is the script's name."""
    ap = command.Parser(prog="schedlab", description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True, metavar="COMMAND")

    def add(name, summary, **kw):
        return sub.add_parser(name, prog=name, help=summary, **kw)

    p = add("prepare", "extract the kernel, apply patches/, link new files",
            description="Extract the kernel source into the tree (once), apply "
                        "patches/series, one git commit per patch, and link the "
                        "repository's new kernel files into it. Incremental.",
            epilog=TREE_STATUSES)
    tree_args(p)
    p.add_argument("--discard", action="store_true",
                   help="drop edits in the tree that were not refreshed into patches/")
    p.set_defaults(fn=cmd_prepare, check=check_prepare)

    p = add("refresh", "turn edits in the prepared tree into patches/",
            description="Fold edits in the prepared tree back into patches/: each file "
                        "into the last patch that touches it, or as --patch/--new say.",
            epilog=TREE_STATUSES)
    tree_args(p)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--patch", help="fold all edits into this patch of the series "
                                   "(default: each file into the last patch touching it)")
    g.add_argument("--new", metavar="NAME.patch",
                   help="make a new patch at the end of the series, with --subject "
                        "and --body (default: none, edits go into existing patches)")
    p.add_argument("--subject", help="subject line of a --new patch (default: none)")
    p.add_argument("--body", help="body of a --new patch: why the change is needed "
                                  "(default: none)")
    p.set_defaults(fn=cmd_refresh, check=check_refresh)

    p = add("export", "write a git-am-able series with a cover letter",
            description="Write a cover letter and the series in the maintainer's order "
                        "(backports, core, observability, CFS fixes, one patch per class), "
                        "cut from the prepared tree, applicable with git am to 6.1.192.",
            epilog=TREE_STATUSES)
    tree_args(p)
    p.add_argument("outdir", type=Path, help="empty or new folder for the patch files")
    p.add_argument("--development", action="store_true",
                   help="the development series instead: one commit adding the new "
                        "files, then patches/series (default: the maintainer's series "
                        "of patches/maintainer.toml, cut from the final tree)")
    p.set_defaults(fn=cmd_export, check=check_export)

    from schedlab import build, demo, reference, vm
    build.add_args(add("build", "build the kernel for a configuration"))
    reference.add_args(add("reference-kernel",
                           "build an original's own kernel (Project C) to compare with"))
    vm.add_args(add("boot", "boot a built kernel under QEMU and run a command"))
    demo.add_args(add("demo", "the main job: build, boot, run a workload"))
    return ap


def main(argv=None):
    # Unknown options are reported by the command they were given to.
    a, extra = parser().parse_known_args(argv)
    if extra:
        return command.usage_error(a.cmd, f"unrecognized arguments: {' '.join(extra)}")
    check = getattr(a, "check", None)
    if check and (problem := check(a)):
        return command.usage_error(a.cmd, problem)
    try:
        rc = a.fn(a)
    except TreeError as e:
        print(f"{a.cmd}: {e}", file=sys.stderr)
        return command.FAILED
    return rc or command.OK

