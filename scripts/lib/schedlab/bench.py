"""Class-versus-class benchmark results (scripts/bench-sched,
tools/testing/sched/class_bench.sh): parsing, medians, ratios to CFS and
their bootstrap confidence intervals (stats.py's, which scripts/reproduce
shares)."""

import statistics

from .stats import CONFIDENCE, MIN_ROUNDS, bootstrap_ci, verdict


def parse(output):
    """Result lines of class_bench.sh: ({bench: {class: [seconds]}},
    {bench: command}, failures as (bench, class, round)). A run whose tool
    failed counts as a failure, not as a time, and so does a stall-watchdog
    report ("watchdog N" with N > 0: the watchdog moved everything to CFS,
    so later runs did not measure the class they name)."""
    runs, commands, failures = {}, {}, []
    for line in output.splitlines():
        f = line.split()
        if f[:1] == ["bench"] and len(f) >= 3:
            commands[f[1]] = " ".join(f[2:])
        elif f[:1] == ["watchdog"] and len(f) == 2:
            if f[1] != "0":
                failures.append(("watchdog", "reports", f[1]))
        elif f[:1] == ["result"] and len(f) == 5:
            bench, cls, rnd, secs = f[1], f[2], f[3], f[4]
            try:
                value = float(secs)
            except ValueError:
                failures.append((bench, cls, rnd))
                continue
            runs.setdefault(bench, {}).setdefault(cls, []).append(value)
    return runs, commands, failures


def parse_rounds(output):
    """{bench: {class: {round: value}}} of the runs that reported a value,
    for pairing each class's run with the base class's run of the same
    round (class_bench.sh runs every class once per round, in rotating
    order)."""
    rounds = {}
    for line in output.splitlines():
        f = line.split()
        if f[:1] == ["result"] and len(f) == 5:
            try:
                value = float(f[4])
            except ValueError:
                continue
            rounds.setdefault(f[1], {}).setdefault(f[2], {})[f[3]] = value
    return rounds


def round_order(r):
    """Sort key of a round, "1" to "10" and on in number order (as text,
    "10" came before "2"); other names after the numbers."""
    text = str(r)
    return (0, int(text), "") if text.isdigit() else (1, 0, text)


def paired_ratios(values, base_values):
    """value / base value of every round both ran ({round: value} each),
    in round order."""
    return [values[r] / base_values[r] for r in sorted(values, key=round_order)
            if r in base_values and base_values[r] > 0]


def summarise(runs, base="cfs", rounds=None):
    """Per benchmark and class: runs, median, min, max and the ratio to the
    base class: with `rounds` (parse_rounds()), the median of the per-round
    ratios with its bootstrap interval and verdict; otherwise the median
    over the base's median (None without a base run)."""
    out = {}
    for bench, per_class in runs.items():
        base_med = statistics.median(per_class[base]) if per_class.get(base) else None
        by_round = (rounds or {}).get(bench, {})
        out[bench] = {}
        for cls, values in per_class.items():
            med = statistics.median(values)
            entry = {"runs": values, "median": med, "min": min(values), "max": max(values),
                     "ratio": med / base_med if base_med else None}
            ratios = paired_ratios(by_round.get(cls, {}), by_round.get(base, {}))
            if ratios and cls != base:
                low, high = bootstrap_ci(ratios)
                entry.update(ratio=statistics.median(ratios), ratios=ratios,
                             ci=[low, high], verdict=verdict(low, high))
            out[bench][cls] = entry
    return out


def table(summary, classes, base="cfs"):
    """Text table: one row per benchmark, the median value per class
    (seconds, or % of frames missed) and the ratio of each other class to
    the base (above 1: slower, or more missed, than the base)."""
    others = [c for c in classes if c != base]
    wide = {c: max(10, len(c) + 1) for c in classes}
    wide.update({c + "/": max(10, len(c + "/" + base) + 1) for c in others})
    head = f"{'benchmark':18}" + "".join(f"{c:>{wide[c]}}" for c in classes)
    head += "".join(f"{c + '/' + base:>{wide[c + '/']}}" for c in others)
    head += "  spread (min-max per class)"
    lines = [head]
    notes = []
    for bench, per_class in summary.items():
        row = f"{bench:18}"
        for c in classes:
            row += f"{per_class[c]['median']:{wide[c]}.3f}" if c in per_class \
                else f"{'-':>{wide[c]}}"
        for c in others:
            entry = per_class.get(c, {})
            ratio = entry.get("ratio")
            row += f"{ratio:{wide[c + '/']}.3f}" if ratio else f"{'-':>{wide[c + '/']}}"
            if entry.get("ci") and entry["ci"][0] is not None:
                low, high = entry["ci"]
                notes.append(f"  {bench} {c}/{base}: {ratio:.3f}, "
                             f"{int(CONFIDENCE * 100)} % interval {low:.3f}-{high:.3f} "
                             f"({len(entry['ratios'])} paired rounds): {entry['verdict']}")
            elif entry.get("ratios"):
                notes.append(f"  {bench} {c}/{base}: {ratio:.3f} from "
                             f"{len(entry['ratios'])} paired rounds: no interval below "
                             f"{MIN_ROUNDS} rounds, nothing measured")
        row += "  " + " ".join(f"{c} {per_class[c]['min']:.2f}-{per_class[c]['max']:.2f}"
                               for c in classes if c in per_class)
        lines.append(row)
    if notes:
        lines += ["ratios per round, median and bootstrap interval:"] + notes
    return "\n".join(lines)
