"""scripts/reproduce's adapters, a module per family, each registering
its experiments with @experiment as it is imported. The order of the
imports is the registry's: --list's, the report's and the default
run's, the real-hardware adapters (host) last."""

from . import (class_bench, wasted_cores, smt, starvation, unpin, interactivity, latency,
               applications, barrier, host)
from ..registry import EXPERIMENTS

__all__ = ["EXPERIMENTS", "class_bench", "wasted_cores", "smt", "starvation", "unpin",
           "interactivity", "latency", "applications", "barrier", "host"]
