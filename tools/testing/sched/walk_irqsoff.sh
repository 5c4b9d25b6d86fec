#!/bin/sh
# In-guest measurement: the longest interrupts-off section while THREADS
# spinning threads wait on CPU 0 (ULE: pinned to CPUs 0-1, so that they
# count as transferable and idle CPUs look at them) and the other CPUs
# run a pipe ping-pong that idles and wakes them all the time: ULE's idle
# steal, MuQSS's look across queues and the stall watchdog's scan walk
# those waiters with interrupts off (irqsoff tracer, CONFIG_IRQSOFF_TRACER;
# the debug config has it).
# Usage: walk_irqsoff.sh TASKS_BIN THREADS CLASS...   (4 CPUs or more)
# WALK_NR_MIGRATE="100000 32" measures each class once per cap on those
# walks (/sys/kernel/debug/sched/nr_migrate; a cap above THREADS walks
# them all, as before the cap); by default the cap is left as it is.
# Prints "# irqsoff-max CLASS US nr_migrate=N" per class and cap, the
# worst section's ends and the stack where it ended.
# A measurement, not a pass/fail test: docs/class-select.rst records the
# figures and the command.
tasks=${1:?usage: $0 TASKS_BIN THREADS CLASS...}
threads=${2:?usage: $0 TASKS_BIN THREADS CLASS...}
shift 2
K=/proc/sys/kernel/sched_class
T=/sys/kernel/tracing
N=/sys/kernel/debug/sched/nr_migrate
last=$(($(nproc) - 1))

mountpoint -q $T || mount -t tracefs none $T
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
old_cap=$(cat $N)
caps=${WALK_NR_MIGRATE:-$old_cap}
echo $((threads * 4 + 10000)) >/proc/sys/kernel/threads-max
# The longest timeout: the checks still run every second, and thousands
# of equals taking turns are no fallback.
echo 3600000 >/proc/sys/kernel/sched_watchdog_ms
many=""
pingpong=""
trap 'kill $many $pingpong 2>/dev/null; echo nop >$T/current_tracer; echo $old_cap >$N' EXIT

for cls in "$@"; do
	echo "$cls" >$K
	case $cls in
	ule) cpus=0-1 ;;
	*) cpus=0 ;;
	esac
	rm -f /tmp/walk.out
	taskset -c $cpus "$tasks" spinners "$threads" </dev/null >/tmp/walk.out &
	many=$!
	while ! grep -q ready /tmp/walk.out 2>/dev/null; do
		kill -0 $many 2>/dev/null || { echo "# spinner holder died"; exit 1; }
		sleep 0.5
	done
	taskset -c 2-$last perf bench sched pipe -l 100000000 >/dev/null 2>&1 &
	pingpong=$!
	sleep 2
	for cap in $caps; do
		if ! echo "$cap" >$N 2>/dev/null; then
			echo "walk_irqsoff.sh: $N refuses WALK_NR_MIGRATE value '$cap'" >&2
			exit 2
		fi
		echo irqsoff >$T/current_tracer
		echo 1 >$T/options/stacktrace
		echo 0 >$T/tracing_max_latency
		echo 1 >$T/tracing_on
		sleep 10
		echo 0 >$T/tracing_on
		echo "# irqsoff-max $cls $(cat $T/tracing_max_latency) us nr_migrate=$cap with $threads waiting threads"
		grep -m 12 -E "=> |latency:" $T/trace | sed 's/^/#   /'
		echo nop >$T/current_tracer
	done
	kill $pingpong $many
	wait $pingpong $many 2>/dev/null
	pingpong=""
	many=""
done
