"""scripts/reproduce: the seeds' experiments in one command, each a small
adapter around an existing guest script, with raw runs, metadata, paired
bootstrap intervals, a report and plots (docs/reproduction.rst).

The modules, each importing only modules listed before it: registry (an
experiment is one function registered with @experiment), summary (the
statistics over raw runs, on schedlab/stats.py's bootstrap), document
(the JSON and its checks), metadata, report (report.md and the plots),
compare (compare and spread), progress, runner (the two runners, a QEMU
guest or this machine with --host, and the boots of one experiment),
experiments/ (the adapters, a module per family, registered as the
package is imported) and cli, the command line, whose main() the
scripts/reproduce shim runs."""

from .cli import main

__all__ = ["main"]
