"""Reader of the binary dump of /sys/kernel/debug/sched/events/dump."""

from __future__ import annotations

import numpy as np

from . import format as F
from .trace import EVENT_DTYPE, Trace, TraceError, build_csr

HEADER_DTYPE = np.dtype([
    ("magic", "S8"),
    ("version", "<u2"),
    ("header_size", "<u2"),
    ("record_size", "<u2"),
    ("flags", "<u2"),
    ("nr_cpus", "<u4"),
    ("nr_nodes", "<u4"),
    ("start_ns", "<u8"),
    ("duration_ns", "<u8"),
    ("frozen_report_id", "<u4"),
    ("capacity", "<u4"),
    ("reserved", "V16"),
])
SECTION_DTYPE = np.dtype([
    ("cpu", "<u4"),
    ("reserved", "<u4"),
    ("nr_records", "<u8"),
    ("written", "<u8"),
    ("lost", "<u8"),
])
RECORD_DTYPE = np.dtype([("hdr", "<u8"), ("a", "<u4"), ("b", "<u4")])

assert HEADER_DTYPE.itemsize == F.HEADER_SIZE
assert SECTION_DTYPE.itemsize == F.SECTION_HEADER_SIZE
assert RECORD_DTYPE.itemsize == F.RECORD_SIZE


def decode(data, path):
    """Decode a whole dump (bytes) into a Trace; raises TraceError."""
    size = len(data)
    if size < F.HEADER_SIZE:
        raise TraceError(path, "truncated file header: %d bytes, need %d"
                         % (size, F.HEADER_SIZE), offset=size)
    h = np.frombuffer(data, HEADER_DTYPE, 1, 0)[0]
    if bytes(h["magic"]).ljust(8, b"\0") != F.MAGIC:
        raise TraceError(path, "bad magic %r, expected %r"
                         % (bytes(data[:8]), F.MAGIC), offset=0)
    if h["version"] != F.VERSION:
        raise TraceError(path, "unsupported version %d (this tool reads %d)"
                         % (h["version"], F.VERSION), offset=8)
    if h["header_size"] != F.HEADER_SIZE:
        raise TraceError(path, "header_size %d, expected %d"
                         % (h["header_size"], F.HEADER_SIZE), offset=10)
    if h["record_size"] != F.RECORD_SIZE:
        raise TraceError(path, "record_size %d, expected %d"
                         % (h["record_size"], F.RECORD_SIZE), offset=12)
    nr_cpus = int(h["nr_cpus"])
    if nr_cpus == 0:
        raise TraceError(path, "nr_cpus is 0", offset=16)

    off = F.HEADER_SIZE
    map_len = (nr_cpus * 2 + 7) // 8 * 8
    if size - off < map_len:
        raise TraceError(path, "truncated node map: %d CPUs need %d bytes, %d left"
                         % (nr_cpus, map_len, size - off), offset=off)
    raw_nodes = np.frombuffer(data, "<u2", nr_cpus, off).astype(np.int32)
    node_of = np.where(raw_nodes == F.NODE_NONE, -1, raw_nodes)
    off += map_len

    warnings = []
    sections = []
    chunks = []
    seen = set()
    for i in range(nr_cpus):
        if size - off < F.SECTION_HEADER_SIZE:
            raise TraceError(path, "section %d of %d: header cut off (%d bytes left)"
                             % (i, nr_cpus, size - off), offset=off)
        s = np.frombuffer(data, SECTION_DTYPE, 1, off)[0]
        cpu, n = int(s["cpu"]), int(s["nr_records"])
        if cpu >= nr_cpus:
            raise TraceError(path, "section %d: cpu %d >= nr_cpus %d"
                             % (i, cpu, nr_cpus), offset=off)
        if cpu in seen:
            raise TraceError(path, "section %d: second section for cpu %d" % (i, cpu),
                             offset=off)
        seen.add(cpu)
        body = off + F.SECTION_HEADER_SIZE
        if n > (size - body) // F.RECORD_SIZE:
            raise TraceError(path, "section %d (cpu %d): nr_records %d needs %d bytes, "
                             "only %d left" % (i, cpu, n, n * F.RECORD_SIZE, size - body),
                             offset=body)
        recs = np.frombuffer(data, RECORD_DTYPE, n, body)
        # PAD records are all zero (ts 0 too), e.g. filling a full buffer.
        real = recs["hdr"][(recs["hdr"] >> np.uint64(48)) & np.uint64(0xFF) != F.PAD]
        ts = (real & np.uint64(F.TS_MASK)).astype(np.int64)
        first = int(ts.min()) if len(ts) else 0
        last = int(ts.max()) if len(ts) else 0
        sections.append((cpu, n, int(s["written"]), int(s["lost"]), first, last))
        chunks.append((cpu, recs))
        off = body + n * F.RECORD_SIZE
    if off < size:
        warnings.append("%d trailing bytes after the last section ignored (byte offset %d)"
                        % (size - off, off))

    trace = _assemble(path, chunks, nr_cpus, warnings)
    trace.node_of = node_of
    trace.sections = sections
    trace.version = int(h["version"])
    trace.flags = int(h["flags"])
    trace.start_ns = int(h["start_ns"])
    trace.frozen_report_id = int(h["frozen_report_id"])
    trace.capacity = int(h["capacity"])
    trace.nr_nodes_header = int(h["nr_nodes"])
    last_ts = int(trace.events["ts"][-1]) if len(trace.events) else 0
    # Records may run a little past the stop time; never cut them off.
    trace.duration_ns = max(int(h["duration_ns"]), last_ts)
    return trace


def _assemble(path, chunks, nr_cpus, warnings):
    """Turn per-section record arrays into sorted events and CPU sets."""
    if chunks:
        recs = np.concatenate([r for _, r in chunks])
        sec_cpu = np.concatenate([np.full(len(r), cpu, np.int32) for cpu, r in chunks])
        sec_id = np.concatenate([np.full(len(r), i, np.int64)
                                 for i, (_, r) in enumerate(chunks)])
    else:
        recs = np.zeros(0, RECORD_DTYPE)
        sec_cpu = np.zeros(0, np.int32)
        sec_id = np.zeros(0, np.int64)

    hdr = recs["hdr"]
    typ = ((hdr >> np.uint64(48)) & np.uint64(0xFF)).astype(np.uint8)
    counts = np.bincount(typ, minlength=256)
    type_counts = {t: int(counts[t]) for t in np.flatnonzero(counts)}
    unknown = {t: n for t, n in type_counts.items() if t > F.VIOLATION}
    if unknown:
        warnings.append("skipped %d records of unknown type(s) %s"
                        % (sum(unknown.values()), ", ".join(map(str, sorted(unknown)))))

    # PAD is transparent: drop it before pairing CONSIDER with its CPUS.
    keep = typ != F.PAD
    recs, typ, sec_cpu, sec_id = recs[keep], typ[keep], sec_cpu[keep], sec_id[keep]
    ts = (recs["hdr"] & np.uint64(F.TS_MASK)).astype(np.int64)
    c = (recs["hdr"] >> np.uint64(56)).astype(np.uint16)
    a, b = recs["a"], recs["b"]
    n = len(recs)

    # Each CPUS record belongs to the nearest earlier non-CPUS record of its
    # section, which must be a CONSIDER; any other record type in between
    # (or the start of the section) makes it an orphan.
    idx = np.arange(n, dtype=np.int64)
    is_cpus = typ == F.CPUS
    owner = np.maximum.accumulate(np.where(is_cpus, -1, idx)) if n else idx
    sec_start = np.zeros(len(chunks) + 1, np.int64)
    np.cumsum(np.bincount(sec_id, minlength=len(chunks)), out=sec_start[1:])
    safe_owner = np.maximum(owner, 0)
    linked = (is_cpus & (owner >= sec_start[sec_id])
              & (typ[safe_owner] == F.CONSIDER))
    orphans = int(np.count_nonzero(is_cpus & ~linked))

    is_cons = typ == F.CONSIDER
    ncons = int(np.count_nonzero(is_cons))
    cid_of = np.full(n, -1, np.int32)
    cid_of[is_cons] = np.arange(ncons, dtype=np.int32)

    # Expand the 64-bit words bit by bit: 64 vector passes use far less
    # memory than unpacking every word into 64 bytes at once.
    lr = np.flatnonzero(linked)
    words = a[lr].astype(np.uint64) | (b[lr].astype(np.uint64) << np.uint64(32))
    base = c[lr].astype(np.int64) * 64
    owners = cid_of[owner[lr]]
    pair_cid, pair_cpu = [], []
    for k in range(64):
        hit = np.flatnonzero((words >> np.uint64(k)) & np.uint64(1))
        if len(hit):
            pair_cid.append(owners[hit])
            pair_cpu.append(base[hit] + k)
    pair_cid = np.concatenate(pair_cid) if pair_cid else np.zeros(0, np.int64)
    pair_cpu = np.concatenate(pair_cpu) if pair_cpu else np.zeros(0, np.int64)
    beyond = pair_cpu >= nr_cpus
    if beyond.any():
        warnings.append("%d considered CPUs >= nr_cpus (%d) ignored"
                        % (int(beyond.sum()), nr_cpus))
        pair_cid, pair_cpu = pair_cid[~beyond], pair_cpu[~beyond]
    cons_ptr, cons_cpus = build_csr(pair_cid, pair_cpu, ncons)

    is_event = np.isin(typ, F.EVENT_TYPES)
    # A runqueue change of a CPU outside the dump cannot be drawn or summed.
    bad_cpu = np.isin(typ, (F.NR_RUNNING, F.LOAD)) & (a >= nr_cpus)
    if bad_cpu.any():
        warnings.append("%d NR_RUNNING/LOAD records name a CPU >= nr_cpus (%d); ignored"
                        % (int(bad_cpu.sum()), nr_cpus))
    sel = np.flatnonzero(is_event & ~bad_cpu)
    ev = np.empty(len(sel), EVENT_DTYPE)
    ev["ts"] = ts[sel]
    ev["type"] = typ[sel]
    ev["c"] = c[sel]
    ev["cpu"] = sec_cpu[sel]
    ev["a"] = a[sel]
    ev["b"] = b[sel]
    ev["cid"] = cid_of[sel]
    ev = ev[np.argsort(ev["ts"], kind="stable")]

    # The length before a CPU's first NR_RUNNING record is that record's
    # value minus its signed change (c); the recorder's start snapshot has
    # change 0, so it gives the state directly.
    nr_initial = np.full(nr_cpus, -1, np.int64)
    nr_ev = ev[ev["type"] == F.NR_RUNNING]
    if len(nr_ev):
        cpus, first = np.unique(nr_ev["a"].astype(np.int64), return_index=True)
        change = ((nr_ev["c"][first].astype(np.int64) & 0xFF) ^ 0x80) - 0x80
        before = nr_ev["b"][first].astype(np.int64) - change
        ok = (cpus < nr_cpus) & (before >= 0)
        nr_initial[cpus[ok]] = before[ok]

    return Trace(path=path, fmt="binary", nr_cpus=nr_cpus,
                 node_of=np.zeros(nr_cpus, np.int32), events=ev,
                 cons_ptr=cons_ptr, cons_cpus=cons_cpus, duration_ns=0,
                 type_counts=type_counts, unknown_types=unknown,
                 orphans=orphans, warnings=warnings, nr_initial=nr_initial)
