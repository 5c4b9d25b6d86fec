#!/bin/sh
# In-guest TAP test: an idle CPU's utilisation decays whichever class runs
# normal tasks (Documentation/scheduler/sched-class-select.rst, "Load
# tracking"). Usage: sched_decay.sh CLASS   (boot with sched=CLASS, 2 CPUs)
#
# CPU 1 runs an RT burst, then a hog of CLASS, and is idle after each; CPU 0
# keeps a spinner so that ticks there drive the nohz updates of CPU 1, and
# this script, so that CPU 1 is really idle. The signal must be high while
# the work runs (PELT halves every 32 ms, faster than this script reads
# the debug file) and near 0 two seconds after it stopped (the lowest read
# up to 4 s after).
class=${1:?usage: $0 CLASS}
. "$(dirname "$0")/tap.sh"
. "$(dirname "$0")/class_lib.sh"
HIGH=200
# Per-CPU kthreads still run a little on CPU 1; without decay the signal
# stays near its peak.
LOW=100

echo "TAP version 13"
echo "1..5"

check "$(cat /proc/sys/kernel/sched_class)" "$class" "booted on $class"
taskset -pc 0 $$ >/dev/null
taskset -c 0 sh -c 'while :; do :; done' &
ticker=$!
trap 'kill $ticker $burst 2>/dev/null' EXIT

# decays WHAT NAME PID: NAME must be high while PID runs on CPU 1 and low
# 2 to 4 s after it was killed.
decays() {
	sleep 1
	peak=$(sched_debug cpu#1 "$2")
	kill "$3"
	wait "$3" 2>/dev/null
	# A per-CPU kthread that runs on CPU 1 while the host stalls its vCPU
	# lifts the signal for a while; the lowest of the reads from 2 s to
	# 4 s after is the decay.
	sleep 2
	after=$(sched_debug cpu#1 "$2")
	_i=0
	while [ "${after:-$HIGH}" -gt $LOW ] && [ $_i -lt 10 ]; do
		sleep 0.2
		_v=$(sched_debug cpu#1 "$2")
		[ -n "$_v" ] && [ "$_v" -lt "${after:-$HIGH}" ] && after=$_v
		_i=$((_i + 1))
	done
	echo "# $1: $2 $peak while it ran, $after by $((20 + _i * 2))00 ms after (the lowest read from 2 s on)"
	if [ "${peak:-0}" -ge $HIGH ] && [ "${after:-$HIGH}" -le $LOW ]; then
		ok "$2 of CPU 1 decays once idle after $1"
	else
		not_ok "$2 of CPU 1 decays once idle after $1 (${peak:-none} -> ${after:-none})"
	fi
}

chrt -f 50 taskset -c 1 sh -c 'while :; do :; done' &
burst=$!
decays "an RT burst" avg_rt.util_avg $burst

taskset -c 1 sh -c 'while :; do :; done' &
burst=$!
sleep 0.5
check "$(sed -n 's/^class *: *//p' /proc/$burst/sched)" "$class" "the hog runs on $class"
decays "a $class hog" avg_pluggable.util_avg $burst
check "$(cat /proc/sys/kernel/sched_class)" "$class" "still on $class"
tap_done
