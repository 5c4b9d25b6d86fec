"""A million events on 64 CPUs: decode and draw in reasonable time."""

import time

import numpy as np
import pytest

from sched_vis import format as F
from sched_vis import testing as T
from sched_vis.analysis import idle_overload
from sched_vis.heatmap import render
from sched_vis.loader import load

N = 1_000_000


@pytest.mark.large
def test_million_events_decode_and_heatmap(tmp_path, capsys):
    path = tmp_path / "big.bin"
    path.write_bytes(T.synthetic(N, nr_cpus=64))

    t0 = time.perf_counter()
    tr = load(str(path))
    t_decode = time.perf_counter() - t0
    assert len(tr.events) == N
    assert tr.nr_cpus == 64 and len(tr.nodes()) == 4
    assert tr.orphans == 0 and not tr.unknown_types
    assert np.all(np.diff(tr.events["ts"]) >= 0)
    # Every CONSIDER got its node's 16 CPUs from one CPUS word.
    cons = tr.events[tr.events["type"] == F.CONSIDER]
    assert np.all(np.diff(tr.cons_ptr) == 16)
    first = cons[0]
    node = first["cpu"] // 16
    assert tr.cpu_set(first["cid"]).tolist() == list(range(16 * node, 16 * node + 16))

    t0 = time.perf_counter()
    info = render(tr, str(tmp_path / "big.png"), show_violations=True)
    t_render = time.perf_counter() - t0
    assert info["rows"] == 64 and info["bins"] == 1500
    assert (tmp_path / "big.png").stat().st_size > 10_000

    t0 = time.perf_counter()
    r = idle_overload(tr)
    t_idle = time.perf_counter() - t0
    assert 0 < r["fraction"] < 1

    with capsys.disabled():
        print("\n1M events: decode %.2f s, heatmap %.2f s, idle-overload %.2f s"
              % (t_decode, t_render, t_idle))
    assert t_decode + t_render + t_idle < 30
