"""heatmap and perfetto outputs, and info."""

import json

import numpy as np

from sched_vis import testing as T
from sched_vis.binary import decode
from sched_vis.heatmap import matrix

MS = 1_000_000
PNG = b"\x89PNG\r\n\x1a\n"


def rich():
    """8 CPUs on 2 nodes; node 1 idle while CPU 0 is overloaded."""
    secs = {
        0: (T.nr_running(0, 0, 1) + T.load(0, 0, 1024) + T.nr_running(2 * MS, 0, 3)
            + T.load(2 * MS, 0, 3072) + T.consider(3 * MS, 0, 812, 1, [0, 1, 2, 3])
            + T.migrate(4 * MS, 812, 0, 5, 3)
            + T.nr_running(4 * MS, 0, 2) + T.nr_running(8 * MS, 0, 1)),
        5: (T.nr_running(0, 5, 0) + T.wake_busy(3 * MS, 900, 0, 5)
            + T.violation(5 * MS, 0, 0, 5, 0) + T.violation(6 * MS, 1, 7, 5, 0)
            + T.nr_running(4 * MS, 5, 1) + T.nr_running(6 * MS, 5, 0)
            + T.violation(8 * MS, 2, 7, 5, 0)),
    }
    for c in (1, 2, 3, 4, 6, 7):
        secs[c] = T.nr_running(0, c, 1 if c < 4 else 0)
    return secs


def rich_dump():
    return T.dump(rich(), nr_cpus=8, nodes=[0] * 4 + [1] * 4, duration_ns=10 * MS)


def test_matrix_values_and_node_order():
    tr = decode(T.dump(rich(), nr_cpus=8, nodes=[1, 1, 0, 0, 1, 1, 0, 0],
                       duration_ns=10 * MS), "m")
    rows, edges, img = matrix(tr, bins=10)
    assert rows.tolist() == [2, 3, 6, 7, 0, 1, 4, 5]      # node 0 first
    assert edges[0] == 0 and edges[-1] == 10 * MS
    cpu0 = img[4]
    assert cpu0.tolist() == [1, 1, 3, 3, 2, 2, 2, 2, 1, 1]
    cpu5 = img[7]
    assert cpu5.tolist() == [0, 0, 0, 0, 1, 1, 0, 0, 0, 0]
    load = matrix(tr, metric="load", bins=10)[2]
    assert load[4].tolist()[:4] == [1024, 1024, 3072, 3072]
    assert np.isnan(load[5]).all()                   # no LOAD for CPU 1


def test_matrix_window_and_max():
    tr = decode(rich_dump(), "w")
    _, edges, img = matrix(tr, start=1 * MS, end=3 * MS, bins=2, agg="max")
    assert edges.tolist() == [1 * MS, 2 * MS, 3 * MS]
    assert img[0].tolist() == [1, 3]
    _, _, mean = matrix(tr, start=1 * MS, end=3 * MS, bins=1)
    assert mean[0].tolist() == [2.0]


def _png_size(data):
    assert data[:8] == PNG
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def test_heatmap_png_with_every_overlay(cli, write, tmp_path):
    p = write("rich.bin", rich_dump())
    out = tmp_path / "h.png"
    r = cli("heatmap", p, "-o", out, "--consider", "wake_idle_sibling", "--migrations",
            "--wake-busy", "--violations", "--title", "test")
    assert r.code == 0, r.err
    assert "8 CPUs x" in r.out
    w, h = _png_size(out.read_bytes())
    assert w > 800 and h > 300


def test_heatmap_default_name_load_metric_and_text_input(cli, write, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    p = write("run1.txt", T.report(rich(), flags_column=True))
    r = cli("heatmap", p, "--metric", "load", "--agg", "max", "--cpus-per-node", "4",
            "--start", "0.001", "--end", "0.009", "--bins", "50")
    assert r.code == 0, r.err
    assert (tmp_path / "run1.png").stat().st_size > 1000
    assert "x 50 bins" in r.out


def test_heatmap_256_cpus(cli, write, tmp_path):
    secs = {c: T.nr_running(c * 1000, c, c % 4) for c in range(256)}
    secs[0] = secs[0] + T.consider(5000, 2, 0, 255, list(range(0, 256, 3)))
    p = write("big.bin", T.dump(secs, nr_cpus=256, nodes=[c // 32 for c in range(256)]))
    tr = decode(p.read_bytes(), "x")
    assert tr.cpu_set(0).tolist() == list(range(0, 256, 3))
    r = cli("heatmap", p, "-o", tmp_path / "b.png", "--consider", "lb_group_stats")
    assert r.code == 0, r.err
    assert "256 CPUs" in r.out


def test_perfetto_json(cli, write, tmp_path):
    p = write("rich.bin", rich_dump())
    out = tmp_path / "p.json"
    r = cli("perfetto", p, "-o", out, "--consider", "all")
    assert r.code == 0, r.err
    doc = json.loads(out.read_text())
    ev = doc["traceEvents"]
    assert doc["otherData"]["cpus"] == 8
    names = {(e["pid"], e["args"]["name"]) for e in ev
             if e["ph"] == "M" and e["name"] == "process_name"}
    assert names == {(1, "node 0"), (2, "node 1")}
    threads = {e["tid"]: (e["pid"], e["args"]["name"]) for e in ev
               if e["ph"] == "M" and e["name"] == "thread_name"}
    assert threads[1000 + 5] == (2, "cpu 5") and len(threads) == 8

    counters = [e for e in ev if e["ph"] == "C"]
    cpu0 = [(e["ts"], e["args"]["nr_running"]) for e in counters
            if e["name"] == "cpu0" and "nr_running" in e["args"]]
    assert cpu0 == [(0, 1), (2000.0, 3), (4000.0, 2), (8000.0, 1)]
    loads = [e["args"]["load"] for e in counters if "load" in e["args"]]
    assert loads == [1024, 3072]
    assert all(e["pid"] == 2 for e in counters if e["name"] == "cpu5")

    out_, in_ = [e for e in ev if e.get("cat") == "migrate"]
    assert out_["tid"] == 1000 and in_["tid"] == 1005
    assert out_["args"] == {"pid": 812, "src": 0, "dst": 5, "reason": "balance"}
    assert out_["bind_id"] == in_["bind_id"] and out_["flow_out"] and in_["flow_in"]
    assert in_["ts"] > out_["ts"]

    wb = [e for e in ev if e["name"] == "wake_busy"]
    assert len(wb) == 1 and wb[0]["args"] == {"pid": 900, "target": 0, "idle": 5}
    phases = [e["args"]["phase"] for e in ev if e.get("cat") == "violation" and e["ph"] == "i"]
    assert phases == ["watch", "confirm", "end"]
    b = [e for e in ev if e["ph"] == "b"]
    e_ = [e for e in ev if e["ph"] == "e"]
    assert len(b) == len(e_) == 1
    assert (b[0]["ts"], e_[0]["ts"], b[0]["id"], b[0]["pid"]) == (6000.0, 8000.0, 7, 2)
    assert b[0]["args"]["watch_us"] == 5000.0
    cons = [e for e in ev if e.get("cat") == "consider"]
    assert cons[0]["args"] == {"subject": 812, "result": 1, "cpus": "0-3"}
    assert cons[0]["name"] == "consider wake_idle_sibling"


def test_perfetto_text_initial_counter_and_no_load(cli, write, tmp_path):
    p = write("t.txt", T.report({0: T.nr_running(5000, 0, 2) + T.load(6000, 0, 9)},
                                change=True))
    out = tmp_path / "t.json"
    assert cli("perfetto", p, "-o", out, "--no-load").code == 0
    ev = json.loads(out.read_text())["traceEvents"]
    c = [(e["ts"], e["args"]) for e in ev if e["ph"] == "C"]
    # The first record is the trace's start: no separate initial counter.
    assert c == [(0.0, {"nr_running": 2})]


def test_info_text_and_json(cli, write):
    d = T.dump(rich(), nr_cpus=9, nodes=[0] * 4 + [1] * 4 + [None], flags=3,
               frozen_report_id=7, lost={3: 5}, capacity=64)
    p = write("i.bin", d + b"")
    r = cli("info", p)
    assert r.code == 0, r.err
    for s in ("binary dump, version 1", "9 (8 possible)", "node 0: 0-3; node 1: 4-7",
              "flight recorder", "yes, by sanity-checker report 7", "5 lost (cpu 3: 5)",
              "wake_idle_sibling", "balance", "violations: 1 confirmed (ids 7)"):
        assert s in r.out, s
    j = json.loads(cli("info", p, "--json").out)
    assert j["events"]["NR_RUNNING"]["events"] == 13
    assert j["events"]["CONSIDER"]["kinds"]["wake_idle_sibling"] == {
        "events": 1, "mean_cpus": 4.0, "no_result": 0}
    assert j["events"]["MIGRATE"]["reasons"] == {"balance": 1}
    assert j["events"]["VIOLATION"]["phases"] == {"watch": 1, "confirm": 1, "end": 1}
    assert j["lost_per_cpu"] == {"3": 5} and j["flight_recorder"] and j["frozen"]
    assert j["record_types"]["CPUS"] == 1


def test_violation_reports_pair_watch_confirm_end():
    from sched_vis.analysis import violations
    recs = (T.violation(1 * MS, 0, 0, 5, 0)       # watch (id 0): 5 idle, 0 busy
            + T.violation(2 * MS, 0, 0, 6, 1)     # watch of another pair, never confirmed
            + T.violation(3 * MS, 0, 0, 5, 0)     # watched again: the latest counts
            + T.violation(4 * MS, 1, 7, 5, 0)     # confirm report 7
            + T.violation(5 * MS, 2, 3, 2, 1)     # end of 3: its confirm was overwritten
            + T.violation(6 * MS, 1, 8, 4, 0)     # confirm 8, never ends
            + T.violation(8 * MS, 2, 7, 5, 0))    # end of 7
    tr = decode(T.dump({0: recs}, nr_cpus=8, duration_ns=10 * MS), "v")
    assert violations(tr) == [
        {"id": 3, "idle": 2, "busy": 1, "watch": None, "confirm": None, "end": 5 * MS},
        {"id": 7, "idle": 5, "busy": 0, "watch": 3 * MS, "confirm": 4 * MS, "end": 8 * MS},
        {"id": 8, "idle": 4, "busy": 0, "watch": None, "confirm": 6 * MS, "end": None},
    ]
