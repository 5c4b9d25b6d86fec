"""Command-line entry points behind the scripts in scripts/."""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from schedlab import paths  # noqa: E402
from schedlab.tree import Tree, TreeError  # noqa: E402


def tree_args(p):
    p.add_argument("--tree", default=paths.TREE, help="prepared tree (default: %(default)s)")
    p.add_argument("--source", default=paths.SOURCE_TARBALL,
                   help="kernel source tarball (default: %(default)s)")
    p.add_argument("--repo", default=paths.REPO, help=argparse.SUPPRESS)


def cmd_prepare(a):
    Tree(a.repo, a.tree, a.source).prepare(discard=a.discard)


def cmd_refresh(a):
    Tree(a.repo, a.tree, a.source).refresh(patch=a.patch, new=a.new,
                                            subject=a.subject, body=a.body)


def cmd_export(a):
    Tree(a.repo, a.tree, a.source).export(a.outdir)


def cmd_build(a):
    from schedlab import build
    build.build(a.config, target=a.target, jobs=a.jobs)


def cmd_boot(a):
    from schedlab import vm
    return vm.main(a)


def cmd_demo(a):
    from schedlab import demo
    return demo.main(a)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="schedlab")
    sub = ap.add_subparsers(dest="cmd", required=True)

    p = sub.add_parser("prepare", help="extract the kernel, apply patches/, link new files")
    tree_args(p)
    p.add_argument("--discard", action="store_true",
                   help="drop edits in the tree that were not refreshed into patches/")
    p.set_defaults(fn=cmd_prepare)

    p = sub.add_parser("refresh", help="turn edits in the prepared tree into patches/")
    tree_args(p)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--patch", help="fold all edits into this patch of the series")
    g.add_argument("--new", metavar="NAME.patch", help="make a new patch at the end of the series")
    p.add_argument("--subject", help="subject line of a --new patch")
    p.add_argument("--body", help="body of a --new patch: why the change is needed")
    p.set_defaults(fn=cmd_refresh)

    p = sub.add_parser("export", help="write a git-am-able series with a cover letter")
    tree_args(p)
    p.add_argument("outdir")
    p.set_defaults(fn=cmd_export)

    from schedlab import build, vm, demo
    build.add_args(sub.add_parser("build", help="build the kernel for a configuration"))
    vm.add_args(sub.add_parser("boot", help="boot a built kernel under QEMU and run a command"))
    demo.add_args(sub.add_parser("demo", help="the main job: build, boot, run a workload"))

    a = ap.parse_args(argv)
    try:
        rc = a.fn(a)
    except TreeError as e:
        print(f"{a.cmd}: {e}", file=sys.stderr)
        return 1
    return rc or 0


if __name__ == "__main__":
    sys.exit(main())
