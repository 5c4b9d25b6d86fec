"""The main job's workload and report, run on the debug kernel."""

import re

from schedlab import demo
from schedlab.paths import GUEST_TESTS


def test_mixed_workload_reports_class_and_every_cpu(guest, tmp_path):
    """The demo's guest command: the workload, recorded, with the checker on."""
    res = guest(demo.RECORDED.format(
        command=f"python3 {GUEST_TESTS}/mixed_workload.py --seconds 2 --loops 50"),
        outdir=tmp_path)
    out = res.output
    assert res.status == 0, out
    assert "scheduler for normal tasks: cfs" in out
    m = re.search(r"^workload tasks by class: (.+) \(sampled while running\)$", out, re.M)
    assert m and re.fullmatch(r"cfs \d+", m.group(1)), out
    rows = re.findall(r"^\s+(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+(\d+)\s+(\d+)$", out, re.M)
    assert sorted(int(r[1]) for r in rows) == list(range(8)), out
    assert {int(r[0]) for r in rows} == {0, 1}, "CPUs must be grouped by node"
    # Four spinners on eight CPUs keep at least four CPUs mostly busy.
    assert sum(float(r[2]) > 50 for r in rows) >= 4, out
    assert re.search(r"^sanity checker: checks [1-9]\d* .* violations 0 ", out, re.M), out
    assert (tmp_path / "events.bin").read_bytes()[:8] == b"SCHEDEVT"
