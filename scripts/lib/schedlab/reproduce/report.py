"""scripts/reproduce's report.md and plots, from the raw runs of a result
folder's documents."""

import json
import math
from pathlib import Path

from .. import stats
from .document import load_folder
from .summary import base_of, summarise, values_of


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


def table_rows(doc, summary=None):
    """(heads, rows) of one experiment's table: median per variant and each
    other variant against the base with its interval and verdict."""
    summary = summary or summarise(doc)
    variants, base = doc["variants"], doc["base"]
    others = [v for v in variants if v != base]
    heads = ["benchmark", "unit"] + variants + ["compared as"] + \
        [f"{v} vs {base_of(doc, v)}" for v in others]
    rows = []
    for name, entry in summary.items():
        cells = [name, entry["unit"]]
        cells += [fmt(entry["variants"][v]["median"]) if v in entry["variants"] else "-"
                  for v in variants]
        cells.append("ratio" if entry["compare"] == "ratio" else "difference")
        neutral = 1.0 if entry["compare"] == "ratio" else 0.0
        cells += [describe_vs(entry["vs_base"][v], neutral) if v in entry["vs_base"] else "-"
                  for v in others]
        rows.append(cells)
    return heads, rows


def table(doc, summary=None):
    """Markdown table of one experiment (table_rows())."""
    heads, rows = table_rows(doc, summary)
    lines = ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    lines += ["| " + " | ".join(cells) + " |" for cells in rows]
    return "\n".join(lines)


def section(doc):
    """What one experiment's part of a report says: its title, the
    paragraphs before its table, the notes after it and its figure."""
    meta = doc["metadata"]
    topo = meta["topology"] if isinstance(meta["topology"], str) else ", ".join(meta["topology"])
    how = "this machine (--host)" if meta["qemu_mode"] == "host" else \
        f"QEMU {meta['qemu_mode']}, topology {topo}"
    run = (f"Run: {meta['rounds']} round(s)"
           + (f" in {meta['boots']} boots" if meta.get("boots", 1) > 1 else "")
           + f"{' (--quick)' if meta.get('quick') else ''} "
           f"on {how}; kernel {meta['kernel_release'] or 'unknown'}, config "
           f"{meta['config']} (sha256 {str(meta['config_sha256'])[:12]}); "
           f"classes {', '.join(meta['classes'])}"
           + (f"; features {', '.join(meta['features'])}" if meta["features"] else "")
           + ("; our kernel set " + ", ".join(f"{k}={v}" for k, v in meta["sysctls"].items())
              + " (as the reference's original)" if meta.get("sysctls") else "")
           + ".")
    notes = []
    if doc["failures"]:
        notes.append(f"Failed runs, left out: {len(doc['failures'])} "
                     f"({'; '.join(str(f) for f in doc['failures'][:5])}).")
    for flag, meaning in RUN_FLAGS:
        flagged = flag_counts(doc, flag)
        if flagged:
            notes.append(meaning + ": " + "; ".join(f"{b}: {v} {n} of {total} rounds"
                                                    for (b, v), (n, total) in flagged.items())
                         + ".")
    return {"title": f"{doc['experiment']}: {doc['title']}",
            "paragraphs": [f"Reproduces: {doc['seed']}.",
                           f"Published shape: {doc['published']}", run],
            "notes": notes, "figure": f"{doc['experiment']}.png"}


def report_section(doc):
    """One experiment's part of report.md."""
    part = section(doc)
    lines = [f"## {part['title']}", ""]
    for text in part["paragraphs"] + [table(doc)] + part["notes"]:
        lines += [text, ""]
    lines += [f"![{doc['experiment']}]({part['figure']})", ""]
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
        tools = meta.get("tools")
        if tools:
            head += [f"Host kernel {meta.get('host_kernel')}, accelerator "
                     f"{meta.get('accelerator') or 'none (real hardware)'}; "
                     + ", ".join(f"{k} {v}" for k, v in sorted(tools.items())) + ".", ""]
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
    sample, as the seeds' per-thread figures (the ULE paper Figures 3 and 4)."""
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
