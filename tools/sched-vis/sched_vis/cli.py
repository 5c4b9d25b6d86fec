"""Command line: sched-vis {info,heatmap,compare,idle-overload,perfetto} FILE."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

from . import __version__, format as F
from .loader import NodeSpecError, load
from .trace import TraceError, cpulist

PROG = "sched-vis"

EXIT_OK, EXIT_INTERNAL, EXIT_INPUT = 0, 1, 2

IDLE_OVERLOAD_NOTE = (
    "affinity is not recorded in the trace, so this is an upper bound of what "
    "the in-kernel sanity checker reports (it only counts an idle CPU that a "
    "waiting task is allowed to run on)")


class UsageError(Exception):
    """Bad option value found after parsing (exit 2 like argparse errors)."""


# -- helpers -------------------------------------------------------------------

def _ns(seconds):
    return None if seconds is None else int(round(seconds * 1e9))


def _window(trace, args):
    """(start, end) in ns; trace may be a list (compare: the longest counts)."""
    traces = trace if isinstance(trace, list) else [trace]
    duration = max(t.duration_ns for t in traces)
    start = _ns(args.start) or 0
    end = _ns(args.end)
    if start < 0 or (end is not None and end <= start):
        raise UsageError("--end must be after --start, both >= 0")
    if start >= max(duration, 1):
        raise UsageError("--start %.6f s is past the end of the trace (%.6f s)"
                         % (start / 1e9, duration / 1e9))
    return start, end


def _positive(s):
    v = int(s)
    if v <= 0:
        raise argparse.ArgumentTypeError("must be a positive integer, not %s" % s)
    return v


def _count(s):
    v = int(s)
    if v < 0:
        raise argparse.ArgumentTypeError("must be 0 or more, not %s" % s)
    return v


def _positive_float(s):
    try:
        v = float(s)
    except ValueError:
        raise argparse.ArgumentTypeError("not a number: %r" % s) from None
    if not v > 0 or v == float("inf"):
        raise argparse.ArgumentTypeError("must be a positive number, not %s" % s)
    return v


def _percentile(s):
    v = _positive_float(s)
    if v > 100:
        raise argparse.ArgumentTypeError("must be in (0, 100], not %s" % s)
    return v


def _figsize(s):
    """W,H in inches."""
    parts = s.split(",")
    if len(parts) != 2:
        raise argparse.ArgumentTypeError("want W,H in inches (e.g. 7,3), not %r" % s)
    return tuple(_positive_float(p) for p in parts)


def _labels(s):
    """A,B: one panel title per recording."""
    parts = s.split(",")
    if len(parts) != 2 or not all(p.strip() for p in parts):
        raise argparse.ArgumentTypeError("want two comma-separated labels, A,B; not %r" % s)
    return [p.strip() for p in parts]


def _image(s):
    """-o of a chart: its extension names the format; checked before any work."""
    from .heatmap import IMAGE_FORMATS
    ext = os.path.splitext(s)[1][1:].lower()
    if ext not in IMAGE_FORMATS:
        raise argparse.ArgumentTypeError(
            "%s: %s (the extension names the format: %s)"
            % (s, "no extension" if not ext else "cannot write ." + ext,
               ", ".join("." + f for f in IMAGE_FORMATS)))
    return s


def _kind(trace, s):
    """A CONSIDER kind given by name, number or kind<N>."""
    for k, name in trace.kind_names.items():
        if s == name:
            return k
    num = s[4:] if s.startswith("kind") else s
    if num.isdigit():
        return int(num)
    known = ", ".join(sorted(trace.kind_names.values()))
    raise UsageError("unknown kind %r (known: %s, or a number)" % (s, known))


def _open(args, path=None):
    path = args.file if path is None else path
    trace = load(path, nodes=args.nodes, cpus_per_node=args.cpus_per_node)
    for w in trace.warnings:
        print("%s: warning: %s: %s" % (PROG, path, w), file=sys.stderr)
    return trace


def _stem(path):
    return "stdin" if path == "-" else Path(path).stem


def _default_out(path, suffix):
    return _stem(path) + suffix


def _check_out(args, out, inputs=None):
    for path in inputs or [args.file]:
        if path != "-" and os.path.exists(out) and os.path.samefile(out, path):
            raise UsageError("output %s would overwrite the input" % out)


def _chart_options(args):
    """Keyword arguments of heatmap.render*, from the chart options."""
    return dict(metric=args.metric, migrations=args.migrations, wake_busy=args.wake_busy,
                show_violations=args.violations, title=args.title, agg=args.agg,
                dpi=args.dpi, vmax=args.vmax, percentile=args.load_percentile,
                figsize=args.figsize, fontsize=args.fontsize, max_arrows=args.max_arrows)


def _scale_note(info):
    s = ", colour scale 0-%g" % info["vmax"]
    if info["arrow_step"] > 1:
        s += ", migration arrows 1 in %d" % info["arrow_step"]
    return s


# -- info ----------------------------------------------------------------------

def summarize(trace):
    ev = trace.events
    by_type = {}
    for t in F.EVENT_TYPES:
        sel = ev[ev["type"] == t]
        if not len(sel) and t not in trace.type_counts:
            continue
        entry = {"events": int(len(sel))}
        if t == F.CONSIDER:
            sizes = np.diff(trace.cons_ptr)
            entry["kinds"] = {}
            for k in np.unique(sel["c"]):
                m = sel["cid"][sel["c"] == k]
                entry["kinds"][trace.kind_name(k)] = {
                    "events": int(len(m)),
                    "mean_cpus": round(float(sizes[m].mean()), 2) if len(m) else 0.0,
                    "no_result": int(np.count_nonzero(
                        sel["b"][sel["c"] == k] == F.CPU_NONE)),
                }
        elif t == F.MIGRATE:
            entry["reasons"] = {trace.reason_name(r): int(np.count_nonzero(sel["c"] == r))
                                for r in np.unique(sel["c"])}
        elif t == F.VIOLATION:
            entry["phases"] = {F.PHASE_NAMES.get(int(p), "phase%d" % p):
                               int(np.count_nonzero(sel["c"] == p))
                               for p in np.unique(sel["c"])}
        by_type[F.type_name(t)] = entry
    confirmed = sorted({int(r["a"]) for r in ev[(ev["type"] == F.VIOLATION)
                                                & (ev["c"] == F.PHASE_CONFIRM)]})
    lo, hi = trace.complete_window()
    out = {
        "file": str(trace.path),
        "format": trace.fmt,
        "version": trace.version,
        "cpus": trace.nr_cpus,
        "possible_cpus": int(len(trace.possible_cpus())),
        "nodes": {trace.node_label(n): cpulist(c) for n, c in trace.nodes()},
        "start_ns": trace.start_ns,
        "duration_ns": trace.duration_ns,
        "events": by_type,
        "total_events": int(len(ev)),
        "lost": trace.lost,
        "confirmed_violation_ids": confirmed,
        "warnings": list(trace.warnings),
    }
    if trace.fmt == "binary":
        out.update({
            "flight_recorder": trace.flight,
            "frozen": trace.frozen,
            "frozen_report_id": trace.frozen_report_id,
            "capacity": trace.capacity,
            "nr_nodes_header": trace.nr_nodes_header,
            "records": sum(s[1] for s in trace.sections),
            "written": sum(s[2] for s in trace.sections),
            "lost_per_cpu": {str(s[0]): s[3] for s in trace.sections if s[3]},
            "record_types": {F.type_name(t): n for t, n in sorted(trace.type_counts.items())},
            "unknown_types": {str(t): n for t, n in sorted(trace.unknown_types.items())},
            "orphan_cpus_records": trace.orphans,
            "complete_from_ns": lo,
            "complete_to_ns": hi,
        })
    else:
        out["lines"] = trace.lines
        if trace.source:
            out["source"] = trace.source
        names = [x[2] for x in trace.task_lines]
        out["task_events"] = {n: names.count(n) for n in F.TASK_EVENTS if n in names}
    return out


def cmd_info(args):
    trace = _open(args)
    s = summarize(trace)
    if args.json:
        print(json.dumps(s, indent=2))
        return EXIT_OK
    p = print
    p("file:      %s" % s["file"])
    if trace.fmt == "binary":
        p("format:    binary dump, version %d" % s["version"])
    else:
        p("format:    trace-cmd report text, %d lines%s"
          % (s["lines"], " (%s)" % s["source"] if s.get("source") else ""))
    p("cpus:      %d (%d possible)" % (s["cpus"], s["possible_cpus"]))
    p("nodes:     %d: %s" % (len(s["nodes"]),
                             "; ".join("%s: %s" % kv for kv in s["nodes"].items())))
    p("start:     %.9f s%s" % (s["start_ns"] / 1e9,
                               " since boot" if trace.fmt == "binary" else ""))
    p("duration:  %.6f s" % (s["duration_ns"] / 1e9))
    if trace.fmt == "binary":
        p("mode:      %s, %d records per CPU buffer"
          % ("flight recorder (overwrite)" if s["flight_recorder"] else "stop when full",
             s["capacity"]))
        p("frozen:    %s" % ("yes, by sanity-checker report %d" % s["frozen_report_id"]
                             if s["frozen"] else "no"))
        lost = ", ".join("cpu %s: %d" % kv for kv in s["lost_per_cpu"].items())
        p("records:   %d in the dump, %d written, %d lost%s"
          % (s["records"], s["written"], s["lost"], " (%s)" % lost if lost else ""))
        if s["lost"]:
            p("complete:  %.6f - %.6f s (outside it some CPU's records are lost)"
              % (s["complete_from_ns"] / 1e9, s["complete_to_ns"] / 1e9))
        p("orphans:   %d CPUS records without their CONSIDER" % s["orphan_cpus_records"])
        if s["unknown_types"]:
            p("unknown:   %s (skipped)" % ", ".join(
                "type %s: %d" % kv for kv in s["unknown_types"].items()))
    elif s["lost"]:
        p("lost:      %d events (trace-cmd [LOST] lines)" % s["lost"])
    if s.get("task_events"):
        p("tasks:     %s (perfetto shows which task ran where)" % ", ".join(
            "%d %s" % (n, name) for name, n in s["task_events"].items()))
    p("events:    %d" % s["total_events"])
    for name, e in s["events"].items():
        p("  %-12s %10d" % (name, e["events"]))
        for k, v in e.get("kinds", {}).items():
            p("    %-20s %8d  mean %.2f CPUs considered, %d without result"
              % (k, v["events"], v["mean_cpus"], v["no_result"]))
        for sub in ("reasons", "phases"):
            for k, v in e.get(sub, {}).items():
                p("    %-20s %8d" % (k, v))
    if s["confirmed_violation_ids"]:
        ids = s["confirmed_violation_ids"]
        p("violations: %d confirmed (ids %s)" % (len(ids), ", ".join(map(str, ids[:20]))
                                                + (", ..." if len(ids) > 20 else "")))
    return EXIT_OK


# -- heatmap -------------------------------------------------------------------

def cmd_heatmap(args):
    from .heatmap import render
    trace = _open(args)
    start, end = _window(trace, args)
    kind = _kind(trace, args.consider) if args.consider is not None else None
    out = args.output or _default_out(args.file, ".png")
    _check_out(args, out)
    info = render(trace, out, start=start, end=end, consider=kind, bins=args.bins,
                  assume_idle=args.assume_idle, **_chart_options(args))
    print("%s: %d CPUs x %d bins, %.6f-%.6f s%s"
          % (out, info["rows"], info["bins"], info["start_ns"] / 1e9,
             info["end_ns"] / 1e9, _scale_note(info)))
    return EXIT_OK


# -- compare ---------------------------------------------------------------------

def cmd_compare(args):
    from .heatmap import panels, render_panels
    traces = [_open(args, f) for f in args.files]
    start, end = _window(traces, args)
    kind = None
    if args.consider is not None:
        kinds = {_kind(t, args.consider) for t in traces}
        if len(kinds) > 1:
            raise UsageError("kind %r has different numbers in the two recordings"
                             % args.consider)
        kind = kinds.pop()
    labels = args.labels or [_stem(f) for f in args.files]
    if labels[0] == labels[1] and not args.labels:
        labels = list(args.files)
    out = args.output or "%s-vs-%s.png" % tuple(_stem(f) for f in args.files)
    _check_out(args, out, args.files)
    ps = panels(traces, labels, args.metric, start, end, args.bins, args.agg,
                args.assume_idle)
    info = render_panels(ps, out, consider=kind, **_chart_options(args))
    print("%s: %s%s" % (out, " vs ".join(
        "%s (%d CPUs x %d bins, %.6f-%.6f s)" % (label, p["rows"], p["bins"],
                                                 p["start_ns"] / 1e9, p["end_ns"] / 1e9)
        for label, p in zip(labels, info["panels"])), _scale_note(info)))
    return EXIT_OK


# -- idle-overload ---------------------------------------------------------------

def cmd_idle_overload(args):
    from .analysis import idle_overload
    trace = _open(args)
    start, end = _window(trace, args)
    r = idle_overload(trace, start, end, top=args.top, assume_idle=args.assume_idle)
    r["file"] = str(trace.path)
    r["initial_state"] = ("idle (--assume-idle)" if args.assume_idle else
                          "unknown before each CPU's first nr_running event")
    r["note"] = IDLE_OVERLOAD_NOTE
    lo, hi = trace.complete_window()
    if trace.lost:
        r["lost_note"] = ("%d records lost; results outside %.6f-%.6f s may be wrong"
                          % (trace.lost, lo / 1e9, hi / 1e9))
    if args.json:
        print(json.dumps(r, indent=2))
        return EXIT_OK
    p = print
    p("idle while overloaded: %s" % r["file"])
    p("window %.6f-%.6f s, %d CPUs; state %s"
      % (r["start_ns"] / 1e9, r["end_ns"] / 1e9, len(r["cpus"]), r["initial_state"]))
    p("%4s %5s %12s %12s %12s %12s %7s" % ("cpu", "node", "idle ms", "idle+ovl ms",
                                           "overld ms", "unknown ms", "% win"))
    win = max(r["end_ns"] - r["start_ns"], 1)
    unseen = [c["cpu"] for c in r["cpus"] if c["unknown_ns"] >= win]
    for c in r["cpus"]:
        if c["cpu"] in unseen:
            continue
        p("%4d %5d %12.3f %12.3f %12.3f %12.3f %7.2f"
          % (c["cpu"], c["node"], c["idle_ns"] / 1e6, c["idle_overloaded_ns"] / 1e6,
             c["overloaded_ns"] / 1e6, c["unknown_ns"] / 1e6,
             100.0 * c["idle_overloaded_ns"] / win))
    if unseen:
        p("state unknown throughout (no nr_running event): CPUs %s" % cpulist(unseen))
    p("total: %.3f ms idle while another CPU was overloaded, of %.3f ms CPU time (%.3f%%)"
      % (r["total_ns"] / 1e6, r["cpu_time_ns"] / 1e6, 100.0 * r["fraction"]))
    if r["known_cpu_time_ns"] != r["cpu_time_ns"]:
        p("       %.3f%% of the %.3f ms CPU time whose state is known"
          % (100.0 * r["fraction_of_known"], r["known_cpu_time_ns"] / 1e6))
    if r["intervals"]:
        p("worst %d of %d intervals:" % (len(r["intervals"]), r["nr_intervals"]))
        p("  %14s %14s %12s %8s  %s" % ("start s", "end s", "ms", "idle cpu",
                                        "overloaded cpus"))
        for i in r["intervals"]:
            p("  %14.9f %14.9f %12.3f %8d  %s"
              % (i["start_ns"] / 1e9, i["end_ns"] / 1e9, i["duration_ns"] / 1e6,
                 i["idle_cpu"], cpulist(i["overloaded_cpus"])))
    if "lost_note" in r:
        p("warning: " + r["lost_note"])
    p("note: " + r["note"])
    return EXIT_OK


# -- perfetto --------------------------------------------------------------------

def cmd_perfetto(args):
    from .perfetto import export
    trace = _open(args)
    consider = None
    if args.consider is not None:
        consider = "all" if args.consider == "all" else _kind(trace, args.consider)
    out = args.output or _default_out(args.file, ".json")
    _check_out(args, out)
    n, runs, bad = export(trace, out, consider=consider, with_load=not args.no_load,
                          absolute=args.absolute_time, with_tasks=not args.no_tasks)
    if bad:
        print("%s: warning: %s: %d sched_switch/sched_wakeup lines not understood; "
              "left out" % (PROG, args.file, bad), file=sys.stderr)
    print("%s: %d trace events%s (open in https://ui.perfetto.dev)"
          % (out, n, ", %d task slices" % runs if runs else ""))
    return EXIT_OK


# -- parser ----------------------------------------------------------------------

def build_parser():
    from .heatmap import FONT_SIZE, IMAGE_FORMATS, LOAD_PERCENTILE, MAX_ARROWS, WIDTH

    layout = argparse.ArgumentParser(add_help=False)
    g = layout.add_mutually_exclusive_group()
    g.add_argument("--nodes", metavar="SPEC",
                   help="NUMA layout, one comma item per node: 0-3,4-7 (join "
                        "ranges of one node with +: 0-3+8-11,4-7+12-15); overrides "
                        "a dump's node map")
    g.add_argument("--cpus-per-node", type=_positive, metavar="N",
                   help="node = cpu / N (default: the dump's map; text: one node)")

    common = argparse.ArgumentParser(add_help=False, parents=[layout])
    common.add_argument("file", metavar="FILE",
                        help="binary dump (events/dump), trace-cmd trace.dat (read with "
                             "'trace-cmd report') or its report text; - = stdin")

    window = argparse.ArgumentParser(add_help=False)
    window.add_argument("--start", type=float, metavar="S",
                        help="window start, seconds since trace start (default 0)")
    window.add_argument("--end", type=float, metavar="S",
                        help="window end, seconds since trace start (default: the end)")

    idle = argparse.ArgumentParser(add_help=False)
    idle.add_argument("--assume-idle", action="store_true",
                      help="treat a CPU as idle before its first nr_running event "
                           "(default: unknown, counted as neither idle nor overloaded)")

    formats = ", ".join("." + f for f in IMAGE_FORMATS)
    chart = argparse.ArgumentParser(add_help=False)
    chart.add_argument("--metric", choices=("nr_running", "load"), default="nr_running",
                       help="colour by runqueue length (default; whole tasks, a bar of "
                            "integer levels) or by load")
    chart.add_argument("--agg", choices=("mean", "max"), default="mean",
                       help="per time bin: time-weighted mean (default) or maximum value")
    chart.add_argument("--bins", type=_positive, default=1500, metavar="N",
                       help="time bins (image columns) of the longest recording, "
                            "default 1500")
    chart.add_argument("--consider", metavar="KIND",
                       help="overlay the CPUs considered by CONSIDER events of KIND "
                            "(e.g. wake_idle_sibling, lb_busiest_queue, kind16); "
                            "x = chosen CPU")
    chart.add_argument("--migrations", action="store_true",
                       help="arrows src -> dst at each migration, coloured by reason")
    chart.add_argument("--max-arrows", type=_count, default=MAX_ARROWS, metavar="N",
                       help="with more migrations than N, draw every k-th (the legend "
                            "says k); 0 = all (default %d)" % MAX_ARROWS)
    chart.add_argument("--wake-busy", action="store_true",
                       help="mark wakeups placed on a busy CPU while an allowed one "
                            "was idle")
    chart.add_argument("--violations", action="store_true",
                       help="shade the idle CPU's row during sanity-checker violations")
    chart.add_argument("--vmax", type=_positive_float, metavar="V",
                       help="top of the colour scale; larger values get its top colour "
                            "(default: nr_running the largest value, at least 2; load "
                            "the --load-percentile of the bins, at least 1024)")
    chart.add_argument("--load-percentile", type=_percentile, default=LOAD_PERCENTILE,
                       metavar="P",
                       help="load scale without --vmax: the P-th percentile of the "
                            "bins, so one spike does not bleach the picture; 100 = the "
                            "maximum (default %g)" % LOAD_PERCENTILE)
    chart.add_argument("--title", metavar="T",
                       help="figure title (default: file name(s) and metric; '' for none)")
    chart.add_argument("--figsize", type=_figsize, metavar="W,H",
                       help="figure size in inches (default: %g wide, 0.09 per CPU row "
                            "plus room for the labels)" % WIDTH)
    chart.add_argument("--fontsize", type=_positive_float, default=FONT_SIZE, metavar="PT",
                       help="base font size in points; labels scale with it (default %g)"
                            % FONT_SIZE)
    chart.add_argument("--dpi", type=_positive, default=100,
                       help="resolution of .png (default 100)")

    p = argparse.ArgumentParser(
        prog=PROG,
        description="Charts and checks of scheduler event traces (sched_events): "
                    "the runqueue heatmaps of 'The Linux Scheduler: a Decade of "
                    "Wasted Cores', idle-while-overloaded time, Perfetto export.",
        epilog="Run '%s COMMAND --help' for a command's options. Exit status: 0 ok, "
               "2 bad input or usage, 1 internal error." % PROG)
    p.add_argument("--version", action="version", version="%(prog)s " + __version__)
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    s = sub.add_parser("info", parents=[common], help="what a trace holds",
                       description="Format, CPUs, nodes, duration, events per "
                                   "type/kind/reason/phase, lost records, orphans, "
                                   "frozen flag.")
    s.add_argument("--json", action="store_true", help="machine-readable output")
    s.set_defaults(func=cmd_info)

    s = sub.add_parser("heatmap", parents=[common, window, idle, chart],
                       help="runqueue heatmap (PNG, PDF, SVG)",
                       description="x = time, y = CPUs grouped by NUMA node, colour = "
                                   "runqueue length (or load) per time bin. A state "
                                   "not known from the trace is drawn pale blue. "
                                   "PDF and PS embed TrueType fonts.")
    s.add_argument("-o", "--output", metavar="OUT.png", type=_image,
                   help="output image; the extension names the format (%s); default: "
                        "FILE stem + .png in the current directory" % formats)
    s.set_defaults(func=cmd_heatmap)

    s = sub.add_parser("compare", parents=[layout, window, idle, chart],
                       help="two recordings in one figure, one colour scale and time axis",
                       description="Two heatmaps (e.g. a fix off and on) stacked on one "
                                   "time axis (both from their recording's start, to the "
                                   "longer one's end, with bins of one width) and one "
                                   "colour scale (the larger of the two automatic scales, "
                                   "or --vmax).")
    s.add_argument("files", nargs=2, metavar="FILE",
                   help="recordings, as for heatmap (top panel first)")
    s.add_argument("--labels", type=_labels, metavar="A,B",
                   help="panel titles (default: the file names without extension)")
    s.add_argument("-o", "--output", metavar="OUT.png", type=_image,
                   help="output image (%s); default: A-vs-B.png from the file stems"
                        % formats)
    s.set_defaults(func=cmd_compare)

    s = sub.add_parser("idle-overload", parents=[common, window, idle],
                       help="time CPUs were idle while another was overloaded",
                       description="Per CPU, the time it had nr_running == 0 while some "
                                   "other CPU had nr_running >= 2, the total and its "
                                   "share of CPU time, and the longest such intervals. "
                                   + IDLE_OVERLOAD_NOTE[0].upper() + IDLE_OVERLOAD_NOTE[1:]
                                   + ".")
    s.add_argument("--top", type=_positive, default=10, metavar="N",
                   help="list the N longest intervals (default 10)")
    s.add_argument("--json", action="store_true", help="machine-readable output")
    s.set_defaults(func=cmd_idle_overload)

    s = sub.add_parser("perfetto", parents=[common], help="Chrome/Perfetto JSON export",
                       description="Chrome trace-event JSON for ui.perfetto.dev: one "
                                   "process per NUMA node, one thread per CPU, counters "
                                   "cpuN nr_running/load, migrations with flow arrows, "
                                   "wake_busy and violation instants, violation slices; "
                                   "from sched_switch/sched_wakeup (trace-cmd input) the "
                                   "task running on each CPU as slices on its thread.")
    s.add_argument("-o", "--output", metavar="OUT.json",
                   help="output file (default: FILE stem + .json in the current directory)")
    s.add_argument("--consider", metavar="KIND",
                   help="also export CONSIDER events of KIND ('all' for every kind)")
    s.add_argument("--no-load", action="store_true", help="leave out the load counters")
    s.add_argument("--no-tasks", action="store_true",
                   help="leave out the task slices and wakeups from sched_switch/"
                        "sched_wakeup")
    s.add_argument("--absolute-time", action="store_true",
                   help="timestamps on the recording's clock (dump: since boot; "
                        "trace-cmd: its trace clock) to line up with other recordings "
                        "of the same boot (default: since the trace start)")
    s.set_defaults(func=cmd_perfetto)
    return p


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except TraceError as e:
        print("%s: %s" % (PROG, e), file=sys.stderr)
    except (UsageError, NodeSpecError) as e:
        print("%s %s: error: %s" % (PROG, args.command, e), file=sys.stderr)
    except BrokenPipeError:
        # Output piped into e.g. head: stop quietly, and keep Python from
        # complaining when it flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except OSError as e:
        print("%s: %s" % (PROG, e), file=sys.stderr)
    except KeyboardInterrupt:
        return 130
    except Exception as e:   # a bug, not bad input: still no traceback unless asked
        if os.environ.get("SCHED_VIS_DEBUG"):
            raise
        print("%s: internal error: %s: %s (SCHED_VIS_DEBUG=1 shows the traceback)"
              % (PROG, type(e).__name__, e), file=sys.stderr)
        return EXIT_INTERNAL
    return EXIT_INPUT
