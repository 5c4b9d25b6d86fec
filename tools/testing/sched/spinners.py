#!/usr/bin/env python3
"""Start CPU-bound spinners from one CPU (in-guest helper).

spinners.py --count N --from-cpu C [--pinned | --allowed LIST] [--seconds S]

The parent binds itself to --from-cpu and forks N children, so fork
placement starts them there. Each child then allows itself every online
CPU, or the CPUs in --allowed (e.g. 1-7), or stays bound to --from-cpu
with --pinned, and spins. Prints one
line "pids P1 P2 ..." once all spin, then waits S seconds (default: until
killed) and kills them.
"""
import argparse
import os
import signal
import sys
import time


def cpu_list(text):
    cpus = set()
    for part in text.strip().split(","):
        lo, _, hi = part.partition("-")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return cpus


def online_cpus():
    with open("/sys/devices/system/cpu/online") as f:
        return cpu_list(f.read())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=3)
    ap.add_argument("--from-cpu", type=int, default=1)
    ap.add_argument("--pinned", action="store_true")
    ap.add_argument("--allowed", type=cpu_list, help="CPU list the children may use")
    ap.add_argument("--seconds", type=float, default=0)
    args = ap.parse_args()

    # Clean up on kill(1) too: SIGTERM would otherwise skip "finally".
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    # Not our own mask: the caller may be pinned.
    everywhere = args.allowed or online_cpus()
    os.sched_setaffinity(0, {args.from_cpu})
    pids = []
    for _ in range(args.count):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.close(r)
            if not args.pinned:
                os.sched_setaffinity(0, everywhere)
            os.write(w, b"x")
            os.close(w)
            while True:
                pass
        os.close(w)
        os.read(r, 1)       # the child runs with its final affinity
        os.close(r)
        pids.append(pid)
    print("pids", *pids, flush=True)
    try:
        if args.seconds:
            time.sleep(args.seconds)
        else:
            signal.pause()
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        for pid in pids:
            os.waitpid(pid, 0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
