"""Chrome trace-event JSON for ui.perfetto.dev (and chrome://tracing).

Layout: one process per NUMA node (pid = node + 1, "node N"), one thread
per CPU (tid = 1000 + cpu, "cpu N"); pids/tids avoid 0, which viewers
treat as the idle task. Per CPU:
  - counters "cpuN nr_running" and "cpuN load" (process-scoped, so the CPU
    is in the counter name);
  - migrations as zero-length slices "migrate <reason>" on the source CPU
    (args pid/src/dst/reason) joined by a flow arrow to "migrate in
    <reason>" on the destination CPU;
  - instants on the CPU's thread: "wake_busy" on the target, "violation
    <phase>" on the idle CPU, and with --consider, "consider <kind>" on the
    CPU that wrote the record;
  - confirmed violation reports as async slices (id = report id) from
    confirm to end (or the end of the trace), under the idle CPU's node,
    so that overlapping reports still show; watch records (id 0) are only
    instants;
  - with sched_switch in the input (trace-cmd text or trace.dat), which
    task ran: slices "<comm> <pid>" on the CPU's thread, from the switch to
    it to the switch away (args pid, comm, prio, end_state), and
    "wakeup <comm> <pid>" instants on the CPU the task was queued on.
    Chrome JSON events make no CPU tracks (Perfetto builds those from
    ftrace data only, e.g. systrace text in the JSON's systemTraceEvents,
    whose tasks would share pid/tid numbers with the threads here and
    whose one bad line fails the whole import): a thread per CPU holding
    the tasks' slices is the JSON way to show them.
Timestamps are microseconds since the trace start, or with absolute=True
on the recording's clock (binary: ns since boot in the header's start_ns;
trace-cmd: its trace clock), so exports of one boot line up.
"""

from __future__ import annotations

import json

import numpy as np

from . import format as F
from .analysis import violations
from .trace import cpulist

TID_BASE = 1000
NO_NODE_PID = 0x7FFF    # CPUs the dump marks as not possible


def _us(ns):
    return round(int(ns) / 1000.0, 3)


class _Writer:
    """Comma-separated events; one shared encoder (json.dumps with
    separators builds a new one per call, which dominated the run time)."""

    def __init__(self, f):
        self.f = f
        self.n = 0
        self.encode = json.JSONEncoder(separators=(",", ":")).encode

    def __call__(self, obj):
        self.raw(self.encode(obj))

    def raw(self, text):
        self.f.write(",\n" if self.n else "\n")
        self.f.write(text)
        self.n += 1


def export(trace, out, consider=None, with_load=True, absolute=False, with_tasks=True):
    """Write the JSON; consider: None, "all" or a kind id. Returns (events
    written, task runs, task lines that did not parse)."""
    from .tasks import parse
    base = trace.start_ns if absolute else 0

    def us(ns):
        return _us(base + ns)

    node_of = trace.node_of
    pids = [int(n) + 1 if n >= 0 else NO_NODE_PID for n in node_of.tolist()]

    def pid(cpu):
        return pids[cpu] if 0 <= cpu < len(pids) else NO_NODE_PID

    def tid(cpu):
        return TID_BASE + int(cpu)

    with open(out, "w") as f:
        f.write('{"displayTimeUnit":"ns","otherData":')
        f.write(json.dumps({"source": str(trace.path), "format": trace.fmt,
                            "cpus": trace.nr_cpus, "start_ns": trace.start_ns,
                            "time": "absolute" if absolute else "since trace start",
                            "tool": "sched-vis"}))
        f.write(',"traceEvents":[')
        emit = _Writer(f)

        for n in sorted(set(int(x) for x in node_of) | {-1}):
            cpus = np.flatnonzero(node_of == n)
            if not len(cpus):
                continue
            p = n + 1 if n >= 0 else NO_NODE_PID
            emit({"ph": "M", "name": "process_name", "pid": p,
                  "args": {"name": trace.node_label(n)}})
            emit({"ph": "M", "name": "process_sort_index", "pid": p,
                  "args": {"sort_index": p}})
            for c in cpus:
                emit({"ph": "M", "name": "thread_name", "pid": p, "tid": tid(c),
                      "args": {"name": "cpu %d" % c}})
                emit({"ph": "M", "name": "thread_sort_index", "pid": p, "tid": tid(c),
                      "args": {"sort_index": int(c)}})

        if trace.nr_initial is not None:
            # Only where the first record comes later than the trace start.
            ev0 = trace.events[trace.events["type"] == F.NR_RUNNING]
            at_zero = set(ev0["a"][ev0["ts"] == 0].tolist())
            for c in np.flatnonzero(trace.nr_initial >= 0):
                if int(c) in at_zero:
                    continue
                emit({"ph": "C", "name": "cpu%d" % c, "pid": pid(c), "ts": us(0),
                      "args": {"nr_running": int(trace.nr_initial[c])}})

        # Counters are most of a trace: format them directly (numbers only).
        counter = '{"ph":"C","name":"cpu%d","pid":%d,"ts":%d.%03d,"args":{"%s":%d}}'
        flow = 0
        ev = trace.events
        cols = zip(ev["type"].tolist(), ev["ts"].tolist(), ev["c"].tolist(),
                   ev["cpu"].tolist(), ev["a"].tolist(), ev["b"].tolist(),
                   ev["cid"].tolist())
        nr_type, load_type = F.NR_RUNNING, F.LOAD
        for t, ns, c, w, a, b, cid in cols:
            if t == nr_type or t == load_type:
                if t == nr_type or with_load:
                    whole, frac = divmod(base + ns, 1000)
                    emit.raw(counter % (a, pid(a), whole, frac,
                                        "nr_running" if t == nr_type else "load", b))
                continue
            ts = us(ns)
            if t == F.MIGRATE:
                src, dst = b & 0xFFFF, b >> 16
                reason = trace.reason_name(c)
                args = {"pid": a, "src": src, "dst": dst, "reason": reason}
                flow += 1
                # Zero-length slices rather than instants: Perfetto binds
                # (v2) flow arrows only to slices. The head is 1 ns after the
                # tail so that importers see the flow start first.
                emit({"ph": "X", "dur": 0, "name": "migrate %s" % reason,
                      "cat": "migrate", "pid": pid(src), "tid": tid(src), "ts": ts,
                      "args": args, "bind_id": flow, "flow_out": True})
                emit({"ph": "X", "dur": 0, "name": "migrate in %s" % reason,
                      "cat": "migrate", "pid": pid(dst), "tid": tid(dst),
                      "ts": us(ns + 1), "args": args, "bind_id": flow,
                      "flow_in": True})
            elif t == F.WAKE_BUSY:
                target, idle = b & 0xFFFF, b >> 16
                emit({"ph": "i", "s": "t", "name": "wake_busy", "cat": "wake_busy",
                      "pid": pid(target), "tid": tid(target), "ts": ts,
                      "args": {"pid": a, "target": target, "idle": idle}})
            elif t == F.VIOLATION:
                idle, busy = b & 0xFFFF, b >> 16
                phase = F.PHASE_NAMES.get(c, "phase%d" % c)
                emit({"ph": "i", "s": "t", "name": "violation %s" % phase,
                      "cat": "violation", "pid": pid(idle), "tid": tid(idle), "ts": ts,
                      "args": {"id": a, "idle": idle, "busy": busy, "phase": phase}})
            elif t == F.CONSIDER and consider is not None \
                    and (consider == "all" or consider == c):
                emit({"ph": "i", "s": "t", "name": "consider %s" % trace.kind_name(c),
                      "cat": "consider", "pid": pid(w), "tid": tid(w), "ts": ts,
                      "args": {"subject": a,
                               "result": None if b == F.CPU_NONE else b,
                               "cpus": cpulist(trace.cpu_set(cid))}})

        for v in violations(trace):
            begin = v["confirm"] if v["confirm"] is not None else 0
            end = v["end"] if v["end"] is not None else trace.duration_ns
            args = {"id": v["id"], "idle": v["idle"], "busy": v["busy"],
                    "watch_us": None if v["watch"] is None else us(v["watch"]),
                    "confirm_in_trace": v["confirm"] is not None,
                    "end_in_trace": v["end"] is not None}
            name = "violation %d: cpu %d idle, cpu %d busy" % (v["id"], v["idle"], v["busy"])
            p = pid(v["idle"])
            emit({"ph": "b", "cat": "violation", "name": name, "id": v["id"], "pid": p,
                  "ts": us(begin), "args": args})
            emit({"ph": "e", "cat": "violation", "name": name, "id": v["id"], "pid": p,
                  "ts": us(end)})

        runs, wakeups, bad = parse(trace) if with_tasks else ([], [], 0)
        start = trace.start_ns
        for r in runs:
            emit({"ph": "X", "cat": "task", "name": "%s %d" % (r.comm, r.pid),
                  "pid": pid(r.cpu), "tid": tid(r.cpu), "ts": us(r.start - start),
                  "dur": _us(r.end - r.start),
                  "args": {"pid": r.pid, "comm": r.comm, "prio": r.prio,
                           "end_state": r.end_state, "start_in_trace": r.start_known,
                           "end_in_trace": r.end_known}})
        for w in wakeups:
            emit({"ph": "i", "s": "t", "cat": "task",
                  "name": "wakeup %s %d" % (w.comm, w.pid),
                  "pid": pid(w.target), "tid": tid(w.target), "ts": us(w.ts - start),
                  "args": {"pid": w.pid, "comm": w.comm, "prio": w.prio,
                           "target_cpu": w.target, "waker_cpu": w.cpu, "new": w.new}})
        f.write("\n]}\n")
        return emit.n, len(runs), bad
