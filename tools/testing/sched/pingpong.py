#!/usr/bin/env python3
"""Pipe bursts between two tasks on one CPU (in-guest helper).

pingpong.py [--cpu C] [--rounds N] [--burst B]

A writer and a reader, both bound to CPU C (default 1). Each round the
writer writes B one-byte messages into a pipe, each its own write(), then
waits for the reader's one-byte answer on a second pipe; the reader reads
the B messages one read() at a time and answers. A pipe write wakes its
reader with WF_SYNC: a scheduler that honours it lets the writer finish
its burst and switches twice a round; one that preempts the waker
switches about twice a message. Prints one line:

  messages M switches S writer_involuntary W reader_involuntary R

S counts both tasks' voluntary and involuntary context switches
(/proc/self/status) over the rounds, after a first round not counted.
"""
import argparse
import os
import sys


def switches():
    vol = invol = 0
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("voluntary_ctxt_switches"):
                vol = int(line.split()[1])
            elif line.startswith("nonvoluntary_ctxt_switches"):
                invol = int(line.split()[1])
    return vol, invol


def reader(msg_r, ack_w, rounds, burst, report_w):
    for r in range(rounds + 1):
        if r == 1:
            v0, i0 = switches()
        for _ in range(burst):
            if len(os.read(msg_r, 1)) != 1:
                sys.exit(1)
        os.write(ack_w, b"a")
    v1, i1 = switches()
    os.write(report_w, f"{v1 - v0} {i1 - i0}\n".encode())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cpu", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--burst", type=int, default=20)
    args = ap.parse_args()
    if args.rounds < 1 or args.burst < 1:
        print("pingpong.py: --rounds and --burst must be at least 1", file=sys.stderr)
        sys.exit(2)
    try:
        os.sched_setaffinity(0, {args.cpu})
    except OSError as e:
        print(f"pingpong.py: cannot bind to CPU {args.cpu}: {e.strerror}", file=sys.stderr)
        sys.exit(2)
    msg_r, msg_w = os.pipe()
    ack_r, ack_w = os.pipe()
    report_r, report_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        reader(msg_r, ack_w, args.rounds, args.burst, report_w)
        os._exit(0)
    # A first round, not counted, starts both tasks.
    for r in range(args.rounds + 1):
        if r == 1:
            v0, i0 = switches()
        for _ in range(args.burst):
            os.write(msg_w, b"m")
        os.read(ack_r, 1)
    v1, i1 = switches()
    rv, ri = (int(x) for x in os.read(report_r, 64).split())
    os.waitpid(pid, 0)
    print(f"messages {args.rounds * args.burst} switches {v1 - v0 + i1 - i0 + rv + ri} "
          f"writer_involuntary {i1 - i0} reader_involuntary {ri}")


if __name__ == "__main__":
    main()
