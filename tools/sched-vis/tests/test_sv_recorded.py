"""Traces recorded by the kernel in the test VM (tests/data/README.md): the
decoder and the text parser against real output, not only generated."""

import json
import re
from pathlib import Path

import numpy as np

from sched_vis import format as F
from sched_vis.loader import load

DATA = Path(__file__).resolve().parent / "data"


def test_frozen_flight_recording():
    tr = load(str(DATA / "flight-frozen.bin"))
    assert tr.nr_cpus == 8 and tr.node_of.tolist() == [0] * 4 + [1] * 4
    assert tr.flags == F.FLAG_FLIGHT | F.FLAG_FROZEN and tr.frozen_report_id == 1
    assert not tr.warnings and tr.orphans == 0
    viol = tr.events[tr.events["type"] == F.VIOLATION]
    # The window ends with the watch and the confirmation of report 1.
    assert viol["c"].tolist() == [0, 1] and viol["a"].tolist() == [0, 1]
    assert ((viol["b"] >> 16) == 1).all()          # busy CPU 1
    nr = tr.events[tr.events["type"] == F.NR_RUNNING]
    assert nr["b"][nr["a"] == 1].max() >= 4          # spinners plus their parent
    # Every CPU's length is known from the start snapshot.
    assert (tr.nr_initial >= 0).all()
    # Records are per section in time order, and sections are all there.
    assert sum(s[1] for s in tr.sections) == 13379


def test_frozen_recording_cli(cli, tmp_path):
    r = cli("info", DATA / "flight-frozen.bin", "--json")
    assert r.code == 0, r.err
    info = json.loads(r.out)
    assert info["frozen_report_id"] == 1
    r = cli("heatmap", DATA / "flight-frozen.bin", "--violations", "--migrations",
            "-o", tmp_path / "f.png")
    assert r.code == 0, r.err
    assert (tmp_path / "f.png").stat().st_size > 10000


def test_trace_cmd_report_counts():
    path = DATA / "trace-cmd-report.txt"
    text = path.read_text()
    tr = load(str(path), cpus_per_node=4)
    assert tr.nr_cpus == 8
    want = {F.NR_RUNNING: "rq_nr_running", F.LOAD: "rq_load", F.CONSIDER: "cpus_considered",
            F.MIGRATE: "task_migrate"}
    for etype, name in want.items():
        n = len(re.findall(rf" {name}: ", text))
        assert n and np.count_nonzero(tr.events["type"] == etype) == n, name
    # cpus=00000000,00000040 is CPU 6 alone.
    line = next(ln for ln in text.splitlines() if "cpus=00000000,00000040" in ln)
    ts = round(float(re.search(r"(\d+\.\d+):", line).group(1)) * 1e9)
    cons = tr.events[tr.events["type"] == F.CONSIDER]
    first = round(float(re.search(r"(\d+\.\d+): rq_", text).group(1)) * 1e9)
    at = cons[cons["ts"] == ts - first]
    assert len(at) >= 1
    cid = at["cid"][0]
    assert tr.cons_cpus[tr.cons_ptr[cid]:tr.cons_ptr[cid + 1]].tolist() == [6]
