"""Step functions of runqueue state, and what is computed from them."""

from __future__ import annotations

import numpy as np

from . import format as F


class Steps:
    """Per-CPU step functions of nr_running or load.

    For CPU c, segment i covers [t[c][i], t[c][i+1]) (the last one runs to
    `end`) with value v[c][i]. The first segment starts at 0 and holds the
    value before the CPU's first event: unknown (NaN) unless the trace says
    it (text reports with change=, or assume_idle). A CPU that appears in no
    event is unknown throughout.
    """

    def __init__(self, trace, etype=F.NR_RUNNING, assume_idle=False):
        ev = trace.events[trace.events["type"] == etype]
        self.end = trace.duration_ns
        cpu = ev["a"].astype(np.int64)
        order = np.argsort(cpu, kind="stable")     # events already sorted by ts
        ts, val, cpu = ev["ts"][order], ev["b"][order].astype(np.float64), cpu[order]
        bounds = np.searchsorted(cpu, np.arange(trace.nr_cpus + 1))
        self.t, self.v = [], []
        for c in range(trace.nr_cpus):
            lo, hi = bounds[c], bounds[c + 1]
            init = np.nan
            if etype == F.NR_RUNNING and trace.nr_initial is not None \
                    and trace.nr_initial[c] >= 0:
                init = float(trace.nr_initial[c])
            elif assume_idle:
                init = 0.0
            self.t.append(np.concatenate(([0], ts[lo:hi])).astype(np.int64))
            self.v.append(np.concatenate(([init], val[lo:hi])))

    def segments(self, c, start=0, end=None):
        """(s, e, v) of CPU c clipped to [start, end), positive length only."""
        end = self.end if end is None else end
        t, v = self.t[c], self.v[c]
        s = t
        e = np.append(t[1:], max(self.end, int(t[-1])))
        s, e = np.maximum(s, start), np.minimum(e, end)
        keep = e > s
        return s[keep], e[keep], v[keep]

    def raster(self, c, edges, agg="mean"):
        """Value of CPU c per bin between consecutive `edges` (ns, float).

        mean: time-weighted mean over the known part of the bin;
        max: largest value held for a positive time in the bin.
        NaN where the whole bin is unknown.
        """
        t, v = self.t[c], self.v[c]
        if agg == "max":
            return self._raster_max(t, v, edges)
        known = ~np.isnan(v)
        vz = np.where(known, v, 0.0)
        seg = np.diff(np.append(t, max(self.end, int(t[-1])))).astype(np.float64)
        area = np.concatenate(([0.0], np.cumsum(vz * seg)))
        kt = np.concatenate(([0.0], np.cumsum(known * seg)))

        def at(cum, rate, x):
            k = np.searchsorted(t, x, side="right") - 1
            k = np.clip(k, 0, len(t) - 1)
            return cum[k] + rate[k] * (x - t[k])

        a = np.diff(at(area, vz, edges))
        w = np.diff(at(kt, known.astype(np.float64), edges))
        out = np.full(len(edges) - 1, np.nan)
        ok = w > 0
        out[ok] = a[ok] / w[ok]
        return out

    def _raster_max(self, t, v, edges):
        nb = len(edges) - 1
        seg_end = np.append(t[1:], max(self.end, int(t[-1])))
        live = seg_end > t                           # zero-length: transient
        # Value held at each bin's left edge ...
        k = np.clip(np.searchsorted(t, edges[:-1], side="right") - 1, 0, len(t) - 1)
        out = np.where(seg_end[k] > edges[:-1], v[k], np.nan)
        # ... and every value that starts inside the bin.
        inside = live & (t > edges[0]) & (t < edges[-1])
        b = np.searchsorted(edges, t[inside], side="right") - 1
        np.fmax.at(out, np.clip(b, 0, nb - 1), v[inside])
        return out


def _merge(s, e):
    """Union of half-open intervals; touching ones are joined."""
    if not len(s):
        return s, e
    order = np.argsort(s, kind="stable")
    s, e = s[order], e[order]
    reach = np.maximum.accumulate(e)
    new = np.ones(len(s), bool)
    new[1:] = s[1:] > reach[:-1]
    starts = np.flatnonzero(new)
    return s[starts], np.maximum.reduceat(e, starts)


def idle_overload(trace, start=0, end=None, top=10, assume_idle=False):
    """Time each CPU was idle while another had nr_running >= 2.

    Only possible CPUs count; CPUs in an unknown state (before their first
    NR_RUNNING event) are neither idle nor overloaded.
    """
    end = trace.duration_ns if end is None else min(end, trace.duration_ns)
    start = max(0, start)
    steps = Steps(trace, F.NR_RUNNING, assume_idle=assume_idle)
    cpus = trace.possible_cpus()
    idle, over = {}, []
    per_cpu = []
    for c in cpus:
        s, e, v = steps.segments(c, start, end)
        i = v == 0
        idle[c] = _merge(s[i], e[i])
        o = v >= 2
        over.append((s[o], e[o], np.full(int(o.sum()), c)))
        per_cpu.append({
            "cpu": int(c),
            "node": int(trace.node_of[c]),
            "idle_ns": int((e[i] - s[i]).sum()),
            "overloaded_ns": int((e[o] - s[o]).sum()),
            "unknown_ns": int((end - start) - (e - s)[~np.isnan(v)].sum()),
        })
    os_ = np.concatenate([x[0] for x in over]) if over else np.zeros(0, np.int64)
    oe = np.concatenate([x[1] for x in over]) if over else np.zeros(0, np.int64)
    oc = np.concatenate([x[2] for x in over]) if over else np.zeros(0, np.int64)
    us, ue = _merge(os_, oe)

    # A CPU that is idle is not itself overloaded, so "another CPU has >= 2"
    # is just "some CPU has >= 2": intersect its idle time with the union.
    pieces = []
    for rec in per_cpu:
        s, e = idle[rec["cpu"]]
        j0 = np.searchsorted(ue, s, side="right")
        j1 = np.searchsorted(us, e, side="left")
        n = np.maximum(j1 - j0, 0)
        owner = np.repeat(np.arange(len(s)), n)
        j = np.repeat(j0, n) + (np.arange(n.sum()) - np.repeat(np.cumsum(n) - n, n))
        ps = np.maximum(s[owner], us[j])
        pe = np.minimum(e[owner], ue[j])
        ok = pe > ps
        ps, pe = ps[ok], pe[ok]
        rec["idle_overloaded_ns"] = int((pe - ps).sum())
        pieces.append((ps, pe, np.full(len(ps), rec["cpu"])))

    ps = np.concatenate([p[0] for p in pieces]) if pieces else np.zeros(0, np.int64)
    pe = np.concatenate([p[1] for p in pieces]) if pieces else np.zeros(0, np.int64)
    pc = np.concatenate([p[2] for p in pieces]) if pieces else np.zeros(0, np.int64)
    # Longest first; ties by start time, then CPU.
    order = np.lexsort((pc, ps, -(pe - ps)))[:max(top, 0)]
    worst = []
    for k in order:
        s, e = int(ps[k]), int(pe[k])
        busy = np.unique(oc[(os_ < e) & (oe > s)])
        worst.append({"start_ns": s, "end_ns": e, "duration_ns": e - s,
                      "idle_cpu": int(pc[k]), "overloaded_cpus": [int(x) for x in busy]})

    total = sum(r["idle_overloaded_ns"] for r in per_cpu)
    cpu_time = (end - start) * len(cpus)
    known = cpu_time - sum(r["unknown_ns"] for r in per_cpu)
    return {
        "start_ns": int(start),
        "end_ns": int(end),
        "cpus": per_cpu,
        "total_ns": int(total),
        "cpu_time_ns": int(cpu_time),
        "fraction": total / cpu_time if cpu_time else 0.0,
        "known_cpu_time_ns": int(known),
        "fraction_of_known": total / known if known else 0.0,
        "intervals": worst,
        "nr_intervals": int(len(ps)),
    }


def violations(trace):
    """Sanity-checker reports: [{id, idle, busy, watch, confirm, end}].

    The checker gives a report id only when it confirms a violation; watch
    records carry id 0. A report's watch time is that of the latest watch
    of the same idle/busy CPU pair before its confirm (None if not in the
    trace), and a report without an end record is open until the end of
    the trace (e.g. the recording froze at its confirm). An end whose
    confirm was overwritten gives a report with confirm None.
    """
    ev = trace.of_type(F.VIOLATION)
    pending = {}
    reports = {}
    for ts, phase, rid, b in zip(ev["ts"].tolist(), ev["c"].tolist(), ev["a"].tolist(),
                                 ev["b"].tolist()):
        pair = (b & 0xFFFF, b >> 16)
        if phase == F.PHASE_WATCH:
            pending[pair] = ts
        elif phase == F.PHASE_CONFIRM and rid not in reports:
            reports[rid] = {"id": rid, "idle": pair[0], "busy": pair[1],
                            "watch": pending.pop(pair, None), "confirm": ts, "end": None}
        elif phase == F.PHASE_END:
            r = reports.setdefault(rid, {"id": rid, "idle": pair[0], "busy": pair[1],
                                         "watch": None, "confirm": None, "end": None})
            if r["end"] is None:
                r["end"] = ts
    return sorted(reports.values(),
                  key=lambda r: (r["confirm"] if r["confirm"] is not None else -1, r["id"]))
