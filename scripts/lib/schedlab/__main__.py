"""schedlab COMMAND [ARG...]: every command of scripts/ in one entry point.

scripts/NAME runs `python3 -m schedlab NAME` from the checkout
(scripts/lib/run sets the module path); `pip install -e scripts/lib`
installs the same as the `schedlab` command. prepare, refresh, export,
build, reference-kernel, boot and demo share one parser (cli.py); the
others have a module of their own.
"""

import importlib
import sys

# Commands whose parser and main() live in a module of their own.
MODULES = {
    "bench-observability": "schedlab.bench_observability",
    "bench-sched": "schedlab.bench_sched",
    "check-configs": "schedlab.check_configs",
    "check-series": "schedlab.check_series",
    "class-hooks": "schedlab.classhooks",
    "reproduce": "schedlab.reproduce.cli",
    "wasted-cores": "schedlab.wasted_cores",
}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in MODULES:
        return importlib.import_module(MODULES[argv[0]]).main(argv[1:])
    from schedlab import cli
    return cli.main(argv)


if __name__ == "__main__":
    sys.exit(main())
