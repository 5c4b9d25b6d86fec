"""Sanity checker, event recorder and tools/sched-vis on real guest traces
(Documentation/scheduler/sched-sanity.rst, sched-events.rst).

Each guest program is a TAP test of its own; the host then decodes what it
recorded and checks it against what the workload says it did."""

import json
import shutil
import subprocess
import sys

import numpy as np
import pytest

from schedlab.paths import GUEST_TESTS
from schedlab.tap import assert_ok as assert_tap
from schedlab import paths

SCHED_VIS = paths.REPO / "tools" / "sched-vis"

from sched_vis import format as F  # noqa: E402
from sched_vis.loader import load  # noqa: E402


def sched_vis(*args):
    r = subprocess.run([sys.executable, str(SCHED_VIS / "sched-vis"), *map(str, args)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"sched-vis {' '.join(map(str, args))}:\n{r.stderr}"
    return r.stdout


def events_of(trace, etype):
    return trace.events[trace.events["type"] == etype]


@pytest.fixture(scope="module")
def sanity_run(guest, tmp_path_factory):
    out = tmp_path_factory.mktemp("sanity")
    result = guest(f"sh {GUEST_TESTS}/sanity_checker.sh /tmp/out", outdir=out)
    return result


@pytest.fixture(scope="module")
def recorder_run(guest, tmp_path_factory):
    out = tmp_path_factory.mktemp("recorder")
    result = guest(f"sh {GUEST_TESTS}/events_record.sh /tmp/out", outdir=out)
    return result


def test_sanity_checker_in_guest(sanity_run):
    assert_tap(sanity_run.output, "sanity_checker.sh")


@pytest.mark.parametrize("sched", [pytest.param("ule", marks=pytest.mark.ule),
                                   pytest.param("bmq", marks=pytest.mark.bmq),
                                   pytest.param("muqss", marks=pytest.mark.muqss)])
def test_sanity_checker_sees_class_waiters(guest, tmp_path_factory, sched):
    """The same scenario under sched=ule, bmq and muqss: spinners on CPU 1
    with balancing off (ULE also loses its idle stealing and its balancer
    runs every 60 s; BMQ pulls and MuQSS looks across queues only from
    CPUs with a sched domain, which the cpuset flag removes) are a violation the checker confirms through its
    walk of the class's queues, and it ends by migration once balancing
    is back. Without the walk the checker finds no waiter and points 7-13
    fail."""
    out = tmp_path_factory.mktemp(f"sanity-{sched}")
    res = guest(f"sh {GUEST_TESTS}/sanity_checker.sh /tmp/out", cmdline=f"sched={sched}",
                outdir=out, timeout=300)
    assert_tap(res.output, f"sanity_checker.sh under sched={sched}")


def test_flight_recording_holds_the_violation(sanity_run):
    """The frozen window ends with the confirmed violation and shows CPU 1
    filling up before it."""
    report = int((sanity_run.outdir / "flight.id").read_text())
    trace = load(str(sanity_run.outdir / "flight.bin"))
    assert trace.flags & F.FLAG_FLIGHT and trace.flags & F.FLAG_FROZEN
    assert trace.frozen_report_id == report
    viol = events_of(trace, F.VIOLATION)
    confirm = viol[(viol["c"] == 1) & (viol["a"] == report)]
    assert len(confirm) == 1, viol
    assert confirm["b"][0] >> 16 == 1, "busy CPU of the confirmed violation"
    nr = events_of(trace, F.NR_RUNNING)
    before = nr[(nr["a"] == 1) & (nr["ts"] <= confirm["ts"][0])]
    assert before["b"].max() >= 3, "CPU 1 never held the spinners"
    watch = viol[(viol["c"] == 0) & (viol["b"] == confirm["b"][0])]
    assert len(watch) and watch["ts"].max() < confirm["ts"][0]


def test_recorder_in_guest(recorder_run):
    assert_tap(recorder_run.output, "events_record.sh")


@pytest.fixture(scope="module")
def recorded(recorder_run):
    return load(str(recorder_run.outdir / "recorder.bin"))


def test_dump_header_and_sections(recorded, recorder_run):
    assert recorded.nr_cpus == 8
    assert recorded.node_of.tolist() == [0] * 4 + [1] * 4
    assert not recorded.warnings and recorded.orphans == 0
    stats = {}
    for line in (recorder_run.outdir / "recorder.stats").read_text().splitlines():
        fields = line.split()
        if fields and fields[0].isdigit():
            stats[int(fields[0])] = tuple(map(int, fields[1:]))
    for cpu, nr_records, written, lost, *_ in recorded.sections:
        assert stats[cpu] == (written, nr_records, lost)
        assert lost == 0 and written == nr_records
    assert sum(s[1] for s in recorded.sections) > 1000


def test_migrations_match_the_workload(recorded, recorder_run):
    """hopper.py bound itself to each CPU in turn: the recorder's last moves
    of it are exactly those, each from where the last one went, made by the
    affinity change ("other"), by its next wakeup if it was asleep, or by a
    balancer racing the change. (Moves before the first bind are Python
    starting up.)"""
    lines = dict(line.split(" ", 1) for line in
                 (recorder_run.outdir / "hopper.txt").read_text().splitlines())
    pid = int(lines["pid"])
    ran_on = [int(c) for c in lines["cpus"].split()]
    dedup = [c for i, c in enumerate(ran_on) if i == 0 or c != ran_on[i - 1]]
    mig = events_of(recorded, F.MIGRATE)
    mine = mig[mig["a"] == pid]
    dst = (mine["b"] >> 16).tolist()
    src = (mine["b"] & 0xFFFF).tolist()
    reasons = [recorded.reason_names.get(r, r) for r in mine["c"].tolist()]
    moves = dedup if dst[-len(dedup):] == dedup else dedup[1:]
    tail = slice(len(dst) - len(moves), len(dst))
    assert dst[tail] == moves, (dst, reasons, ran_on)
    # Between sched_setaffinity() narrowing the mask and its stopper running,
    # a preempted hopper can be pulled to the new CPU by a balancer, which
    # the recorder rightly calls a balance. The first move may predate the
    # first bind: when fork placed the child on the first CPU it binds to,
    # that bind moves nothing and the tail starts with the fork placement.
    # Most moves are the affinity change itself.
    assert "fork" not in reasons[tail][1:], reasons
    assert reasons[tail].count("other") >= len(moves) - 2, reasons
    assert src[1:] == dst[:-1], (src, dst)
    other = mine[mine["c"] == 0]

    # ftrace hooked the same tracepoint over a slightly longer window.
    ftrace = [line for line in (recorder_run.outdir / "ftrace.txt").read_text().splitlines()
              if "task_migrate:" in line and f" pid={pid} " in line]
    assert len(ftrace) == len(mine)
    assert sum(" reason=other" in line for line in ftrace) == len(other)


def test_start_snapshot_in_each_cpus_own_section(recorded):
    """At start each online CPU records its own length (NR_RUNNING with
    change 0) and load in its own section, so the snapshot costs each
    buffer two records however many CPUs there are; written by the starting
    CPU alone, it filled a 4 KiB buffer at 128 CPUs."""
    nr = events_of(recorded, F.NR_RUNNING)
    snap = nr[nr["c"] == 0]      # a real change is never 0
    assert sorted(snap["a"].tolist()) == list(range(8)), snap
    assert (snap["a"] == snap["cpu"]).all(), snap


def test_runqueue_lengths_add_up(recorded):
    """Each NR_RUNNING record's value minus its change is the previous value
    of that CPU: the stream has no gaps (a few may be out of order by
    clock skew between the CPUs writing them)."""
    nr = events_of(recorded, F.NR_RUNNING)
    assert set(nr["a"].tolist()) == set(range(8))
    change = ((nr["c"].astype(np.int64) & 0xFF) ^ 0x80) - 0x80
    good = total = 0
    for cpu in range(8):
        sel = np.flatnonzero(nr["a"] == cpu)
        vals, delta = nr["b"][sel].astype(np.int64), change[sel]
        good += int(np.count_nonzero(vals[1:] - delta[1:] == vals[:-1]))
        total += len(sel) - 1
    assert total > 100 and good / total >= 0.99, (good, total)


def test_considered_sets_are_real(recorded):
    cons = events_of(recorded, F.CONSIDER)
    kinds = set(cons["c"].tolist())
    assert {0, 2, 3} <= kinds, kinds   # wakeup, group stats, busiest queue
    sizes = np.diff(recorded.cons_ptr)
    assert sizes.max() <= 8 and sizes.sum() > 0
    assert recorded.cons_cpus.max() < 8


def test_trace_cmd_report_and_render(recorder_run, tmp_path):
    """End to end: trace-cmd's recording in the guest, read on the host,
    drawn, summarised and exported; and the same for the binary dump."""
    if not shutil.which("trace-cmd"):
        pytest.fail("trace-cmd is not installed (scripts/setup installs it)")
    report = tmp_path / "trace.txt"
    with open(report, "w") as f:
        subprocess.run(["trace-cmd", "report", "-i", str(recorder_run.outdir / "trace.dat")],
                       stdout=f, stderr=subprocess.DEVNULL, check=True, timeout=300)
    text = load(str(report), cpus_per_node=4)
    assert text.nr_cpus == 8
    for etype in (F.NR_RUNNING, F.CONSIDER, F.MIGRATE):
        assert len(events_of(text, etype)), F.TYPE_NAMES[etype]

    for src in (report, recorder_run.outdir / "recorder.bin"):
        png = tmp_path / f"{src.stem}.png"
        sched_vis("heatmap", src, "--cpus-per-node", 4, "-o", png, "--migrations",
                  "--wake-busy", "--consider", "wake_idle_sibling")
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10000
        summary = json.loads(sched_vis("idle-overload", src, "--cpus-per-node", 4, "--json"))
        assert len(summary["cpus"]) == 8
        pf = tmp_path / f"{src.stem}.json"
        sched_vis("perfetto", src, "--cpus-per-node", 4, "-o", pf)
        counters = {e["name"] for e in json.loads(pf.read_text())["traceEvents"]
                    if e["ph"] == "C"}
        assert {f"cpu{c}" for c in range(8)} <= counters
