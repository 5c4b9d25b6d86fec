"""Idle-while-overloaded time, checked against hand-computed scenarios."""

import json

import numpy as np
import pytest

from sched_vis import testing as T
from sched_vis.analysis import Steps, idle_overload
from sched_vis.binary import decode
from sched_vis.text import decode as decode_text

MS = 1_000_000


def scenario():
    # CPU1 idle for the whole 10 ms; CPU0 has 2 tasks from 2 to 7 ms.
    return {0: T.nr_running(0, 0, 1) + T.nr_running(2 * MS, 0, 2)
            + T.nr_running(7 * MS, 0, 1),
            1: T.nr_running(0, 1, 0)}


def test_paper_style_scenario_5ms():
    tr = decode(T.dump(scenario(), nr_cpus=2, duration_ns=10 * MS), "s")
    r = idle_overload(tr)
    per = {c["cpu"]: c for c in r["cpus"]}
    assert per[1]["idle_overloaded_ns"] == 5 * MS
    assert per[0]["idle_overloaded_ns"] == 0
    assert per[1]["idle_ns"] == 10 * MS
    assert per[0]["overloaded_ns"] == 5 * MS
    assert r["total_ns"] == 5 * MS
    assert r["cpu_time_ns"] == 20 * MS
    assert r["fraction"] == pytest.approx(0.25)
    assert r["intervals"] == [{"start_ns": 2 * MS, "end_ns": 7 * MS,
                               "duration_ns": 5 * MS, "idle_cpu": 1,
                               "overloaded_cpus": [0]}]


def test_overlapping_overloads_and_several_idle_cpus():
    # CPU0 >= 2 during [1,4) and CPU3 >= 2 during [3,6): union [1,6).
    # CPU1 idle [0,10); CPU2 idle [0,2) and [5,10) (busy in between).
    secs = {
        0: T.nr_running(0, 0, 1) + T.nr_running(1 * MS, 0, 3) + T.nr_running(4 * MS, 0, 1),
        1: T.nr_running(0, 1, 0),
        2: T.nr_running(0, 2, 0) + T.nr_running(2 * MS, 2, 1) + T.nr_running(5 * MS, 2, 0),
        3: T.nr_running(0, 3, 1) + T.nr_running(3 * MS, 3, 2) + T.nr_running(6 * MS, 3, 1),
    }
    tr = decode(T.dump(secs, nr_cpus=4, duration_ns=10 * MS), "o")
    r = idle_overload(tr, top=5)
    per = {c["cpu"]: c["idle_overloaded_ns"] for c in r["cpus"]}
    assert per == {0: 0, 1: 5 * MS, 2: 1 * MS + 1 * MS, 3: 0}
    assert r["nr_intervals"] == 3
    first = r["intervals"][0]
    assert (first["idle_cpu"], first["start_ns"], first["end_ns"]) == (1, 1 * MS, 6 * MS)
    assert first["overloaded_cpus"] == [0, 3]
    # CPU2's two pieces: [1,2) with CPU0 and [5,6) with CPU3
    rest = sorted((i["start_ns"], i["overloaded_cpus"]) for i in r["intervals"][1:])
    assert rest == [(1 * MS, [0]), (5 * MS, [3])]


def test_repeated_zero_events_merge_into_one_interval():
    secs = {0: T.nr_running(0, 0, 2),
            1: T.nr_running(0, 1, 0) + T.nr_running(3 * MS, 1, 0) + T.nr_running(6 * MS, 1, 0)}
    tr = decode(T.dump(secs, nr_cpus=2, duration_ns=10 * MS), "z")
    r = idle_overload(tr)
    assert r["nr_intervals"] == 1 and r["total_ns"] == 10 * MS


def test_unknown_before_first_event_vs_assume_idle():
    # CPU0 overloaded from 0 to 10 ms. CPU1's first record at 4 ms says it
    # dropped to 0 (change -1): it ran one task before. CPU2 has no record.
    secs = {0: T.nr_running(0, 0, 2), 1: T.nr_running(4 * MS, 1, 0, change=-1)}
    tr = decode(T.dump(secs, nr_cpus=3, duration_ns=10 * MS), "u")
    assert list(tr.nr_initial) == [2, 1, -1]
    r = idle_overload(tr)
    per = {c["cpu"]: c for c in r["cpus"]}
    assert per[1]["idle_overloaded_ns"] == 6 * MS
    assert per[1]["unknown_ns"] == 0
    assert per[2]["unknown_ns"] == 10 * MS and per[2]["idle_overloaded_ns"] == 0
    r = idle_overload(tr, assume_idle=True)
    per = {c["cpu"]: c for c in r["cpus"]}
    assert per[1]["idle_overloaded_ns"] == 6 * MS
    assert per[2]["idle_overloaded_ns"] == 10 * MS


def test_text_change_field_gives_initial_state():
    # CPU1's first event at 4 ms says nr_running=1 change=1: it was 0 before.
    text = ("  a-1 [000] 100.000: rq_nr_running: cpu=0 nr_running=2 change=2\n"
            "  a-1 [001] 100.004: rq_nr_running: cpu=1 nr_running=1 change=1\n"
            "  a-1 [000] 100.010: rq_nr_running: cpu=0 nr_running=2 change=0\n")
    tr = decode_text(text, "c")
    r = idle_overload(tr)
    per = {c["cpu"]: c["idle_overloaded_ns"] for c in r["cpus"]}
    assert per[1] == 4 * MS


def test_window_clips():
    tr = decode(T.dump(scenario(), nr_cpus=2, duration_ns=10 * MS), "w")
    r = idle_overload(tr, start=3 * MS, end=5 * MS)
    assert r["total_ns"] == 2 * MS and r["cpu_time_ns"] == 4 * MS


def test_impossible_cpus_are_left_out():
    secs = dict(scenario())
    tr = decode(T.dump(secs, nr_cpus=3, nodes=[0, 0, None], duration_ns=10 * MS), "p")
    r = idle_overload(tr)
    assert [c["cpu"] for c in r["cpus"]] == [0, 1]
    assert r["cpu_time_ns"] == 20 * MS


def test_cli_text_and_json(cli, write):
    p = write("s.bin", T.dump(scenario(), nr_cpus=2, duration_ns=10 * MS))
    r = cli("idle-overload", p)
    assert r.code == 0, r.err
    assert "total: 5.000 ms" in r.out and "(25.000%)" in r.out
    assert "upper bound" in r.out
    r = cli("idle-overload", p, "--json", "--top", "1")
    data = json.loads(r.out)
    assert data["total_ns"] == 5 * MS
    assert data["intervals"][0]["idle_cpu"] == 1
    assert "affinity" in data["note"]


def test_steps_raster_mean_and_max_against_brute_force():
    rng = np.random.default_rng(3)
    ts = np.sort(rng.integers(0, 1000, 60))
    vals = rng.integers(0, 5, 60)
    recs = [r for t, v in zip(ts, vals) for r in T.nr_running(int(t), 0, int(v))]
    tr = decode(T.dump({0: recs}, nr_cpus=1, duration_ns=1000), "r")
    steps = Steps(tr)
    # Brute force: value at each ns (NaN before the first event).
    per_ns = np.full(1000, np.nan)
    for t, v in zip(ts, vals):
        per_ns[t:] = v
    edges = np.linspace(0, 1000, 41)
    mean = steps.raster(0, edges, "mean")
    mx = steps.raster(0, edges, "max")
    for i in range(40):
        chunk = per_ns[int(edges[i]):int(edges[i + 1])]
        known = chunk[~np.isnan(chunk)]
        if len(known):
            assert mean[i] == pytest.approx(known.mean())
            assert mx[i] == known.max()
        else:
            assert np.isnan(mean[i]) and np.isnan(mx[i])
