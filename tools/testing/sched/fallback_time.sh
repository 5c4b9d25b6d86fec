#!/bin/sh
# In-guest measurement: how long a fallback to CFS (sysrq-S) takes with
# THREADS threads of one process on CPUs 0-1, first asleep, then
# spinning: the whole move, and the first step that moves the running and
# waiting tasks, after which the class being left decides nothing.
# Prints the kernel's "normal tasks moved" line per run, and when (uptime)
# sysrq-S was written, kernel.sched_class read cfs and the threads were gone.
# Usage: fallback_time.sh TASKS_BIN THREADS CLASS...   (2 CPUs or more)
# A measurement: docs/class-select.rst records the figures and the
# command; tests/test_sched_select.py runs it small and checks every line.
usage="usage: $0 TASKS_BIN THREADS CLASS..."
tasks=${1:?$usage}
threads=${2:?$usage}
shift 2
K=/proc/sys/kernel/sched_class
fifo=/tmp/fallback_time.fifo
out=/tmp/fallback_time.out
pid=""
trap 'kill $pid 2>/dev/null' EXIT

echo $((threads * 4 + 10000)) >/proc/sys/kernel/threads-max
echo 1 >/proc/sys/kernel/sysrq
# Off: thousands of equals taking turns are no stall to fall back from.
echo 0 >/proc/sys/kernel/sched_watchdog_ms
rm -f $fifo
mkfifo $fifo
for cls in "$@"; do
	for kind in threads spinners; do
		read -r t_start _ </proc/uptime
		echo "# $cls at $t_start s"
		echo "$cls" >$K || exit 2
		taskset -c 0,1 "$tasks" $kind "$threads" <$fifo >$out &
		pid=$!
		# Hold the fifo open: tasks exits when its stdin closes.
		exec 9>$fifo
		for i in $(seq 600); do
			grep -q ready $out && break
			sleep 0.5
		done
		echo "# $cls, $threads $kind: $(cat $out)"
		# Spinners pass their gate just after "ready": wait for them
		# (loadavg's fourth field counts the tasks runnable now).
		for i in $(seq 60); do
			running=$(cut -d' ' -f4 /proc/loadavg)
			[ $kind = threads ] || [ "${running%/*}" -gt "$threads" ] && break
			sleep 1
		done
		echo "# runnable/all $running after $i s"
		read -r t_sysrq _ </proc/uptime
		echo S >/proc/sysrq-trigger
		# Builtins only until the spinners are gone: on CFS beside
		# hundreds of them each fork here took 17-20 s (debug kernel,
		# TCG, 300 spinners on 2 CPUs, with no switch at all).
		i=0
		while read -r now <$K && [ "$now" != cfs ] && [ $i -lt 100000 ]; do
			i=$((i + 1))
		done
		read -r t_cfs _ </proc/uptime
		exec 9>&-
		kill $pid
		wait $pid 2>/dev/null
		pid=""
		read -r t_gone _ </proc/uptime
		echo "# sysrq-S at $t_sysrq s, cfs read at $t_cfs s, the threads gone at $t_gone s"
		dmesg | grep "sched: normal tasks moved from $cls to cfs" | tail -1
	done
done
exit 0
