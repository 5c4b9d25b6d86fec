#!/usr/bin/env python3
"""Move this process across CPUs in a known order (in-guest helper).

hopper.py [ROUNDS]: binds itself to each online CPU in turn, ROUNDS times
(default 1), spinning briefly on each, and prints "pid P" and "cpus C1 C2
..." (the CPUs it ran on, in order) so a trace can be checked against it.
"""
import os
import sys


def current_cpu():
    with open("/proc/self/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[36])    # field 39


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    cpus = sorted(os.sched_getaffinity(0))
    order = []
    for _ in range(rounds):
        for cpu in cpus:
            os.sched_setaffinity(0, {cpu})
            order.append(current_cpu())
            for _ in range(20000):
                pass
    print("pid", os.getpid())
    print("cpus", *order)
    return 0


if __name__ == "__main__":
    sys.exit(main())
