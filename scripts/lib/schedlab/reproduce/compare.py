"""scripts/reproduce compare and spread: two result folders side by
side with the change between them and its interval, and how widely the
same experiments' rounds scatter in folders run in different QEMU
modes."""

import statistics
from pathlib import Path

from .. import stats
from .document import load_folder
from .report import fmt, relation
from .summary import bootstrap_change, by_round, change_of, paired, values_of, verdict


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
