"""Builders of small dumps and trace-cmd reports, for tests and demos.

Records are (ts_ns, type, c, a, b) tuples, or numpy arrays of
binary.RECORD_DTYPE for large synthetic traces. The helpers below return
lists of records for one event, e.g. consider() returns the CONSIDER
record followed by its CPUS words.
"""

from __future__ import annotations

import numpy as np

from . import format as F
from .binary import HEADER_DTYPE, RECORD_DTYPE, SECTION_DTYPE


def rec(ts, type, c=0, a=0, b=0):
    return (int(ts), int(type), int(c), int(a), int(b))


def nr_running(ts, cpu, n, change=0):
    """change is the signed change the record carries in c (0: a snapshot)."""
    return [rec(ts, F.NR_RUNNING, change & 0xFF, cpu, n)]


def load(ts, cpu, value):
    return [rec(ts, F.LOAD, 0, cpu, value)]


def cpus_words(ts, cpus):
    """CPUS records of a set: only non-zero 64-bit words."""
    words = {}
    for cpu in cpus:
        words[cpu // 64] = words.get(cpu // 64, 0) | 1 << (cpu % 64)
    return [rec(ts, F.CPUS, i, w & 0xFFFFFFFF, w >> 32) for i, w in sorted(words.items())]


def consider(ts, kind, subject, result, cpus):
    res = F.CPU_NONE if result is None else result
    return [rec(ts, F.CONSIDER, kind, subject, res)] + cpus_words(ts, cpus)


def migrate(ts, pid, src, dst, reason):
    return [rec(ts, F.MIGRATE, reason, pid, src | dst << 16)]


def wake_busy(ts, pid, target, idle):
    return [rec(ts, F.WAKE_BUSY, 0, pid, target | idle << 16)]


def violation(ts, phase, report_id, idle, busy):
    return [rec(ts, F.VIOLATION, phase, report_id, idle | busy << 16)]


def to_array(records):
    if isinstance(records, np.ndarray):
        return records.astype(RECORD_DTYPE, copy=False)
    arr = np.zeros(len(records), RECORD_DTYPE)
    if records:
        r = np.array(records, dtype=np.uint64).reshape(-1, 5)
        arr["hdr"] = (r[:, 0] & np.uint64(F.TS_MASK)) | (r[:, 1] << np.uint64(48)) \
            | (r[:, 2] << np.uint64(56))
        arr["a"] = r[:, 3]
        arr["b"] = r[:, 4]
    return arr


def dump(sections, nr_cpus=None, nodes=None, flags=0, start_ns=0, duration_ns=None,
         capacity=4096, frozen_report_id=0, nr_nodes=None, lost=None, written=None,
         version=F.VERSION, header_size=F.HEADER_SIZE, record_size=F.RECORD_SIZE,
         magic=F.MAGIC, section_cpus=None):
    """Bytes of a dump. sections: {cpu: records}; CPUs missing get none.

    nodes: node per CPU (None entries = not possible), default all node 0.
    lost/written: {cpu: n}; written defaults to nr_records + lost.
    """
    nr_cpus = nr_cpus if nr_cpus is not None else (max(sections) + 1 if sections else 1)
    nodes = nodes if nodes is not None else [0] * nr_cpus
    arrays = {cpu: to_array(sections.get(cpu, [])) for cpu in range(nr_cpus)}
    lost = lost or {}
    written = written or {}
    if duration_ns is None:
        ends = [int(a["hdr"][-1] & np.uint64(F.TS_MASK)) for a in arrays.values() if len(a)]
        duration_ns = max(ends, default=0)

    h = np.zeros(1, HEADER_DTYPE)
    h["magic"] = magic
    h["version"] = version
    h["header_size"] = header_size
    h["record_size"] = record_size
    h["flags"] = flags
    h["nr_cpus"] = nr_cpus
    h["nr_nodes"] = nr_nodes if nr_nodes is not None else \
        len({n for n in nodes if n is not None})
    h["start_ns"] = start_ns
    h["duration_ns"] = duration_ns
    h["frozen_report_id"] = frozen_report_id
    h["capacity"] = capacity
    parts = [h.tobytes()]
    nm = np.array([F.NODE_NONE if n is None else n for n in nodes], dtype="<u2").tobytes()
    parts.append(nm + b"\0" * (-len(nm) % 8))
    for i, cpu in enumerate(section_cpus if section_cpus is not None else range(nr_cpus)):
        arr = arrays.get(cpu, to_array([]))
        s = np.zeros(1, SECTION_DTYPE)
        s["cpu"] = cpu
        s["nr_records"] = len(arr)
        s["lost"] = lost.get(cpu, 0)
        s["written"] = written.get(cpu, len(arr) + lost.get(cpu, 0))
        parts.append(s.tobytes())
        parts.append(arr.tobytes())
    return b"".join(parts)


def report(sections, flags_column=False, cpus_header=None, base_s=1000.0,
           comm="spin-812", change=False, kind_names=None):
    """trace-cmd report text of the same records as dump() would hold.

    change=True adds change= to rq_nr_running (from the previous value of
    that CPU, starting at 0).
    """
    kind_names = kind_names or F.KIND_NAMES
    lines = ["version = 6"]
    if cpus_header is not None:
        lines.append("cpus=%d" % cpus_header)
    evs = []
    for cpu, records in sections.items():
        records = [tuple(int(x) for x in r) for r in records]
        i = 0
        while i < len(records):
            ts, t, c, a, b = records[i]
            i += 1
            cpus = []
            if t == F.CONSIDER:
                while i < len(records) and records[i][1] == F.CPUS:
                    _, _, wi, lo, hi = records[i]
                    w = lo | hi << 32
                    cpus += [wi * 64 + k for k in range(64) if w >> k & 1]
                    i += 1
            if t in (F.PAD, F.CPUS) or t > F.VIOLATION:
                continue
            evs.append((ts, cpu, t, c, a, b, cpus))
    evs.sort(key=lambda e: e[0])
    base_ns = int(round(base_s * 1e9))
    last = {}
    for ts, cpu, t, c, a, b, cpus in evs:
        if t == F.NR_RUNNING:
            body = "rq_nr_running: cpu=%d nr_running=%d" % (a, b)
            if change:
                body += " change=%d" % (b - last.get(a, 0))
                last[a] = b
        elif t == F.LOAD:
            body = "rq_load: cpu=%d load=%d" % (a, b)
        elif t == F.CONSIDER:
            res = -1 if b == F.CPU_NONE else b
            body = "cpus_considered: kind=%s subject=%d result=%d cpus=%s" % (
                kind_names.get(c, "kind%d" % c), a, res, mask(cpus))
        elif t == F.MIGRATE:
            body = "task_migrate: pid=%d comm=spin src=%d dst=%d reason=%s" % (
                a, b & 0xFFFF, b >> 16, F.REASON_NAMES.get(c, "reason%d" % c))
        elif t == F.WAKE_BUSY:
            body = "wake_busy: pid=%d comm=spin target=%d idle=%d" % (
                a, b & 0xFFFF, b >> 16)
        else:
            body = "sanity_violation: id=%d phase=%s idle=%d busy=%d" % (
                a, F.PHASE_NAMES[c], b & 0xFFFF, b >> 16)
        stamp = "%d.%09d" % divmod(base_ns + ts, 10 ** 9)
        flags = "d..2. " if flags_column else ""
        lines.append("%16s [%03d] %s%s: %s" % (comm, cpu, flags, stamp, body))
    return "\n".join(lines) + "\n"


def mask(cpus):
    """"%*pb" text of a CPU set: 32-bit hex words, most significant first."""
    if not cpus:
        return ""
    v = 0
    for c in cpus:
        v |= 1 << c
    words = []
    while v:
        words.append(v & 0xFFFFFFFF)
        v >>= 32
    words.reverse()
    return ",".join(["%x" % words[0]] + ["%08x" % w for w in words[1:]])


def synthetic(n_events, nr_cpus=64, duration_ns=2_000_000_000, seed=1,
              cpus_per_node=16):
    """A random but well-formed dump of n_events events (rounded down to a
    multiple of nr_cpus), plus the CPUS records of its CONSIDER events.

    Each CPU's section holds changes of its own runqueue (nr_running
    0..4, load = 1024 * nr_running), CONSIDER events with one CPUS word
    (CPUs of its node), migrations, wake_busy and a few violations.
    """
    rng = np.random.default_rng(seed)
    per = max(1, n_events // nr_cpus)
    sections = {}
    kinds = np.array([0, 1, 2, 3], np.uint64)
    for cpu in range(nr_cpus):
        n = per
        ts = np.sort(rng.integers(0, duration_ns, n)).astype(np.uint64)
        typ = rng.choice(np.array([F.NR_RUNNING, F.LOAD, F.CONSIDER, F.MIGRATE,
                                   F.WAKE_BUSY, F.VIOLATION], np.uint64),
                         size=n, p=[0.5, 0.2, 0.15, 0.1, 0.04, 0.01])
        c = np.zeros(n, np.uint64)
        a = np.zeros(n, np.uint64)
        b = np.zeros(n, np.uint64)
        nr = rng.choice(np.arange(5, dtype=np.uint64), size=n, p=[0.3, 0.4, 0.2, 0.07, 0.03])
        m = typ == F.NR_RUNNING
        a[m], b[m] = cpu, nr[m]
        m = typ == F.LOAD
        a[m], b[m] = cpu, nr[m] * 1024
        m = typ == F.CONSIDER
        c[m] = rng.choice(kinds, size=int(m.sum()))
        a[m] = rng.integers(100, 5000, int(m.sum()))
        b[m] = rng.integers(0, nr_cpus, int(m.sum()))
        other = rng.integers(0, nr_cpus, n).astype(np.uint64)
        m = typ == F.MIGRATE
        c[m] = rng.integers(0, 6, int(m.sum()))
        a[m], b[m] = rng.integers(100, 5000, int(m.sum())), cpu | other[m] << 16
        m = typ == F.WAKE_BUSY
        a[m], b[m] = rng.integers(100, 5000, int(m.sum())), cpu | other[m] << 16
        m = typ == F.VIOLATION
        c[m] = rng.integers(0, 3, int(m.sum()))
        a[m], b[m] = rng.integers(1, 50, int(m.sum())), other[m] | cpu << 16

        # A CPUS word (the CPU's node, within the first 64 CPUs' word of
        # that node) right after each CONSIDER.
        reps = np.where(typ == F.CONSIDER, 2, 1)
        src = np.repeat(np.arange(n), reps)
        second = np.zeros(len(src), bool)
        second[np.cumsum(reps) - 1] = reps == 2
        node_lo = cpu // cpus_per_node * cpus_per_node
        word_idx, bit = node_lo // 64, node_lo % 64
        node_bits = ((1 << cpus_per_node) - 1) << bit
        arr = np.zeros(len(src), RECORD_DTYPE)
        t = typ[src].copy()
        t[second] = F.CPUS
        cc, aa, bb = c[src].copy(), a[src].copy(), b[src].copy()
        cc[second] = word_idx
        aa[second] = node_bits & 0xFFFFFFFF
        bb[second] = (node_bits >> 32) & 0xFFFFFFFF
        arr["hdr"] = ts[src] | (t << np.uint64(48)) | (cc << np.uint64(56))
        arr["a"] = aa
        arr["b"] = bb
        sections[cpu] = arr
    nodes = [cpu // cpus_per_node for cpu in range(nr_cpus)]
    return dump(sections, nr_cpus=nr_cpus, nodes=nodes, duration_ns=duration_ns)
