"""scripts/reproduce's experiment registry: an experiment is one function
registered with @experiment, which says what it reproduces and how to
run it, and returns an Outcome; the classes the experiments compare.
experiments/ holds the adapters; importing it registers them."""

import dataclasses
from pathlib import Path

from .. import vm

SCHED_CLASS = Path("/proc/sys/kernel/sched_class")
CLASSES = ("cfs", "ule", "bmq", "muqss")
# MuQSS with one queue per CPU beside "muqss", which runs as the kernel
# booted it (rqshare=mc, MuQSS's default): the MuQSS experiments run both.
MUQSS_NONE = "muqss:rqshare=none"
SHARE_CLASSES = CLASSES + (MUQSS_NONE,)
RQSHARE = "/proc/sys/kernel/sched_muqss_rqshare"


class ReproduceError(Exception):
    """An experiment ran but gave nothing usable; the message says why."""


@dataclasses.dataclass(frozen=True)
class Experiment:
    """What an experiment reproduces and how to run it. `run(ctx, topology)`
    boots once on `topology` and returns an Outcome; experiments with
    fixed `topologies` run on each of them, the others on -t or
    `default_topology`."""
    name: str
    title: str
    seed: str
    published: str
    classes: tuple
    variants: tuple
    base: str
    run: object
    features: tuple = ()
    default_topology: str = "1x2"
    topologies: tuple = ()
    quick_topologies: tuple = ()
    seconds_per_round: float = 60.0
    quick_seconds: float = 60.0
    estimates: tuple = ()           # (topology, seconds per round) pairs
    timed_variants: int = 0         # variants the figures were timed with (0: all)
    qemu_mode: str = "mttcg"        # unless --qemu-mode says otherwise
    quick_qemu_mode: str = ""       # with --quick, when the debug kernel needs another
    host_only: bool = False         # real hardware only: needs --host, runs only when named
    preflight: object = None        # preflight(args): why it cannot run here, or None

    def mode_for(self, quick):
        """The QEMU mode of a run without --qemu-mode."""
        return self.quick_qemu_mode if quick and self.quick_qemu_mode else self.qemu_mode

    def topologies_for(self, override, quick, host):
        """Topologies to boot, in order: this machine alone with --host;
        the experiment's own list when it has one (-t does not apply);
        otherwise -t, or the default (with --quick the first of
        `quick_topologies`, else 1x2, where 2 vCPUs keep a lockdep kernel
        quick)."""
        if host:
            return ["host"]
        if self.topologies:
            return list(self.quick_topologies or self.topologies) if quick \
                else list(self.topologies)
        quick_default = self.quick_topologies[0] if self.quick_topologies else "1x2"
        return [override or (quick_default if quick else self.default_topology)]

    def estimate(self, topology, quick):
        """Seconds one round takes on `topology`: the reference topology's
        figure, scaled by how many more vCPUs it has (the same two host
        cores run them all) and, for figures timed with fewer variants
        (`timed_variants`: three classes, before MuQSS), by how many more
        variants a round runs now."""
        scale = len(self.variants) / self.timed_variants if self.timed_variants else 1.0
        if quick:
            return self.quick_seconds * scale
        if topology == "host":
            return self.seconds_per_round * scale
        if topology in dict(self.estimates):
            return dict(self.estimates)[topology] * scale
        ref = vm.topology(self.topologies[0] if self.topologies else self.default_topology)
        return self.seconds_per_round * scale * max(1.0, vm.topology(topology).cpus / ref.cpus)


def class_of(variant):
    """The class a variant runs: "muqss:rqshare=none" is one of muqss."""
    return variant.partition(":")[0]


def compares_classes(exp):
    """Whether every variant of `exp` is a class (wasted-cores' are CFS's
    fixes off and on)."""
    return all(class_of(v) in CLASSES for v in exp.variants)


def with_classes(exp, chosen):
    """`exp` restricted to the classes in `chosen` (--classes) and its base.
    An experiment that does not compare classes, and an empty choice,
    leave it as it is."""
    if not chosen or not compares_classes(exp):
        return exp

    def keep(variants):
        return tuple(v for v in variants if v == exp.base or class_of(v) in chosen)
    return dataclasses.replace(exp, classes=keep(exp.classes), variants=keep(exp.variants))


EXPERIMENTS = {}


def experiment(name, **fields):
    """Register the decorated function as experiment `name`: adding an
    experiment is this decorator and one function."""
    def register(fn):
        EXPERIMENTS[name] = Experiment(name=name, run=fn, **fields)
        return fn
    return register


def bench_info(unit, compare="ratio", worse="slower", better="faster", series=None):
    """How a benchmark's values are compared with the base variant: as a
    ratio (times, neutral 1) or a difference (percentages and fractions
    whose base may be 0, neutral 0), and the words for a measured
    difference (lower is better for every benchmark here). `series`,
    (x label, y label), says that its runs carry a time series
    ("series": [[x, y], ...]) that the figure draws over time, as the
    seeds' figures do for what a single number per round cannot show."""
    info = {"unit": unit, "compare": compare, "worse": worse, "better": better}
    if series:
        info["series"] = {"x": series[0], "y": series[1]}
    return info


@dataclasses.dataclass
class Outcome:
    """What one boot of an adapter gives: raw runs (one dict per value),
    the benchmarks' descriptions, the commands run, failed runs and the
    kernel release the guest reported."""
    runs: list
    benches: dict
    commands: dict = dataclasses.field(default_factory=dict)
    failures: list = dataclasses.field(default_factory=list)
    release: str = ""
    references: dict = dataclasses.field(default_factory=dict)   # name: kernel release
