#!/bin/sh
# In-guest measurement of scripts/reproduce's interactivity-trace
# experiment ("The Battle of the Schedulers: FreeBSD ULE vs. Linux CFS",
# ATC 2018, section 5.2, Figures 3 and 4) under the class the guest runs
# now: sysbench with THREADS threads on CPU 1, each running RUN_US and
# then sleeping SLEEP_US per event as OLTP threads wait for their
# database (sysbench_sleepers.lua), for RUN_S seconds. On one CPU they ask
# for many CPUs' worth of time. thread_sampler.py, on CPU 0, prints every
# thread's run time and ULE interactivity score every STEP seconds; the
# host turns the samples into the threads that starved and the figures.
#
# sysbench is forked by a subshell that exits at once, from this mostly
# sleeping shell (the paper's bash): under ULE its threads inherit the
# history of the process that creates them, and as init's child its run
# time is not charged back to this shell for the next run.
#
# Usage: interactivity_series.sh   (sizes from the environment: THREADS,
# RUN_S, STEP, RUN_US, SLEEP_US; scripts/reproduce --quick shortens them)
# Prints TAP and "# itrace ..." (the settings); writes to the JSON lines
# file SCHED_TEST_METRICS names {"name": "itrace", "threads": N,
# "seconds": S, ...} (the settings), thread_sampler.py's samples and
# {"name": "events", "events": N} (sysbench's events in total).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/tap.sh"
CPU=1
THREADS=${THREADS:-128}
RUN_S=${RUN_S:-20}
STEP=${STEP:-0.5}
RUN_US=${RUN_US:-1000}
SLEEP_US=${SLEEP_US:-4000}
OUT=/tmp/itrace-sysbench.out
class=$(cat /proc/sys/kernel/sched_class 2>/dev/null || echo own)

echo "TAP version 13"
echo "1..3"
if [ "$(nproc)" -lt 2 ]; then
	not_ok "needs 2 CPUs (sysbench on CPU $CPU, the sampler on CPU 0), have $(nproc)"
	tap_done
	exit
fi
ok "CPU $CPU for sysbench, CPU 0 for the sampler"
taskset -pc 0 $$ >/dev/null
echo "# itrace class $class cpu $CPU threads $THREADS run_us $RUN_US" \
	"sleep_us $SLEEP_US seconds $RUN_S step $STEP"
metric itrace class=$class cpu=$CPU threads=$THREADS run_us=$RUN_US sleep_us=$SLEEP_US \
	seconds=$RUN_S step=$STEP
pid=$(setsid taskset -c $CPU sysbench --threads="$THREADS" --time="$RUN_S" \
	"$here/sysbench_sleepers.lua" --run_us="$RUN_US" --sleep_us="$SLEEP_US" run \
	>$OUT 2>&1 & echo $!)
python3 "$here/thread_sampler.py" "$pid" "$((RUN_S + 5))" "$STEP"
# sysbench is init's child: wait for it by polling.
waited=0
while kill -0 "$pid" 2>/dev/null && [ $waited -lt 300 ]; do
	sleep 0.1
	waited=$((waited + 1))
done
events=$(sed -n 's/^ *total number of events: *\([0-9]*\).*/\1/p' $OUT)
if [ -n "$events" ]; then
	ok "sysbench ran $events events"
	metric events events=$events
else
	not_ok "sysbench gave no result: $(tail -n 3 $OUT | tr '\n' ' ')"
	kill "$pid" 2>/dev/null
fi
grep -q "Threads started" $OUT && ok "sysbench started its threads" ||
	not_ok "sysbench did not start its threads"
tap_done
