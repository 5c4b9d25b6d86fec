#!/bin/sh
# In-guest overhead benchmark of the observability features, driven by
# scripts/bench-observability. Usage: obs_overhead.sh ROUNDS GROUPS LOOPS
#
# Runs "hackbench -g GROUPS -l LOOPS" ROUNDS times in each mode, rotating
# the order every round so slow drift of a shared host spreads evenly:
#   off       nothing enabled
#   checker   kernel.sched_sanity=1, interval 1 s, confirm 100 ms
#   flight    event recorder in flight mode (overwrite), 1 MiB per CPU
#   ftrace    the sched_events tracepoints into ftrace's ring buffer
# Prints "run MODE SECONDS RECORDS" per run, then the checker's own time.
rounds=${1:-5}
groups=${2:-4}
loops=${3:-100}
E=/sys/kernel/debug/sched/events
T=/sys/kernel/tracing
K=/proc/sys/kernel

records() { awk 'NR > 6 { s += $2 } END { print s + 0 }' $E/stats; }

run() {	# MODE
	records=0
	case $1 in
	checker) echo 1 >$K/sched_sanity ;;
	flight) echo start >$E/control ;;
	ftrace) echo >$T/trace; echo 1 >$T/events/sched_events/enable ;;
	esac
	secs=$(hackbench -g "$groups" -l "$loops" | sed -n 's/^Time: *//p')
	case $1 in
	checker) echo 0 >$K/sched_sanity ;;
	flight) echo stop >$E/control; records=$(records) ;;
	ftrace) echo 0 >$T/events/sched_events/enable ;;
	esac
	echo "run $1 $secs $records"
}

echo 1000 >$K/sched_sanity_interval_ms
echo 100 >$K/sched_sanity_confirm_ms
echo clear >/proc/sched_sanity
echo flight >$E/mode
echo 1024 >$E/buffer_kb
echo 8192 >$T/buffer_size_kb
echo "cpus $(nproc) groups $groups loops $loops rounds $rounds"
hackbench -g "$groups" -l "$loops" >/dev/null	# warm up caches and page tables

set -- off checker flight ftrace
i=0
while [ $i -lt "$rounds" ]; do
	for mode in "$@"; do run "$mode"; done
	set -- "$2" "$3" "$4" "$1"
	i=$((i + 1))
done
sed -n 2p /proc/sched_sanity | sed 's/^/checker /'
