#!/bin/sh
# In-guest benchmark of the classes for normal tasks, driven by
# scripts/bench-sched. Usage: class_bench.sh "CLASSES" ROUNDS SCALE
#
# Switches every normal task between CLASSES (kernel.sched_class) within
# one boot and runs each benchmark ROUNDS times per class, rotating which
# class goes first every round so drift of a shared host spreads evenly.
# SCALE multiplies the work of every benchmark (1: 5-40 s each on 8
# emulated CPUs of a 2-core host; 0: smoke sizes, to check that every
# tool runs). Prints "result BENCH CLASS ROUND SECONDS" per run and
# "bench BENCH COMMAND" once per benchmark; a run whose tool failed prints
# SECONDS as "fail".
classes=${1:?usage: $0 "CLASSES" ROUNDS SCALE}
rounds=${2:-3}
scale=${3:-1}
K=/proc/sys/kernel/sched_class
cpus=$(nproc)
first=$(cat $K)

# Wakeup-heavy loads: many hackbench groups, a pipe ping-pong, perf's
# messaging with threads and pipes, sysbench threads (mutex + yield) and
# sysbench mutex.
if [ "$scale" -eq 0 ]; then
	# Smoke sizes: every tool runs once, fast enough for a lockdep kernel.
	groups=2 loops=20 pipes=500 events=100 mloops=100
else
	groups=10 loops=$((50 * scale)) pipes=$((10000 * scale)) events=$((1000 * scale))
	mloops=$((2000 * scale))
fi
hb="hackbench -g $groups -l $loops"
pipe="perf bench sched pipe -l $pipes"
msg="perf bench sched messaging -p -t -g $((groups / 2)) -l $((loops * 4))"
sbt="sysbench threads --threads=$((cpus * 2)) --thread-locks=4 --time=0 --events=$events run"
sbm="sysbench mutex --threads=$((cpus * 2)) --mutex-num=64 --mutex-loops=$mloops run"

for b in hackbench pipe messaging sysbench-threads sysbench-mutex; do
	case $b in
	hackbench) c=$hb ;; pipe) c=$pipe ;; messaging) c=$msg ;;
	sysbench-threads) c=$sbt ;; sysbench-mutex) c=$sbm ;;
	esac
	echo "bench $b $c"
done
echo "cpus $cpus"

# seconds BENCH: runs it, prints the elapsed time the tool reports.
seconds() {
	case $1 in
	hackbench) $hb 2>&1 | sed -n 's/^Time: *//p' ;;
	pipe) $pipe 2>&1 | sed -n 's/^ *Total time: *\([0-9.]*\).*/\1/p' ;;
	messaging) $msg 2>&1 | sed -n 's/^ *Total time: *\([0-9.]*\).*/\1/p' ;;
	sysbench-threads) $sbt 2>&1 | sed -n 's/^ *total time: *\([0-9.]*\)s.*/\1/p' ;;
	sysbench-mutex) $sbm 2>&1 | sed -n 's/^ *total time: *\([0-9.]*\)s.*/\1/p' ;;
	esac
}

use() {
	echo "$1" >$K || { echo "switch to $1 failed"; exit 1; }
	sleep 1
}

r=0
while [ $r -lt "$rounds" ]; do
	r=$((r + 1))
	# Rotate the order of the classes every round.
	order=$classes
	i=1
	while [ $i -lt $r ]; do
		set -- $order
		shift
		order="$* ${order%% *}"
		i=$((i + 1))
	done
	for cls in $order; do
		use "$cls"
		for b in hackbench pipe messaging sysbench-threads sysbench-mutex; do
			s=$(seconds $b)
			echo "result $b $cls $r ${s:-fail}"
		done
	done
done
use "$first"
