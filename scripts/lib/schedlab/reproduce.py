"""scripts/reproduce: the seeds' experiments in one command, each a small
adapter around an existing guest script, with raw runs, metadata, paired
bootstrap intervals, a report and plots (Documentation/scheduler/
reproduction.rst).

The parts, in order: the experiment registry (an experiment is one
function registered with @experiment), the statistics over raw runs, the
JSON document and its checks, metadata, the report and plots, compare,
progress, the two runners (a QEMU guest, or this machine with --host) and
finally the adapters themselves."""

import argparse
import dataclasses
import hashlib
import json
import math
import os
import random
import re
import shlex
import statistics
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

from . import bench, build, command, paths, reference, stats, vm

SCHEMA = 1
RESULTS = paths.REPO / "results"
SCHED_CLASS = Path("/proc/sys/kernel/sched_class")
CLASSES = ("cfs", "ule", "bmq", "muqss")
# MuQSS with one queue per CPU beside "muqss", which runs as the kernel
# booted it (rqshare=mc, MuQSS's default): the MuQSS experiments run both.
MUQSS_NONE = "muqss:rqshare=none"
SHARE_CLASSES = CLASSES + (MUQSS_NONE,)
RQSHARE = "/proc/sys/kernel/sched_muqss_rqshare"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
# Seconds a boot costs beyond its rounds (boot, probe, power-off), for the
# estimate of time left.
BOOT_SECONDS = 40
QUICK_TIMEOUT_MIN = 300    # s, a --quick boot's shortest limit


class ReproduceError(Exception):
    """An experiment ran but gave nothing usable; the message says why."""


# -- registry ----------------------------------------------------------------

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


# -- statistics --------------------------------------------------------------

def values_of(runs, bench_name, variant):
    """Every value of one benchmark and variant, in round order."""
    return [r["value"] for r in sorted(runs, key=lambda r: r["round"])
            if r["bench"] == bench_name and r["variant"] == variant]


def by_round(runs, bench_name, variant):
    """{round: value} of one benchmark and variant."""
    return {r["round"]: r["value"] for r in runs
            if r["bench"] == bench_name and r["variant"] == variant}


def paired(values, base_values, compare):
    """Per-round ratio (or difference) to the base of every round both ran;
    a ratio skips rounds whose base is not positive."""
    out = []
    for rnd in sorted(values):
        if rnd not in base_values:
            continue
        if compare == "difference":
            out.append(values[rnd] - base_values[rnd])
        elif base_values[rnd] > 0:
            out.append(values[rnd] / base_values[rnd])
    return out


def boot_of_rounds(runs):
    """{round: boot}: which boot ran each round (1 for documents from
    before --boots, whose rounds all ran in one boot)."""
    return {r["round"]: r.get("boot", 1) for r in runs}


def paired_by_boot(values, base_values, compare, boot_of):
    """paired() within each boot: one list of per-round ratios (or
    differences) per boot that ran any, in boot order."""
    boots = {}
    for rnd, value in values.items():
        boots.setdefault(boot_of.get(rnd, 1), {})[rnd] = value
    groups = [paired(vals, base_values, compare) for _, vals in sorted(boots.items())]
    return [g for g in groups if g]


def bootstrap_boots(groups, resamples=stats.BOOTSTRAP_RESAMPLES, level=stats.CONFIDENCE,
                    seed=1):
    """stats.bootstrap_ci() of the pooled values when one boot ran them all;
    over several boots a two-stage bootstrap: draw the boots with
    replacement, then the rounds within each drawn boot, so the interval
    widens when the boots disagree, which resampling pooled rounds would
    hide. (None, None) below stats.MIN_ROUNDS values in all."""
    if len(groups) <= 1:
        return stats.bootstrap_ci(groups[0] if groups else [], resamples, level, seed)
    if sum(len(g) for g in groups) < stats.MIN_ROUNDS:
        return None, None
    return stats.bootstrap([groups], grouped=True, resamples=resamples, level=level,
                           seed=seed)


def verdict(low, high, compare="ratio", worse="slower", better="faster"):
    """stats.verdict's wording ("no difference measured" when the interval
    holds the neutral value, "too few rounds" without one), with the
    benchmark's own words for a measured difference."""
    shift = 1 if compare == "difference" else 0
    said = stats.verdict(None if low is None else low + shift,
                         None if high is None else high + shift)
    return {"slower": worse, "faster": better}.get(said, said)


def summarise(doc):
    """Per benchmark: each variant's median, spread and count, and each
    other variant against the base: the median of the per-round ratios
    (or differences) with its seeded bootstrap 95 % interval (over boots,
    then rounds, when several boots ran them: bootstrap_boots()) and
    verdict. Computed from the raw runs, so a report is reproducible from
    them."""
    runs = doc["runs"]
    boot_of = boot_of_rounds(runs)
    out = {}
    for name, info in doc["benches"].items():
        entry = {**info, "variants": {}, "vs_base": {}}
        for variant in doc["variants"]:
            vals = values_of(runs, name, variant)
            if vals:
                entry["variants"][variant] = {
                    "n": len(vals), "median": statistics.median(vals),
                    "min": min(vals), "max": max(vals)}
        for variant in doc["variants"]:
            base = base_of(doc, variant)
            if variant == base:
                continue
            groups = paired_by_boot(by_round(runs, name, variant), by_round(runs, name, base),
                                    info["compare"], boot_of)
            pairs = [v for g in groups for v in g]
            if not pairs:
                continue
            low, high = bootstrap_boots(groups)
            said = verdict(low, high, info["compare"], info["worse"], info["better"])
            bound = both_bounded(runs, name, variant, base)
            if bound:
                said = f"not measured: both {bound} in most rounds"
            entry["vs_base"][variant] = {
                "n": len(pairs), "boots": len(groups), "median": statistics.median(pairs),
                "ci": [low, high], "verdict": said}
        out[name] = entry
    return out


def base_of(doc, variant):
    """What `variant` is compared with: a reference kernel's variant with
    the class it is the original of (prjc-bmq with bmq), when that ran;
    every other variant with the experiment's base."""
    like = doc.get("references", {}).get(variant, {}).get("like")
    return like if like in doc["variants"] else doc["base"]


# What a run flagged so (RUN_FLAGS) holds: only a bound on the time.
BOUND_WORDS = {"censored": "never got there within the window",
               "settled_at_first_sample": "there by the first sample"}


def both_bounded(runs, bench_name, variant, base):
    """The words for a flag that both variant and base carry in at least
    half of the rounds both ran, or None: their ratio then compares two
    bounds (two window lengths, or how soon two first samples came), not
    two times, whatever its interval says."""
    flags = {}
    for r in runs:
        if r["bench"] == bench_name and r["variant"] in (variant, base):
            flags.setdefault(r["round"], {})[r["variant"]] = r
    rounds = [v for v in flags.values() if len(v) == 2]
    for flag, words in BOUND_WORDS.items():
        both = sum(1 for v in rounds if v[variant].get(flag) and v[base].get(flag))
        if rounds and 2 * both >= len(rounds):
            return words
    return None


def bootstrap_change(a, b, compare="ratio", resamples=stats.BOOTSTRAP_RESAMPLES,
                     level=stats.CONFIDENCE, seed=1):
    """Percentile bootstrap interval of median(b) / median(a) (or b - a),
    resampling the rounds of each folder independently: the two runs are
    separate boots, so their rounds do not pair. (None, None) below
    stats.MIN_ROUNDS in either."""
    if min(len(a), len(b)) < stats.MIN_ROUNDS:
        return None, None
    return stats.bootstrap([a, b], lambda ma, mb: change_of_medians(ma, mb, compare),
                           resamples=resamples, level=level, seed=seed)


def change_of(a, b, compare="ratio"):
    """median(b) / median(a), or their difference; None without a base."""
    return change_of_medians(statistics.median(a), statistics.median(b), compare)


def change_of_medians(ma, mb, compare="ratio"):
    """mb / ma, or mb - ma; None for a ratio without a positive base."""
    if compare == "difference":
        return mb - ma
    return mb / ma if ma > 0 else None


# -- the JSON document -------------------------------------------------------

METADATA_KEYS = ("git_revision", "git_dirty", "kernel_release", "config", "config_sha256",
                 "topology", "classes", "features", "host_cpu", "qemu_mode", "rounds",
                 "quick", "date", "command_line")


def document(exp, outcome_runs, benches, commands, failures, meta, references=None):
    """The JSON of one experiment: what it reproduces, the metadata, every
    raw run and the summary derived from them. `references` (name: what
    scripts/reference-kernel recorded) adds each reference kernel's
    variant after the experiment's own."""
    references = references or {}
    doc = {"schema": SCHEMA, "experiment": exp.name, "title": exp.title, "seed": exp.seed,
           "published": exp.published, "variants": list(exp.variants) + list(references),
           "base": exp.base, "metadata": meta, "benches": benches, "commands": commands,
           "failures": failures, "runs": outcome_runs}
    if references:
        doc["references"] = references
    doc["summary"] = summarise(doc)
    return doc


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) \
        and math.isfinite(value)


def validate(doc):
    """Problems of a result document (empty when well formed): the checks
    --quick applies to every experiment it runs, and compare to what it
    reads."""
    problems = []
    for key, kind in (("schema", int), ("experiment", str), ("seed", str),
                      ("published", str), ("variants", list), ("base", str),
                      ("metadata", dict), ("benches", dict), ("runs", list),
                      ("failures", list), ("commands", dict)):
        if not isinstance(doc.get(key), kind):
            problems.append(f"{key}: missing or not a {kind.__name__}")
    if problems:
        return problems
    if doc["schema"] != SCHEMA:
        problems.append(f"schema {doc['schema']}, expected {SCHEMA}")
    missing = [k for k in METADATA_KEYS if k not in doc["metadata"]]
    if missing:
        problems.append(f"metadata lacks {', '.join(missing)}")
    if doc["base"] not in doc["variants"]:
        problems.append(f"base {doc['base']!r} is not a variant")
    if not doc["runs"]:
        problems.append("no runs")
    for i, run in enumerate(doc["runs"]):
        if run.get("bench") not in doc["benches"]:
            problems.append(f"run {i}: unknown bench {run.get('bench')!r}")
        if run.get("variant") not in doc["variants"]:
            problems.append(f"run {i}: unknown variant {run.get('variant')!r}")
        if not isinstance(run.get("round"), int) or run["round"] < 1:
            problems.append(f"run {i}: round {run.get('round')!r}")
        if not _number(run.get("value")):
            problems.append(f"run {i}: value {run.get('value')!r}")
    for name, info in doc["benches"].items():
        if info.get("compare") not in ("ratio", "difference") or not info.get("unit"):
            problems.append(f"bench {name}: compare/unit {info}")
    for name, ref in doc.get("references", {}).items():
        if name not in doc["variants"] or not isinstance(ref, dict) or \
                not ref.get("patch_sha256"):
            problems.append(f"reference {name}: not a variant, or no patch_sha256")
    return problems


def check_png(path):
    """Problems of a plot file: it must exist and be a PNG with pixels."""
    path = Path(path)
    if not path.is_file():
        return [f"{path.name}: missing"]
    data = path.read_bytes()
    if not data.startswith(PNG_MAGIC) or len(data) < 100:
        return [f"{path.name}: not a PNG"]
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    return [] if width > 0 and height > 0 else [f"{path.name}: empty image"]


def load_folder(folder):
    """{experiment: document} of a result folder, in registry order."""
    docs = {}
    for path in sorted(Path(folder).glob("*.json")):
        try:
            doc = json.loads(path.read_text())
        except json.JSONDecodeError:
            continue
        if isinstance(doc, dict) and doc.get("schema") and doc.get("experiment"):
            docs[doc["experiment"]] = doc
    order = list(EXPERIMENTS)
    return dict(sorted(docs.items(), key=lambda kv: (
        order.index(kv[0]) if kv[0] in order else len(order), kv[0])))


# -- metadata ----------------------------------------------------------------

def git_state(repo=paths.REPO):
    """(short revision, dirty): dirty when a tracked file differs from the
    commit, so a result never passes for one of a clean tree."""
    def git(*args):
        proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True,
                              text=True)
        return proc.stdout.strip() if proc.returncode == 0 else None
    rev = git("rev-parse", "--short", "HEAD") or "unknown"
    status = git("status", "--porcelain", "--untracked-files=no")
    return rev, bool(status) if status is not None else True


def cpu_model(cpuinfo=Path("/proc/cpuinfo")):
    """The host CPU's model name: emulated times depend on it."""
    try:
        for line in cpuinfo.read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name":
                return value.strip()
    except OSError:
        pass
    return "unknown"


def config_hash(config_path):
    """sha256 of the .config a kernel was built from (None without one):
    two results are comparable only with the same configuration."""
    try:
        return hashlib.sha256(Path(config_path).read_bytes()).hexdigest()
    except OSError:
        return None


def host_config_path(release):
    """This machine's kernel configuration, where distributions keep it."""
    path = Path(f"/boot/config-{release}")
    return path if path.exists() else None


def metadata(exp, *, release, config, config_sha256, topologies, qemu_mode, rounds, quick,
             argv, git=None, cpu=None, now=None, boots=1):
    """Everything needed to tell two results apart, and to redo one."""
    rev, dirty = git or git_state()
    return {
        "git_revision": rev, "git_dirty": dirty, "kernel_release": release,
        "config": config, "config_sha256": config_sha256,
        "topology": topologies[0] if len(topologies) == 1 else list(topologies),
        "classes": list(exp.classes), "features": list(exp.features),
        "host_cpu": cpu or cpu_model(), "host_cpus": os.cpu_count(),
        "qemu_mode": qemu_mode, "rounds": rounds, "boots": boots, "quick": quick,
        "date": (now or datetime.now(timezone.utc)).isoformat(timespec="seconds"),
        "command_line": " ".join(shlex.quote(a) for a in argv),
    }


def result_dir(root=RESULTS, now=None, git=None):
    """results/<date>-<rev>[-dirty]/, or with -2, -3... when that folder
    already holds results: a run never overwrites an earlier one."""
    rev, dirty = git or git_state()
    stem = f"{(now or datetime.now()).strftime('%Y-%m-%d')}-{rev}{'-dirty' if dirty else ''}"
    folder, n = Path(root) / stem, 1
    while folder.exists() and any(folder.iterdir()):
        n += 1
        folder = Path(root) / f"{stem}-{n}"
    return folder


# -- report and plots --------------------------------------------------------

def fmt(value):
    """A number with the precision its size warrants."""
    if value is None:
        return "-"
    size = abs(value)
    return f"{value:.0f}" if size >= 100 else f"{value:.1f}" if size >= 10 else f"{value:.3f}"


def relation(variant, base, compare):
    return f"{variant}/{base}" if compare == "ratio" else f"{variant}−{base}"


def fmt_apart(values, neutral):
    """fmt() of each value, with up to 6 decimals where 3 would print a
    value other than `neutral` as `neutral`, or two different values
    alike: under icount a ratio of 0.99980 (0.99976 to 0.99984) is a
    measured difference, not 1.000 (1.000 to 1.000)."""
    small = [v for v in values if v is not None and abs(v) < 10]

    def blurred(digits):
        shown = {v: f"{v:.{digits}f}" for v in small + [neutral]}
        return any(shown[a] == shown[b] for a in shown for b in shown if a != b)
    if not any(v != neutral and f"{v:.3f}" == f"{neutral:.3f}" for v in small):
        return [fmt(v) for v in values]
    digits = 4
    while digits < 6 and blurred(digits):
        digits += 1
    return ["-" if v is None else f"{v:.{digits}f}" if abs(v) < 10 else fmt(v) for v in values]


def describe_vs(stat, neutral=1.0):
    """"0.987 (0.95-1.03, 10 rounds): no difference measured"; `neutral` is
    what no difference is (1 for a ratio, 0 for a difference)."""
    low, high = stat["ci"]
    median, low_text, high_text = fmt_apart([stat["median"], low, high], neutral)
    interval = f"{low_text} to {high_text}, " if low is not None else ""
    rounds = f"{stat['n']} round{'s' if stat['n'] != 1 else ''}"
    if stat.get("boots", 1) > 1:
        rounds += f" in {stat['boots']} boots"
    return f"{median} ({interval}{rounds}): {stat['verdict']}"


def table(doc, summary=None):
    """Markdown table of one experiment: median per variant and each other
    variant against the base with its interval and verdict."""
    summary = summary or summarise(doc)
    variants, base = doc["variants"], doc["base"]
    others = [v for v in variants if v != base]
    heads = ["benchmark", "unit"] + variants + ["compared as"] + \
        [f"{v} vs {base_of(doc, v)}" for v in others]
    lines = ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    for name, entry in summary.items():
        cells = [name, entry["unit"]]
        cells += [fmt(entry["variants"][v]["median"]) if v in entry["variants"] else "-"
                  for v in variants]
        cells.append("ratio" if entry["compare"] == "ratio" else "difference")
        neutral = 1.0 if entry["compare"] == "ratio" else 0.0
        cells += [describe_vs(entry["vs_base"][v], neutral) if v in entry["vs_base"] else "-"
                  for v in others]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def report_section(doc):
    """One experiment's part of report.md."""
    meta = doc["metadata"]
    topo = meta["topology"] if isinstance(meta["topology"], str) else ", ".join(meta["topology"])
    how = "this machine (--host)" if meta["qemu_mode"] == "host" else \
        f"QEMU {meta['qemu_mode']}, topology {topo}"
    lines = [f"## {doc['experiment']}: {doc['title']}", "",
             f"Reproduces: {doc['seed']}.", "",
             f"Published shape: {doc['published']}", "",
             f"Run: {meta['rounds']} round(s)"
             + (f" in {meta['boots']} boots" if meta.get("boots", 1) > 1 else "")
             + f"{' (--quick)' if meta.get('quick') else ''} "
             f"on {how}; kernel {meta['kernel_release'] or 'unknown'}, config "
             f"{meta['config']} (sha256 {str(meta['config_sha256'])[:12]}); "
             f"classes {', '.join(meta['classes'])}"
             + (f"; features {', '.join(meta['features'])}" if meta["features"] else "")
             + ("; our kernel set " + ", ".join(f"{k}={v}" for k, v in meta["sysctls"].items())
                + " (as the reference's original)" if meta.get("sysctls") else "")
             + ".", "", table(doc), ""]
    if doc["failures"]:
        lines += [f"Failed runs, left out: {len(doc['failures'])} "
                  f"({'; '.join(str(f) for f in doc['failures'][:5])}).", ""]
    for flag, meaning in RUN_FLAGS:
        flagged = flag_counts(doc, flag)
        if flagged:
            lines += [meaning + ": " + "; ".join(f"{b}: {v} {n} of {total} rounds"
                                                 for (b, v), (n, total) in flagged.items())
                      + ".", ""]
    lines += [f"![{doc['experiment']}]({doc['experiment']}.png)", ""]
    return "\n".join(lines)


# Flags a run of a time-until-something measurement may carry, with what
# they mean for its value, counted under the experiment's table: a median
# over such runs is a bound, not a measurement.
RUN_FLAGS = (
    ("censored", "Never within the window (the value is the window's length, a lower "
                 "bound)"),
    ("settled_at_first_sample", "Already there at the first sample (the value is when "
                                "that sample came, an upper bound)"),
)


def flag_counts(doc, flag):
    """{(bench, variant): (runs flagged `flag`, runs)} where any is."""
    out = {}
    for run in doc["runs"]:
        key = (run["bench"], run["variant"])
        n, total = out.get(key, (0, 0))
        out[key] = (n + bool(run.get(flag)), total + 1)
    return {k: v for k, v in out.items() if v[0]}


def write_report(folder):
    """report.md of every experiment in `folder`, from their raw runs."""
    folder = Path(folder)
    docs = load_folder(folder)
    first = next(iter(docs.values()), None)
    head = ["# Reproduction report", ""]
    if first:
        meta = first["metadata"]
        head += [f"Revision {meta['git_revision']}{' (dirty tree)' if meta['git_dirty'] else ''}, "
                 f"{meta['date']}, host CPU {meta['host_cpu']}. Intervals: seeded "
                 f"bootstrap {int(stats.CONFIDENCE * 100)} % of the median of per-round "
                 f"ratios (or differences) to the base, which alternates with the other "
                 f"variants in one boot (with --boots, the boots are resampled, then the "
                 f"rounds within them); none below {stats.MIN_ROUNDS} rounds. An interval "
                 f"that holds 1 (0 for differences) is \"no difference measured\".", ""]
    body = [report_section(doc) for doc in docs.values()]
    out = folder / "report.md"
    out.write_text("\n".join(head + body))
    return out


def plot(doc, path, summary=None):
    """Per benchmark, a box and every run of each variant, the comparison
    with its interval in the title."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    summary = summary or summarise(doc)
    names = list(summary)
    over_time = [n for n in names if summary[n].get("series")
                 and any(r["bench"] == n and r.get("series") for r in doc["runs"])]
    per_thread = thread_panels(doc)
    panels = len(names) + len(over_time) + len(per_thread)
    cols = min(3, max(1, panels))
    rows = math.ceil(panels / cols) or 1
    fig, axes = plt.subplots(rows, cols, figsize=(4.4 * cols, 3.4 * rows), squeeze=False)
    for ax, name in zip(list(axes.flat)[len(names):], over_time):
        plot_series(ax, doc, name, summary[name]["series"])
    for ax, panel in zip(list(axes.flat)[len(names) + len(over_time):], per_thread):
        plot_threads(ax, *panel)
    for ax, name in zip(axes.flat, names):
        entry = summary[name]
        variants = [v for v in doc["variants"] if v in entry["variants"]]
        data = [values_of(doc["runs"], name, v) for v in variants]
        ax.boxplot(data, showfliers=False)
        for i, vals in enumerate(data, 1):
            spread = [0.0] if len(vals) == 1 else \
                [-0.15 + 0.3 * k / (len(vals) - 1) for k in range(len(vals))]
            ax.plot([i + s for s in spread], vals, "o", alpha=0.6, markersize=4)
        ax.set_xticks(range(1, len(variants) + 1), variants)
        ax.set_ylabel(entry["unit"], fontsize=8)
        lines = [name] + [f"{relation(v, doc['base'], entry['compare'])} "
                          f"{describe_vs(s, 1.0 if entry['compare'] == 'ratio' else 0.0)}"
                          for v, s in entry["vs_base"].items()]
        ax.set_title("\n".join(lines), fontsize=7)
    for ax in list(axes.flat)[panels:]:
        ax.axis("off")
    fig.suptitle(f"{doc['experiment']}: {doc['seed']}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return Path(path)


def plot_series(ax, doc, name, labels):
    """Every run's time series of benchmark `name`, one colour per
    variant, with the runs' marks (a phase starting, say) as dashed
    lines: the shape over time the seeds' figures show."""
    colours = {v: f"C{i}" for i, v in enumerate(doc["variants"])}
    labelled, marks = set(), {}
    for run in sorted(doc["runs"], key=lambda r: r["round"]):
        if run["bench"] != name or not run.get("series"):
            continue
        xs, ys = zip(*run["series"])
        variant = run["variant"]
        ax.plot(xs, ys, "-", color=colours.get(variant, "k"), alpha=0.6, linewidth=1,
                label=None if variant in labelled else variant)
        labelled.add(variant)
        marks.update(run.get("marks") or {})
    for label, x in marks.items():
        ax.axvline(x, color="grey", linestyle="--", linewidth=0.8)
        ax.annotate(label, (x, 1), xycoords=("data", "axes fraction"), fontsize=6,
                    rotation=90, va="top", ha="right")
    ax.set_xlabel(labels["x"], fontsize=8)
    ax.set_ylabel(labels["y"], fontsize=8)
    ax.set_title(f"{name}: every round", fontsize=7)
    ax.legend(fontsize=7)


THREAD_VALUES = {"run_ms": "cumulative run time (ms)", "score": "ULE interactivity score"}


def thread_panels(doc):
    """[(variant, run, key)] of the runs that carry per-thread samples
    ("per_thread": {"x": [...], KEY: [[value per thread] per sample]}): a
    panel per variant and kind of value that has any."""
    panels = []
    order = {v: i for i, v in enumerate(doc["variants"])}
    for run in sorted(doc["runs"], key=lambda r: (r["round"], order.get(r["variant"], 0))):
        for key in THREAD_VALUES:
            rows = (run.get("per_thread") or {}).get(key)
            if rows and any(v is not None for row in rows for v in row) and \
                    (run["variant"], key) not in {(p[0], p[2]) for p in panels}:
                panels.append((run["variant"], run, key))
    return panels


def plot_threads(ax, variant, run, key):
    """One line per thread of one run: its run time or score at every
    sample, as the seeds' per-thread figures (seed 000 Figures 3 and 4)."""
    xs, rows = run["per_thread"]["x"], run["per_thread"][key]
    for k in range(len(rows[0])):
        ys = [row[k] for row in rows]
        if any(y is not None for y in ys):
            ax.plot(xs, ys, "-", linewidth=0.6, alpha=0.7)
    ax.set_xlabel("s since every thread existed", fontsize=8)
    ax.set_ylabel(THREAD_VALUES[key], fontsize=8)
    ax.set_title(f"{variant}, round {run['round']}: {THREAD_VALUES[key]} per thread",
                 fontsize=7)


def save(doc, folder):
    """Write the JSON and PNG of one experiment and the folder's report."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    json_path = folder / f"{doc['experiment']}.json"
    json_path.write_text(json.dumps(doc, indent=1) + "\n")
    png = plot(doc, folder / f"{doc['experiment']}.png", doc.get("summary"))
    return json_path, png, write_report(folder)


# -- compare -----------------------------------------------------------------

def change_verdict(low, high, compare):
    """Like verdict(), for B against A."""
    return verdict(low, high, compare, "higher", "lower")


def compare(folder_a, folder_b):
    """Markdown: for each experiment in both folders, each variant's median
    and each comparison with the base, A and B side by side, the change
    (B/A, or B-A for differences) and its bootstrap interval."""
    a, b = load_folder(folder_a), load_folder(folder_b)
    lines = [f"# {Path(folder_a).name} (A) vs {Path(folder_b).name} (B)", ""]
    for label, docs in (("A", a), ("B", b)):
        if docs:
            meta = next(iter(docs.values()))["metadata"]
            dirty = "-dirty" if meta["git_dirty"] else ""
            lines.append(f"{label}: {meta['git_revision']}{dirty}, kernel "
                         f"{meta['kernel_release']}, {meta['qemu_mode']}, "
                         f"{meta['rounds']} rounds, {meta['date']}")
    lines.append("")
    only = sorted(set(a) ^ set(b))
    if only:
        lines += [f"In one folder only (not compared): {', '.join(only)}", ""]
    for name in [n for n in a if n in b]:
        lines += compare_experiment(a[name], b[name]) + [""]
    return "\n".join(lines)


def compare_experiment(doc_a, doc_b):
    """Rows of compare() for one experiment."""
    lines = [f"## {doc_a['experiment']}", "",
             "| benchmark | what | A | B | change | 95 % interval | verdict |",
             "|---|---|---|---|---|---|---|"]
    base = doc_a["base"]
    for name, info in doc_a["benches"].items():
        if name not in doc_b["benches"]:
            continue
        for variant in doc_a["variants"]:
            va = values_of(doc_a["runs"], name, variant)
            vb = values_of(doc_b["runs"], name, variant)
            if va and vb:
                lines.append(compare_row(name, f"{variant} median ({info['unit']})",
                                         va, vb, info["compare"]))
            if variant == base:
                continue
            pa = paired(by_round(doc_a["runs"], name, variant),
                        by_round(doc_a["runs"], name, base), info["compare"])
            pb = paired(by_round(doc_b["runs"], name, variant),
                        by_round(doc_b["runs"], name, base), info["compare"])
            if pa and pb:
                what = relation(variant, base, info["compare"])
                lines.append(compare_row(name, what, pa, pb, info["compare"]))
    return lines


def compare_row(name, what, a, b, kind):
    low, high = bootstrap_change(a, b, kind)
    change = change_of(a, b, kind)
    interval = f"{fmt(low)} to {fmt(high)}" if low is not None else "-"
    sign = "B/A " if kind == "ratio" else "B−A "
    return (f"| {name} | {what} | {fmt(statistics.median(a))} | {fmt(statistics.median(b))} "
            f"| {sign}{fmt(change)} | {interval} | {change_verdict(low, high, kind)} |")


# -- spread per QEMU mode ----------------------------------------------------

def paired_spread(values, kind):
    """How widely one comparison's per-round values scatter, in a way that
    does not shrink with more rounds (an interval's width does): their
    interquartile range, in % of their median for ratios, in the unit for
    differences. None below stats.MIN_ROUNDS values."""
    if len(values) < stats.MIN_ROUNDS:
        return None
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    if kind == "difference":
        return q3 - q1
    med = statistics.median(values)
    return 100 * (q3 - q1) / med if med > 0 else None


def spread_label(folder, doc, rounds=None):
    meta = doc["metadata"]
    count = f"{meta['rounds']} rounds"
    if rounds is not None and rounds < meta["rounds"]:
        count = f"first {rounds} of {meta['rounds']} rounds"
    return f"{meta['qemu_mode']} ({count}, {Path(folder).name})"


def first_rounds(values, rounds):
    """{round: value} of the first `rounds` rounds of `values` (all if None)."""
    if rounds is None:
        return values
    return {r: values[r] for r in sorted(values)[:rounds]}


def spread(folders, rounds=None):
    """Markdown: for each experiment in two or more of `folders` (the same
    experiment run in different QEMU modes), each comparison's
    paired_spread() per folder, over each folder's first `rounds` rounds
    if given (an interquartile range of 10 values is steadier than one of
    5), the smallest marked, and per experiment the folder smallest in most
    comparisons."""
    loaded = [(f, load_folder(f)) for f in folders]
    names = []
    for _, docs in loaded:
        names += [n for n in docs if n not in names]
    lines = ["# Spread per QEMU mode", "",
             "Interquartile range of each comparison's per-round values: % of "
             "the median for ratios, the unit for differences. Smaller is a "
             "tighter measurement; `*` marks the smallest.", ""]
    for name in names:
        have = [(f, docs[name]) for f, docs in loaded if name in docs]
        if len(have) < 2:
            lines += [f"## {name}", "", "In one folder only: nothing to compare.", ""]
            continue
        lines += spread_experiment(name, have, rounds) + [""]
    return "\n".join(lines)


def spread_experiment(name, have, rounds=None):
    """Rows of spread() for one experiment run in each of `have`'s folders."""
    labels = [spread_label(f, doc, rounds) for f, doc in have]
    lines = [f"## {name}", "", "| benchmark | what | " + " | ".join(labels) + " |",
             "|---|---|" + "---|" * len(labels)]
    wins, rows = [0] * len(have), 0
    first = have[0][1]
    for bench_name, info in first["benches"].items():
        kind = info["compare"]
        for variant in first["variants"]:
            base = first["base"]
            if variant == base:
                continue
            cells = []
            for _, doc in have:
                if bench_name not in doc["benches"]:
                    cells.append(None)
                    continue
                pairs = paired(first_rounds(by_round(doc["runs"], bench_name, variant), rounds),
                               by_round(doc["runs"], bench_name, base), kind)
                cells.append(paired_spread(pairs, kind))
            if all(c is None for c in cells):
                continue
            known = [c for c in cells if c is not None]
            best = min(known) if len(known) == len(cells) else None
            if best is not None:
                rows += 1
                wins = [w + (c == best) for w, c in zip(wins, cells)]
            text = [("-" if c is None else fmt(c) + ("*" if c == best else ""))
                    for c in cells]
            unit = "%" if kind == "ratio" else info["unit"]
            lines.append(f"| {bench_name} | {relation(variant, base, kind)} ({unit}) | "
                         + " | ".join(text) + " |")
    if rows:
        top = max(wins)
        best = [labels[i].split(" ")[0] for i, w in enumerate(wins) if w == top]
        lines += ["", f"Smallest in most comparisons: {' and '.join(best)} "
                      f"({top} of {rows})."]
    return lines


# -- progress ----------------------------------------------------------------

def duration(seconds):
    seconds = max(0, int(seconds))
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    return f"{seconds // 60}m{seconds % 60:02d}s"


class Progress:
    """Which experiment and round is running, the time since the start and
    an estimate of what is left, on stderr. `plan` lists (name, [seconds
    per boot estimated]); the estimate scales what is left by how the
    measured rounds compare with their estimates."""

    def __init__(self, plan, stream=None, clock=time.monotonic):
        self.plan = plan
        self.stream = stream
        self.clock = clock
        self.start = clock()
        self.index = -1
        self.boot = -1
        self.label = ""
        self.rounds = 1
        self.round = 0
        self.boot_start = self.start
        self.first_round_at = None
        self.spent_estimated = 0.0    # estimate of the boots finished so far
        self.spent = 0.0              # their measured time
        self.said_at = self.start
        self.lock = threading.Lock()

    def begin(self, index, boot, label, rounds):
        """Experiment `index`, its boot `boot`, `rounds` rounds to come."""
        self.index, self.boot, self.label, self.rounds, self.round = index, boot, label, rounds, 0
        self.boot_start = self.clock()
        self.first_round_at = None
        self.say()

    def at_round(self, rnd):
        """The guest is in round `rnd` (a result line of it appeared)."""
        if rnd != self.round:
            if self.first_round_at is None:
                self.first_round_at = self.clock()
            self.round = rnd
            self.say()

    def end_boot(self):
        self.spent_estimated += self.plan[self.index][1][self.boot]
        self.spent += self.clock() - self.boot_start

    def left(self):
        """Seconds left: the rest of this boot at the pace of its rounds
        since the first result (or its estimate before a round finished),
        plus the boots to come at their estimates scaled by how the
        finished boots compared with theirs."""
        pace = self.spent / self.spent_estimated if self.spent_estimated else 1.0
        est = self.plan[self.index][1][self.boot]
        done = max(0, self.round - 1)
        if done:
            per_round = (self.clock() - self.first_round_at) / done
            current = per_round * (self.rounds - done)
        else:
            current = max(0.0, est * pace - (self.clock() - self.boot_start))
        later = sum(self.plan[self.index][1][self.boot + 1:])
        later += sum(sum(p[1]) for p in self.plan[self.index + 1:])
        return current + later * pace

    def heartbeat(self, every=60.0, stop=None):
        """Say where the run is at least every `every` seconds, from a
        thread: a round of smt-spread or wasted-cores takes minutes, and a
        line that never changes looks like a hang."""
        stop = stop or threading.Event()
        while not stop.wait(min(every, 5.0)):
            if self.index >= 0 and self.clock() - self.said_at >= every:
                self.say()

    def say(self):
        with self.lock:
            self._say()

    def _say(self):
        self.said_at = self.clock()
        name = self.plan[self.index][0]
        where = f" {self.label}" if self.label else ""
        rnd = f" round {self.round}/{self.rounds}" if self.round else " booting"
        stream = self.stream or sys.stderr
        stream.write(f"reproduce: [{self.index + 1}/{len(self.plan)}] {name}{where}{rnd}, "
                     f"{duration(self.clock() - self.start)} elapsed, "
                     f"about {duration(self.left())} left\n")
        stream.flush()


# -- runners -----------------------------------------------------------------

RELEASE_MARK = "reproduce-uname-r"


@dataclasses.dataclass
class Boot:
    output: str
    release: str
    status: int
    files: Path


def release_of(output):
    m = re.search(rf"^{RELEASE_MARK} (\S+)$", output, re.M)
    return m[1] if m else ""


class _Tail(threading.Thread):
    """Hands each new line of a growing file to `on_line`: the guest's
    output file fills while it runs, which is how progress sees rounds."""

    def __init__(self, path, on_line):
        super().__init__(daemon=True)
        self.path, self.on_line, self.stop = path, on_line, threading.Event()

    def run(self):
        pos, rest = 0, ""
        while not self.stop.wait(1.0):
            try:
                with open(self.path, errors="replace") as f:
                    f.seek(pos)
                    chunk = f.read()
                    pos = f.tell()
            except FileNotFoundError:
                continue
            *lines, rest = (rest + chunk).split("\n")
            for line in lines:
                self.on_line(line.rstrip("\r"))


def sysctl_command(sysctls):
    """Shell that sets each kernel.NAME to its value, or ends the guest's
    command with status 2 and one line if it cannot."""
    return "".join(f"{{ echo {v} >/proc/sys/kernel/{k} || {{ echo 'reproduce: cannot set "
                   f"kernel.{k}={v}'; exit 2; }}; }}; " for k, v in sysctls.items())


class GuestRunner:
    """Boots the kernel of `config` under QEMU for each adapter's command;
    the guest's shared folder for a boot is workdir/TAG, /tmp/out inside."""

    def __init__(self, config, qemu_mode, workdir):
        self.config, self.mode, self.workdir = config, qemu_mode, Path(workdir)
        self.kernel = paths.kernel_image(config)
        self.accel = None
        self.sysctls = {}   # kernel.NAME: value, set before each command

    def config_sha256(self):
        return config_hash(paths.obj_dir(self.config) / ".config")

    def for_reference(self, name):
        """A runner of the same mode that boots reference kernel `name`
        (scripts/reference-kernel), its guests' folders in workdir/NAME."""
        other = GuestRunner(self.config, self.mode, self.workdir / name)
        other.kernel = reference.kernel_image(name)
        other.config_sha256 = lambda: config_hash(reference.ROOT / name / "obj" / ".config")
        return other

    def run(self, command, topology, tag, on_line=lambda line: None, timeout=3600):
        outdir = self.workdir / tag
        outdir.mkdir(parents=True, exist_ok=True)
        tail = _Tail(outdir / "output.log", on_line)
        tail.start()
        try:
            self.accel = vm.resolve_accel(self.kernel, self.mode)
            res = vm.boot(f"echo {RELEASE_MARK} $(uname -r); {sysctl_command(self.sysctls)}"
                          f"{command}", topology, "",
                          kernel=self.kernel, timeout=timeout, outdir=outdir,
                          qemu_mode=self.mode, accel=self.accel)
        finally:
            tail.stop.set()
        return Boot(res.output, release_of(res.output), res.status, outdir)

    def shared_dir(self, tag):
        return "/tmp/out"


class HostRunner:
    """Runs each adapter's command on this machine (--host), which must run
    the patched kernel: classes are switched through kernel.sched_class."""

    mode = "host"
    config = "host"
    accel = None

    def __init__(self, workdir):
        self.workdir = Path(workdir)

    def config_sha256(self):
        path = host_config_path(os.uname().release)
        return config_hash(path) if path else None

    def run(self, command, topology, tag, on_line=lambda line: None, timeout=3600):
        outdir = self.workdir / tag
        outdir.mkdir(parents=True, exist_ok=True)
        proc = subprocess.Popen(["sh", "-c", command], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, cwd=outdir)
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        lines = []
        try:
            for line in proc.stdout:
                lines.append(line)
                on_line(line.rstrip("\n"))
            status = proc.wait()
        finally:
            timer.cancel()
        output = "".join(lines)
        (outdir / "output.log").write_text(output)
        return Boot(output, os.uname().release, status, outdir)

    def shared_dir(self, tag):
        return str(self.workdir / tag)


def host_refusal(sched_class=SCHED_CLASS, euid=None):
    """Why --host cannot run here, or None: it needs the patched kernel's
    run-time switch, and root to write it."""
    if not Path(sched_class).exists():
        return (f"--host needs a kernel with ULE and BMQ ({sched_class} does not exist "
                f"on this kernel, {os.uname().release})")
    if (os.geteuid() if euid is None else euid) != 0:
        return f"--host needs root to write {sched_class}"
    return None


# -- running -----------------------------------------------------------------

@dataclasses.dataclass
class Context:
    """What an adapter needs: rounds, sizes, the runner, programs, progress."""
    rounds: int
    quick: bool
    runner: object
    progress: Progress = None
    build_programs: bool = True
    boot_estimate: float = 600.0
    boots: int = 1
    classes: tuple = ()             # set for a reference kernel's boots: its variant
    references: dict = dataclasses.field(default_factory=dict)   # name: info

    def program(self, name):
        """tools/testing/sched/NAME.c built for the guest; without building,
        the binary already in build/tools."""
        if not self.build_programs:
            path = paths.BUILD / "tools" / name
            if path.exists():
                return path
        return build.guest_program(name)

    def track(self, pattern):
        """on_line callback: a line matching `pattern` (round in group 1)
        moves the progress to that round."""
        regex = re.compile(pattern)

        def on_line(line):
            m = regex.match(line)
            if m and self.progress:
                self.progress.at_round(int(m[1]))
        return on_line

    def timeout(self):
        """The current boot's limit: generous against its estimate, since a
        guest that never ends must not hold the run forever. Smoke sizes
        take a third of their estimate or less, and a hung guest must not
        cost a test run (CI) a quarter of an hour."""
        if self.quick:
            return int(max(QUICK_TIMEOUT_MIN, 2 * self.boot_estimate + 120))
        return int(max(900, 4 * self.boot_estimate + 300))


def boot_shares(rounds, boots):
    """Rounds per boot: `rounds` split as evenly as `boots` allow, the
    first boots taking one more when it does not divide."""
    return [rounds // boots + (b < rounds % boots) for b in range(boots)]


def references_for(exp, references):
    """The reference kernels (name: info) that run `exp` as one more
    variant: experiments that compare classes, when they run the class the
    kernel is the original of (any, for a kernel of no class of ours)."""
    if not all(v.partition(":")[0] in CLASSES for v in exp.variants):
        return {}
    return {name: info for name, info in references.items()
            if reference.LIKE.get(info.get("scheduler")) in exp.variants + (None,)}


def plan_of(experiments, rounds, quick, override, host, boots=1, references=None):
    """[(name, [estimated seconds per boot])] for Progress; a reference
    kernel's boot runs one variant of the experiment's."""
    plan = []
    for exp in experiments:
        kernels = [1.0] + [1 / len(exp.variants) for _ in references_for(exp, references or {})]
        per_boot = [BOOT_SECONDS + share * exp.estimate(t, quick) * part
                    for part in kernels
                    for t in exp.topologies_for(override, quick, host)
                    for share in boot_shares(rounds, boots)]
        plan.append((exp.name, per_boot))
    return plan


def run_experiment(exp, index, ctx, override, host):
    """Every boot of one experiment (per topology, ctx.boots boots that
    share its rounds), then the same on each reference kernel that runs
    it (ctx.references, references_for()) with its one variant; runs,
    benches and commands merged, the rounds of later boots numbered on
    from the earlier ones' (a reference kernel's rounds pair with the
    same rounds of the main kernel's boots)."""
    merged = Outcome(runs=[], benches={})
    topologies = exp.topologies_for(override, ctx.quick, host)
    runner, boot = ctx.runner, 0
    refs = references_for(exp, ctx.references)
    kernels = [(None, runner)] + [(name, runner.for_reference(name)) for name in refs]
    sysctls = getattr(runner, "sysctls", None)
    if sysctls is not None:
        runner.sysctls = reference.original_sysctls(refs)
    try:
        for name, ctx.runner in kernels:
            ctx.classes = (name,) if name else ()
            for topology in topologies:
                boot = _topology_boots(exp, index, ctx, topology, merged, boot, name)
    finally:
        ctx.runner, ctx.classes = runner, ()
        if sysctls is not None:
            runner.sysctls = sysctls
    return merged, topologies


def _topology_boots(exp, index, ctx, topology, merged, boot, kernel=None):
    """run_experiment()'s boots on one topology with ctx.runner; returns
    the index in the plan of the next boot."""
    rounds, workdir = ctx.rounds, getattr(ctx.runner, "workdir", None)
    shares = boot_shares(rounds, ctx.boots)
    done = 0
    try:
        for b, share in enumerate(shares):
            ctx.rounds = share
            label = topology if ctx.boots == 1 else f"{topology} boot {b + 1}/{ctx.boots}"
            label += f" ({kernel})" if kernel else ""
            if ctx.boots > 1 and workdir is not None:
                ctx.runner.workdir = workdir / f"boot-{b + 1}"
            part = 1 / len(exp.variants) if kernel else 1.0
            ctx.boot_estimate = BOOT_SECONDS + share * exp.estimate(topology, ctx.quick) * part
            if ctx.progress:
                ctx.progress.begin(index, boot, label, share)
            outcome = exp.run(ctx, topology)
            if ctx.progress:
                ctx.progress.end_boot()
            boot += 1
            for record in outcome.runs + outcome.failures:
                if isinstance(record.get("round"), int):
                    record["round"] += done
                if ctx.boots > 1:
                    record["boot"] = b + 1
            done += share
            merged.runs += outcome.runs
            merged.benches.update(outcome.benches)
            if not kernel:
                merged.commands.update(outcome.commands)
            merged.failures += outcome.failures
            if kernel:
                merged.references.setdefault(kernel, {})["kernel_release"] = outcome.release
            else:
                merged.release = merged.release or outcome.release
    finally:
        ctx.rounds = rounds
        if workdir is not None:
            ctx.runner.workdir = workdir
    return boot


# -- adapters ----------------------------------------------------------------

RESULT_ROUND = r"^result \S+ \S+ (\d+) "


def class_bench(ctx, topology, tag, suite, scale, benches, only="", suffix="",
                classes=CLASSES):
    """tools/testing/sched/class_bench.sh for every class in `classes` in
    one boot (classes switched through kernel.sched_class, order rotated
    each round), as scripts/bench-sched runs it; `benches` maps its
    benchmark names to bench_info(). Runs are named BENCH+suffix."""
    classes = ctx.classes or classes
    uleload = ctx.program("uleload") if suite in ("bmq", "muqss") else "''"
    apps = f" {apps_inputs()}" if suite == "muqss" else ""
    cmd = (f"sh {paths.GUEST_TESTS}/class_bench.sh '{' '.join(classes)}' {ctx.rounds} "
           f"{scale} {suite} {uleload} '{only}'{apps}")
    boot = ctx.runner.run(cmd, topology, tag, ctx.track(RESULT_ROUND), ctx.timeout())
    _, commands, failures = bench.parse(boot.output)
    rounds = bench.parse_rounds(boot.output)
    runs = [{"bench": name + suffix, "variant": cls, "round": int(rnd), "value": value,
             "unit": benches[name]["unit"], "topology": topology}
            for name, per_class in rounds.items() if name in benches
            for cls, values in per_class.items() for rnd, value in values.items()]
    failed = {(b, c, int(r)) for b, c, r in failures if str(r).isdigit()}
    missing = [(b, c, r) for b in commands for c in classes for r in range(1, ctx.rounds + 1)
               if str(r) not in rounds.get(b, {}).get(c, {}) and (b, c, r) not in failed]
    if not runs:
        raise ReproduceError(f"class_bench.sh gave no result on {topology} (exit "
                             f"{boot.status}); output in {boot.files}")
    return Outcome(
        runs=runs, benches={name + suffix: benches[name] for name in rounds if name in benches},
        commands={name + suffix: cmd for name, cmd in commands.items()},
        failures=[class_bench_failure(f, suffix) for f in failures] +
                 [{"bench": b + suffix, "variant": c, "round": r, "why": "no run"}
                  for b, c, r in missing],
        release=boot.release)


def class_bench_failure(failure, suffix):
    """A failure of bench.parse() as a record: a run whose tool failed, or
    stall-watchdog reports (after which every task ran on CFS, so later
    runs did not measure the class they name)."""
    name, cls, rnd = failure
    if name == "watchdog":
        return {"bench": "all", "variant": "all", "why": f"{rnd} stall-watchdog reports"}
    return {"bench": name + suffix, "variant": cls, "round": int(rnd), "why": "tool failed"}


WAKEUP = {name: bench_info("s") for name in
          ("hackbench", "pipe", "messaging", "sysbench-threads", "sysbench-mutex")}


@experiment(
    "wakeup",
    title="wakeup-heavy micro-benchmarks per class",
    seed="seed 000 §6.3 (Figure 8: Sysbench, Hackb-10/800) and seed 002 §5.1 "
         "(messaging, Figures 2-5)",
    published="ULE was slower than CFS on sysbench (13 % of CPU cycles scanning cores at "
              "wakeup, 32 cores) and within a few percent on hackbench; BMQ's perf bench "
              "sched messaging times were below CFS's in every configuration.",
    classes=CLASSES, variants=CLASSES, base="cfs", timed_variants=3,
    default_topology="1x2",
    seconds_per_round=75, quick_seconds=135)
def wakeup(ctx, topology):
    """bench-sched's wakeup suite: hackbench, perf bench sched pipe and
    messaging, sysbench threads and mutex; --scale 4 as the README's
    measurements (0, smoke sizes, with --quick)."""
    return class_bench(ctx, topology, f"wakeup-{topology}", "wakeup",
                       0 if ctx.quick else 4, WAKEUP)


BMQ_THESIS = {"messaging-g10": bench_info("s"), "messaging-g20": bench_info("s")}
BMQ_THESIS.update({f"frames-{n}": bench_info("% frames missed", "difference",
                                             "more missed", "fewer missed")
                   for n in (10, 20, 40)})


@experiment(
    "bmq-thesis",
    title="the BMQ thesis's latency and frame-deadline tests",
    seed="seed 002 §5.1 (Figures 2-5) and §5.2 (Figure 6)",
    published="BMQ's perf bench sched messaging -p -t times were lower than CFS's with "
              "10 and 20 groups at 2000 and 4000 loops; frame drops were similar up to "
              "25 background tasks, above which BMQ dropped fewer frames.",
    classes=CLASSES, variants=CLASSES, base="cfs", timed_variants=3,
    default_topology="1x2",
    seconds_per_round=115, quick_seconds=140)
def bmq_thesis(ctx, topology):
    """bench-sched --suite bmq: messaging with 10 and 20 groups (loops 50
    and 100; the thesis's 2000/4000 would be --scale 40, hours under TCG)
    and the 24 fps frame task beside 10, 20 and 40 spinners; missed frames
    compare as a difference in percentage points."""
    return class_bench(ctx, topology, f"bmq-thesis-{topology}", "bmq",
                       0 if ctx.quick else 1, BMQ_THESIS)


MUQSS_THESIS = {"messaging-g20": bench_info("s"), "make-j1": bench_info("s"),
                "make-jN": bench_info("s"),
                "messaging-switches": bench_info("switches per message", worse="more",
                                                 better="fewer")}
MUQSS_THESIS.update({f"frames-{n}": bench_info("% frames missed", "difference",
                                               "more missed", "fewer missed")
                     for n in (10, 20, 30, 40, 50)})


@experiment(
    "muqss-thesis",
    title="the MuQSS thesis's latency, turnaround and frame-drop tests",
    seed="seed 004 §4.1-§4.3 (Figures 3-7)",
    published="On a 4-core i5 CFS had lower perf bench sched messaging -p -t -g 20 -l 2000 "
              "times than MuQSS in all 50 runs; make -j1 was a little faster on MuQSS, "
              "make -j4 the same; MuQSS dropped more frames of a 24 fps video than CFS "
              "beside every background load of 10 to 60 rt-app tasks, CFS staying low up "
              "to 40.",
    classes=SHARE_CLASSES, variants=SHARE_CLASSES, base="cfs", default_topology="1x2",
    timed_variants=4, seconds_per_round=270, quick_seconds=60)
def muqss_thesis(ctx, topology):
    """bench-sched --suite muqss: messaging with 20 groups (loops 100; the
    thesis's 2000 would be --scale 20), make -j1 and -jN of eight Lua
    objects (the applications experiment's tree), the 24 fps frame task
    beside 10 to 50 spinners standing in for rt-app's busy tasks (missed
    frames compare as a difference in percentage points), and the
    context switches per message of messaging with 2 groups. MuQSS runs
    twice: as booted (rqshare=mc) and with a queue per CPU."""
    return class_bench(ctx, topology, f"muqss-thesis-{topology}", "muqss",
                       0 if ctx.quick else 1, MUQSS_THESIS, classes=SHARE_CLASSES)


SCALING_TOPOLOGIES = ("1x2", "2x4", "4x8")
SCALING = {"sysbench-threads": bench_info("s"), "sysbench-mutex": bench_info("s")}


@experiment(
    "sysbench-scaling",
    title="sysbench threads and mutex at 2, 8 and 32 vCPUs per class",
    seed="seed 000 §6.3 (Figure 8, Sysbench; the wakeup scan's cost) and issue 17 item 9",
    published="On 32 cores ULE was slower than CFS on sysbench because its wakeup scanned "
              "the cores, up to three times, on most wakeups (13 % of CPU cycles); with a "
              "wakeup returning the previous CPU there was no difference.",
    classes=CLASSES, variants=CLASSES, base="cfs", timed_variants=3,
    topologies=SCALING_TOPOLOGIES,
    quick_topologies=("1x2",), qemu_mode="icount", quick_qemu_mode="mttcg",
    seconds_per_round=50, quick_seconds=35, estimates=(("1x2", 25), ("2x4", 45), ("4x8", 130)))
def sysbench_scaling(ctx, topology):
    """class_bench.sh's two sysbench runs on one topology; runs are named
    "sysbench-threads 2x4" and so on, so the topologies sit side by side."""
    return class_bench(ctx, topology, f"sysbench-scaling-{topology}", "wakeup",
                       0 if ctx.quick else 1, SCALING,
                       only="sysbench-threads,sysbench-mutex", suffix=f" {topology}")


WASTED_SCENARIOS = ("group-imbalance", "overload-on-wakeup")


@experiment(
    "wasted-cores",
    title="the wasted-cores fixes, off vs on",
    seed="seed 001 §3.1 (Group Imbalance, Figure 2) and §3.3 (Overload-on-Wakeup, "
         "Figure 3, Table 2)",
    published="Fixing Group Imbalance cut a make job's time by 13 % beside two R processes "
              "(lu with R: 13x); fixing Overload-on-Wakeup cut TPC-H query 18 by 22.2 % and "
              "the full TPC-H by 13.2 %; both left no core idle while threads waited.",
    classes=("cfs",), variants=("off", "on"), base="off",
    features=("GROUP_MIN_LOAD", "WAKE_IDLE_LONGEST"), default_topology="4x2",
    seconds_per_round=50, quick_seconds=40)
def wasted_cores(ctx, topology):
    """tools/testing/sched/wasted_cores.sh's two measured scenarios, each
    fix off and on alternating in one boot (REPEAT = rounds), analysed by
    wasted.parse/analyse: the job's time and the CPU time idle while
    another CPU had waiting work, each on/off."""
    from . import wasted   # imports tools/sched-vis: only when this runs

    tag = f"wasted-cores-{topology}"
    env = {"REPEAT": ctx.rounds}
    if ctx.quick:
        env.update(JOB_UNITS=40, POOL_ROUNDS=10)
    assigns = " ".join(f"{k}={v}" for k, v in env.items())
    cmd = (f"{assigns} sh {paths.GUEST_TESTS}/wasted_cores.sh {ctx.runner.shared_dir(tag)} "
           f"{ctx.program('wcload')} 1 {' '.join(WASTED_SCENARIOS)}")
    boot = ctx.runner.run(cmd, topology, tag, ctx.track(r"^result \S+ o\S+ (\d+) "),
                          ctx.timeout())
    measured, _ = wasted.parse(boot.output)
    if not measured:
        raise ReproduceError(f"wasted_cores.sh gave no result (exit {boot.status}); "
                             f"output in {boot.files}")
    wasted.analyse(boot.files, measured)
    return Outcome(runs=wasted_runs(measured, topology), benches=WASTED_BENCHES,
                   commands={s: cmd for s in WASTED_SCENARIOS}, release=boot.release,
                   failures=[{"bench": s, "why": "no run"} for s in WASTED_SCENARIOS
                             if s not in measured])


WASTED_BENCHES = {}
for _s in WASTED_SCENARIOS:
    WASTED_BENCHES[f"{_s} job"] = bench_info("ms")
    WASTED_BENCHES[f"{_s} idle-while-overloaded"] = bench_info("ms", worse="more",
                                                                better="less")


def wasted_runs(measured, topology):
    """Raw runs from wasted.parse/analyse: two values per run (job time and
    idle-while-overloaded time), its round from the recording's name."""
    runs = []
    for scenario, sides in measured.items():
        for fix, side in sides.items():
            for run in side["runs"]:
                rnd = int(run["name"].rsplit("-", 1)[1])
                extra = {"violations": run.get("violations"),
                         "lost_records": run.get("lost_records"),
                         "idle_overloaded_fraction": run.get("idle_overloaded_fraction"),
                         "topology": topology}
                for suffix, key in (("job", "elapsed_ms"),
                                    ("idle-while-overloaded", "idle_overloaded_ms")):
                    if _number(run.get(key)):
                        runs.append({"bench": f"{scenario} {suffix}", "variant": fix,
                                     "round": rnd, "value": run[key], "unit": "ms", **extra})
    return runs


SMT_LINE = re.compile(r"^# (\d+) spinners: (\d+) of (\d+) samples misplaced, "
                      r"longest for (\d+) cs(?:, busy cores (\d+))?")
SMT_MARK = "reproduce-smt"


def switch_command(cls):
    """Shell that switches normal tasks to `cls`, CLASS or
    muqss:rqshare=MODE, with MuQSS's queue sharing put back to the boot's
    ($share0) first, as class_bench.sh does; for a reference kernel's
    variant (any other name) it only checks that no class can be chosen."""
    name, _, option = cls.partition(":")
    if name not in CLASSES:
        # A reference kernel's variant: its own scheduler runs everything,
        # and a kernel with ours must not pass for it.
        return f"[ ! -e {SCHED_CLASS} ]"
    parts = [f'( [ -z "$share0" ] || echo "$share0" >{RQSHARE} )',
             f"echo {name} >/proc/sys/kernel/sched_class"]
    if option:
        if name != "muqss" or not option.startswith("rqshare="):
            raise ValueError(f"no such variant: {cls}")
        parts.append(f"echo {option.removeprefix('rqshare=')} >{RQSHARE}")
    return " && ".join(parts)


def rotated_command(rounds, mark, command, classes=CLASSES):
    """Shell that runs `command` under each class per round (switched
    through kernel.sched_class, order rotated each round as class_bench.sh
    does, so a drift of the shared host spreads over every class), each
    run announced by "MARK ROUND CLASS"; the boot's class and queue
    sharing are restored at the end. A class that cannot be switched to
    gets no marker and no run."""
    parts = ["first=$(cat /proc/sys/kernel/sched_class)",
             f"share0=$(cat {RQSHARE} 2>/dev/null)"]
    for rnd in range(1, rounds + 1):
        k = (rnd - 1) % len(classes)
        for cls in classes[k:] + classes[:k]:
            parts.append(f"{switch_command(cls)} && sleep 1 && "
                         f"echo {mark} {rnd} {cls} && {command}")
    parts.append(f'( [ -z "$share0" ] || echo "$share0" >{RQSHARE} ); '
                 "echo $first >/proc/sys/kernel/sched_class")
    return "; ".join(parts)


def marked_runs(output, mark):
    """{(round, class): [lines]} of rotated_command()'s output: each run's
    lines, from its marker to the next."""
    runs, where = {}, None
    for line in output.splitlines():
        f = line.split()
        if f[:1] == [mark] and len(f) == 3 and f[1].isdigit():
            where = (int(f[1]), f[2])
            runs[where] = []
        elif where:
            runs[where].append(line)
    return runs


SMT_CORES = 4
MISPLACED = "fraction of samples"
THROUGHPUT = "modelled throughput"
THROUGHPUT_UNIT = "fraction of ideal"
# Spinner counts and sampling: every count of seed 003's figure, 8 samples
# after 2 s each; --quick: two counts (2 and 5), 2 samples after 1 s.
SMT_COUNTS = tuple(range(1, 9))
SMT_QUICK_COUNTS = (2, 5)


def smt_env(counts, settle_s, samples):
    """smt_spread.sh's environment for these counts and sampling."""
    return (f"REPAIR=0 SETTLE_S={settle_s} SAMPLES={samples} "
            f"COUNTS='{' '.join(map(str, counts))}' ")


SMT_ENV = smt_env(SMT_COUNTS, 2, 8)
SMT_QUICK_ENV = smt_env(SMT_QUICK_COUNTS, 1, 2)


def parse_smt_run(lines, cores=SMT_CORES):
    """One run of smt_spread.sh: ({bench: value}, extra, problems). Per
    count of two or more spinners, the fraction of samples in which fewer
    cores ran one than could (two shared a core while a core ran none).
    Over all counts, seed 003's modelled throughput: a spinner runs at
    full speed alone on a core and gains nothing from a busy sibling (its
    model of a random scheduler; emulated siblings share no execution
    units, so nothing else is measurable here), so throughput is the mean
    number of cores running a spinner, summed over the counts, as a
    fraction of the ideal sum of min(N, cores); its run carries the curve
    (N, cores' worth) and every count's samples. smt_spread.sh's TAP
    failures are misplacements, the measurement itself, not problems."""
    values, curve, counts = {}, [], {}
    busy_total = ideal_total = 0.0
    for line in lines:
        m = SMT_LINE.match(line)
        if not m or int(m[3]) == 0:
            continue
        n, bad, samples = int(m[1]), int(m[2]), int(m[3])
        counts[n] = {"samples": samples, "misplaced": bad, "longest_cs": int(m[4])}
        if n >= 2:
            values[f"{n} spinners"] = round(bad / samples, 4)
        if m[5] is not None:
            mean = int(m[5]) / samples
            counts[n]["busy_cores"] = round(mean, 3)
            curve.append([n, round(mean, 3)])
            busy_total, ideal_total = busy_total + mean, ideal_total + min(n, cores)
    if not counts:
        return {}, {}, ["no samples"]
    if ideal_total:
        values[THROUGHPUT] = round(busy_total / ideal_total, 4)
    return values, {"series": curve, "counts": counts}, []


def parse_smt(output, topology):
    """Raw runs and failures of the smt-spread experiment's guest output."""
    return parse_series(output, topology, SMT_MARK, parse_smt_run,
                        lambda name: THROUGHPUT_UNIT if name == THROUGHPUT else MISPLACED,
                        THROUGHPUT)


def smt_benches(counts):
    """Misplacement per count of two or more, and the modelled throughput
    over all counts (bench_info's words name the sign of a difference:
    for throughput higher is better)."""
    info = {f"{n} spinners": bench_info(MISPLACED, "difference", "more misplaced",
                                        "less misplaced") for n in counts if n >= 2}
    info[THROUGHPUT] = bench_info(THROUGHPUT_UNIT, "difference", "higher", "lower",
                                  series=("spinners", "modelled throughput (cores' worth)"))
    return info


@experiment(
    "smt-spread",
    title="1 to 8 independent spinners on 4 cores x 2 SMT threads: placement and throughput",
    seed="seed 003 (SMT placement and throughput against the number of instances)",
    published="CFS placed up to 4 instances one per core, as manual affinity did: "
              "throughput rose linearly to 4 instances and stayed flat to 8; BFS doubled "
              "up on a core while another idled, losing throughput between 2 and 6 "
              "instances, about halfway between ideal and random placement.",
    classes=SHARE_CLASSES, variants=SHARE_CLASSES, base="cfs", timed_variants=3,
    topologies=("smt",),
    qemu_mode="tcg", quick_qemu_mode="mttcg", seconds_per_round=195,
    quick_seconds=120)
def smt_spread(ctx, topology):
    """tools/testing/sched/smt_spread.sh with 1 to 8 spinners under each
    class, switched at run time: per count the fraction of misplaced
    samples, and seed 003's modelled throughput over all counts, each
    compared with CFS as a difference."""
    quick = ctx.quick
    return series_experiment(ctx, topology, "smt-spread", "smt_spread.sh",
                             SMT_QUICK_ENV if quick else SMT_ENV, SMT_MARK, parse_smt,
                             smt_benches(SMT_QUICK_COUNTS if quick else SMT_COUNTS),
                             classes=SHARE_CLASSES)


TAP_NOT_OK = re.compile(r"^not ok \d+ - (.*)$")


def missing_runs(runs, rounds, failures, classes=CLASSES):
    """Failure records for each class and round that left neither a run
    nor a failure (no marker: the class switch failed, or the guest
    stopped before it)."""
    seen = {(r["variant"], r["round"]) for r in runs}
    seen |= {(f["variant"], f.get("round")) for f in failures}
    return [{"bench": "all", "variant": c, "round": r, "why": "no run"}
            for r in range(1, rounds + 1) for c in classes if (c, r) not in seen]


def series_experiment(ctx, topology, name, script, env, mark, parse, benches,
                      programs=("uleload",), args=(), classes=CLASSES):
    """Run tools/testing/sched/SCRIPT (with ENV assignments, the paths of
    the guest `programs` and then `args` as arguments) under each class
    per round in one boot, parse its runs and note each class and round
    that left none: the common body of the adapters of the per-class
    scripts."""
    classes = ctx.classes or classes
    words = " ".join([str(ctx.program(p)) for p in programs] + [str(a) for a in args])
    cmd = rotated_command(ctx.rounds, mark, f"{env}sh {paths.GUEST_TESTS}/{script} {words}",
                          classes)
    boot = ctx.runner.run(cmd, topology, f"{name}-{topology}",
                          ctx.track(rf"^{mark} (\d+) "), ctx.timeout())
    runs, failures = parse(boot.output, topology)
    if not runs:
        raise ReproduceError(f"{script} gave no result (exit {boot.status}); "
                             f"output in {boot.files}")
    failures += missing_runs(runs, ctx.rounds, failures, classes)
    return Outcome(runs=runs, benches=benches,
                   commands={b: f"{env}{script} under each class ({b})" for b in benches},
                   failures=failures, release=boot.release)


STARVATION_MARK = "reproduce-starvation"
STARVATION_HOG = re.compile(r"^# hog (\d+) (\d+)$")
STARVATION_POOL = re.compile(r"^# pool (launch|start|end|gone) (\d+)$")
SHARE_UNIT = "% of CPU 1"
STARVATION_BENCHES = {
    "hog alone": bench_info(SHARE_UNIT, "difference", "higher share", "lower share"),
    "hog beside the pool": bench_info(SHARE_UNIT, "difference", "higher share", "lower share",
                                      series=("s since the pool's threads started",
                                              "hog's share of CPU 1 (%)")),
    "hog after the pool": bench_info(SHARE_UNIT, "difference", "higher share", "lower share"),
}
# --quick: a 4 s pool between 2 s alone and 2 s after (10 s, 4 s and 3 s).
STARVATION_QUICK_ENV = "POOL_S=4 ALONE_S=2 AFTER_S=2 "


def share_between(samples, low, high):
    """The hog's share of its CPU in percent from the first to the last
    of its (centiseconds, run ns) samples within [low, high]; None with
    fewer than two there."""
    inside = [(t, ns) for t, ns in samples if low <= t <= high]
    if len(inside) < 2 or inside[-1][0] <= inside[0][0]:
        return None
    (t0, n0), (t1, n1) = inside[0], inside[-1]
    return round((n1 - n0) / ((t1 - t0) * 1e5), 3)


def share_series(samples, origin):
    """[[seconds since `origin`, share in percent]] over each interval
    between two samples, dated at its end: the Figure's curve."""
    return [[round((t1 - origin) / 100, 2), round((n1 - n0) / ((t1 - t0) * 1e5), 2)]
            for (t0, n0), (t1, n1) in zip(samples, samples[1:]) if t1 > t0]


def parse_starvation_run(lines):
    """One run of starvation_series.sh: ({bench: share or None}, extra
    fields of the "beside" run, failed TAP checks). Windows: alone from
    0.5 s after the start to the pool's launch; beside from 1 s after the
    latest its threads can have started to 0.25 s before the earliest
    they can have ended (the script prints those bounds); after from 0.5 s
    after the pool is gone to the end."""
    samples, pool, problems = [], {}, []
    for line in lines:
        if m := STARVATION_HOG.match(line):
            samples.append((int(m[1]), int(m[2])))
        elif m := STARVATION_POOL.match(line):
            pool[m[1]] = int(m[2])
        elif m := TAP_NOT_OK.match(line):
            problems.append(m[1])
    if not samples:
        return {}, {}, problems + ["no samples"]
    values = {
        "hog alone": share_between(samples, samples[0][0] + 50, pool["launch"])
        if "launch" in pool else None,
        "hog beside the pool": share_between(
            samples, pool["start"] + 100, min(pool["end"], pool.get("gone", pool["end"])) - 25)
        if "start" in pool and "end" in pool else None,
        "hog after the pool": share_between(samples, pool["gone"] + 50, samples[-1][0])
        if "gone" in pool else None,
    }
    origin = pool.get("start", samples[0][0])
    marks = {label: round((pool[key] - origin) / 100, 2)
             for key, label in (("launch", "pool launched"), ("start", "threads start"),
                                ("end", "threads end")) if key in pool}
    return values, {"series": share_series(samples, origin), "marks": marks}, problems


def parse_series(output, topology, mark, parse_run, unit_of, series_bench):
    """Raw runs and failures of rotated_command()'s output: each run's
    values from parse_run(lines) as (values, extra, problems); a run with
    problems is one failure, a value of None one failure of its bench, and
    the time series (extra) goes with series_bench's run for the figure."""
    runs, failures = [], []
    for (rnd, cls), lines in marked_runs(output, mark).items():
        values, extra, problems = parse_run(lines)
        if problems:
            failures.append({"bench": "all", "variant": cls, "round": rnd,
                             "why": "; ".join(problems)})
            continue
        for name, value in values.items():
            if value is None:
                why = (extra.get("why") or {}).get(name, "fewer than two samples in its window")
                failures.append({"bench": name, "variant": cls, "round": rnd, "why": why})
                continue
            run = {"bench": name, "variant": cls, "round": rnd, "value": value,
                   "unit": unit_of(name), "topology": topology}
            if name == series_bench:
                run.update(extra)
            runs.append(run)
    return runs, failures


def parse_starvation(output, topology):
    """Raw runs and failures of the starvation experiment's guest output."""
    return parse_series(output, topology, STARVATION_MARK, parse_starvation_run,
                        lambda name: SHARE_UNIT, "hog beside the pool")


@experiment(
    "starvation",
    title="a CPU hog beside 80 mostly sleeping threads on one CPU",
    seed="seed 000 §5.1 (Figure 1, Table 2)",
    published="On CFS fibo kept accumulating run time while sysbench's 80 mostly sleeping "
              "threads shared its core, at a bit less than half the core; on ULE those "
              "threads stayed interactive and fibo got no CPU at all while they ran (the "
              "starvation is not bounded), then ran alone again.",
    classes=CLASSES, variants=CLASSES, base="cfs", timed_variants=3,
    default_topology="1x2",
    # icount scatters least (reproduction.rst, "Spread per QEMU mode"); under
    # icount the debug kernel's 80-thread pool overruns its phase.
    qemu_mode="icount", quick_qemu_mode="mttcg", seconds_per_round=70, quick_seconds=45)
def starvation(ctx, topology):
    """tools/testing/sched/starvation_series.sh under each class in one
    boot: the hog's share of CPU 1 alone, beside the pool and after it,
    compared with CFS as a difference (ULE's share can be 0), with the
    share over time kept in the "beside" runs for the figure."""
    return series_experiment(ctx, topology, "starvation", "starvation_series.sh",
                             STARVATION_QUICK_ENV if ctx.quick else "", STARVATION_MARK,
                             parse_starvation, STARVATION_BENCHES)


UNPIN_MARK = "reproduce-unpin"
UNPIN_HEAD = re.compile(r"^# unpin cpus (\d+) window_cs (\d+) step \S+ always_steal (\S+)$")
UNPIN_SAMPLE = re.compile(r"^# spread (\d+)((?: \S+)*)$")
UNPIN_PINNED = re.compile(r"^# pinned((?: \S+)*)$")
UNPIN_STEP = 0.25
UNPIN_BENCHES = {
    "time to one per CPU": bench_info("s", series=("s since the unpinning",
                                                   "CPUs running a spinner")),
    "CPUs without a spinner": bench_info("CPUs, mean over the window", "difference",
                                         "more idle", "fewer idle"),
}


def unpin_window(cpus, quick):
    """Seconds to sample after the unpinning: long enough for ULE's
    periodic balancer alone (no idle CPU woken to steal), which moves one
    spinner off CPU 0 per pass every 0.5 to 1.5 s, to fill every CPU at
    its slowest: 1.5 s per CPU to fill, at least 15 s; 5 s with --quick,
    which checks only that the experiment completes."""
    return 5 if quick else max(15, math.ceil(1.5 * (cpus - 1)))


def parse_unpin_run(lines):
    """One run of unpin_series.sh: ({bench: value}, extra fields of the
    time run, failed TAP checks). The time is that of the first sample
    with one spinner on every CPU; without one, the window's length,
    flagged "censored". Settled at the first sample, the time is only
    how long that sample took to come ("settled_at_first_sample"). The
    series starts with the pinned state at 0."""
    head, pinned, samples, problems = None, [], [], []
    for line in lines:
        if m := UNPIN_HEAD.match(line):
            head = (int(m[1]), int(m[2]), m[3])
        elif m := UNPIN_PINNED.match(line):
            pinned = [[0.0, len(set(m[1].split()) - {"-"})]]
        elif m := UNPIN_SAMPLE.match(line):
            samples.append((int(m[1]), m[2].split()))
        elif m := TAP_NOT_OK.match(line):
            problems.append(m[1])
    if not head or not samples:
        return {}, {}, problems + ["no samples"]
    n, window_cs, always_steal = head
    occupied = [len(set(cpus) - {"-"}) for _, cpus in samples]
    settled = next((t for (t, cpus), k in zip(samples, occupied)
                    if k == n and len(cpus) == n), None)
    values = {"time to one per CPU": (settled if settled is not None else window_cs) / 100,
              "CPUs without a spinner": round(statistics.mean(n - k for k in occupied), 3)}
    extra = {"censored": settled is None, "cpus": n, "always_steal": always_steal,
             "first_sample": samples[0][0] / 100,
             "settled_at_first_sample": settled == samples[0][0],
             "series": pinned + [[t / 100, k] for (t, _), k in zip(samples, occupied)],
             "threads_per_cpu": [[cpus.count(str(c)) for c in range(n)] for _, cpus in samples],
             "marks": {"unpinned": 0}}
    return values, extra, problems


def parse_unpin(output, topology):
    """Raw runs and failures of the unpin-spread experiment's guest output."""
    return parse_series(output, topology, UNPIN_MARK, parse_unpin_run,
                        lambda name: UNPIN_BENCHES[name]["unit"], "time to one per CPU")


@experiment(
    "unpin-spread",
    title="one spinner per CPU pinned to CPU 0, then unpinned",
    seed="seed 000 §6.1 (Figure 6)",
    published="After 512 spinners pinned to core 0 of 32 were unpinned, ULE's idle cores "
              "each stole one at once and its periodic balancer then moved one thread per "
              "invocation, about 240 s to balance; CFS moved more than 380 threads within "
              "0.2 s but never balanced perfectly (nodes differing by 25 % in load kept "
              "18 vs 15 threads per core).",
    classes=CLASSES, variants=CLASSES, base="cfs", timed_variants=3,
    default_topology="2x4",
    quick_topologies=("2x2",), qemu_mode="tcg", quick_qemu_mode="mttcg",
    seconds_per_round=70, quick_seconds=45, estimates=(("4x8", 200),))
def unpin_spread(ctx, topology):
    """tools/testing/sched/unpin_series.sh under each class in one boot:
    the time from the unpinning until every CPU runs exactly one spinner
    (a ratio to CFS) and the mean number of CPUs without one over the
    window (a difference), the CPUs in use over time kept for the figure."""
    cpus = os.cpu_count() if topology == "host" else vm.topology(topology).cpus
    env = f"WINDOW_S={unpin_window(cpus, ctx.quick)} STEP={UNPIN_STEP} "
    return series_experiment(ctx, topology, "unpin-spread", "unpin_series.sh", env,
                             UNPIN_MARK, parse_unpin, UNPIN_BENCHES)


ITRACE_MARK = "reproduce-itrace"
ITRACE_HEAD = re.compile(r"^# itrace class \S+ cpu \d+ threads (\d+) .* seconds (\d+) step \S+$")
ITRACE_SAMPLE = re.compile(r"^# threads (\d+)((?: \d+:\d+:\S+)*)$")
# A thread starves when it gets less than this fraction of an equal share
# of its CPU over the measured window.
ITRACE_STARVED_SHARE = 0.1
# The window starts this far into the run (threads created, the first
# scores settled) and ends at the last sample that saw every thread.
ITRACE_SETTLE = 0.4
ITRACE_BENCHES = {
    "starved threads": bench_info("threads", "difference", "more starved", "fewer starved",
                                  series=("s since sysbench started",
                                          "threads that ran in the last step")),
    "fairness": bench_info("Jain's index (1: equal)", "difference", "fairer", "less fair"),
}
# --quick: 16 threads for 3 s.
ITRACE_QUICK_ENV = "THREADS=16 RUN_S=3 "


def jain(values):
    """Jain's fairness index of non-negative values: 1 when all are equal,
    1/n when one value has everything."""
    total, squares = sum(values), sum(v * v for v in values)
    return round(total * total / (len(values) * squares), 4) if squares else None


def parse_itrace_run(lines):
    """One run of interactivity_series.sh: ({bench: value}, extra fields
    of the "starved threads" run, failed TAP checks). The first thread is
    sysbench's main thread, the others its workers; the window runs from
    ITRACE_SETTLE of the time between the first and last samples that saw
    every worker to the last of them. Extra: the threads that ran in each
    step over time, and per worker its run time (ms) and ULE score (None
    off ULE) at every sample, for the figures."""
    samples, problems, head = [], [], None
    for line in lines:
        if m := ITRACE_HEAD.match(line):
            head = int(m[1])
        elif m := ITRACE_SAMPLE.match(line):
            threads = [f.split(":") for f in m[2].split()]
            samples.append((int(m[1]), [(int(t), int(r), None if s == "-" else int(s))
                                        for t, r, s in threads[1:]]))
        elif m := TAP_NOT_OK.match(line):
            problems.append(m[1])
    full = [(t, th) for t, th in samples if head and len(th) == head]
    if not full or len(full) < 3:
        return {}, {}, problems + [f"fewer than 3 samples saw all {head} threads"]
    t0, t1 = full[0][0], full[-1][0]
    start = next(s for s in full if s[0] >= t0 + ITRACE_SETTLE * (t1 - t0))
    grown = [b[1] - a[1] for a, b in zip(start[1], full[-1][1])]
    share = sum(grown) / len(grown)
    values = {"starved threads": sum(1 for g in grown if g < ITRACE_STARVED_SHARE * share),
              "fairness": jain(grown)}
    ran = [[round((b[0] - t0) / 100, 2), sum(1 for x, y in zip(a[1], b[1]) if y[1] > x[1])]
           for a, b in zip(full, full[1:])]
    extra = {"series": ran, "marks": {"window": round((start[0] - t0) / 100, 2)},
             "per_thread": {"x": [round((t - t0) / 100, 2) for t, _ in full],
                         "run_ms": [[round(r / 1000, 1) for _, r, _ in th] for _, th in full],
                         "score": [[s for _, _, s in th] for _, th in full]}}
    return values, extra, problems


def parse_itrace(output, topology):
    """Raw runs and failures of the interactivity-trace experiment's guest
    output; per-thread samples are kept for the first round only."""
    runs, failures = parse_series(output, topology, ITRACE_MARK, parse_itrace_run,
                                  lambda name: ITRACE_BENCHES[name]["unit"], "starved threads")
    for run in runs:
        if run["round"] != 1:
            run.pop("per_thread", None)
    return runs, failures


@experiment(
    "interactivity-trace",
    title="128 sysbench threads on one CPU: who runs, who starves",
    seed="seed 000 §5.2 (Figures 3 and 4)",
    published="On ULE sysbench's threads inherited the interactivity penalty of the main "
              "thread when created: 80 of 128 were interactive, ran, and saw their penalty "
              "fall to 0; the other 48 stayed above the threshold and never ran. CFS ran "
              "every thread.",
    classes=CLASSES, variants=CLASSES, base="cfs", timed_variants=3,
    default_topology="1x2",
    qemu_mode="icount", quick_qemu_mode="mttcg", seconds_per_round=61, quick_seconds=25)
def interactivity_trace(ctx, topology):
    """tools/testing/sched/interactivity_series.sh under each class in one
    boot: sysbench (sysbench_sleepers.lua: 1 ms of CPU, 4 ms asleep per
    event) with 128 threads on CPU 1 for 15 s; the threads that starve
    over the run's last 60 % and Jain's index of their run times, compared
    with CFS as differences; the first round's per-thread run time and
    score for the figures."""
    env = ITRACE_QUICK_ENV if ctx.quick else "RUN_S=15 "
    return series_experiment(ctx, topology, "interactivity-trace", "interactivity_series.sh",
                             env, ITRACE_MARK, parse_itrace, ITRACE_BENCHES)


LATENCY_MARK = "reproduce-latency"
LATENCY_HIST = re.compile(r"^# hist (\S+)((?: \d+:\d+)*)$")
LATENCY_WAKELAT = re.compile(r"^wakelat .* samples (\d+) p50_us (\d+) p90_us \d+ "
                             r"p99_us (\d+) p999_us (\d+) max_us (\d+)")
LATENCY_PROBES = ("cyclictest", "rt-app", "wakelat")
PERCENTILES = (("p50", 50.0), ("p99", 99.0), ("p99.9", 99.9))
LATENCY_BENCHES = {f"{probe} {name}": bench_info("us", worse="higher", better="lower")
                   for probe in LATENCY_PROBES for name, _ in PERCENTILES}
# --quick: 1 s per probe.
LATENCY_QUICK_ENV = "RUN_S=1 "


def percentile(hist, pct):
    """Nearest-rank percentile of a histogram {value: count}: the smallest
    value with at least pct % of the samples at or below it."""
    total = sum(hist.values())
    rank, seen = max(1, math.ceil(round(pct * total / 100, 6))), 0   # 99.9 % of 1000: 999
    for value in sorted(hist):
        seen += hist[value]
        if seen >= rank:
            return value
    raise ValueError("empty histogram")


def parse_latency_run(lines):
    """One run of latency_series.sh: ({"PROBE pXX": us}, extra fields,
    failed TAP checks). cyclictest and rt-app print histograms whose
    percentiles are taken here; wakelat prints its own."""
    values, extra, problems = {}, {"samples": {}}, []
    for line in lines:
        if m := LATENCY_HIST.match(line):
            hist = {int(v): int(c) for v, c in (f.split(":") for f in m[2].split())}
            if hist:
                extra["samples"][m[1]] = sum(hist.values())
                for name, pct in PERCENTILES:
                    values[f"{m[1]} {name}"] = percentile(hist, pct)
        elif m := LATENCY_WAKELAT.match(line):
            extra["samples"]["wakelat"] = int(m[1])
            values.update({"wakelat p50": int(m[2]), "wakelat p99": int(m[3]),
                           "wakelat p99.9": int(m[4])})
        elif m := TAP_NOT_OK.match(line):
            problems.append(m[1])
    if not values:
        problems.append("no latencies")
    return values, extra, problems


def parse_latency(output, topology):
    """Raw runs and failures of the wakeup-latency experiment's output."""
    return parse_series(output, topology, LATENCY_MARK, parse_latency_run,
                        lambda name: "us", "")


@experiment(
    "wakeup-latency",
    title="wakeup latency percentiles beside CPU-bound load",
    seed="issue 17 item 8 (cyclictest, rt-app, a schbench-like benchmark); the latency "
         "claims of seed 002 §5.1, seed 004 §4.1 and seed 000 §5",
    published="No seed gives percentiles. Seed 002 measured BMQ's messaging latency below "
              "CFS's; seed 004 measured hackbench latency about 4 times lower on CFS than on "
              "MuQSS; seed 000 shows ULE running the tasks it deems interactive first.",
    classes=CLASSES, variants=CLASSES, base="cfs", timed_variants=3,
    default_topology="1x2",
    seconds_per_round=120, quick_seconds=35)
def wakeup_latency(ctx, topology):
    """tools/testing/sched/latency_series.sh under each class in one boot:
    beside one spinner per CPU, cyclictest, rt-app and wakelat for 10 s
    each; p50, p99 and p99.9 of each, as ratios to CFS. 2 vCPUs by
    default: more vCPUs than host cores add host stalls of tens of ms."""
    return series_experiment(ctx, topology, "wakeup-latency", "latency_series.sh",
                             LATENCY_QUICK_ENV if ctx.quick else "", LATENCY_MARK,
                             parse_latency, LATENCY_BENCHES, ("uleload", "wakelat"))


APPS_MARK = "reproduce-apps"
APPS_LINE = re.compile(r"^# (app|pair (\S+)) (\S+) (\d+(?:\.\d+)?)$")
APPS_FAILED = re.compile(r"^# failed (app|pair (\S+)) (\S+) ?(.*)$")
APPS_ALONE = ("make-j1", "make-jN", "povray", "x264", "xz", "zstd", "7z")
APPS_PAIRS = ("make-jN+x264", "povray+xz")
# --quick: make -jN of one of Lua's objects, and one pair.
APPS_QUICK_ENV = "ALONE='make-jN' PAIRS='xz+zstd' MAKE_OBJS='lzio.o' "
# Debian's Lua 5.4 source (the real C tree that make builds), pinned.
LUA_URL = "http://deb.debian.org/debian/pool/main/l/lua5.4/lua5.4_5.4.4.orig.tar.gz"
LUA_SHA256 = "164c7849653b80ae67bec4b7473b884bf5cc8d2dca05653475ec2ed27b9ebf61"
# The raw video x264 encodes: 24 frames of 320x240, 4:2:0.
VIDEO_SIZE, VIDEO_FRAMES = (320, 240), 24
# The text corpus the compressors take: 8 MiB of words.
CORPUS_BYTES = 8 << 20


def app_bench(name, pair=None):
    """The benchmark name of an application alone or in a pair."""
    if not pair:
        return f"{name} alone"
    other = [a for a in pair.split("+") if a != name]
    return f"{name} beside {other[0] if other else name}"


def app_benches(alone, pairs):
    """bench_info() of every application alone and of each in its pair."""
    names = [app_bench(a) for a in alone]
    names += [app_bench(a, p) for p in pairs for a in p.split("+")]
    return {n: bench_info("s") for n in names}


def write_video(path, size=VIDEO_SIZE, frames=VIDEO_FRAMES):
    """A deterministic YUV4MPEG2 clip: gradients that move from frame to
    frame plus fixed noise, so the encoder has motion and texture."""
    w, h = size
    rnd = random.Random(17)
    noise = bytes(rnd.randrange(24) for _ in range(w * h))
    with open(path, "wb") as f:
        f.write(f"YUV4MPEG2 W{w} H{h} F24:1 Ip A1:1 C420jpeg\n".encode())
        for k in range(frames):
            luma = bytearray(w * h)
            for j in range(h):
                base, off = (2 * j + 5 * k) & 255, (3 * k) % w
                for x in range(w):
                    luma[j * w + x] = (((x + off) >> 1) + base + noise[j * w + x]) & 255
            f.write(b"FRAME\n" + bytes(luma) + bytes([(128 + k) & 255]) * (w * h // 4) +
                    bytes([(128 - k) & 255]) * (w * h // 4))


def write_corpus(path, size=CORPUS_BYTES):
    """Deterministic text: lines of words drawn with a skewed frequency
    from a fixed vocabulary, compressible as prose is."""
    rnd = random.Random(5)
    words = ["".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rnd.randrange(2, 10)))
             for _ in range(5000)]
    out, total = [], 0
    while total < size:
        line = " ".join(words[int(rnd.paretovariate(1.2)) % len(words)] for _ in range(12)) + "\n"
        out.append(line)
        total += len(line)
    Path(path).write_text("".join(out))


def apps_inputs(folder=None, url=LUA_URL, sha256=LUA_SHA256):
    """The applications' inputs in `folder` (build/apps), made once: the
    Lua tree (downloaded from Debian and checked against its hash), the
    video and the corpus. ReproduceError when the download fails."""
    folder = Path(folder or paths.BUILD / "apps")
    folder.mkdir(parents=True, exist_ok=True)
    if not (folder / "lua" / "src" / "Makefile").exists():
        import tarfile
        import urllib.request
        tarball = folder / Path(url).name
        try:
            if not tarball.exists():
                with urllib.request.urlopen(url, timeout=60) as r:
                    tarball.write_bytes(r.read())
        except OSError as e:
            raise ReproduceError(f"cannot download {url}: {e}") from None
        if hashlib.sha256(tarball.read_bytes()).hexdigest() != sha256:
            tarball.unlink()
            raise ReproduceError(f"{url} does not have the expected sha256 {sha256}")
        with tarfile.open(tarball) as tar:
            top = tar.getnames()[0].split("/")[0]
            tar.extractall(folder, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
        (folder / top).rename(folder / "lua")
    if not (folder / "video.y4m").exists():
        write_video(folder / "video.y4m.part")
        (folder / "video.y4m.part").rename(folder / "video.y4m")
    if not (folder / "corpus.txt").exists():
        write_corpus(folder / "corpus.txt.part")
        (folder / "corpus.txt.part").rename(folder / "corpus.txt")
    return folder


def parse_apps_run(lines):
    """One run of apps_series.sh: ({bench: seconds, or None for an
    application that failed}, {"why": {bench: its last line}}, problems
    of the run). The script's TAP checks only repeat the failures."""
    values, why, problems = {}, {}, []
    for line in lines:
        if m := APPS_LINE.match(line):
            values[app_bench(m[3], m[2])] = float(m[4])
        elif m := APPS_FAILED.match(line):
            bench_name = app_bench(m[3], m[2])
            values[bench_name], why[bench_name] = None, f"failed: {m[4]}"
    if not values:
        problems.append("no application ran")
    return values, {"why": why}, problems


def parse_apps(output, topology):
    """Raw runs and failures of the applications experiment's output."""
    return parse_series(output, topology, APPS_MARK, parse_apps_run, lambda name: "s", "")


@experiment(
    "applications",
    title="packaged applications alone and in pairs, and make -j1/-jN turnaround",
    seed="seed 000 §6.3-§6.4 (Figures 8-9: applications, multi-application mixes) and "
         "seed 004 §4.2 (turnaround: make -j1 and -jN)",
    published="On 32 cores ULE and CFS differed by 2.75 % on average over the "
              "applications, in ULE's favour, a few by much more (MG 73 % faster on ULE, "
              "sysbench slower); paired with another application, two background ones "
              "(c-ray and EP) ran alike on both, while ULE let an interactive one run "
              "first (blackscholes more than 80 % slower beside ferret) where CFS shared "
              "fairly. The MuQSS thesis found make -j1 a little faster on MuQSS than on "
              "CFS and make -j4 the same.",
    classes=CLASSES, variants=CLASSES, base="cfs", timed_variants=3,
    default_topology="1x2",
    seconds_per_round=260, quick_seconds=40)
def applications(ctx, topology):
    """tools/testing/sched/apps_series.sh under each class in one boot:
    make -j1 and -jN of eight Lua objects, POV-Ray, x264, xz, zstd and
    7-Zip, each alone, then make -jN beside x264 and POV-Ray beside xz;
    every time as a ratio to CFS. The inputs are made on the host first."""
    alone, pairs = (("make-jN",), ("xz+zstd",)) if ctx.quick else (APPS_ALONE, APPS_PAIRS)
    return series_experiment(ctx, topology, "applications", "apps_series.sh",
                             APPS_QUICK_ENV if ctx.quick else "", APPS_MARK, parse_apps,
                             app_benches(alone, pairs), programs=(), args=(apps_inputs(),))


BARRIER_MARK = "reproduce-barrier"
BARRIER_LINE = re.compile(r"^stencil threads (\d+) iterations (\d+) cells (\d+) "
                          r"elapsed_ms (\S+) wait_pct (\S+) checksum (\S+)$")
BARRIER_BENCHES = {
    "completion time": bench_info("s"),
    "barrier wait": bench_info("% of the run, mean over threads", "difference",
                               "more waiting", "less waiting"),
}
# --quick: 40 sweeps of 4096 cells.
BARRIER_QUICK_ENV = "ITERATIONS=40 CELLS=4096 "


def parse_barrier_run(lines):
    """One run of barrier_series.sh: ({bench: value}, extra fields,
    failed TAP checks); the checksum is kept, every run must print the
    same one for the same sizes."""
    values, extra, problems = {}, {}, []
    for line in lines:
        if m := BARRIER_LINE.match(line):
            values = {"completion time": float(m[4]) / 1000, "barrier wait": float(m[5])}
            extra = {"threads": int(m[1]), "iterations": int(m[2]), "cells": int(m[3]),
                     "checksum": m[6]}
        elif m := TAP_NOT_OK.match(line):
            problems.append(m[1])
    if not values and not problems:
        problems.append("no stencil result")
    return values, extra, problems


def parse_barrier(output, topology):
    """Raw runs and failures of the barrier-hpc experiment's output; runs
    whose checksum differs from the most common one are failures (the
    stencil computed something else)."""
    runs, failures = parse_series(output, topology, BARRIER_MARK, parse_barrier_run,
                                  lambda name: BARRIER_BENCHES[name]["unit"], "completion time")
    sums = [r["checksum"] for r in runs if "checksum" in r]
    if sums:
        common = max(set(sums), key=sums.count)
        bad = {(r["variant"], r["round"]) for r in runs if r.get("checksum", common) != common}
        failures += [{"bench": "all", "variant": v, "round": n, "why": "wrong checksum"}
                     for v, n in sorted(bad)]
        runs = [r for r in runs if (r["variant"], r["round"]) not in bad]
    return runs, failures


@experiment(
    "barrier-hpc",
    title="a barrier-synchronised stencil, one thread per CPU",
    seed="seed 000 §6.3 (Figure 8, NAS MG and the other barrier-bound HPC codes)",
    published="On 32 cores NAS MG, one thread per core meeting at barriers, was 73 % "
              "faster on ULE than on CFS: ULE placed one thread per core and never moved "
              "them, while CFS now and then put two on one core and every barrier waited "
              "for them (threads alone on their cores slept after 100 ms of spinning and "
              "had to be woken); FT and UA gained for the same reason.",
    classes=CLASSES, variants=CLASSES, base="cfs", timed_variants=3,
    default_topology="2x4",
    quick_topologies=("1x2",), seconds_per_round=45, quick_seconds=20)
def barrier_hpc(ctx, topology):
    """tools/testing/sched/barrier_series.sh under each class in one boot:
    stencil.c with one thread per CPU, 400 sweeps of 16384 cells per
    thread; the completion time as a ratio to CFS and the mean share of
    the run each thread waited at barriers as a difference. MTTCG, whose
    completion-time ratios scatter least (reproduction.rst)."""
    return series_experiment(ctx, topology, "barrier-hpc", "barrier_series.sh",
                             BARRIER_QUICK_ENV if ctx.quick else "", BARRIER_MARK,
                             parse_barrier, BARRIER_BENCHES, programs=("stencil",))


# -- command line ------------------------------------------------------------

def parser():
    ap = command.Parser(prog="reproduce", description="Run the seeds' experiments and write "
                 "results/<date>-<rev>/: one JSON per experiment with every raw run and "
                 "its metadata, report.md and a PNG per experiment. "
                 "'reproduce compare A B' puts two result folders side by side; "
                 "'reproduce spread FOLDER...' compares the spread of runs made in "
                 "different QEMU modes.",
                 epilog="Experiments: see --list. Default: every experiment that runs in\n"
                 "a guest. Documentation/scheduler/reproduction.rst has the details.\n\n"
                 + command.epilog(command.OK, command.FAILED, command.USAGE, command.GUEST))
    ap.add_argument("experiments", nargs="*", metavar="EXPERIMENT",
                    help="experiments to run (default: all implemented)")
    ap.add_argument("--rounds", type=command.positive_int,
                    help="rounds per experiment, every variant once per round "
                         "(default: 10; 1 with --quick)")
    ap.add_argument("--boots", type=command.positive_int, default=1,
                    help="boots per experiment (and topology) that share its rounds, so "
                         "the interval holds the variation between boots, not only between "
                         "the rounds of one boot (default: 1)")
    ap.add_argument("-t", "--topology",
                    help="VM topology for the experiments that take any (default: each "
                         "experiment's own; smt-spread and sysbench-scaling keep theirs)")
    ap.add_argument("--qemu-mode", choices=list(vm.QEMU_MODES),
                    help="mttcg, tcg or icount for every experiment (default: each "
                         "experiment's own, the one that measured the smallest spread; "
                         "see --list and vm.QEMU_MODES)")
    vm.add_accel_arg(ap)
    ap.add_argument("--config", choices=("base", "debug"),
                    help="kernel configuration (default: base; debug with --quick)")
    ap.add_argument("--quick", action="store_true",
                    help="smoke sizes and 1 round on the debug kernel: checks that each "
                         "experiment completes and writes well-formed JSON and PNG")
    ap.add_argument("--out", type=Path, help="result folder (default: "
                    "results/<YYYY-MM-DD>-<git short rev>[-dirty]/)")
    ap.add_argument("--host", action="store_true",
                    help="run on this machine, which must run the patched kernel "
                         "(classes switched through /proc/sys/kernel/sched_class)")
    ap.add_argument("--no-build", action="store_true",
                    help="boot the kernel and guest programs already built in build/")
    ap.add_argument("--reference", action="append", default=[], metavar="NAME",
                    help="also run each experiment that compares classes on reference "
                         "kernel NAME (scripts/reference-kernel --name NAME, e.g. "
                         "prjc-bmq), as one more variant compared with the class it is "
                         "the original of; may be given more than once (default: none)")
    ap.add_argument("--list", action="store_true", help="list the experiments and exit")
    return ap


def compare_parser():
    ap = command.Parser(prog="reproduce compare",
                 description="Two result folders side by side: medians and ratios, the "
                             "change B/A and its bootstrap 95 % interval.")
    ap.add_argument("a", type=Path, metavar="A", help="result folder (before)")
    ap.add_argument("b", type=Path, metavar="B", help="result folder (after)")
    return ap


def list_text():
    """--list: the experiments, what they reproduce, where and how long."""
    lines = []
    for exp in EXPERIMENTS.values():
        topos = ", ".join(exp.topologies) if exp.topologies else f"{exp.default_topology} or -t"
        minutes = sum(BOOT_SECONDS + 10 * exp.estimate(t, False)
                      for t in exp.topologies_for(None, False, False)) / 60
        where = "real hardware (--host)" if exp.host_only else f"{topos}, QEMU {exp.qemu_mode}"
        lines.append(f"{exp.name:20} {exp.title} [{exp.seed}] on {where}; "
                     f"about {minutes:.0f} min at 10 rounds (estimate)")
    return "\n".join(lines)


def check_args(a, sched_class=SCHED_CLASS):
    """The first problem with the arguments as one line, or None: checked
    before anything is built or booted."""
    for name in a.experiments:
        if name not in EXPERIMENTS:
            return f"unknown experiment {name!r}: one of {', '.join(EXPERIMENTS)}"
        exp = EXPERIMENTS[name]
        if exp.host_only and not a.host:
            return f"experiment {name!r} runs only on real hardware: add --host"
        if exp.preflight and (problem := exp.preflight(a)):
            return problem
    if a.topology:
        try:
            vm.topology(a.topology)
        except ValueError as err:
            return str(err)
    if a.out and a.out.exists() and not a.out.is_dir():
        return f"--out {a.out} exists and is not a folder"
    for name in getattr(a, "reference", []):
        if a.host:
            return "--reference boots a reference kernel: not with --host"
        if reference.info_of(name) is None or not reference.kernel_image(name).exists():
            return (f"--reference {name}: no such reference kernel: build it with "
                    f"scripts/reference-kernel --patch FILE --name {name}")
    rounds = a.rounds or (1 if a.quick else 10)
    if a.boots > rounds:
        return f"--boots {a.boots} is more than the {rounds} round(s) to share between them"
    if a.host:
        given = [o for o, v in (("-t", a.topology), ("--qemu-mode", a.qemu_mode),
                                ("--boots", a.boots > 1),
                                ("--accel", a.accel != "auto"),
                                ("--config", a.config), ("--no-build", a.no_build)) if v]
        if given:
            return f"{', '.join(given)} do(es) not apply with --host"
        return host_refusal(sched_class)
    problem = vm.accel_problem(a.accel, a.qemu_mode)
    if problem:
        return problem
    config = a.config or ("debug" if a.quick else "base")
    if a.no_build and not paths.kernel_image(config).exists():
        return f"--no-build: {paths.kernel_image(config)} does not exist"
    return None


def main_compare(argv):
    a = compare_parser().parse_args(argv)
    for folder in (a.a, a.b):
        if not folder.is_dir() or not load_folder(folder):
            print(f"reproduce compare: {folder} is not a result folder", file=sys.stderr)
            return 2
    print(compare(a.a, a.b))
    return 0


def spread_parser():
    ap = command.Parser(prog="reproduce spread",
                 description="The same experiments run in different QEMU modes (one "
                             "result folder each): how widely each comparison's rounds "
                             "scatter per folder, and the mode with the smallest spread.")
    ap.add_argument("folders", type=Path, nargs="+", metavar="FOLDER",
                    help="result folder (two or more)")
    ap.add_argument("--rounds", type=command.positive_int, default=None, metavar="N",
                    help="only each folder's first N rounds, so that folders of "
                         "different lengths compare alike (default: all)")
    return ap


def main_spread(argv):
    a = spread_parser().parse_args(argv)
    if len(a.folders) < 2:
        print("reproduce spread: give two or more result folders", file=sys.stderr)
        return 2
    for folder in a.folders:
        if not folder.is_dir() or not load_folder(folder):
            print(f"reproduce spread: {folder} is not a result folder", file=sys.stderr)
            return 2
    print(spread(a.folders, a.rounds))
    return 0


def main(argv=None):
    """scripts/reproduce; returns the exit status: command.USAGE for bad
    arguments, command.GUEST when a guest did not finish an experiment,
    command.FAILED when one gave no usable or a malformed result."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["compare"]:
        return main_compare(argv[1:])
    if argv[:1] == ["spread"]:
        return main_spread(argv[1:])
    a = parser().parse_args(argv)
    if a.list:
        print(list_text())
        return 0
    problem = check_args(a)
    if problem:
        print(f"reproduce: {problem}", file=sys.stderr)
        return 2
    names = list(dict.fromkeys(a.experiments)) or \
        [n for n, e in EXPERIMENTS.items() if not e.host_only]
    experiments = [EXPERIMENTS[n] for n in names]
    rounds = a.rounds or (1 if a.quick else 10)
    if rounds < stats.MIN_ROUNDS and not a.quick:
        print(f"reproduce: {rounds} rounds give medians but no interval (needs "
              f"{stats.MIN_ROUNDS})", file=sys.stderr)
    folder = (a.out or result_dir()).resolve()
    workdir = paths.BUILD / "reproduce" / folder.name
    if a.host:
        runner = HostRunner(workdir)
    else:
        config = a.config or ("debug" if a.quick else "base")
        if not a.no_build and build.build(config) != 0:
            print("reproduce: kernel build failed", file=sys.stderr)
            return 1
        vm.set_accel(a.accel)
        runner = GuestRunner(config, a.qemu_mode or "mttcg", workdir)
    references = {name: reference.info_of(name) for name in dict.fromkeys(a.reference)}
    progress = Progress(plan_of(experiments, rounds, a.quick, a.topology, a.host, a.boots,
                                references))
    threading.Thread(target=progress.heartbeat, daemon=True).start()
    ctx = Context(rounds, a.quick, runner, progress, build_programs=not a.no_build,
                  boots=a.boots, references=references)
    failed, status = [], command.OK
    for index, exp in enumerate(experiments):
        done = run_and_save(exp, index, ctx, a, folder, argv)
        if done is not True:
            failed.append(exp.name)
            status = max(status, command.GUEST if done == command.GUEST else command.FAILED)
    print(f"reproduce: {len(experiments) - len(failed)} of {len(experiments)} experiments "
          f"done in {duration(time.monotonic() - progress.start)}; report: "
          f"{folder / 'report.md'}; guest files: {workdir}", file=sys.stderr)
    if failed:
        print(f"reproduce: failed: {', '.join(failed)}", file=sys.stderr)
    return status


def run_and_save(exp, index, ctx, a, folder, argv):
    """Run one experiment, write its JSON, PNG and the report, and check
    them; True when done, else command.GUEST (a guest did not finish) or
    False (no usable result, a malformed one, or a failed run with
    --quick). The other experiments still run."""
    start = time.monotonic()
    if not a.host:
        # KVM replaces the emulation an experiment would choose.
        ctx.runner.mode = a.qemu_mode or ("mttcg" if a.accel == "kvm" else exp.mode_for(a.quick))
    try:
        outcome, topologies = run_experiment(exp, index, ctx, a.topology, a.host)
    except vm.GuestError as err:
        print(f"reproduce: {exp.name} failed: guest failure: {err}", file=sys.stderr)
        return command.GUEST
    except (ReproduceError, build.BuildError, OSError) as err:
        print(f"reproduce: {exp.name} failed: {err}", file=sys.stderr)
        return False
    meta = metadata(exp, release=outcome.release, config=ctx.runner.config,
                    config_sha256=ctx.runner.config_sha256(), topologies=topologies,
                    qemu_mode="kvm" if ctx.runner.accel == "kvm" else ctx.runner.mode,
                    rounds=ctx.rounds, quick=ctx.quick, boots=ctx.boots,
                    argv=["scripts/reproduce", *argv])
    meta["seconds"] = round(time.monotonic() - start)
    sysctls = reference.original_sysctls(references_for(exp, ctx.references))
    if sysctls and not a.host:
        meta["sysctls"] = {f"kernel.{k}": v for k, v in sysctls.items()}
    refs = {name: {**info, "like": reference.LIKE.get(info.get("scheduler")),
                   "kernel_release": outcome.references.get(name, {}).get("kernel_release", ""),
                   "config_sha256": config_hash(reference.ROOT / name / "obj" / ".config")}
            for name, info in references_for(exp, ctx.references).items()}
    doc = document(exp, outcome.runs, outcome.benches, outcome.commands,
                   outcome.failures, meta, refs)
    json_path, png, _ = save(doc, folder)
    problems = validate(json.loads(json_path.read_text())) + check_png(png)
    if ctx.quick and outcome.failures:
        problems.append(f"failed runs: {outcome.failures}")
    print(f"\n{exp.name} ({exp.seed}): {json_path}\n{table(doc)}")
    for problem in problems:
        print(f"reproduce: {exp.name}: {problem}", file=sys.stderr)
    return not problems


# The adapters for real hardware (--host only) register themselves.
from . import reproduce_host  # noqa: E402,F401
