"""Parsing of `trace-cmd report` text."""

import numpy as np
import pytest

from sched_vis import format as F
from sched_vis import testing as T
from sched_vis.binary import decode as decode_bin
from sched_vis.loader import load
from sched_vis.text import decode
from sched_vis.trace import TraceError

SAMPLE = """\
version = 6
cpus=8
            spin-812   [003]  1234.567890: rq_nr_running:        cpu=3 nr_running=2 change=1
          <idle>-0     [001] d..2.  1234.567901: rq_load:              cpu=1 load=2048
   kworker/u16:1-57    [000]  1234.568000: cpus_considered:      kind=wake_idle_sibling subject=812 result=5 cpus=00000000,000000f0
            spin-812   [003]  1234.568100: task_migrate:         pid=812 comm=spin src=3 dst=5 reason=wakeup
            spin-812   [003]  1234.568200: wake_busy:            pid=812 comm=spin target=3 idle=6
          <idle>-0     [002]  1234.600000: sanity_violation:     id=4 phase=confirm idle=2 busy=3
            spin-812   [003]  1234.600001: sched_switch:         prev_comm=spin prev_pid=812 next_comm=swapper/3 next_pid=0
CPU 4 is empty
"""


def test_sample_from_the_format_description():
    tr = decode(SAMPLE, "s.txt")
    ev = tr.events
    assert tr.fmt == "text" and tr.nr_cpus == 8
    assert ev["type"].tolist() == [F.NR_RUNNING, F.LOAD, F.CONSIDER, F.MIGRATE,
                                   F.WAKE_BUSY, F.VIOLATION]
    # ns relative to the first event; both 6- and 9-digit fractions exact
    assert ev["ts"].tolist() == [0, 11_000, 110_000, 210_000, 310_000, 32_110_000]
    assert tr.start_ns == 1234_567_890_000
    assert ev["cpu"].tolist() == [3, 1, 0, 3, 3, 2]
    nr, ld, co, mi, wb, vi = ev
    assert (nr["a"], nr["b"]) == (3, 2)
    assert (ld["a"], ld["b"]) == (1, 2048)
    assert (co["c"], co["a"], co["b"]) == (0, 812, 5)
    assert tr.cpu_set(co["cid"]).tolist() == [4, 5, 6, 7]
    assert (mi["c"], mi["a"], mi["b"] & 0xFFFF, mi["b"] >> 16) == (1, 812, 3, 5)
    assert (wb["a"], wb["b"] & 0xFFFF, wb["b"] >> 16) == (812, 3, 6)
    assert (vi["c"], vi["a"], vi["b"] & 0xFFFF, vi["b"] >> 16) == (1, 4, 2, 3)
    # change=1 tells the value before the first event: 2 - 1
    assert tr.nr_initial[3] == 1 and tr.nr_initial[0] == -1


@pytest.mark.parametrize("flags", [False, True])
def test_same_events_as_the_binary_dump(flags):
    secs = {
        0: T.nr_running(0, 0, 1) + T.consider(1000, 2, 0, None, [0, 1, 70])
           + T.migrate(2000, 99, 0, 70, 3),
        70: T.load(500, 70, 1024) + T.wake_busy(1500, 98, 70, 1)
            + T.violation(2500, 0, 3, 1, 70) + T.consider(2600, 31, 5, 1, []),
    }
    b = decode_bin(T.dump(secs, nr_cpus=71), "b")
    t = decode(T.report(secs, flags_column=flags), "t")
    assert t.nr_cpus == 71
    for f in ("ts", "type", "c", "cpu", "a", "b"):
        assert b.events[f].tolist() == t.events[f].tolist(), f
    assert b.cons_ptr.tolist() == t.cons_ptr.tolist()
    assert b.cons_cpus.tolist() == t.cons_cpus.tolist()
    assert t.kind_name(31) == "kind31"  # reserved, unnamed


def test_empty_and_single_word_masks():
    text = ("  a-1 [000] 1.000000: cpus_considered: kind=lb_busiest_queue subject=0 "
            "result=-1 cpus=\n"
            "  a-1 [000] 1.000001: cpus_considered: kind=lb_group_stats subject=0 "
            "result=none cpus=f0\n"
            "  a-1 [000] 1.000002: cpus_considered: kind=kind33 subject=1 "
            "result=2 cpus=1,00000000,00000001 \n")
    tr = decode(text, "m")
    ev = tr.events
    assert tr.cpu_set(ev["cid"][0]).tolist() == []
    assert ev["b"][0] == F.CPU_NONE and ev["b"][1] == F.CPU_NONE
    assert tr.cpu_set(ev["cid"][1]).tolist() == [4, 5, 6, 7]
    assert tr.cpu_set(ev["cid"][2]).tolist() == [0, 64]
    assert ev["c"].tolist() == [3, 2, 33]
    assert tr.nr_cpus == 65


def test_comm_with_spaces_and_dashes_and_system_prefix():
    text = ("   Web Content-x-1-4711 [002] ..s1 5.5: sched_events:rq_nr_running: "
            "cpu=2 nr_running=1\n"
            "   my-task 2-99 [001] 5.6: task_migrate: pid=99 comm=my-task 2 src=1 dst=0 "
            "reason=idle_balance\n")
    tr = decode(text, "c")
    assert tr.events["cpu"].tolist() == [2, 1]
    assert tr.events["ts"].tolist() == [0, 100_000_000]
    m = tr.events[1]
    assert (m["c"], m["b"] & 0xFFFF, m["b"] >> 16) == (4, 1, 0)


def test_unknown_names_do_not_fail():
    text = ("  a-1 [000] 1.0: cpus_considered: kind=future_kind subject=1 result=0 cpus=1\n"
            "  a-1 [000] 1.1: task_migrate: pid=1 comm=a src=0 dst=1 reason=numa_swap\n")
    tr = decode(text, "u")
    assert tr.kind_name(tr.events["c"][0]) == "future_kind"
    assert tr.reason_name(tr.events["c"][1]) == "numa_swap"


def test_lost_lines_headers_and_other_events_ignored():
    text = ("cpus=4\nCPU:0 [LOST 17 EVENTS]\n"
            "  a-1 [000] 1.0: sched_switch: prev_comm=a prev_pid=1\n"
            "  a-1 [000] 1.5: rq_nr_running: cpu=0 nr_running=1\n")
    tr = decode(text, "l")
    assert tr.lost == 17 and tr.nr_cpus == 4 and len(tr.events) == 1
    assert tr.events["ts"][0] == 0 and tr.duration_ns == 0


def test_default_one_node_and_nodes_option(write):
    p = write("t.txt", "  a-1 [005] 1.0: rq_nr_running: cpu=5 nr_running=1\n")
    assert load(str(p)).node_of.tolist() == [0] * 6
    tr = load(str(p), nodes="0-3,4-7")
    assert tr.nr_cpus == 8 and tr.node_of.tolist() == [0] * 4 + [1] * 4
    tr = load(str(p), nodes="0-1+4-5,2-3+6-7")
    assert tr.node_of.tolist() == [0, 0, 1, 1, 0, 0, 1, 1]


@pytest.mark.parametrize("line, what", [
    ("rq_nr_running: cpu=x nr_running=1", "bad value 'x' for cpu="),
    ("rq_nr_running: cpu=1", "missing field nr_running="),
    ("rq_load: cpu=1 load=-5", "load=-5 out of range"),
    ("cpus_considered: kind=wake_idle_sibling subject=1 result=2 cpus=zz", "bad cpus= mask"),
    ("cpus_considered: kind=wake_idle_sibling subject=1 result=2 cpus=1,123456789",
     "bad cpus= mask"),
    ("cpus_considered: kind=wake_idle_sibling subject=1 result=2", "missing field cpus="),
    ("task_migrate: pid=1 comm=a src=70000 dst=1 reason=wakeup", "src=70000 out of range"),
    ("sanity_violation: id=1 phase=maybe idle=1 busy=2", "bad value 'maybe' for phase="),
])
def test_unparsable_fields_name_the_line(line, what):
    text = "header\n  a-1 [000] 1.0: rq_nr_running: cpu=0 nr_running=1\n  a-1 [000] 1.1: %s\n" % line
    with pytest.raises(TraceError) as e:
        decode(text, "bad.txt")
    assert e.value.line == 3
    assert str(e.value).startswith("bad.txt: line 3: ")
    assert what in str(e.value)


def test_text_without_events_is_an_error():
    with pytest.raises(TraceError) as e:
        decode("version = 6\ncpus=2\nCPU 0 is empty\n", "none.txt")
    assert "no sched_events events" in str(e.value) and e.value.line == 3


def test_many_lines_parse_fast():
    import time
    one = "            spin-812   [003] d..2.  1234.%06d: rq_nr_running: cpu=3 nr_running=%d change=1\n"
    text = "".join(one % (i % 1000000, i % 4) for i in range(200_000))
    t0 = time.perf_counter()
    tr = decode(text, "fast")
    dt = time.perf_counter() - t0
    assert len(tr.events) == 200_000
    assert np.array_equal(np.bincount(tr.events["b"]), [50_000] * 4)
    assert dt < 10, dt        # ~2 s here: 1 M lines in well under a minute


def test_tracepoint_printing_quirks():
    # __print_symbolic prints values missing from its table in hex (kind
    # 16 on a kernel without ULE's names); subject
    # is an int; load is an unsigned long that the recorder clamps to u32;
    # comm may contain "key=value" words.
    text = ("  a-1 [000] 1.0: cpus_considered: kind=0x10 subject=-1 result=-1 cpus=1\n"
            "  a-1 [000] 1.1: rq_load: cpu=0 load=99999999999\n"
            "  a-1 [000] 1.2: task_migrate: pid=42 comm=evil pid=7 src=9 src=1 dst=0 "
            "reason=0x5\n"
            "  a-1 [000] 1.3: wake_busy: pid=43 comm=x y=2 target=1 idle=0\n")
    ev = decode(text, "q").events
    assert (ev[0]["c"], ev[0]["a"], ev[0]["b"]) == (16, 0xFFFFFFFF, F.CPU_NONE)
    assert ev[1]["b"] == 0xFFFFFFFF
    assert (ev[2]["a"], ev[2]["b"] & 0xFFFF, ev[2]["b"] >> 16, ev[2]["c"]) == (42, 1, 0, 5)
    assert (ev[3]["a"], ev[3]["b"]) == (43, 1)
