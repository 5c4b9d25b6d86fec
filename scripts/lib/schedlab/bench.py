"""Class-versus-class benchmark results (scripts/bench-sched,
tools/testing/sched/class_bench.sh): parsing, medians and ratios to CFS."""

import statistics


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


def summarise(runs, base="cfs"):
    """Per benchmark and class: runs, median, min, max and the ratio of the
    median to the base class's median (None without a base run)."""
    out = {}
    for bench, per_class in runs.items():
        base_med = statistics.median(per_class[base]) if per_class.get(base) else None
        out[bench] = {}
        for cls, values in per_class.items():
            med = statistics.median(values)
            out[bench][cls] = {
                "runs": values, "median": med, "min": min(values), "max": max(values),
                "ratio": med / base_med if base_med else None}
    return out


def table(summary, classes, base="cfs"):
    """Text table: one row per benchmark, the median value per class
    (seconds, or % of frames missed) and the ratio of each other class to
    the base (above 1: slower, or more missed, than the base)."""
    others = [c for c in classes if c != base]
    head = f"{'benchmark':18}" + "".join(f"{c:>10}" for c in classes)
    head += "".join(f"{c + '/' + base:>10}" for c in others) + "  spread (min-max per class)"
    lines = [head]
    for bench, per_class in summary.items():
        row = f"{bench:18}"
        for c in classes:
            row += f"{per_class[c]['median']:10.3f}" if c in per_class else f"{'-':>10}"
        for c in others:
            ratio = per_class.get(c, {}).get("ratio")
            row += f"{ratio:10.3f}" if ratio else f"{'-':>10}"
        row += "  " + " ".join(f"{c} {per_class[c]['min']:.2f}-{per_class[c]['max']:.2f}"
                               for c in classes if c in per_class)
        lines.append(row)
    return "\n".join(lines)
