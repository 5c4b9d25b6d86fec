"""trace-cmd input: trace.dat through `trace-cmd report`, out-of-order
timestamps, and the tasks of sched_switch/sched_wakeup in the Perfetto
export (issue 18)."""

import json
import os
import re
import stat
import sys

import pytest

from sched_vis import format as F
from sched_vis import testing as T
from sched_vis.tasks import parse
from sched_vis.text import decode

# Two CPUs for 900 us from 1000 s; the sched plugin's formats (trace-cmd's
# default). CPU 0 runs spin:812 from before the recording until it sleeps
# at 300 us, then kworker/0:1 until 400 us; CPU 1 wakes spin:813 at 100 us
# and runs it from 200 us to the end.
REPORT = """\
version = 7
cpus=2
            spin-812   [000]  1000.000000000: rq_nr_running:        cpu=0 nr_running=1 change=1
          <idle>-0     [001]  1000.000100000: sched_wakeup:         spin:813 [120] success=1 CPU:001
          <idle>-0     [001]  1000.000200000: sched_switch:         swapper/1:0 [120] R ==> spin:813 [120]
            spin-813   [001]  1000.000200500: rq_nr_running:        cpu=1 nr_running=1 change=1
            spin-812   [000]  1000.000300000: sched_switch:         spin:812 [120] S ==> kworker/0:1:40 [120]
     kworker/0:1-40    [000]  1000.000400000: sched_switch:         kworker/0:1:40 [120] I ==> swapper/0:0 [120]
            spin-813   [001]  1000.000900000: rq_nr_running:        cpu=1 nr_running=1 change=0
"""

DAT = F.TRACE_DAT_MAGIC + b"7\x00\x00\x08\x00\x10 not a real trace.dat, the fake reads it"


@pytest.fixture
def fake_trace_cmd(tmp_path, monkeypatch):
    """A `trace-cmd` first on PATH: logs its arguments, checks that it was
    given a trace.dat, prints REPORT (or fails with FAKE_TC_FAIL set)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "trace-cmd.log"
    report = tmp_path / "report.txt"
    report.write_text(REPORT)
    exe = bin_dir / "trace-cmd"
    exe.write_text(f"""#!{sys.executable}
import os, sys
with open({str(log)!r}, "a") as f:
    f.write(" ".join(sys.argv[1:]) + "\\n")
if os.environ.get("FAKE_TC_FAIL"):
    sys.stderr.write("trace-cmd: warming up\\ntrace-cmd: bad trace.dat\\n")
    sys.exit(1)
path = sys.argv[sys.argv.index("-i") + 1]
with open(path, "rb") as f:
    assert f.read(10) == {F.TRACE_DAT_MAGIC!r}, path
sys.stdout.write(open({str(report)!r}).read())
""")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", str(bin_dir) + os.pathsep + os.environ.get("PATH", ""))
    return log


def test_trace_dat_is_read_through_trace_cmd_report(cli, write, fake_trace_cmd):
    p = write("trace.dat", DAT)
    r = cli("info", p, "--json")
    assert r.code == 0, r.err
    info = json.loads(r.out)
    assert info["source"] == "trace.dat, read with 'trace-cmd report'"
    assert info["events"]["NR_RUNNING"]["events"] == 3
    assert info["task_events"] == {"sched_switch": 3, "sched_wakeup": 1}
    # Full nanosecond timestamps (-t), from the file given.
    assert fake_trace_cmd.read_text().splitlines() == ["report -t -i %s" % p]
    r = cli("info", p)
    assert "trace-cmd report text, 9 lines (trace.dat, read with 'trace-cmd report')" \
        in r.out
    assert "tasks:     3 sched_switch, 1 sched_wakeup" in r.out


def test_trace_dat_on_stdin_and_in_a_real_process(run_tool, write, fake_trace_cmd,
                                                  tmp_path):
    p = write("trace.dat", DAT)
    with open(p, "rb") as f:
        r = run_tool("heatmap", "-", "-o", tmp_path / "s.png", stdin=f)
    assert r.code == 0, r.err
    assert r.out.startswith("%s: 2 CPUs x" % (tmp_path / "s.png"))
    args = fake_trace_cmd.read_text().split()
    assert args[:3] == ["report", "-t", "-i"] and args[3].endswith("stdin.dat")
    assert not os.path.exists(args[3])              # the temporary copy is gone


def test_trace_cmd_failure_is_one_line(cli, write, fake_trace_cmd, monkeypatch):
    monkeypatch.setenv("FAKE_TC_FAIL", "1")
    p = write("bad.dat", DAT)
    r = cli("heatmap", p)
    assert r.code == 2
    assert r.err.strip().splitlines() == [
        "sched-vis: %s: 'trace-cmd report' failed (exit status 1): "
        "trace-cmd: bad trace.dat" % p]


def test_trace_dat_without_trace_cmd(cli, write, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    p = write("t.dat", DAT)
    r = cli("info", p)
    assert r.code == 2 and len(r.err.strip().splitlines()) == 1
    assert "byte offset 0: a trace-cmd data file (trace.dat), and trace-cmd is not " \
           "installed" in r.err


def test_unrecognised_format_is_one_line(cli, write):
    p = write("x.bin", b"\x7fELF\x02\x01\x01\x00" + bytes(64))
    r = cli("info", p)
    assert r.code == 2
    (line,) = r.err.strip().splitlines()
    assert line.startswith("sched-vis: %s: byte offset 0: bad magic" % p)
    assert "unrecognised format" in line and "trace.dat" in line


def test_out_of_order_timestamps_warn_once(cli, write):
    text = ("  a-1 [000] 5.000000: rq_nr_running: cpu=0 nr_running=1\n"
            "  a-1 [001] 4.000000: rq_nr_running: cpu=1 nr_running=2\n"
            "  a-1 [000] 6.000000: rq_nr_running: cpu=0 nr_running=0\n"
            "  a-1 [001] 5.500000: rq_nr_running: cpu=1 nr_running=0\n")
    tr = decode(text, "o")
    assert tr.start_ns == 4_000_000_000 and tr.events["ts"].tolist()[0] == 0
    (w,) = tr.warnings
    assert w == ("timestamps out of order: 2 events earlier than one before them, "
                 "first at line 2; sorted by time, so the trace starts at 4.000000 s, "
                 "not at the first event's 5.000000 s")
    p = write("o.txt", text)
    r = cli("idle-overload", p)
    assert r.code == 0
    assert r.err.strip().splitlines() == ["sched-vis: warning: %s: %s" % (p, w)]
    # In order (equal timestamps too): no warning.
    assert not decode(T.report({0: T.nr_running(0, 0, 1) + T.nr_running(0, 0, 2)}),
                      "i").warnings


def test_tasks_from_plugin_and_raw_formats():
    tr = decode(REPORT, "r")
    runs, wakeups, bad = parse(tr)
    got = [(r.cpu, r.start - tr.start_ns, r.end - tr.start_ns, r.pid, r.comm, r.end_state,
            r.start_known, r.end_known) for r in runs]
    assert got == [(0, 0, 300_000, 812, "spin", "S", False, True),
                   (1, 200_000, 900_000, 813, "spin", None, True, False),
                   (0, 300_000, 400_000, 40, "kworker/0:1", "I", True, True)]
    assert [(w.ts - tr.start_ns, w.cpu, w.target, w.pid, w.comm, w.prio, w.new)
            for w in wakeups] == [(100_000, 1, 1, 813, "spin", 120, False)]
    assert bad == 0
    raw = ("  x-1 [002] 7.0: rq_nr_running: cpu=2 nr_running=1\n"
           "  x-1 [002] 7.1: sched_wakeup_new: comm=Web Content pid=77 prio=120 "
           "target_cpu=003\n"
           "  x-1 [003] 7.2: sched_switch: prev_comm=swapper/3 prev_pid=0 prev_prio=120 "
           "prev_state=R ==> next_comm=Web Content next_pid=77 next_prio=120\n"
           "  x-1 [003] 7.3: sched_switch: prev_comm=Web Content prev_pid=77 "
           "prev_prio=120 prev_state=D ==> next_comm=swapper/3 next_pid=0 next_prio=120\n"
           "  x-1 [003] 7.4: sched_switch: garbled\n")
    tr = decode(raw, "raw")
    runs, wakeups, bad = parse(tr)
    assert [(r.cpu, r.pid, r.comm, r.end_state) for r in runs] == [(3, 77, "Web Content", "D")]
    assert wakeups[0].new and wakeups[0].target == 3 and bad == 1


def test_perfetto_task_slices_and_absolute_time(cli, write, tmp_path):
    p = write("r.txt", REPORT)
    out = tmp_path / "p.json"
    r = cli("perfetto", p, "-o", out)
    assert r.code == 0, r.err
    assert "3 task slices" in r.out
    doc = json.loads(out.read_text())
    assert doc["otherData"]["time"] == "since trace start"
    ev = doc["traceEvents"]
    slices = sorted((e["tid"], e["ts"], e["dur"], e["name"], e["args"]["end_state"])
                    for e in ev if e.get("cat") == "task" and e["ph"] == "X")
    # On the CPUs' own threads (tid 1000 + cpu), so each CPU's track shows
    # which task ran.
    assert slices == [(1000, 0.0, 300.0, "spin 812", "S"),
                      (1000, 300.0, 100.0, "kworker/0:1 40", "I"),
                      (1001, 200.0, 700.0, "spin 813", None)]
    threads = {e["tid"]: e["args"]["name"] for e in ev
               if e["ph"] == "M" and e["name"] == "thread_name"}
    assert threads == {1000: "cpu 0", 1001: "cpu 1"}
    (wake,) = [e for e in ev if e.get("cat") == "task" and e["ph"] == "i"]
    assert (wake["tid"], wake["ts"], wake["name"]) == (1001, 100.0, "wakeup spin 813")
    assert wake["args"]["waker_cpu"] == 1 and wake["args"]["target_cpu"] == 1

    out2 = tmp_path / "abs.json"
    assert cli("perfetto", p, "-o", out2, "--absolute-time").code == 0
    doc2 = json.loads(out2.read_text())
    assert doc2["otherData"]["time"] == "absolute"
    shift = 1_000_000_000.0                          # 1000 s in us
    ts1 = [e["ts"] for e in ev if "ts" in e]
    ts2 = [e["ts"] for e in doc2["traceEvents"] if "ts" in e]
    assert len(ts1) == len(ts2) and all(b == pytest.approx(a + shift, abs=1e-3)
                                        for a, b in zip(ts1, ts2))
    counters = [e for e in doc2["traceEvents"] if e["ph"] == "C"]
    assert counters[0]["ts"] == shift

    out3 = tmp_path / "none.json"
    r = cli("perfetto", p, "-o", out3, "--no-tasks")
    assert r.code == 0 and "task slices" not in r.out
    assert not [e for e in json.loads(out3.read_text())["traceEvents"]
                if e.get("cat") == "task"]


def test_perfetto_absolute_time_of_a_dump(cli, write, tmp_path):
    p = write("d.bin", T.dump({0: T.nr_running(5000, 0, 1)}, nr_cpus=1,
                              start_ns=7_000_000_000))
    out = tmp_path / "d.json"
    assert cli("perfetto", p, "-o", out, "--absolute-time").code == 0
    counters = [e["ts"] for e in json.loads(out.read_text())["traceEvents"]
                if e["ph"] == "C"]
    # The length before the first record, at the start; the record 5 us
    # later: 7 s since boot + 5 us.
    assert counters == [7_000_000.0, 7_000_005.0]


def test_unparsed_task_lines_warn(cli, write, tmp_path):
    p = write("g.txt", "  a-1 [000] 1.0: rq_nr_running: cpu=0 nr_running=1\n"
                       "  a-1 [000] 1.1: sched_switch: prev_comm=a prev_pid=1\n")
    r = cli("perfetto", p, "-o", tmp_path / "g.json")
    assert r.code == 0
    assert re.fullmatch(r"sched-vis: warning: .*g\.txt: 1 sched_switch/sched_wakeup "
                        r"lines not understood; left out\n", r.err), r.err
