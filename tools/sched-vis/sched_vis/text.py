"""Reader of `trace-cmd report` output for the sched_events trace system."""

from __future__ import annotations

import re

import numpy as np

from . import format as F
from .trace import EVENT_DTYPE, Trace, TraceError, build_csr

# "<comm>-<pid> [<cpu>] [<latency flags>] <secs>: [sched_events:]<event>: <args>"
# comm may hold spaces and dashes and is not needed: search for the first
# "-<pid> [<cpu>]" instead of matching from the line start (also faster).
LINE_RE = re.compile(
    r"-\d+\s+\[(?P<cpu>\d+)\]\s+(?:\S+\s+)?"
    r"(?P<ts>\d+(?:\.\d*)?):\s+(?:sched_events:)?(?P<ev>\w+):\s?(?P<args>.*)")
KV_RE = re.compile(r"(\w+)=(\S*)")
CPUS_HEADER_RE = re.compile(r"^\s*cpus=(\d+)\s*$")
LOST_RE = re.compile(r"\[LOST (\d+) EVENTS?\]")

MAX_CPU = 0xFFFF        # CPUs are 16-bit fields in the binary format
MAX_U32 = 0xFFFFFFFF
EXTRA_ID = 256          # first id given to kind/reason names we do not know


class _Bad(Exception):
    pass


def _int(d, key, limit=MAX_U32, signed=False):
    """Field `key` of d as an int in 0..limit (limit None: no upper bound;
    signed: also down to -limit-1)."""
    try:
        s = d[key]
    except KeyError:
        raise _Bad("missing field %s=" % key) from None
    try:
        v = int(s, 16) if s[:2] in ("0x", "0X") else int(s)
    except ValueError:
        raise _Bad("bad value %r for %s=" % (s, key)) from None
    low = -limit - 1 if signed else 0
    if v < low or (limit is not None and v > limit):
        raise _Bad("%s=%d out of range" % (key, v))
    return v


def _ts_ns(s):
    sec, _, frac = s.partition(".")
    return int(sec) * 1_000_000_000 + int((frac + "000000000")[:9])


def _mask_cpus(s):
    """CPUs of a "%*pb" mask: 32-bit hex words, most significant first."""
    if not s:
        return []
    words = s.split(",")
    v = 0
    for i, w in enumerate(words):
        if not w or (i and len(w) > 8):
            raise _Bad("bad cpus= mask %r" % s)
        try:
            v = (v << 32) | int(w, 16)
        except ValueError:
            raise _Bad("bad cpus= mask %r" % s) from None
    if v.bit_length() > MAX_CPU + 1:
        raise _Bad("cpus= mask %r names CPUs beyond %d" % (s, MAX_CPU))
    cpus = []
    while v:
        low = v & -v
        cpus.append(low.bit_length() - 1)
        v ^= low
    return cpus


class _Names:
    """Name <-> id for kinds and reasons; unknown names get fresh ids."""

    def __init__(self, known, prefix):
        self.names = dict(known)
        self.ids = {n: i for i, n in known.items()}
        self.prefix = prefix
        self.next = EXTRA_ID

    def id(self, s, key):
        if s in self.ids:
            return self.ids[s]
        # __print_symbolic() prints values it has no name for in hex.
        if s[:2] in ("0x", "0X"):
            try:
                return int(s, 16)
            except ValueError:
                raise _Bad("bad value %r for %s=" % (s, key)) from None
        num = s[len(self.prefix):] if s.startswith(self.prefix) else s
        if num.isdigit():
            return int(num)
        if not re.fullmatch(r"\w+", s):
            raise _Bad("bad value %r for %s=" % (s, key))
        self.ids[s] = self.next
        self.names[self.next] = s
        self.next += 1
        return self.ids[s]


class _Parser:
    """Field parsers per event; each returns (c, a, b, considered CPUs)."""

    def __init__(self):
        self.kinds = _Names(F.KIND_NAMES, "kind")
        self.reasons = _Names(F.REASON_NAMES, "reason")
        self.phases = {n: i for i, n in F.PHASE_NAMES.items()}
        self.phases.update({str(i): i for i in F.PHASE_NAMES})
        # nr_running before each CPU's first event, when change= tells it
        self.first_change = {}
        self.by_type = {
            F.NR_RUNNING: self.nr_running,
            F.LOAD: self.load,
            F.CONSIDER: self.consider,
            F.MIGRATE: self.migrate,
            F.WAKE_BUSY: self.wake_busy,
            F.VIOLATION: self.violation,
        }

    def nr_running(self, d):
        cpu = _int(d, "cpu", MAX_CPU)
        n = _int(d, "nr_running")
        if cpu not in self.first_change:
            change = d.get("change")
            try:
                self.first_change[cpu] = None if change is None else n - int(change)
            except ValueError:
                raise _Bad("bad value %r for change=" % change) from None
        return 0, cpu, n, None

    def load(self, d):
        # The recorder clamps load to 32 bits; so does the text reader.
        return 0, _int(d, "cpu", MAX_CPU), min(_int(d, "load", None), MAX_U32), None

    def consider(self, d):
        if "kind" not in d:
            raise _Bad("missing field kind=")
        if "cpus" not in d:
            raise _Bad("missing field cpus=")
        r = d.get("result")
        res = F.CPU_NONE if r in ("-1", "none", str(F.CPU_NONE)) else \
            _int(d, "result", MAX_CPU)
        # subject is an int in the tracepoint, a u32 in the dump
        subject = _int(d, "subject", MAX_U32, signed=True) & MAX_U32
        return self.kinds.id(d["kind"], "kind"), subject, res, _mask_cpus(d["cpus"])

    def migrate(self, d):
        if "reason" not in d:
            raise _Bad("missing field reason=")
        return (self.reasons.id(d["reason"], "reason"), _int(d, "pid"),
                _int(d, "src", MAX_CPU) | _int(d, "dst", MAX_CPU) << 16, None)

    def wake_busy(self, d):
        return (0, _int(d, "pid"),
                _int(d, "target", MAX_CPU) | _int(d, "idle", MAX_CPU) << 16, None)

    def violation(self, d):
        p = d.get("phase")
        if p is None:
            raise _Bad("missing field phase=")
        if p not in self.phases:
            raise _Bad("bad value %r for phase=" % p)
        return (self.phases[p], _int(d, "id"),
                _int(d, "idle", MAX_CPU) | _int(d, "busy", MAX_CPU) << 16, None)


def decode(data, path):
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    parser = _Parser()
    by_name = {name: (t, parser.by_type[t]) for name, t in F.TEXT_EVENTS.items()}
    rows = []                     # (ts, type, c, cpu, a, b, cid)
    set_cid, set_cpu = [], []
    task_lines = []
    task_events = set(F.TASK_EVENTS)
    header_cpus = 0
    lost = 0
    lineno = 0
    ncons = 0
    # Out of order: events earlier than one before them (reports are sorted;
    # concatenated or edited ones may not be).
    latest, back, first_back = -1, 0, 0
    search = LINE_RE.search
    findall = KV_RE.findall
    for lineno, line in enumerate(text.splitlines(), 1):
        m = search(line)
        if m is None:
            h = CPUS_HEADER_RE.match(line)
            if h:
                header_cpus = int(h.group(1))
            elif "[LOST" in line:
                lo = LOST_RE.search(line)
                if lo:
                    lost += int(lo.group(1))
            continue
        cpu, stamp, name, args = m.groups()
        handler = by_name.get(name)
        if handler is None:
            if name in task_events:
                task_lines.append((_ts_ns(stamp), int(cpu), name, args))
            continue
        t, parse = handler
        if " comm=" in args:
            # comm may hold spaces and "x=y" words: fields before it are
            # taken from before it, so a comm cannot fake them.
            head, _, tail = args.partition(" comm=")
            d = dict(findall(tail))
            d.update(findall(head))
        else:
            d = dict(findall(args))
        try:
            c, a, b, cpus = parse(d)
            cpu = int(cpu)
            if cpu > MAX_CPU:
                raise _Bad("[cpu] %d out of range" % cpu)
        except _Bad as e:
            raise TraceError(path, "%s: %s" % (name, e), line=lineno) from None
        if cpus is None:
            cid = -1
        else:
            cid = ncons
            ncons += 1
            set_cid.extend([cid] * len(cpus))
            set_cpu.extend(cpus)
        ts = _ts_ns(stamp)
        if ts < latest:
            back += 1
            first_back = first_back or lineno
        else:
            latest = ts
        rows.append((ts, t, c, cpu, a, b, cid))

    if not rows:
        raise TraceError(path, "no sched_events events found in %d lines: not a "
                         "trace-cmd report of sched_events, a SCHEDEVT dump or a "
                         "trace.dat" % lineno, line=max(lineno, 1))

    ev = np.array(rows, dtype=EVENT_DTYPE)
    warnings = []
    if back:
        # Sorting moves the start to the earliest event: say so, once.
        lo, first = int(ev["ts"].min()), int(ev["ts"][0])
        warnings.append("timestamps out of order: %d events earlier than one before "
                        "them, first at line %d; sorted by time%s"
                        % (back, first_back, "" if lo == first else
                           ", so the trace starts at %.6f s, not at the first "
                           "event's %.6f s" % (lo / 1e9, first / 1e9)))
    ev = ev[np.argsort(ev["ts"], kind="stable")]
    counts = {int(t): int(n) for t, n in enumerate(np.bincount(ev["type"])) if n}
    start = int(ev["ts"][0])
    ev["ts"] -= start
    cons_ptr, cons_cpus = build_csr(set_cid, set_cpu, ncons)

    # Text has no CPU count except the optional "cpus=N" header line: take
    # the larger of it and every CPU an event names.
    hi = [int(ev["cpu"].max())]
    t, a, b = ev["type"], ev["a"], ev["b"]
    state = np.isin(t, (F.NR_RUNNING, F.LOAD))
    if state.any():
        hi.append(int(a[state].max()))
    pair = np.isin(t, (F.MIGRATE, F.WAKE_BUSY, F.VIOLATION))
    if pair.any():
        hi.append(int((b[pair] & 0xFFFF).max()))
        hi.append(int((b[pair] >> 16).max()))
    res = (t == F.CONSIDER) & (b != F.CPU_NONE)
    if res.any():
        hi.append(int(b[res].max()))
    if len(cons_cpus):
        hi.append(int(cons_cpus.max()))
    nr_cpus = max(header_cpus, max(hi) + 1)

    initial = np.full(nr_cpus, -1, np.int64)
    for cpu, v in parser.first_change.items():
        if v is not None and v >= 0:
            initial[cpu] = v

    return Trace(path=path, fmt="text", nr_cpus=nr_cpus,
                 node_of=np.zeros(nr_cpus, np.int32), events=ev,
                 cons_ptr=cons_ptr, cons_cpus=cons_cpus,
                 duration_ns=int(ev["ts"][-1]), start_ns=start,
                 type_counts=counts, lost_text=lost, nr_initial=initial,
                 kind_names=parser.kinds.names, reason_names=parser.reasons.names,
                 lines=lineno, warnings=warnings, task_lines=task_lines)
