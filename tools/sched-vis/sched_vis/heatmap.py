"""The runqueue heatmap of "A Decade of Wasted Cores" (EuroSys'16, 4.2)."""

from __future__ import annotations

import numpy as np

from . import format as F
from .analysis import Steps, violations

UNKNOWN = "#c9d9ea"       # pale blue: no event told this CPU's state yet
VIOLATION = "#00c853"     # green: not on the yellow-to-black colour map

REASON_COLOURS = {
    0: "#7f7f7f",   # other
    1: "#1f77b4",   # wakeup
    2: "#2ca02c",   # fork
    3: "#9467bd",   # balance
    4: "#17becf",   # idle_balance
    5: "#d62728",   # active_balance
}


def _box(x0, x1, r):
    return [(x0, r - 0.5), (x1, r - 0.5), (x1, r + 0.5), (x0, r + 0.5)]


def matrix(trace, metric="nr_running", start=0, end=None, bins=1500, agg="mean",
           assume_idle=False):
    """(rows, edges, img): the CPUs shown top to bottom (grouped by node),
    the bin edges in ns and one row of per-bin values per CPU (NaN = unknown).
    """
    t0 = max(0, int(start or 0))
    t1 = trace.duration_ns if end is None else min(int(end), trace.duration_ns)
    if t1 <= t0:
        t1 = t0 + 1   # empty trace: still draw the axes
    etype = F.NR_RUNNING if metric == "nr_running" else F.LOAD
    steps = Steps(trace, etype, assume_idle=assume_idle and etype == F.NR_RUNNING)
    groups = trace.nodes()
    rows = np.concatenate([g for _, g in groups]) if groups else np.zeros(0, int)
    nb = int(max(1, min(bins, t1 - t0)))
    edges = np.linspace(t0, t1, nb + 1)
    img = np.full((max(len(rows), 1), nb), np.nan)
    for r, c in enumerate(rows):
        img[r] = steps.raster(c, edges, agg)
    return rows, edges, img


def render(trace, out, metric="nr_running", start=None, end=None, consider=None,
           migrations=False, wake_busy=False, show_violations=False, title=None,
           bins=1500, agg="mean", dpi=100, assume_idle=False):
    """Draw the heatmap into `out` (format from its extension: png, svg,
    pdf). start/end in ns; consider: a kind id to overlay, or None."""
    # Figure + Agg canvas directly: no pyplot, so no GUI backend or global
    # state is ever touched.
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.collections import PolyCollection
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    rows, edges, img = matrix(trace, metric, start, end, bins, agg, assume_idle)
    t0, t1, nb = int(edges[0]), int(edges[-1]), len(edges) - 1
    groups = trace.nodes()
    row_of = np.full(trace.nr_cpus, -1, np.int64)
    row_of[rows] = np.arange(len(rows))

    n = max(len(rows), 1)
    height = float(np.clip(2.0 + 0.09 * n, 4.0, 26.0))
    fig = Figure(figsize=(14, height), dpi=dpi)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    scale = 1e-9
    x0, x1 = t0 * scale, t1 * scale

    # unknown state: pale blue, never mistaken for "idle"
    cmap = matplotlib.colormaps["magma_r"].with_extremes(bad=UNKNOWN)
    finite = img[np.isfinite(img)]
    vmax = float(finite.max()) if finite.size else 1.0
    if metric == "nr_running":
        vmax = max(vmax, 2.0)
    else:
        vmax = max(vmax, 1024.0)
    im = ax.imshow(img, aspect="auto", interpolation="nearest", cmap=cmap,
                   vmin=0, vmax=vmax, extent=(x0, x1, n - 0.5, -0.5))
    cb = fig.colorbar(im, ax=ax, pad=0.06, fraction=0.04)
    what = "runqueue length (nr_running)" if metric == "nr_running" else "load"
    cb.set_label("%s, %s per bin" % (what, "time-weighted mean" if agg == "mean"
                                      else "maximum"))

    # Node separators and labels.
    for i, (node, g) in enumerate(groups):
        lo = int(row_of[g[0]])
        if i:
            ax.axhline(lo - 0.5, color="#1f4e79", lw=1.2)
        ax.text(1.005, 1 - (lo + len(g) / 2) / max(n, 1), trace.node_label(node),
                transform=ax.transAxes, rotation=90, va="center", ha="left",
                fontsize=9)
    step = 1 if n <= 32 else 2 if n <= 64 else 4 if n <= 128 else 8
    ticks = np.arange(0, n, step)
    ax.set_yticks(ticks)
    ax.set_yticklabels([str(int(rows[i])) for i in ticks],
                       fontsize=8 if n <= 64 else 6)
    ax.set_ylabel("CPU (grouped by NUMA node)")
    ax.set_xlabel("time (s since trace start)")
    ax.set_xlim(x0, x1)
    ax.set_ylim(n - 0.5, -0.5)

    ev = trace.events
    win = ev[(ev["ts"] >= t0) & (ev["ts"] <= t1)]
    handles = []
    if np.isnan(img).any():
        handles.append(Patch(facecolor=UNKNOWN, label="state unknown"))

    def row(cpus):
        cpus = np.asarray(cpus, dtype=np.int64)
        inside = (cpus >= 0) & (cpus < trace.nr_cpus)
        out = np.full(len(cpus), -1, np.int64)
        out[inside] = row_of[cpus[inside]]
        return out

    if show_violations:
        # One collection per style: thousands of reports stay cheap to draw.
        watched, confirmed = [], []
        for v in violations(trace):
            r = int(row([v["idle"]])[0])
            if r < 0:
                continue
            begin = v["confirm"] if v["confirm"] is not None else 0
            end_ns = v["end"] if v["end"] is not None else trace.duration_ns
            if v["watch"] is not None:
                watched.append(_box(v["watch"] * scale, begin * scale, r))
            confirmed.append(_box(begin * scale, end_ns * scale, r))
        if watched:
            ax.add_collection(PolyCollection(watched, facecolors="none", hatch="///",
                                             edgecolors=VIOLATION, linewidths=0))
            handles.append(Patch(facecolor="none", edgecolor=VIOLATION, hatch="///",
                                 label="violation being watched (idle CPU's row)"))
        if confirmed:
            ax.add_collection(PolyCollection(confirmed, facecolors=VIOLATION, alpha=0.6,
                                             linewidths=0))
            handles.append(Patch(facecolor=VIOLATION, alpha=0.6,
                                 label="violation confirmed (idle CPU's row)"))

    if consider is not None:
        cons = win[(win["type"] == F.CONSIDER) & (win["c"] == consider)]
        owner, cpus = trace.considered(cons["cid"])
        r = row(cpus)
        ok = r >= 0
        ax.plot(cons["ts"][owner][ok] * scale, r[ok], linestyle="none", marker="o",
                ms=1.6, color="#0077bb", alpha=0.6, rasterized=True)
        res = cons["b"] != F.CPU_NONE
        rr = row(cons["b"][res])
        ok = rr >= 0
        ax.plot(cons["ts"][res][ok] * scale, rr[ok], linestyle="none", marker="x",
                ms=3, color="#33bb33", rasterized=True)
        name = trace.kind_name(consider)
        handles.append(Line2D([], [], linestyle="none", marker="o", ms=4,
                              color="#0077bb", label="%s: CPU considered" % name))
        handles.append(Line2D([], [], linestyle="none", marker="x", ms=5,
                              color="#33bb33", label="%s: CPU chosen" % name))

    if migrations:
        mig = win[win["type"] == F.MIGRATE]
        src, dst = row(mig["b"] & 0xFFFF), row(mig["b"] >> 16)
        ok = (src >= 0) & (dst >= 0)
        mig, src, dst = mig[ok], src[ok], dst[ok]
        x = mig["ts"] * scale
        for reason in np.unique(mig["c"]):
            sel = mig["c"] == reason
            colour = REASON_COLOURS.get(int(reason), "#8c564b")
            # One NaN-separated polyline per reason: far faster to build and
            # draw than a collection of 100k separate segments.
            k = int(sel.sum())
            xs = np.column_stack([x[sel], x[sel], np.full(k, np.nan)]).ravel()
            ys = np.column_stack([src[sel], dst[sel], np.full(k, np.nan)]).ravel()
            ax.plot(xs, ys, color=colour, lw=0.8, antialiased=k < 5000, rasterized=True)
            # Arrow heads as markers at dst: rows grow downwards.
            down = sel & (dst > src)
            up = sel & (dst < src)
            ax.plot(x[down], dst[down], linestyle="none", marker="v", ms=3,
                    color=colour, rasterized=True)
            ax.plot(x[up], dst[up], linestyle="none", marker="^", ms=3,
                    color=colour, rasterized=True)
            handles.append(Patch(facecolor=colour,
                                 label="migration: %s" % trace.reason_name(reason)))

    if wake_busy:
        wb = win[win["type"] == F.WAKE_BUSY]
        r = row(wb["b"] & 0xFFFF)
        ok = r >= 0
        # White with a black edge shows on both ends of the colour map.
        ax.plot(wb["ts"][ok] * scale, r[ok], linestyle="none", marker="D", ms=3,
                markerfacecolor="white", markeredgecolor="black", mew=0.6,
                rasterized=True)
        handles.append(Line2D([], [], linestyle="none", marker="D", ms=4,
                              markerfacecolor="white", markeredgecolor="black",
                              label="wakeup on a busy CPU while an allowed one was idle"))

    if title is None:
        title = "%s: %s per CPU" % (trace.path, what)
    ax.set_title(title)
    if handles:
        ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.09),
                  ncol=min(4, len(handles)), fontsize=8, frameon=False)
    fig.savefig(out, bbox_inches="tight")
    return {"rows": n, "bins": nb, "start_ns": t0, "end_ns": t1}
