"""The decoded trace, common to the binary and the text reader."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import numpy as np

from . import format as F

# One row per event, sorted by time. `cpu` is the CPU that wrote the record
# (section or [cpu] column); a/b/c keep the raw meaning of the binary record
# so both readers produce the same thing. `c` is wider than in the record
# because the text reader gives unrecognised kind/reason names ids >= 256.
# `cid` indexes the considered-CPU sets of CONSIDER events (-1 otherwise).
EVENT_DTYPE = np.dtype([
    ("ts", "<i8"),
    ("type", "u1"),
    ("c", "<u2"),
    ("cpu", "<i4"),
    ("a", "<u4"),
    ("b", "<u4"),
    ("cid", "<i4"),
])


class TraceError(Exception):
    """Bad input: reported as one line naming the file and the position."""

    def __init__(self, path, msg, offset=None, line=None):
        super().__init__(msg)
        self.path = path
        self.msg = msg
        self.offset = offset
        self.line = line

    def __str__(self):
        if self.offset is not None:
            return "%s: byte offset %d: %s" % (self.path, self.offset, self.msg)
        if self.line is not None:
            return "%s: line %d: %s" % (self.path, self.line, self.msg)
        return "%s: %s" % (self.path, self.msg)


@dataclass
class Trace:
    path: str
    fmt: str                      # "binary" or "text"
    nr_cpus: int
    node_of: np.ndarray           # node per CPU, -1 = not possible
    events: np.ndarray            # EVENT_DTYPE, sorted by ts (stable)
    cons_ptr: np.ndarray          # CSR offsets of considered sets, by cid
    cons_cpus: np.ndarray         # CSR values: CPU numbers
    duration_ns: int
    start_ns: int = 0
    version: Optional[int] = None
    flags: int = 0
    frozen_report_id: int = 0
    capacity: Optional[int] = None
    nr_nodes_header: Optional[int] = None
    # Raw record/line counts per type (binary: incl. PAD and CPUS).
    type_counts: Dict[int, int] = field(default_factory=dict)
    unknown_types: Dict[int, int] = field(default_factory=dict)
    orphans: int = 0
    # Per section (binary): cpu, nr_records, written, lost, first_ts, last_ts.
    sections: List[Tuple[int, int, int, int, int, int]] = field(default_factory=list)
    lost_text: int = 0            # from trace-cmd "[LOST n EVENTS]" lines
    # nr_running before a CPU's first NR_RUNNING event when known, else -1.
    nr_initial: Optional[np.ndarray] = None
    kind_names: Dict[int, str] = field(default_factory=lambda: dict(F.KIND_NAMES))
    reason_names: Dict[int, str] = field(default_factory=lambda: dict(F.REASON_NAMES))
    node_labels: Dict[int, str] = field(default_factory=dict)
    warnings: List[str] = field(default_factory=list)
    lines: int = 0                # text: lines read
    # text: (ts_ns absolute, cpu, event, args) of F.TASK_EVENTS lines
    task_lines: List[Tuple[int, int, str, str]] = field(default_factory=list)
    source: Optional[str] = None  # how the text was obtained, e.g. from a trace.dat

    # -- flags -------------------------------------------------------------
    @property
    def flight(self):
        return bool(self.flags & F.FLAG_FLIGHT)

    @property
    def frozen(self):
        return bool(self.flags & F.FLAG_FROZEN)

    @property
    def lost(self):
        return sum(s[3] for s in self.sections) + self.lost_text

    # -- naming --------------------------------------------------------------
    def kind_name(self, k):
        return self.kind_names.get(int(k), "kind%d" % k)

    def reason_name(self, r):
        return self.reason_names.get(int(r), "reason%d" % r)

    def node_label(self, n):
        if n < 0:
            return "not possible"
        return self.node_labels.get(int(n), "node %d" % n)

    # -- topology --------------------------------------------------------------
    def possible_cpus(self):
        return np.flatnonzero(self.node_of >= 0)

    def nodes(self):
        """[(node, cpus)] in node order, possible CPUs only."""
        out = []
        for n in np.unique(self.node_of[self.node_of >= 0]):
            out.append((int(n), np.flatnonzero(self.node_of == n)))
        return out

    # -- events ------------------------------------------------------------
    def of_type(self, t):
        return self.events[self.events["type"] == t]

    def considered(self, cids):
        """(index into cids, cpu) pairs of the CPU sets of the given cids."""
        cids = np.asarray(cids, dtype=np.int64)
        starts = self.cons_ptr[cids]
        lens = self.cons_ptr[cids + 1] - starts
        total = int(lens.sum())
        owner = np.repeat(np.arange(len(cids)), lens)
        first = np.repeat(np.cumsum(lens) - lens, lens)
        pos = np.repeat(starts, lens) + (np.arange(total) - first)
        return owner, self.cons_cpus[pos]

    def cpu_set(self, cid):
        return self.cons_cpus[self.cons_ptr[cid]:self.cons_ptr[cid + 1]]

    def complete_window(self):
        """(from_ns, to_ns) where no section has lost records.

        Flight mode overwrites the oldest records, so a section that lost
        records is only complete from its first surviving one; otherwise a
        full buffer drops the newest, so it is complete up to its last.
        """
        lo, hi = 0, self.duration_ns
        for cpu, n, written, lost, first, last in self.sections:
            if not lost or not n:
                continue
            if self.flight:
                lo = max(lo, first)
            else:
                hi = min(hi, last)
        return lo, hi


def cpulist(cpus):
    """Compact CPU list, e.g. [0,1,2,3,8] -> "0-3,8"."""
    cpus = sorted(int(c) for c in cpus)
    parts = []
    i = 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        parts.append(str(cpus[i]) if i == j else "%d-%d" % (cpus[i], cpus[j]))
        i = j + 1
    return ",".join(parts)


def build_csr(cid, cpu, n):
    """CSR (ptr, values) of n sets from unsorted (cid, cpu) pairs, deduplicated."""
    cid = np.asarray(cid, dtype=np.int64)
    cpu = np.asarray(cpu, dtype=np.int64)
    if len(cid):
        # sort + neighbour compare: much faster than np.unique's hashing here
        key = np.sort(cid * (1 << 32) + cpu)
        key = key[np.concatenate(([True], key[1:] != key[:-1]))]
        cid, cpu = key >> 32, key & 0xFFFFFFFF
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(cid, minlength=n), out=ptr[1:])
    return ptr, cpu.astype(np.int32)
