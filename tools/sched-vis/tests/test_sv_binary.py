"""Decoding of the binary dump."""

import numpy as np
import pytest

from sched_vis import format as F
from sched_vis import testing as T
from sched_vis.binary import decode
from sched_vis.loader import load
from sched_vis.trace import TraceError

MS = 1_000_000


def decoded(sections, **kw):
    return decode(T.dump(sections, **kw), "test.bin")


def test_header_fields():
    tr = decoded({0: T.nr_running(5, 0, 1)}, nr_cpus=4, nodes=[0, 0, 1, None],
                 start_ns=123_456_789, duration_ns=10 * MS, capacity=512,
                 frozen_report_id=7, flags=F.FLAG_FLIGHT | F.FLAG_FROZEN)
    assert tr.fmt == "binary" and tr.version == 1
    assert tr.nr_cpus == 4
    assert tr.node_of.tolist() == [0, 0, 1, -1]
    assert tr.possible_cpus().tolist() == [0, 1, 2]
    assert [(n, c.tolist()) for n, c in tr.nodes()] == [(0, [0, 1]), (1, [2])]
    assert tr.start_ns == 123_456_789
    assert tr.duration_ns == 10 * MS
    assert tr.capacity == 512
    assert tr.flight and tr.frozen and tr.frozen_report_id == 7
    assert tr.nr_nodes_header == 2


def test_each_type():
    recs = (T.nr_running(1, 0, 3) + T.load(2, 1, 2048)
            + T.consider(3, 1, 4242, 2, [1, 2])
            + T.migrate(4, 812, 3, 1, 4)
            + T.wake_busy(5, 813, 0, 2)
            + T.violation(6, 1, 9, 2, 0))
    tr = decoded({0: recs}, nr_cpus=4)
    ev = tr.events
    assert ev["type"].tolist() == [F.NR_RUNNING, F.LOAD, F.CONSIDER, F.MIGRATE,
                                   F.WAKE_BUSY, F.VIOLATION]
    assert ev["ts"].tolist() == [1, 2, 3, 4, 5, 6]
    assert (ev["cpu"] == 0).all()                      # written by CPU 0
    nr, ld, co, mi, wb, vi = ev
    assert (nr["a"], nr["b"]) == (0, 3)
    assert (ld["a"], ld["b"]) == (1, 2048)
    assert (co["c"], co["a"], co["b"]) == (1, 4242, 2)
    assert tr.cpu_set(co["cid"]).tolist() == [1, 2]
    assert (mi["c"], mi["a"], mi["b"] & 0xFFFF, mi["b"] >> 16) == (4, 812, 3, 1)
    assert (wb["a"], wb["b"] & 0xFFFF, wb["b"] >> 16) == (813, 0, 2)
    assert (vi["c"], vi["a"], vi["b"] & 0xFFFF, vi["b"] >> 16) == (1, 9, 2, 0)
    assert tr.type_counts[F.CPUS] == 1
    assert tr.orphans == 0


def test_sorted_across_sections_stable():
    tr = decoded({0: T.nr_running(10, 0, 1) + T.nr_running(30, 0, 2),
                  1: T.nr_running(10, 1, 5) + T.nr_running(20, 1, 0)}, nr_cpus=2)
    assert tr.events["ts"].tolist() == [10, 10, 20, 30]
    # Equal timestamps keep section order (stable sort).
    assert tr.events["a"].tolist() == [0, 1, 1, 0]


def test_timestamp_uses_48_bits_and_c_byte():
    ts = (1 << 48) - 1
    tr = decoded({0: T.consider(ts, 0xAB, 1, None, [])}, nr_cpus=1)
    assert tr.events["ts"][0] == ts
    assert tr.events["c"][0] == 0xAB
    assert tr.kind_name(0xAB) == "kind171"
    assert tr.events["b"][0] == F.CPU_NONE


def test_cpus_words_beyond_64():
    cpus = [0, 63, 64, 130, 255]
    recs = T.consider(7, 3, 1, 130, cpus)
    assert [r[2] for r in recs[1:]] == [0, 1, 2, 3]    # word indices
    tr = decoded({5: recs}, nr_cpus=256)
    assert tr.cpu_set(tr.events["cid"][0]).tolist() == cpus
    assert tr.events["cpu"][0] == 5


def test_only_nonzero_words_and_sparse_index():
    # Word 2 alone: CPU 130 is bit 2 of word 2.
    recs = [T.rec(1, F.CONSIDER, 0, 1, 130), T.rec(1, F.CPUS, 2, 1 << 2, 0)]
    tr = decoded({0: recs}, nr_cpus=192)
    assert tr.cpu_set(0).tolist() == [130]


def test_consider_without_cpus_is_empty_set():
    recs = T.consider(1, 0, 5, None, []) + T.consider(2, 0, 6, 1, [1])
    tr = decoded({0: recs}, nr_cpus=2)
    assert tr.cpu_set(tr.events["cid"][0]).tolist() == []
    assert tr.cpu_set(tr.events["cid"][1]).tolist() == [1]


def test_orphan_cpus_at_window_start_and_after_other_type():
    recs = ([T.rec(1, F.CPUS, 0, 0b110, 0)]            # CONSIDER overwritten
            + T.consider(2, 0, 5, 1, [1])
            + T.nr_running(3, 0, 1)
            + [T.rec(3, F.CPUS, 0, 0b1000, 0)])       # not right after a CONSIDER
    tr = decoded({0: recs, 1: [T.rec(1, F.CPUS, 0, 1, 0)]}, nr_cpus=4,
                 flags=F.FLAG_FLIGHT, lost={0: 10})
    assert tr.orphans == 3
    assert tr.cpu_set(0).tolist() == [1]
    assert tr.flight and tr.lost == 10


def test_cpus_does_not_join_consider_of_previous_section():
    # Section 0 ends with a CONSIDER; section 1 starts with a CPUS record.
    tr = decoded({0: T.consider(1, 0, 5, 1, []),
                  1: [T.rec(2, F.CPUS, 0, 1, 0)]}, nr_cpus=2)
    assert tr.orphans == 1
    assert tr.cpu_set(0).tolist() == []


def test_pad_is_ignored_even_between_consider_and_cpus():
    recs = ([T.rec(0, F.PAD)] + [T.rec(1, F.CONSIDER, 0, 5, 1), T.rec(1, F.PAD),
                                 T.rec(1, F.CPUS, 0, 0b10, 0)] + [T.rec(2, F.PAD)])
    tr = decoded({0: recs}, nr_cpus=2)
    assert len(tr.events) == 1
    assert tr.cpu_set(0).tolist() == [1]
    assert tr.type_counts[F.PAD] == 3
    assert tr.orphans == 0


def test_unknown_type_skipped_counted_warned_once():
    recs = ([T.rec(1, 9, 0, 1, 2), T.rec(2, 200, 0, 1, 2), T.rec(3, 9)]
            + T.nr_running(4, 0, 1))
    tr = decoded({0: recs}, nr_cpus=1)
    assert tr.events["type"].tolist() == [F.NR_RUNNING]
    assert tr.unknown_types == {9: 2, 200: 1}
    assert len([w for w in tr.warnings if "unknown type" in w]) == 1


def test_lost_written_and_complete_window_flight():
    secs = {0: T.nr_running(5 * MS, 0, 1), 1: T.nr_running(2 * MS, 1, 1)}
    tr = decoded(secs, nr_cpus=2, flags=F.FLAG_FLIGHT, lost={0: 100},
                 written={0: 101, 1: 1}, duration_ns=10 * MS)
    assert tr.lost == 100
    assert [s[:4] for s in tr.sections] == [(0, 1, 101, 100), (1, 1, 1, 0)]
    # Flight mode lost the oldest records of CPU 0: complete from its first.
    assert tr.complete_window() == (5 * MS, 10 * MS)


def test_complete_window_stop_when_full():
    secs = {0: T.nr_running(1 * MS, 0, 1) + T.nr_running(4 * MS, 0, 2)}
    tr = decoded(secs, nr_cpus=1, lost={0: 3}, duration_ns=10 * MS)
    assert not tr.flight
    assert tr.complete_window() == (0, 4 * MS)


def test_duration_covers_last_record():
    tr = decoded({0: T.nr_running(12 * MS, 0, 1)}, nr_cpus=1, duration_ns=10 * MS)
    assert tr.duration_ns == 12 * MS


def test_sections_in_any_order_and_empty():
    d = T.dump({1: T.nr_running(1, 1, 1)}, nr_cpus=3, section_cpus=[2, 1, 0])
    tr = decode(d, "x")
    assert [s[0] for s in tr.sections] == [2, 1, 0]
    assert tr.events["cpu"].tolist() == [1]


def test_state_event_for_cpu_outside_dump_dropped_with_warning():
    tr = decoded({0: T.nr_running(1, 7, 1) + T.nr_running(2, 0, 1)}, nr_cpus=2)
    assert tr.events["a"].tolist() == [0]
    assert any("nr_cpus" in w for w in tr.warnings)


def test_nodes_option_overrides_map(write):
    p = write("n.bin", T.dump({0: T.nr_running(1, 0, 1)}, nr_cpus=8,
                              nodes=[0] * 7 + [None]))
    tr = load(str(p), nodes="0-3,4-7")
    assert tr.node_of.tolist() == [0, 0, 0, 0, 1, 1, 1, -1]   # 7 stays impossible
    tr = load(str(p), cpus_per_node=2)
    assert tr.node_of.tolist() == [0, 0, 1, 1, 2, 2, 3, -1]


@pytest.mark.parametrize("cut", [10, 64, 70, 80, 100, 120])
def test_truncation_is_an_error_with_offset(cut):
    d = T.dump({0: T.nr_running(1, 0, 1) + T.nr_running(2, 0, 2)}, nr_cpus=2)
    with pytest.raises(TraceError) as e:
        decode(d[:cut], "cut.bin")
    assert e.value.offset is not None and e.value.offset <= cut
    assert "cut.bin: byte offset" in str(e.value)


def test_record_dtype_roundtrip_large_values():
    recs = T.migrate(1, 0xFFFFFFFF, 0xFFFF, 0xFFFE, 5)
    tr = decoded({0: recs}, nr_cpus=1)
    m = tr.events[0]
    assert m["a"] == 0xFFFFFFFF and m["b"] & 0xFFFF == 0xFFFF and m["b"] >> 16 == 0xFFFE
    assert np.issubdtype(tr.events["ts"].dtype, np.int64)
