"""The command's entry point: the analysis needs numpy (and matplotlib
for charts), which a fresh machine may lack; say so in one line rather
than with an import traceback."""

import sys

PROG = "sched-vis"
# What pyproject.toml lists as dependencies, by import name.
NEEDS = ("numpy", "matplotlib")


def run(argv=None):
    try:
        from .cli import main
    except ModuleNotFoundError as e:
        if e.name not in NEEDS:
            raise
        print(f"{PROG}: needs {' and '.join(NEEDS)} ({e.name} is missing): install them "
              f"with python3 -m pip install {' '.join(NEEDS)}, or run scripts/setup",
              file=sys.stderr)
        return 1
    return main(argv)
