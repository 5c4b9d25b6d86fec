"""What the adapters of the per-class guest scripts share: one command
that runs a script under each class per round, the order rotated, a
marker line before each run and a metrics file per run
(rotated_command()); its output split per run (marked_runs()), each run's
metrics read (run_metrics()) and both parsed (parse_series()); the
classes and rounds that left nothing (missing_runs())."""

import json
import re

from ... import paths
from ..registry import CLASSES, RQSHARE, SCHED_CLASS, Outcome, ReproduceError


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


def metrics_file(mark, rnd, cls):
    """The name of the metrics file of one run: JSON lines that the guest
    script appends through tap.sh's metric()."""
    return f"{mark}.{rnd}.{re.sub(r'[^A-Za-z0-9_.-]', '_', cls)}.jsonl"


def rotated_command(rounds, mark, command, classes=CLASSES, metrics_dir=None):
    """Shell that runs `command` under each class per round (switched
    through kernel.sched_class, order rotated each round as class_bench.sh
    does, so a drift of the shared host spreads over every class), each
    run announced by "MARK ROUND CLASS" and, with `metrics_dir`, given
    SCHED_TEST_METRICS=METRICS_DIR/metrics_file(); the boot's class and
    queue sharing are restored at the end. A class that cannot be
    switched to gets no marker and no run. On a reference kernel (no
    kernel.sched_class) there is nothing to restore, which must not fail
    the command."""
    parts = ["first=$(cat /proc/sys/kernel/sched_class 2>/dev/null)",
             f"share0=$(cat {RQSHARE} 2>/dev/null)"]
    for rnd in range(1, rounds + 1):
        k = (rnd - 1) % len(classes)
        for cls in classes[k:] + classes[:k]:
            env = (f"SCHED_TEST_METRICS={metrics_dir}/{metrics_file(mark, rnd, cls)} "
                   if metrics_dir else "")
            parts.append(f"{switch_command(cls)} && sleep 1 && "
                         f"echo {mark} {rnd} {cls} && {env}{command}")
    parts.append(f'( [ -z "$share0" ] || echo "$share0" >{RQSHARE} ); '
                 '[ -z "$first" ] || echo $first >/proc/sys/kernel/sched_class')
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


def run_metrics(files, mark, rnd, cls):
    """The JSON objects one run appended to its metrics file in the boot's
    shared folder `files`, in order; [] without the file. A line that is
    not a JSON object (a run cut short mid-write) ends the list."""
    path = files / metrics_file(mark, rnd, cls) if files else None
    if not path or not path.exists():
        return []
    records = []
    for line in path.read_text(errors="replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            break
        if not isinstance(record, dict):
            break
        records.append(record)
    return records


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
    tag = f"{name}-{topology}"
    cmd = rotated_command(ctx.rounds, mark, f"{env}sh {paths.GUEST_TESTS}/{script} {words}",
                          classes, ctx.runner.shared_dir(tag))
    boot = ctx.runner.run(cmd, topology, tag, ctx.track(rf"^{mark} (\d+) "), ctx.timeout())
    runs, failures = parse(boot.output, topology, boot.files)
    if not runs:
        raise ReproduceError(f"{script} gave no result (exit {boot.status}); "
                             f"output in {boot.files}")
    failures += missing_runs(runs, ctx.rounds, failures, classes)
    return Outcome(runs=runs, benches=benches,
                   commands={b: f"{env}{script} under each class ({b})" for b in benches},
                   failures=failures, release=boot.release)


def parse_series(output, topology, mark, parse_run, unit_of, series_bench, files=None):
    """Raw runs and failures of rotated_command()'s output: each run's
    values from parse_run(lines, metrics), its metrics read from the
    boot's shared folder `files`, as (values, extra, problems); a run with
    problems is one failure, a value of None one failure of its bench, and
    the time series (extra) goes with series_bench's run for the figure."""
    runs, failures = [], []
    for (rnd, cls), lines in marked_runs(output, mark).items():
        values, extra, problems = parse_run(lines, run_metrics(files, mark, rnd, cls))
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
