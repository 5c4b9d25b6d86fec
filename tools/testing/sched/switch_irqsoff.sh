#!/bin/sh
# In-guest measurement: the longest interrupts-off section while
# kernel.sched_class switches with many threads alive and a fork loop
# running (irqsoff tracer, CONFIG_IRQSOFF_TRACER; the debug config has it).
# Usage: switch_irqsoff.sh TASKS_BIN THREADS OTHER_CLASS [SWITCHES]
# Prints "# irqsoff-max idle=US switch=US" and the worst section's trace
# head. A measurement, not a pass/fail test: docs/class-select.rst
# records the figures and the command.
tasks=${1:?usage: $0 TASKS_BIN THREADS OTHER_CLASS [SWITCHES]}
threads=${2:?}
other=${3:?}
switches=${4:-4}
K=/proc/sys/kernel/sched_class
T=/sys/kernel/tracing

mountpoint -q $T || mount -t tracefs none $T
echo $((threads * 4 + 10000)) >/proc/sys/kernel/threads-max
first=$(cat $K)
"$tasks" threads "$threads" </dev/null >/tmp/threads.out &
holder=$!
while ! grep -q ready /tmp/threads.out 2>/dev/null; do
	kill -0 $holder 2>/dev/null || { echo "# thread holder died"; exit 1; }
	sleep 1
done
echo "# $(ls /proc/$holder/task | wc -l) threads in one process, $(ls -d /proc/[0-9]* | wc -l) processes"
(while :; do /bin/true; done) &
forker=$!
# The holder's 20,000 threads are left alive: their exit at once takes
# minutes under TCG (release_task() of each thread walks its siblings).
trap 'kill $forker 2>/dev/null; echo nop >$T/current_tracer' EXIT

echo irqsoff >$T/current_tracer
echo 1 >$T/tracing_on
echo 0 >$T/tracing_max_latency
sleep 5
idle=$(cat $T/tracing_max_latency)
echo "# worst section without a switch:"
grep -m 3 -E "=> started at|=> ended at|latency:" $T/trace | sed 's/^/#   /'
echo 0 >$T/tracing_max_latency
i=0
start=$(date +%s.%N)
while [ $i -lt "$switches" ]; do
	echo "$other" >$K
	echo "$first" >$K
	i=$((i + 1))
done
end=$(date +%s.%N)
switch=$(cat $T/tracing_max_latency)
echo "# worst section during $((switches * 2)) switches:"
grep -m 3 -E "=> started at|=> ended at|latency:" $T/trace | sed 's/^/#   /'
echo "# irqsoff-max idle=$idle switch=$switch us; switches took $(echo "$end - $start" | bc) s"
dmesg | grep "normal tasks moved" | tail -2 | sed 's/^/# /'
