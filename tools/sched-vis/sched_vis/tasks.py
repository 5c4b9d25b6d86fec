"""Which task ran where: the sched_switch and sched_wakeup lines of a
trace-cmd report (Trace.task_lines), for the Perfetto export.

trace-cmd prints them through its sched plugin ("comm:pid [prio] S ==>
comm:pid [prio]", "comm:pid [prio] success=1 CPU:003") or, without plugins, in the
kernel's own format (prev_comm=... prev_pid=... ==> next_comm=...,
comm=... pid=... target_cpu=...). comm may hold spaces and colons.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List

# As libtraceevent's plugin_sched_switch.c prints them (prio and state may
# be missing), then as the kernel's format strings do.
SWITCH_RES = (
    re.compile(r"^\s*(?P<pc>.*):(?P<pp>\d+) (?:\[(?P<ppr>-?\d+)\] )?(?P<st>\S*) ==> "
               r"(?P<nc>.*):(?P<np>\d+)(?: \[(?P<npr>-?\d+)\])?"),
    re.compile(r"prev_comm=(?P<pc>.*?) prev_pid=(?P<pp>\d+)(?: prev_prio=(?P<ppr>-?\d+))?"
               r"(?: prev_state=(?P<st>\S+))? ==> next_comm=(?P<nc>.*?) "
               r"next_pid=(?P<np>\d+)(?: next_prio=(?P<npr>-?\d+))?"),
)
WAKEUP_RES = (
    re.compile(r"^\s*(?P<c>.*):(?P<p>\d+)(?: \[(?P<pr>-?\d+)\])?(?: success=\d+)? "
               r"CPU:(?P<t>\d+)"),
    re.compile(r"comm=(?P<c>.*?) pid=(?P<p>\d+)(?: prio=(?P<pr>-?\d+))?"
               r"(?: success=\d+)? target_cpu=(?P<t>\d+)"),
)


def _match(res, args):
    for r in res:
        m = r.search(args)
        if m:
            return m
    return None


@dataclass
class Run:
    """A task on a CPU from `start` to `end` (ns, absolute like the report).
    start_known/end_known: False where the trace does not show the switch
    (the task ran when the recording began, or still ran when it ended)."""
    cpu: int
    start: int
    end: int
    pid: int
    comm: str
    prio: object
    end_state: object
    start_known: bool
    end_known: bool


@dataclass
class Wakeup:
    ts: int
    cpu: int              # where the waker ran
    target: int           # the CPU the task was queued on
    pid: int
    comm: str
    prio: object
    new: bool             # sched_wakeup_new (a forked task's first wakeup)


def parse(trace):
    """(runs, wakeups, unparsed lines) from trace.task_lines, clipped to the
    trace's span [start_ns, start_ns + duration_ns] and the last task event.
    pid 0 (the idle task) gets no runs."""
    lines = sorted(trace.task_lines, key=lambda x: x[0])    # stable: ties keep order
    lo = trace.start_ns
    hi = max([lo + trace.duration_ns] + [x[0] for x in lines])
    runs: List[Run] = []
    wakeups: List[Wakeup] = []
    running = {}                  # cpu -> Run still open
    bad = 0

    def close(cpu, ts, state, known):
        r = running.pop(cpu, None)
        if r is not None and r.pid != 0 and ts > max(r.start, lo):
            r.end, r.end_state, r.end_known = ts, state, known
            if r.start < lo:
                r.start, r.start_known = lo, False
            runs.append(r)

    for ts, cpu, name, args in lines:
        if name == "sched_switch":
            m = _match(SWITCH_RES, args)
            if m is None:
                bad += 1
                continue
            prev = int(m["pp"])
            if cpu not in running and prev != 0:
                # Running since before the recording (or its first switch).
                running[cpu] = Run(cpu, lo, lo, prev, m["pc"], _int(m["ppr"]), None,
                                   False, False)
            close(cpu, ts, m["st"] or None, True)
            running[cpu] = Run(cpu, ts, ts, int(m["np"]), m["nc"], _int(m["npr"]), None,
                               True, False)
        else:
            m = _match(WAKEUP_RES, args)
            if m is None:
                bad += 1
                continue
            if lo <= ts <= hi:
                wakeups.append(Wakeup(ts, cpu, int(m["t"]), int(m["p"]), m["c"],
                                      _int(m["pr"]), name == "sched_wakeup_new"))
    for cpu in sorted(running):
        close(cpu, hi, None, False)
    runs.sort(key=lambda r: (r.start, r.cpu))
    return runs, wakeups, bad


def _int(s):
    return None if s is None else int(s)
