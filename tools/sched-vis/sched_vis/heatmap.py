"""The runqueue heatmap of "A Decade of Wasted Cores" (EuroSys'16, 4.2), of
one recording or of two (compare) on one colour scale and one time axis."""

from __future__ import annotations

import math
from dataclasses import dataclass

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

WIDTH = 14.0              # inches, unless --figsize
FONT_SIZE = 10.0          # points: matplotlib's default; the rest is relative to it
NR_FLOOR = 2              # the runqueue scale shows at least "one task waiting"
LOAD_FLOOR = 1024         # the load scale reaches at least one nice-0 task
LOAD_PERCENTILE = 99.0    # of the load bins: one spike must not bleach the rest
MAX_ARROWS = 1000         # more migrations than this would cover the picture
CB_WIDTH = 0.18           # inches: colour bar thickness on tall figures
# Formats matplotlib writes without extra software; the extension names it.
IMAGE_FORMATS = ("png", "pdf", "svg", "eps", "ps")
# TrueType (Type 42) fonts in PDF/PS: publishers reject Type 3 fonts.
RC = {"pdf.fonttype": 42, "ps.fonttype": 42}


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


@dataclass
class Panel:
    """One recording's part of a figure."""
    trace: object
    label: object             # panel title, None for a single chart
    rows: np.ndarray
    edges: np.ndarray
    img: np.ndarray


def panels(traces, labels=None, metric="nr_running", start=None, end=None, bins=1500,
           agg="mean", assume_idle=False):
    """Rasterise each trace over the same window with bins of one width:
    the longest recording gets `bins` columns, a shorter one fewer."""
    t0 = max(0, int(start or 0))
    ends = [t.duration_ns if end is None else min(int(end), t.duration_ns) for t in traces]
    span = max(max(e - t0 for e in ends), 1)
    out = []
    for i, (trace, e) in enumerate(zip(traces, ends)):
        nb = max(1, int(round(bins * max(e - t0, 1) / span)))
        rows, edges, img = matrix(trace, metric, t0, e, nb, agg, assume_idle)
        out.append(Panel(trace, labels[i] if labels else None, rows, edges, img))
    return out


def auto_vmax(img, metric, percentile=LOAD_PERCENTILE):
    """Top of the colour scale: the largest runqueue length (an integer), or
    the given percentile of the load bins (robust against rare spikes)."""
    finite = img[np.isfinite(img)]
    if metric == "nr_running":
        # The bar's levels are rounded values: a mean of 3.3 shows as 3.
        top = float(finite.max()) if finite.size else 0.0
        return max(int(math.floor(top + 0.5)), NR_FLOOR)
    top = float(np.percentile(finite, percentile)) if finite.size else 0.0
    return max(top, LOAD_FLOOR)


def _scale(imgs, metric, agg, vmax, percentile):
    """The colour scale shared by all panels: dict of norm, images to show,
    top, colour bar label, ticks and tick labels (None: automatic), extend."""
    from matplotlib.colors import BoundaryNorm, Normalize
    from matplotlib.ticker import MaxNLocator

    peak = max((float(np.nanmax(i)) for i in imgs if np.isfinite(i).any()), default=0.0)
    per_bin = "time-weighted mean per bin" if agg == "mean" else "maximum per bin"
    if metric == "nr_running":
        # Discrete levels: a runqueue holds whole tasks; a mean is rounded.
        top = (max(int(math.ceil(vmax - 1e-9)), 1) if vmax is not None
               else max(auto_vmax(i, metric) for i in imgs))
        clipped = peak >= top + 0.5          # some bin shows above the top level
        ticks = [int(t) for t in MaxNLocator(nbins=10, integer=True).tick_values(0, top)
                 if 0 <= t <= top]
        if clipped and ticks[-1] != top:
            ticks.append(top)
        # Short lines: a long colour bar label runs off a short figure.
        label = "runqueue length (nr_running)\n%s%s" % (
            per_bin, ", rounded" if agg == "mean" else "")
        if vmax is not None:
            label += "\ncapped at %d by --vmax" % top
        return {"norm": BoundaryNorm(np.arange(top + 2) - 0.5, top + 1), "levels": top + 1,
                "shown": [np.minimum(i, top) for i in imgs],      # NaN stays NaN
                "top": float(top), "label": label, "ticks": ticks,
                "tick_labels": ["%d+" % t if clipped and t == top else str(t)
                                for t in ticks],
                "extend": "neither"}
    if vmax is not None:
        top, why = float(vmax), "--vmax"
    else:
        top = max(auto_vmax(i, metric, percentile) for i in imgs)
        why = ("%s percentile of bins" % _ordinal(percentile) if top > LOAD_FLOOR
               else "at least %d" % LOAD_FLOOR)
    return {"norm": Normalize(0, top), "levels": None, "shown": imgs, "top": top,
            "label": "load, %s\nscale 0-%.0f: %s" % (per_bin, top, why),
            "ticks": None, "tick_labels": None,
            "extend": "max" if peak > top else "neither"}


def _ordinal(p):
    if p != int(p):
        return "%g-th" % p
    p = int(p)
    return "%d%s" % (p, "th" if 10 <= p % 100 <= 20 else
                     {1: "st", 2: "nd", 3: "rd"}.get(p % 10, "th"))


def _arrow_step(n, limit):
    """Draw every k-th of n arrows so that at most `limit` remain (0: all)."""
    return 1 if not limit or n <= limit else int(math.ceil(n / limit))


def _window(trace, edges):
    ev = trace.events
    return ev[(ev["ts"] >= int(edges[0])) & (ev["ts"] <= int(edges[-1]))]


def _rows_of(trace, rows):
    row_of = np.full(trace.nr_cpus, -1, np.int64)
    row_of[rows] = np.arange(len(rows))

    def row(cpus):
        cpus = np.asarray(cpus, dtype=np.int64)
        inside = (cpus >= 0) & (cpus < trace.nr_cpus)
        out = np.full(len(cpus), -1, np.int64)
        out[inside] = row_of[cpus[inside]]
        return out
    return row_of, row


def _migrations(trace, rows, edges):
    """MIGRATE events of the window whose CPUs are both drawn, with rows."""
    _, row = _rows_of(trace, rows)
    win = _window(trace, edges)
    mig = win[win["type"] == F.MIGRATE]
    src, dst = row(mig["b"] & 0xFFFF), row(mig["b"] >> 16)
    ok = (src >= 0) & (dst >= 0)
    return mig[ok], src[ok], dst[ok]


def _draw(ax, p, norm, cmap, consider, migrations, arrow_step, wake_busy,
          show_violations, small):
    """One panel: the image, node bands and the overlays; returns (image,
    legend handles, arrows drawn)."""
    from matplotlib.collections import PolyCollection
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    trace, rows, edges = p.trace, p.rows, p.edges
    n = max(len(rows), 1)
    scale = 1e-9
    x0, x1 = edges[0] * scale, edges[-1] * scale
    im = ax.imshow(p.img, aspect="auto", interpolation="nearest", cmap=cmap, norm=norm,
                   extent=(x0, x1, n - 0.5, -0.5))
    row_of, row = _rows_of(trace, rows)

    for i, (node, g) in enumerate(trace.nodes()):
        lo = int(row_of[g[0]])
        if i:
            ax.axhline(lo - 0.5, color="#1f4e79", lw=1.2)
        # Horizontal: a node of few CPUs has no room for it upright.
        ax.text(1.005, 1 - (lo + len(g) / 2) / n, trace.node_label(node),
                transform=ax.transAxes, va="center", ha="left", fontsize=small)
    step = 1 if n <= 32 else 2 if n <= 64 else 4 if n <= 128 else 8
    ticks = np.arange(0, len(rows), step)
    ax.set_yticks(ticks)
    ax.set_yticklabels([str(int(rows[i])) for i in ticks],
                       fontsize="small" if n <= 64 else "x-small")
    ax.set_ylim(n - 0.5, -0.5)
    if p.label is not None:
        ax.set_title(p.label)

    win = _window(trace, edges)
    handles = []
    if np.isnan(p.img).any():
        handles.append(Patch(facecolor=UNKNOWN, label="state unknown"))

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

    drawn = 0
    if migrations:
        mig, src, dst = _migrations(trace, rows, edges)
        # Thinning in time order keeps the reasons' proportions and bursts.
        mig, src, dst = mig[::arrow_step], src[::arrow_step], dst[::arrow_step]
        drawn = len(mig)
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
    return im, handles, drawn


def default_figsize(panel_rows):
    """WIDTH wide; 0.09 inch per CPU row plus room for the title, legend,
    time axis and each further panel's title."""
    n = sum(max(r, 1) for r in panel_rows)
    more = len(panel_rows) - 1
    return WIDTH, float(np.clip(2.4 + 0.6 * more + 0.09 * n, 4.0 + more, 26.0 + 4 * more))


def figure(ps, metric="nr_running", consider=None, migrations=False, wake_busy=False,
           show_violations=False, title=None, agg="mean", dpi=100, vmax=None,
           percentile=LOAD_PERCENTILE, figsize=None, max_arrows=MAX_ARROWS):
    """(fig, parts) of one or more Panels stacked on one time axis and one
    colour scale. parts: axes, images, colorbar, legend, norm, vmax, arrow
    step, migrations per panel. Call inside matplotlib.rc_context to set
    the font size."""
    # Figure + Agg canvas directly: no pyplot, so no GUI backend or global
    # state is ever touched. Constrained layout keeps the legend, colour bar
    # and labels inside the figure and apart, at any --figsize.
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.transforms import offset_copy

    fig = Figure(figsize=figsize or default_figsize([len(p.rows) for p in ps]), dpi=dpi,
                 layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(ps), 1, sharex=True, squeeze=False,
                        gridspec_kw={"height_ratios": [max(len(p.rows), 1) for p in ps]})[:, 0]

    sc = _scale([p.img for p in ps], metric, agg, vmax, percentile)
    norm = sc["norm"]
    cmap = matplotlib.colormaps["magma_r"]
    if sc["levels"]:
        cmap = cmap.resampled(sc["levels"])       # one colour per level, any count
    # unknown state: pale blue, never mistaken for "idle"
    cmap = cmap.with_extremes(bad=UNKNOWN)
    mig_counts = [len(_migrations(p.trace, p.rows, p.edges)[0]) if migrations else 0
                  for p in ps]
    step = _arrow_step(max(mig_counts), max_arrows)

    images, handles, drawn = [], {}, []
    for ax, p, img in zip(axes, ps, sc["shown"]):
        im, hs, d = _draw(ax, Panel(p.trace, p.label, p.rows, p.edges, img), norm, cmap,
                          consider, migrations, step, wake_busy, show_violations, "small")
        images.append(im)
        drawn.append(d)
        for h in hs:
            handles.setdefault(h.get_label(), h)
    scale = 1e-9
    x0 = min(p.edges[0] for p in ps) * scale
    x1 = max(p.edges[-1] for p in ps) * scale
    axes[0].set_xlim(x0, x1)
    ylabel = "CPU (grouped by NUMA node)"
    if len(ps) == 1:
        axes[0].set_ylabel(ylabel)
        axes[0].set_xlabel("time (s since trace start)")
    else:
        fig.supylabel(ylabel, fontsize="medium")   # once: a short panel has no room
        axes[-1].set_xlabel("time (s since each recording's start)")

    # The bar's aspect fixes its length: about the panels' height, CB_WIDTH thick.
    height = fig.get_size_inches()[1]
    cb = fig.colorbar(images[0], ax=list(axes), fraction=0.03, pad=0.01,
                      aspect=max(20.0, (height - 1.6) / CB_WIDTH), extend=sc["extend"])
    if sc["ticks"] is not None:
        cb.set_ticks(sc["ticks"], labels=sc["tick_labels"])
        cb.ax.minorticks_off()
    cb.set_label(sc["label"])

    what = "runqueue length (nr_running)" if metric == "nr_running" else "load"
    if title is None:
        names = [str(p.trace.path) for p in ps]
        title = "%s: %s per CPU" % (" vs ".join(names), what)
    if title:
        fig.suptitle(title)

    legend = None
    if handles:
        note = None
        if migrations and step > 1:
            note = "migration arrows: 1 in %d drawn (%s migrations)" % (
                step, " and ".join("{:,}".format(c) for c in mig_counts))
        # Above the top panel (and its title): never over the data, the
        # time axis or its label.
        top = axes[0]
        lift = 0.0
        if top.get_title():
            lift = matplotlib.rcParams["axes.titlepad"] + 1.3 * top.title.get_fontsize()
        anchor = offset_copy(top.transAxes, fig=fig, y=lift, units="points")
        renderer = fig.canvas.get_renderer()
        # As many columns (up to 4) as the figure's width holds.
        for ncol in range(min(4, len(handles)), 0, -1):
            legend = top.legend(handles=list(handles.values()), loc="lower center",
                                bbox_to_anchor=(0.5, 1.0), bbox_transform=anchor,
                                ncol=ncol, fontsize="small", title=note,
                                title_fontsize="small", frameon=False)
            if legend.get_window_extent(renderer).width <= 0.96 * fig.bbox.width:
                break
    # Nothing but the figure's edge beyond the colour bar's label; the CPU
    # label would run into the time axis below its panel.
    texts = [(cb.ax.yaxis.label, cb.ax, "y", None)]
    if len(ps) == 1:
        texts.append((axes[0].yaxis.label, axes[0], "y", axes[0]))
    else:
        texts.append((fig._supylabel, None, "y", None))
    if fig._suptitle is not None:
        texts.append((fig._suptitle, None, "x", None))
    _fit_texts(fig, texts)
    parts = {"axes": list(axes), "images": images, "colorbar": cb, "legend": legend,
             "norm": norm, "vmax": sc["top"],
             "arrow_step": step, "migrations": mig_counts, "arrows": drawn}
    return fig, parts


def _fit_texts(fig, texts, tries=3):
    """Shrink centred labels that overrun their room (a short figure or a
    large font): texts are (Text, Axes whose label it is or None, "x" or
    "y" = the direction it runs, Axes it must not outrun or None = the
    figure)."""
    renderer = fig.canvas.get_renderer()
    for _ in range(tries):
        fig.get_layout_engine().execute(fig)
        fitted = True
        for text, ax, along, within in texts:
            if not text.get_text():
                continue
            if ax is not None:
                ax.get_tightbbox(renderer)           # places the axis label
            box = text.get_window_extent(renderer)
            frame = fig.bbox if within is None else within.get_window_extent(renderer)
            lo, hi, start, end = ((box.x0, box.x1, frame.x0, frame.x1) if along == "x"
                                  else (box.y0, box.y1, frame.y0, frame.y1))
            centre = (lo + hi) / 2
            room = 2 * min(centre - start, end - centre) * 0.98
            if hi - lo > room > 0:
                text.set_fontsize(text.get_fontsize() * room / (hi - lo))
                fitted = False
        if fitted:
            return


def style(fontsize=FONT_SIZE):
    """rcParams for matplotlib.rc_context: font size and TrueType fonts."""
    return dict(RC, **{"font.size": fontsize})


def render_panels(ps, out, fontsize=FONT_SIZE, **kw):
    """Draw Panels into `out` (format from its extension); returns the
    scale and per-panel size and window."""
    import matplotlib
    with matplotlib.rc_context(style(fontsize)):
        fig, parts = figure(ps, **kw)
        # No bbox_inches="tight": the file keeps exactly --figsize.
        fig.savefig(out)
    return {"panels": [{"rows": len(p.rows), "bins": len(p.edges) - 1,
                        "start_ns": int(p.edges[0]), "end_ns": int(p.edges[-1])}
                       for p in ps],
            "vmax": parts["vmax"], "arrow_step": parts["arrow_step"]}


def render(trace, out, metric="nr_running", start=None, end=None, consider=None,
           migrations=False, wake_busy=False, show_violations=False, title=None,
           bins=1500, agg="mean", dpi=100, assume_idle=False, vmax=None,
           percentile=LOAD_PERCENTILE, figsize=None, fontsize=FONT_SIZE,
           max_arrows=MAX_ARROWS):
    """Draw one trace's heatmap into `out` (format from its extension: png,
    svg, pdf, ...). start/end in ns; consider: a kind id to overlay, or None."""
    ps = panels([trace], None, metric, start, end, bins, agg, assume_idle)
    info = render_panels(ps, out, fontsize=fontsize, metric=metric, consider=consider,
                         migrations=migrations, wake_busy=wake_busy,
                         show_violations=show_violations, title=title, agg=agg,
                         dpi=dpi, vmax=vmax, percentile=percentile, figsize=figsize,
                         max_arrows=max_arrows)
    one = info["panels"][0]
    return dict(one, vmax=info["vmax"], arrow_step=info["arrow_step"])
