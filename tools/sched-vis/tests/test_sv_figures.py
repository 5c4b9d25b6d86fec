"""Figures for papers: legend placement, compare, colour scales, fonts,
arrow thinning, figure size (issue 18)."""

import re

import matplotlib
import numpy as np
import pytest

from sched_vis import heatmap as H
from sched_vis import testing as T
from sched_vis.binary import decode

from test_sv_outputs import rich_dump

MS = 1_000_000


def drawn(traces, labels=None, fontsize=H.FONT_SIZE, bins=300, start=None, end=None,
          **kw):
    """Lay out and draw a figure as render() would; (fig, parts, renderer)."""
    ps = H.panels(traces, labels, kw.get("metric", "nr_running"), start, end, bins,
                  kw.get("agg", "mean"))
    with matplotlib.rc_context(H.style(fontsize)):
        fig, parts = H.figure(ps, **kw)
        fig.canvas.draw()
    return fig, parts, fig.canvas.get_renderer()


def overlap(a, b):
    """Positive-area intersection (touching edges do not count)."""
    return (min(a.x1, b.x1) - max(a.x0, b.x0) > 0.5
            and min(a.y1, b.y1) - max(a.y0, b.y0) > 0.5)


def inside(box, fig):
    f = fig.bbox
    return box.x0 >= f.x0 - 0.5 and box.y0 >= f.y0 - 0.5 and \
        box.x1 <= f.x1 + 0.5 and box.y1 <= f.y1 + 0.5


def two_nodes_run():
    """4 CPUs on 2 nodes for 10 ms, CPU 0 at 2 from 2 ms, migrations."""
    secs = {c: T.nr_running(0, c, 1 if c < 2 else 0) for c in range(4)}
    secs[0] += T.nr_running(2 * MS, 0, 2) + T.migrate(3 * MS, 7, 0, 3, 3) \
        + T.load(0, 0, 1024)
    return decode(T.dump(secs, nr_cpus=4, nodes=[0, 0, 1, 1], duration_ns=10 * MS), "a.bin")


def short_busy_run():
    """4 CPUs for 5 ms, CPU 1 at 5 from 1 ms."""
    secs = {c: T.nr_running(0, c, 1) for c in range(4)}
    secs[1] += T.nr_running(1 * MS, 1, 5) + T.migrate(2 * MS, 8, 1, 2, 1)
    return decode(T.dump(secs, nr_cpus=4, nodes=[0, 0, 1, 1], duration_ns=5 * MS), "b.bin")


OVERLAYS = dict(consider=0, migrations=True, wake_busy=True, show_violations=True)

CHARTS = {
    "heatmap": lambda: ([decode(rich_dump(), "rich.bin")], None, OVERLAYS),
    "heatmap-load": lambda: ([decode(rich_dump(), "rich.bin")], None,
                             dict(OVERLAYS, metric="load")),
    "compare": lambda: ([decode(rich_dump(), "off.bin"), short_busy_run()],
                        ["GROUP_MIN_LOAD off", "GROUP_MIN_LOAD on"], OVERLAYS),
}
SIZES = [(None, 10), ((7, 3.5), 9), ((3.5, 2.8), 7), ((14, 4), 16)]


@pytest.mark.parametrize("size, fontsize", SIZES, ids=["default", "7x3.5", "column",
                                                       "big-font"])
@pytest.mark.parametrize("kind", list(CHARTS))
def test_legend_clear_of_axis_labels_and_inside_the_figure(kind, size, fontsize):
    traces, labels, kw = CHARTS[kind]()
    fig, parts, r = drawn(traces, labels, fontsize=fontsize, figsize=size, **kw)
    legend = parts["legend"]
    assert legend is not None
    lb = legend.get_window_extent(r)
    assert inside(lb, fig), (lb, fig.bbox)
    for ax in parts["axes"]:
        assert not overlap(lb, ax.bbox), "legend over the data"
        if ax.get_xlabel():
            assert not overlap(lb, ax.xaxis.label.get_window_extent(r)), "over the x label"
        axis = ax.xaxis.get_tightbbox(r)           # None: labels hidden (shared)
        assert axis is None or not overlap(lb, axis), "over the time axis"
        if ax.get_title():
            assert not overlap(lb, ax.title.get_window_extent(r)), "over a panel title"
        if ax.get_ylabel() and axis is not None:
            assert not overlap(ax.yaxis.label.get_window_extent(r), axis), \
                "CPU label over the time axis"
    if fig._suptitle is not None:
        assert not overlap(lb, fig._suptitle.get_window_extent(r))
        assert inside(fig._suptitle.get_window_extent(r), fig)
    # The colour bar and its label stay inside too.
    assert inside(parts["colorbar"].ax.get_tightbbox(r), fig)


def test_saved_image_has_exactly_the_figure_size(cli, write, tmp_path):
    p = write("rich.bin", rich_dump())
    out = tmp_path / "small.png"
    r = cli("heatmap", p, "-o", out, "--migrations", "--violations", "--figsize", "7,3",
            "--dpi", "100", "--fontsize", "8", "--title", "")
    assert r.code == 0, r.err
    data = out.read_bytes()
    assert (int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")) \
        == (700, 300)


def test_compare_shares_colour_scale_and_time_axis():
    a, b = two_nodes_run(), short_busy_run()      # peaks 2 and 5; 10 and 5 ms
    fig, parts, _ = drawn([a, b], ["off", "on"], bins=200)
    i1, i2 = parts["images"]
    assert (i1.norm.vmin, i1.norm.vmax) == (i2.norm.vmin, i2.norm.vmax)
    assert parts["vmax"] == 5                      # the larger of the two
    ax1, ax2 = parts["axes"]
    assert ax1.get_xlim() == ax2.get_xlim() == (0.0, 0.01)
    # Bins of one width: the 5 ms recording gets half the columns.
    assert i1.get_array().shape[1] == 200 and i2.get_array().shape[1] == 100
    assert [ax1.get_title(), ax2.get_title()] == ["off", "on"]

    _, parts, _ = drawn([a, b], ["off", "on"], vmax=3)
    n1, n2 = (im.norm for im in parts["images"])
    assert n1.vmax == n2.vmax and parts["vmax"] == 3


def test_compare_cli(cli, write, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    a = write("off.bin", T.dump({0: T.nr_running(0, 0, 2)}, nr_cpus=2, duration_ns=4 * MS))
    b = write("on.txt", T.report({0: T.nr_running(0, 0, 1) + T.nr_running(2 * MS, 0, 1),
                                  1: T.nr_running(0, 1, 1)}))
    r = cli("compare", a, b, "--migrations")
    assert r.code == 0, r.err
    assert (tmp_path / "off-vs-on.png").stat().st_size > 1000
    assert re.search(r"off \(2 CPUs x 1500 bins, 0\.000000-0\.004000 s\) vs on "
                     r"\(2 CPUs x 750 bins, 0\.000000-0\.002000 s\), colour scale 0-2",
                     r.out), r.out
    r = cli("compare", a, b, "--labels", "fix off,fix on", "--metric", "load",
            "-o", tmp_path / "c.pdf", "--vmax", "2048")
    assert r.code == 0, r.err
    assert "fix off (" in r.out and "colour scale 0-2048" in r.out
    png = write("named.png", a.read_bytes())         # a dump under an image's name
    r = cli("compare", png, b, "-o", png)
    assert r.code == 2 and "overwrite the input" in r.err
    assert png.read_bytes() == a.read_bytes()


def test_pdf_has_only_truetype_fonts(cli, write, tmp_path):
    p = write("rich.bin", rich_dump())
    out = tmp_path / "fig.pdf"
    r = cli("heatmap", p, "-o", out, "--migrations", "--violations",
            "--consider", "wake_idle_sibling", "--title", "Group imbalance")
    assert r.code == 0, r.err
    pdf = out.read_bytes()
    assert pdf.startswith(b"%PDF")
    subtypes = set(re.findall(rb"/Subtype\s*/(\w+)", pdf))
    # Type 42: TrueType outlines, as a simple font or a CID font over one.
    assert subtypes & {b"TrueType", b"CIDFontType2"}, subtypes
    assert b"/FontFile2" in pdf
    assert b"/Type3" not in pdf and b"/Type1" not in pdf and b"/FontFile3" not in pdf


def test_runqueue_colour_bar_has_integer_levels():
    tr = decode(rich_dump(), "rich.bin")             # mean bins are fractional
    _, parts, _ = drawn([tr], bins=7)
    assert not all(float(v).is_integer() for v in np.ravel(tr_img(tr, 7))
                   if np.isfinite(v))
    cb = parts["colorbar"]
    ticks = cb.get_ticks()
    assert len(ticks) and all(float(t).is_integer() for t in ticks)
    assert list(parts["norm"].boundaries) == [-0.5, 0.5, 1.5, 2.5, 3.5]   # 0..3
    assert [t.get_text() for t in cb.ax.get_yticklabels()] == ["0", "1", "2", "3"]
    # A --vmax below the peak: the top level says "and more".
    _, parts, _ = drawn([tr], vmax=2)
    labels = [t.get_text() for t in parts["colorbar"].ax.get_yticklabels()]
    assert labels[-1] == "2+" and len(parts["norm"].boundaries) == 4


def test_long_runqueues_beyond_the_colour_maps_entries():
    """More levels (301) than the colour map has entries (256): drawn, with
    integer ticks; the ends of the scale keep the map's ends."""
    tr = decode(T.dump({0: T.nr_running(0, 0, 300) + T.nr_running(5 * MS, 0, 299),
                        1: T.nr_running(0, 1, 0)}, nr_cpus=2, duration_ns=10 * MS), "l")
    _, parts, _ = drawn([tr], agg="max")
    assert parts["vmax"] == 300 and parts["images"][0].get_cmap().N == 301
    assert all(float(t).is_integer() for t in parts["colorbar"].get_ticks())
    im = parts["images"][0]
    magma = matplotlib.colormaps["magma_r"]
    assert np.allclose(im.cmap(im.norm(np.array([0.0, 300.0]))), magma([0.0, 1.0]))


def tr_img(tr, bins):
    return H.matrix(tr, bins=bins)[2]


def spiky_load():
    """4 CPUs at load 2048 for 100 ms; CPU 0 at 10^9 for 10 us."""
    secs = {c: T.load(0, c, 2048) + T.nr_running(0, c, 2) for c in range(4)}
    secs[0] += T.load(50 * MS, 0, 10 ** 9) + T.load(50 * MS + 10_000, 0, 2048)
    return decode(T.dump(secs, nr_cpus=4, duration_ns=100 * MS), "spike.bin")


def test_robust_load_scale_ignores_one_spike():
    tr = spiky_load()
    _, parts, _ = drawn([tr], metric="load", bins=1000)
    assert parts["vmax"] == pytest.approx(2048)
    cb = parts["colorbar"]
    assert "99th percentile" in cb.ax.get_ylabel()
    assert cb.extend == "max"                        # the spike is above the scale
    # The maximum, as before: the spike sets the scale and the rest is pale.
    _, parts, _ = drawn([tr], metric="load", bins=1000, percentile=100)
    assert parts["vmax"] > 10 ** 7
    _, parts, _ = drawn([tr], metric="load", bins=1000, vmax=5000)
    assert parts["vmax"] == 5000 and "--vmax" in parts["colorbar"].ax.get_ylabel()


def many_migrations(n=2500):
    recs = []
    for i in range(n):
        recs += T.migrate(1000 + i * 1000, 100 + i, i % 4, (i + 1) % 4, 1 + i % 5)
    secs = {0: recs}
    for c in range(4):
        secs.setdefault(c, [])
        secs[c] = T.nr_running(0, c, 1) + secs[c]
    return decode(T.dump(secs, nr_cpus=4, duration_ns=(n + 2) * 1000), "mig.bin")


def test_migration_arrows_are_thinned_and_the_legend_says_so():
    tr = many_migrations(2500)
    _, parts, _ = drawn([tr], migrations=True, max_arrows=1000)
    assert parts["arrow_step"] == 3 and parts["arrows"] == [834]
    assert parts["migrations"] == [2500]
    assert parts["legend"].get_title().get_text() == \
        "migration arrows: 1 in 3 drawn (2,500 migrations)"
    _, parts, _ = drawn([tr], migrations=True, max_arrows=0)
    assert parts["arrow_step"] == 1 and parts["arrows"] == [2500]
    assert parts["legend"].get_title().get_text() == ""


def test_thinning_in_the_cli_output(cli, write, tmp_path):
    p = write("m.bin", T.dump({0: sum((T.migrate(i * 1000, 9, 0, 1, 3) for i in range(50)),
                                      [])}, nr_cpus=2))
    r = cli("heatmap", p, "--migrations", "--max-arrows", "20", "-o", tmp_path / "m.svg")
    assert r.code == 0, r.err
    assert r.out.rstrip().endswith("migration arrows 1 in 3")
    assert (tmp_path / "m.svg").read_text().startswith("<?xml")


@pytest.mark.parametrize("argv, pattern", [
    (["heatmap", "{f}", "-o", "x.txt"], r"argument -o/--output: x\.txt: cannot write \.txt"),
    (["heatmap", "{f}", "-o", "noext"], r"noext: no extension"),
    (["compare", "{f}", "{f}", "-o", "x.txt"], r"cannot write \.txt"),
    (["heatmap", "{f}", "--figsize", "7"], r"want W,H"),
    (["heatmap", "{f}", "--figsize", "7,0"], r"must be a positive number"),
    (["heatmap", "{f}", "--vmax", "-1"], r"must be a positive number"),
    (["heatmap", "{f}", "--fontsize", "big"], r"not a number"),
    (["heatmap", "{f}", "--load-percentile", "150"], r"must be in \(0, 100\]"),
    (["heatmap", "{f}", "--max-arrows", "-1"], r"must be 0 or more"),
    (["compare", "{f}", "{f}", "--labels", "only-one"], r"want two comma-separated"),
    (["compare", "{f}"], r"the following arguments are required|expected 2"),
])
def test_bad_chart_options_exit_2_before_reading(cli, tmp_path, monkeypatch, argv, pattern):
    """Checked by argparse: the input does not even exist, nothing is drawn."""
    monkeypatch.chdir(tmp_path)
    r = cli(*[a.format(f=tmp_path / "missing.bin") for a in argv])
    assert r.code == 2, r.err
    assert re.search(pattern, r.err), r.err
    assert "Traceback" not in r.err and "No such file" not in r.err
    assert not list(tmp_path.iterdir())


def test_bad_output_extension_in_a_real_process(run_tool, write, tmp_path):
    p = write("g.bin", rich_dump())
    r = run_tool("heatmap", p, "-o", tmp_path / "x.txt")
    assert r.code == 2 and r.out == ""
    assert r.err.startswith("usage: ") and "cannot write .txt" in r.err
    assert "Traceback" not in r.err and not (tmp_path / "x.txt").exists()
