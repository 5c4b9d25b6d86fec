#!/usr/bin/env python3
"""Sample every thread of a process (in-guest helper).

thread_sampler.py PID SECONDS STEP

Every STEP seconds for SECONDS, or until PID exits, samples the threads of
PID: the uptime in centiseconds and per thread its TID, its run time
(se.sum_exec_runtime of /proc/PID/task/TID/sched; the first field of its
schedstat on a kernel without SCHED_DEBUG, such as Project C's reference
kernel) in microseconds and its ULE interactivity score (ule.score), or
none when it is not a ULE task. Each sample is one JSON line {"name":
"threads", "t_cs": T, "threads": [[TID, RUN_US, SCORE or null], ...]}
appended to the file SCHED_TEST_METRICS names, or without it printed as
"# threads T TID:RUN_US:SCORE ..." ("-" for no score). Reading the sched
file of 128 threads takes a few ms, so one sample is one instant.
"""
import json
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
    """[(tid, run_us, score or None)] of PID's threads, None once it is
    gone."""
    threads = []
    try:
        tids = sorted(os.listdir(f"/proc/{pid}/task"), key=int)
    except FileNotFoundError:
        return None
    for tid in tids:
        run_us, score = None, None
        try:
            with open(f"/proc/{pid}/task/{tid}/sched") as f:
                for line in f:
                    key, _, value = line.partition(":")
                    key = key.strip()
                    if key == "se.sum_exec_runtime":
                        run_us = round(float(value) * 1000)
                    elif key == "ule.score":
                        score = int(value)
        except FileNotFoundError:
            run_us = schedstat_us(pid, tid)
        except ProcessLookupError:
            continue
        if run_us is not None:
            threads.append((int(tid), run_us, score))
    return threads


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: thread_sampler.py PID SECONDS STEP")
    pid, seconds, step = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
    metrics = os.environ.get("SCHED_TEST_METRICS")
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        threads = sample(pid)
        if not threads:
            break
        if metrics:
            with open(metrics, "a") as f:
                f.write(json.dumps({"name": "threads", "t_cs": uptime_cs(),
                                    "threads": [list(t) for t in threads]}) + "\n")
        else:
            print(f"# threads {uptime_cs()} " + " ".join(
                f"{tid}:{run}:{'-' if score is None else score}" for tid, run, score in threads),
                flush=True)
        time.sleep(step)


if __name__ == "__main__":
    main()
