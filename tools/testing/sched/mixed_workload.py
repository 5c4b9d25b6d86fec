#!/usr/bin/env python3
"""Run in a schedlab guest: a short mixed workload (hackbench plus CPU
spinners), then report which scheduling class ran the tasks and what each
CPU did, grouped by NUMA node.

Usage: mixed_workload.py [--spinners N] [--seconds S] [--groups G] [--loops L]
"""

import argparse
import glob
import os
import re
import subprocess
import sys
import time


def read(path, default=""):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return default


def cpu_nodes():
    nodes = {}
    for path in glob.glob("/sys/devices/system/node/node*/cpulist"):
        node = int(re.search(r"node(\d+)", path).group(1))
        for part in read(path).split(","):
            if not part:
                continue
            lo, _, hi = part.partition("-")
            for cpu in range(int(lo), int(hi or lo) + 1):
                nodes[cpu] = node
    return nodes


def schedstat():
    """Per-CPU (switches, runtime ns, timeslices) from /proc/schedstat."""
    stats = {}
    for line in read("/proc/schedstat").splitlines():
        f = line.split()
        if f and f[0].startswith("cpu") and f[0][3:].isdigit():
            # cpuN yld 0 sched_count sched_goidle ttwu ttwu_local run_ns wait_ns slices
            stats[int(f[0][3:])] = (int(f[3]), int(f[7]), int(f[9]))
    return stats


def task_class(pid):
    m = re.search(r"^class\s*:\s*(\S+)", read(f"/proc/{pid}/sched"), re.M)
    return m.group(1) if m else "?"


def classes_of(pids):
    counts = {}
    for pid in pids:
        cls = task_class(pid)
        if cls != "?":
            counts[cls] = counts.get(cls, 0) + 1
    return counts


def all_tasks():
    return [t.split("/")[-1] for t in glob.glob("/proc/[0-9]*/task/[0-9]*")]


def descendant_tasks(root):
    """Threads of every process below `root` (the workload we started)."""
    parent = {}
    for stat in glob.glob("/proc/[0-9]*/stat"):
        fields = read(stat).rpartition(")")[2].split()
        if fields:
            parent[stat.split("/")[2]] = fields[1]
    below = {str(root)}
    changed = True
    while changed:
        changed = False
        for pid, ppid in parent.items():
            if ppid in below and pid not in below:
                below.add(pid)
                changed = True
    below.discard(str(root))
    return [t.split("/")[-1] for pid in below for t in glob.glob(f"/proc/{pid}/task/*")]


def fmt_counts(counts):
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "none"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spinners", type=int, default=0, help="default: one per two CPUs")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--groups", type=int, default=2)
    ap.add_argument("--loops", type=int, default=50)
    a = ap.parse_args()
    ncpu = os.cpu_count()
    spinners = a.spinners or max(1, ncpu // 2)

    # Per-CPU switch counts need schedstats on; runtimes do not.
    try:
        with open("/proc/sys/kernel/sched_schedstats", "w") as f:
            f.write("1")
    except OSError:
        pass
    print(f"scheduler for normal tasks: {read('/proc/sys/kernel/sched_class', '?')}"
          " (/proc/sys/kernel/sched_class)")
    before = schedstat()
    t0 = time.monotonic()
    spin = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(spinners)]
    hb = subprocess.Popen(["hackbench", "-g", str(a.groups), "-l", str(a.loops)],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    # Sample while hackbench runs: its processes come and go.
    seen = {}
    while hb.poll() is None:
        for tid in descendant_tasks(os.getpid()):
            if tid not in seen:
                cls = task_class(tid)
                if cls != "?":
                    seen[tid] = cls
        time.sleep(0.2)
    work_classes = {}
    for cls in seen.values():
        work_classes[cls] = work_classes.get(cls, 0) + 1
    hb_out = hb.stdout.read()
    remaining = a.seconds - (time.monotonic() - t0)
    if remaining > 0:
        time.sleep(remaining)
    for p in spin:
        p.kill()
        p.wait()
    wall_ns = (time.monotonic() - t0) * 1e9
    after = schedstat()
    every_class = classes_of(all_tasks())

    m = re.search(r"Time:\s*([\d.]+)", hb_out or "")
    print(f"workload: {spinners} spinners for {a.seconds:g} s + hackbench -g {a.groups} "
          f"-l {a.loops} (Time: {m.group(1) + ' s' if m else 'failed: ' + hb_out.strip()})")
    print(f"workload tasks by class: {fmt_counts(work_classes)} (sampled while running)")
    print(f"all tasks by class:      {fmt_counts(every_class)}")
    nodes = cpu_nodes()
    print(f"{'node':>4} {'cpu':>4} {'busy%':>6} {'run ms':>8} {'switches':>9} {'slices':>7}")
    for cpu in sorted(after):
        sw = after[cpu][0] - before.get(cpu, after[cpu])[0]
        run = after[cpu][1] - before.get(cpu, after[cpu])[1]
        sl = after[cpu][2] - before.get(cpu, after[cpu])[2]
        print(f"{nodes.get(cpu, 0):>4} {cpu:>4} {100 * run / wall_ns:>6.1f} "
              f"{run / 1e6:>8.1f} {sw:>9} {sl:>7}")
    return 0 if m else 1


if __name__ == "__main__":
    sys.exit(main())
