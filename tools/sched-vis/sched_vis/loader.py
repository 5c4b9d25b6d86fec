"""Open a trace file: detect its format and apply the NUMA node layout."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

from . import binary, format as F, text
from .trace import TraceError, cpulist


def read_bytes(path):
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise TraceError(path, e.strerror or str(e)) from None


def looks_binary(data):
    """Bytes that are not text: NUL bytes or invalid UTF-8 near the start."""
    head = data[:4096]
    if b"\0" in head:
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as e:
        # A multi-byte character cut at the 4 KiB boundary is still text.
        return e.start < len(head) - 4
    return False


TRACE_CMD = "trace-cmd"


def trace_cmd_report(path, data):
    """`trace-cmd report` text of a trace.dat (from stdin: via a temporary
    file, as trace-cmd needs to seek)."""
    exe = shutil.which(TRACE_CMD)
    if exe is None:
        raise TraceError(path, "a trace-cmd data file (trace.dat), and %s is not "
                         "installed to read it; install it, or give the output of "
                         "'trace-cmd report'" % TRACE_CMD, offset=0)
    with tempfile.TemporaryDirectory(prefix="sched-vis-") as tmp:
        src = path
        if path == "-":
            src = os.path.join(tmp, "stdin.dat")
            with open(src, "wb") as f:
                f.write(data)
        try:
            # -t: full nanosecond timestamps, not rounded to microseconds
            p = subprocess.run([exe, "report", "-t", "-i", src], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        except OSError as e:
            raise TraceError(path, "cannot run %s: %s" % (exe, e.strerror or e)) from None
    if p.returncode:
        err = p.stderr.decode("utf-8", "replace").strip().splitlines()
        raise TraceError(path, "'%s report' failed (exit status %d)%s"
                         % (TRACE_CMD, p.returncode, ": " + err[-1] if err else ""))
    return p.stdout


def load(path, nodes=None, cpus_per_node=None):
    data = read_bytes(path)
    if not data:
        raise TraceError(path, "empty file", offset=0)
    if data[:8] == F.MAGIC or (len(data) < 8 and F.MAGIC.startswith(data)):
        trace = binary.decode(data, path)
    elif data.startswith(F.TRACE_DAT_MAGIC):
        trace = text.decode(trace_cmd_report(path, data), path)
        trace.source = "trace.dat, read with '%s report'" % TRACE_CMD
    elif looks_binary(data):
        raise TraceError(path, "bad magic %r: unrecognised format (sched-vis reads a "
                         "SCHEDEVT dump, a trace-cmd trace.dat or 'trace-cmd report' "
                         "text)" % bytes(data[:8]), offset=0)
    else:
        trace = text.decode(data, path)
    apply_nodes(trace, nodes, cpus_per_node)
    return trace


class NodeSpecError(ValueError):
    """A bad --nodes / --cpus-per-node value."""


def parse_nodes(spec):
    """"0-3,4-7" -> [[0..3], [4..7]]: one comma item per node.

    Within an item, '+' joins ranges for nodes whose CPUs are not
    contiguous ("0-3+8-11,4-7+12-15").
    """
    nodes = []
    seen = set()
    for item in spec.split(","):
        cpus = []
        for part in item.split("+"):
            lo, sep, hi = part.strip().partition("-")
            if not lo.isdigit() or (sep and not hi.isdigit()):
                raise NodeSpecError("bad --nodes item %r (want e.g. 0-3,4-7)" % item)
            lo = int(lo)
            hi = int(hi) if sep else lo
            if hi < lo:
                raise NodeSpecError("bad --nodes range %r" % part)
            cpus.extend(range(lo, hi + 1))
        dup = seen.intersection(cpus)
        if dup:
            raise NodeSpecError("--nodes names CPU %d twice" % min(dup))
        seen.update(cpus)
        nodes.append(cpus)
    return nodes


def apply_nodes(trace, spec=None, cpus_per_node=None):
    """Override the node map (binary) or set it (text, default one node)."""
    if spec is None and cpus_per_node is None:
        if trace.fmt == "text":
            trace.node_of = np.zeros(trace.nr_cpus, np.int32)
        return
    if spec is not None:
        groups = parse_nodes(spec)
        top = max(max(g) for g in groups) + 1
        if top > trace.nr_cpus:
            if trace.fmt == "text":
                _grow(trace, top)
            else:
                trace.warnings.append("--nodes names CPUs >= nr_cpus (%d); ignored"
                                      % trace.nr_cpus)
                groups = [[c for c in g if c < trace.nr_cpus] for g in groups]
        new = np.full(trace.nr_cpus, len(groups), np.int32)
        for n, g in enumerate(groups):
            new[g] = n
        rest = np.flatnonzero(new == len(groups))
        if len(rest):
            trace.node_labels[len(groups)] = "no node"
            trace.warnings.append("--nodes does not cover CPUs %s; shown as 'no node'"
                                  % cpulist(rest))
    else:
        if cpus_per_node <= 0:
            raise NodeSpecError("--cpus-per-node must be positive")
        new = (np.arange(trace.nr_cpus) // cpus_per_node).astype(np.int32)
    # CPUs a binary dump marks as not possible stay out of charts and sums.
    new[trace.node_of < 0] = -1
    trace.node_of = new


def _grow(trace, n):
    """Text traces guess the CPU count; --nodes may name more CPUs."""
    extra = n - trace.nr_cpus
    trace.node_of = np.concatenate([trace.node_of, np.zeros(extra, np.int32)])
    if trace.nr_initial is not None:
        trace.nr_initial = np.concatenate([trace.nr_initial, np.full(extra, -1)])
    trace.nr_cpus = n
