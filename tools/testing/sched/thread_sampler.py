#!/usr/bin/env python3
"""Sample every thread of a process (in-guest helper).

thread_sampler.py PID SECONDS STEP

Every STEP seconds for SECONDS, or until PID exits, prints one line
"# threads T TID:RUN_US:SCORE ..." for the threads of PID: T the uptime
in centiseconds, RUN_US the thread's run time (se.sum_exec_runtime of
/proc/PID/task/TID/sched; the first field of its schedstat on a kernel
without SCHED_DEBUG, such as Project C's reference kernel) in
microseconds, SCORE its ULE interactivity score (ule.score) or "-" when
it is not a ULE task. Reading the sched file of 128 threads takes a few
ms, so one line is one instant.
"""
import os
import sys
import time


def uptime_cs():
    with open("/proc/uptime") as f:
        return round(float(f.read().split()[0]) * 100)


def schedstat_us(pid, tid):
    """The thread's run time in us from its schedstat (ns on the CPU,
    ns waiting, timeslices), None when it is gone."""
    try:
        with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
            return round(int(f.read().split()[0]) / 1000)
    except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
        return None


def sample(pid):
    fields = []
    try:
        tids = sorted(os.listdir(f"/proc/{pid}/task"), key=int)
    except FileNotFoundError:
        return None
    for tid in tids:
        run_us, score = None, "-"
        try:
            with open(f"/proc/{pid}/task/{tid}/sched") as f:
                for line in f:
                    key, _, value = line.partition(":")
                    key = key.strip()
                    if key == "se.sum_exec_runtime":
                        run_us = round(float(value) * 1000)
                    elif key == "ule.score":
                        score = value.strip()
        except FileNotFoundError:
            run_us = schedstat_us(pid, tid)
        except ProcessLookupError:
            continue
        if run_us is not None:
            fields.append(f"{tid}:{run_us}:{score}")
    return fields


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: thread_sampler.py PID SECONDS STEP")
    pid, seconds, step = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        fields = sample(pid)
        if not fields:
            break
        print(f"# threads {uptime_cs()} " + " ".join(fields), flush=True)
        time.sleep(step)


if __name__ == "__main__":
    main()
