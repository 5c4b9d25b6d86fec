#!/bin/sh
# In-guest benchmark of the classes for normal tasks, driven by
# scripts/bench-sched.
# Usage: class_bench.sh "CLASSES" ROUNDS SCALE [SUITE [HELPER [BENCHES [APPS]]]]
#
# Switches every normal task between CLASSES (kernel.sched_class) within
# one boot (on a reference kernel, which has no kernel.sched_class, CLASSES
# is one name for its own scheduler) and runs each benchmark ROUNDS times per class, rotating which
# class goes first every round so drift of a shared host spreads evenly.
# A class may name scheduler features to set while it runs, as
# CLASS:FEAT[+FEAT...] (bmq:NO_HRTICK_BMQ, cfs:WAKE_IDLE_LONGEST): they
# are written to /sys/kernel/debug/sched/features before its runs and
# undone after, so one boot compares a feature on and off.
# SCALE multiplies the work of every benchmark (1: 5-40 s each on 8
# emulated CPUs of a 2-core host; 0: smoke sizes, to check that every
# tool runs). Prints "result BENCH CLASS ROUND VALUE" per run and
# "bench BENCH COMMAND" once per benchmark; a run whose tool failed prints
# VALUE as "fail". Ends with "watchdog N", the stall-watchdog reports
# logged (the default timeout must not fire in these loads). BENCHES, a
# comma-separated list, runs only those benchmarks of the suite.
#
# SUITE "wakeup" (the default): hackbench, perf bench sched pipe and
# messaging, sysbench threads and mutex; VALUE is seconds.
# SUITE "bmq": the BMQ thesis's measurements. perf bench sched messaging
# -p -t with 10 and 20 groups (loops 50 and 100 x SCALE: SCALE 40 gives
# the thesis's 2000 and 4000), seconds; and a 24 fps frame task needing
# 3 ms of CPU per frame beside 10, 20 and 40 spinners for 10 s
# (uleload frames), VALUE the percentage of frames missed. 3 ms is below
# one BMQ slice, so BMQ's boost can rank the frame task above the
# spinners; a frame cost above a slice deboosts it to their level.
# SUITE "muqss": the MuQSS thesis's three tests (its section 4).
# Latency: perf bench sched messaging -p -t -g 20 (loops 100 x SCALE;
# SCALE 20 gives its -l 2000), seconds. Turnaround: make -j1 and -jN
# (N = CPUs) of eight objects of the Lua tree in APPS/lua (the
# applications experiment's tree, copied to /tmp untimed), seconds.
# Interactivity: the frame task above beside 10, 20, 30, 40 and 50
# spinners (the thesis's rt-app background tasks), % of frames missed.
# Preemption: context switches per message (/proc/stat) of perf bench
# sched messaging -p -t -g 2 (loops 100 x SCALE), 800 messages a loop:
# how often a sync wakeup preempts its waker.
# SUITE "pick": the cost of a switch with every other CPU idle. perf
# bench sched pipe pinned to CPU 0 (20000 round trips x SCALE), VALUE
# microseconds per round trip: each switch's pick runs on CPU 0, so a
# pick that reads every CPU's queue (MuQSS's look) pays per CPU here.
# SUITE "walk": the other CPUs' service while thousands of threads wait.
# 5000 spinning threads (500 at SCALE 0) pinned to CPUs 0-1 (so that ULE
# counts them as transferable) stay alive for the whole boot, and the
# walks over a queue with its lock held (ULE's idle steal, MuQSS's look
# across queues, the stall watchdog's check) meet them whenever one of
# the other CPUs idles. There, perf bench sched pipe (20000 round trips x
# SCALE; microseconds per round trip) and cyclictest (4 SCHED_FIFO 95
# threads, 1 ms, 5 s x SCALE; its 99th percentile and maximum, us): a
# realtime waiter measures how long interrupts and the runqueue locks
# are held, not the class's choices. Needs 4 CPUs and
# HELPER, the tasks program (tools/testing/sched/tasks.c).
# HELPER is uleload for suites bmq and muqss and tasks for suite walk.
classes=${1:?usage: $0 "CLASSES" ROUNDS SCALE [SUITE [ULELOAD]]}
rounds=${2:-3}
scale=${3:-1}
suite=${4:-wakeup}
uleload=${5:-}
helper=$uleload
only=${6:-}
K=/proc/sys/kernel/sched_class
cpus=$(nproc)
first=$(cat $K 2>/dev/null)

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
benches="hackbench pipe messaging sysbench-threads sysbench-mutex"

# The frame task of suites bmq and muqss: 10 s beside each load (1 s
# beside a fifth of it at smoke size); ml, the messaging loops per scale.
case $suite in
bmq | muqss)
	[ -x "$uleload" ] || { echo "class_bench.sh: suite $suite needs ULELOAD"; exit 1; }
	if [ "$scale" -eq 0 ]; then fsec=1 fdiv=5 ml=5; else fsec=10 fdiv=1 ml=$((50 * scale)); fi
	frames="$uleload frames 24 3000 $fsec"
	;;
esac

if [ "$suite" = bmq ]; then
	m10="perf bench sched messaging -p -t -g 10 -l $ml"
	m20="perf bench sched messaging -p -t -g 20 -l $((ml * 2))"
	benches="messaging-g10 messaging-g20 frames-10 frames-20 frames-40"
elif [ "$suite" = muqss ]; then
	apps=${7:-}
	[ -f "$apps/lua/src/Makefile" ] || { echo "class_bench.sh: suite muqss needs APPS/lua"; exit 1; }
	objs="lopcodes.o lctype.o linit.o lzio.o lmem.o ldump.o lcorolib.o lfunc.o"
	[ "$scale" -eq 0 ] && objs="lopcodes.o lctype.o"
	m20="perf bench sched messaging -p -t -g 20 -l $((ml * 2))"
	m2="perf bench sched messaging -p -t -g 2 -l $((ml * 2))"
	mk="make -s -C /tmp/class-bench-make/src CC=gcc CFLAGS='-O0 -DLUA_USE_LINUX' $objs"
	benches="messaging-g20 make-j1 make-jN frames-10 frames-20 frames-30 frames-40 frames-50"
	benches="$benches messaging-switches"
elif [ "$suite" = pick ]; then
	if [ "$scale" -eq 0 ]; then pl=2000; else pl=$((20000 * scale)); fi
	pin="taskset -c 0 perf bench sched pipe -l $pl"
	benches="pipe-cpu0"
elif [ "$suite" = walk ]; then
	[ -x "$helper" ] || { echo "class_bench.sh: suite walk needs the tasks program"; exit 1; }
	[ "$cpus" -ge 4 ] || { echo "class_bench.sh: suite walk needs 4 CPUs or more"; exit 1; }
	if [ "$scale" -eq 0 ]; then
		waiters=500 pl=2000 cdur=1
	else
		waiters=5000 pl=$((20000 * scale)) cdur=$((5 * scale))
	fi
	pb="taskset -c 2-$((cpus - 1)) perf bench sched pipe -l $pl"
	ct="cyclictest -q -m -p 95 -t 4 -a 2-$((cpus - 1)) -i 1000 -D $cdur -h 100000"
	benches="pipe-beside cyclictest-p99 cyclictest-max"
elif [ "$suite" != wakeup ]; then
	echo "class_bench.sh: unknown suite '$suite' (wakeup, bmq, muqss, pick or walk)"
	exit 1
fi
if [ -n "$only" ]; then
	for b in $(echo "$only" | tr ',' ' '); do
		case " $benches " in
		*" $b "*) ;;
		*) echo "class_bench.sh: no benchmark '$b' in suite $suite ($benches)"; exit 1 ;;
		esac
	done
	benches=$(echo "$only" | tr ',' ' ')
fi

# frames_missed N: the frame task beside N spinners (one more second
# than it); prints the percentage of frames missed. The spinners are
# started by a subshell that exits at once, so they are init's children:
# ULE gives a dead child's run time to its parent and a new child its
# parent's history, and spinners of this shell would make every later
# frame task start as a CPU hog. A frame task and the background load
# it competes with are not parent and child on a desktop either.
frames_missed() {
	_pids=$(
		_i=0
		while [ $_i -lt "$1" ]; do
			"$uleload" spinner $((fsec + 1)) >/dev/null &
			echo $!
			_i=$((_i + 1))
		done
	)
	$frames | sed -n 's/^frames \([0-9]*\) missed \([0-9]*\)$/\1 \2/p' | {
		read -r _n _m && [ "$_n" -gt 0 ] && echo "$((_m * 100 / _n))"
	}
	kill $_pids 2>/dev/null
	# Not our children: wait until each is gone or a zombie of init's.
	for _p in $_pids; do
		while [ -e "/proc/$_p" ] && ! grep -q '^State:.*Z' "/proc/$_p/status" 2>/dev/null; do
			sleep 0.1
		done
	done
}

# make_seconds J: make -jJ of the Lua objects in a fresh copy of the
# tree; prints the seconds make took (nothing when it failed).
make_seconds() {
	_d=/tmp/class-bench-make
	rm -rf $_d && cp -r "$apps/lua" $_d || return
	_t0=$(date +%s%N)
	make -s -j"$1" -C $_d/src CC=gcc CFLAGS="-O0 -DLUA_USE_LINUX" $objs >/dev/null 2>&1 || return
	_t1=$(date +%s%N)
	echo "$(((_t1 - _t0) / 1000000))" | awk '{ printf "%.3f\n", $1 / 1000 }'
}

for b in $benches; do
	case $b in
	hackbench) c=$hb ;; pipe) c=$pipe ;; messaging) c=$msg ;;
	sysbench-threads) c=$sbt ;; sysbench-mutex) c=$sbm ;;
	messaging-g10) c=$m10 ;; messaging-g20) c=$m20 ;;
	make-j1) c="$mk" ;; make-jN) c="$mk -j$cpus" ;;
	messaging-switches) c="$m2 (context switches per message)" ;;
	pipe-cpu0) c="$pin (usecs/op)" ;;
	pipe-beside) c="$pb (usecs/op) beside $waiters threads waiting on CPUs 0-1" ;;
	cyclictest-p99) c="$ct (p99, us) beside $waiters threads waiting on CPUs 0-1" ;;
	cyclictest-max) c="$ct (max, us) beside $waiters threads waiting on CPUs 0-1" ;;
	frames-*) c="$frames beside $((${b#frames-} / fdiv)) spinners (% missed)" ;;
	esac
	echo "bench $b $c"
done
echo "cpus $cpus"

# switches_per_message: $m2's context switches (every CPU's, from
# /proc/stat) per message it sends, 800 per loop (2 groups of 20 senders
# writing to 20 receivers each); nothing if the tool failed.
switches_per_message() {
	_c0=$(sed -n 's/^ctxt //p' /proc/stat)
	$m2 >/dev/null 2>&1 || return
	_c1=$(sed -n 's/^ctxt //p' /proc/stat)
	awk -v d=$((_c1 - _c0)) -v m=$((ml * 2 * 800)) 'BEGIN { printf "%.4f\n", d / m }'
}

# cyclic WHAT: cyclictest's 99th percentile (p99) or maximum (max) over
# its threads, in us. p99 runs the tool; max reads that run (or runs it,
# when p99 is not among the benchmarks). Overflows of the histogram count
# as samples at the maximum.
CT_OUT=/tmp/class-bench-cyclictest
cyclic() {
	if [ "$1" = p99 ] || ! grep -q "^# Total:" $CT_OUT 2>/dev/null; then
		$ct >$CT_OUT 2>&1 || { rm -f $CT_OUT; return; }
	fi
	awk -v what="$1" '
		/^[0-9]+([ \t]+[0-9]+)+[ \t]*$/ {
			for (i = 2; i <= NF; i++) { n[$1 + 0] += $i; total += $i }
		}
		/^# Max Latencies:/ { for (i = 4; i <= NF; i++) if ($i + 0 > max) max = $i + 0 }
		/^# Histogram Overflows:/ { for (i = 4; i <= NF; i++) { over += $i; total += $i } }
		END {
			if (!total) exit
			if (what == "max") { print max; exit }
			need = total * 0.99
			for (us = 0; us < 100000; us++) if ((seen += n[us]) >= need) break
			print (us < 100000) ? us : max
		}' $CT_OUT
	[ "$1" = max ] && rm -f $CT_OUT
}

# seconds BENCH: runs it, prints the value it reports (seconds, % missed,
# or microseconds per round trip).
seconds() {
	case $1 in
	hackbench) $hb 2>&1 | sed -n 's/^Time: *//p' ;;
	pipe) $pipe 2>&1 | sed -n 's/^ *Total time: *\([0-9.]*\).*/\1/p' ;;
	messaging) $msg 2>&1 | sed -n 's/^ *Total time: *\([0-9.]*\).*/\1/p' ;;
	sysbench-threads) $sbt 2>&1 | sed -n 's/^ *total time: *\([0-9.]*\)s.*/\1/p' ;;
	sysbench-mutex) $sbm 2>&1 | sed -n 's/^ *total time: *\([0-9.]*\)s.*/\1/p' ;;
	messaging-g10) $m10 2>&1 | sed -n 's/^ *Total time: *\([0-9.]*\).*/\1/p' ;;
	messaging-g20) $m20 2>&1 | sed -n 's/^ *Total time: *\([0-9.]*\).*/\1/p' ;;
	make-j1) make_seconds 1 ;;
	pipe-cpu0) $pin 2>&1 | sed -n 's/^ *\([0-9.]*\) usecs\/op.*/\1/p' ;;
	pipe-beside) $pb 2>&1 | sed -n 's/^ *\([0-9.]*\) usecs\/op.*/\1/p' ;;
	cyclictest-p99) cyclic p99 ;;
	cyclictest-max) cyclic max ;;
	make-jN) make_seconds "$cpus" ;;
	messaging-switches) switches_per_message ;;
	frames-*) frames_missed $((${1#frames-} / fdiv)) ;;
	esac
}

F=/sys/kernel/debug/sched/features
set_feats=""
# feature_undo FEAT: the feature's opposite (NO_X for X, X for NO_X).
feature_undo() {
	case $1 in NO_*) echo "${1#NO_}" ;; *) echo "NO_$1" ;; esac
}
# MuQSS's queue sharing as booted: muqss:rqshare=MODE changes it for one
# variant, and every switch puts it back first.
R=/proc/sys/kernel/sched_muqss_rqshare
share0=$(cat $R 2>/dev/null)
use() {
	for _f in $set_feats; do
		echo "$(feature_undo "$_f")" >$F || { echo "undoing $_f failed"; exit 1; }
	done
	set_feats=""
	if [ ! -e $K ]; then
		# A reference kernel (scripts/reference-kernel): its own scheduler
		# runs everything, and its variant (prjc-bmq) is only a name.
		case $1 in cfs | ule | bmq | muqss | *:*) echo "no $K: cannot run $1"; exit 1 ;; esac
		sleep 1
		return
	fi
	if [ -n "$share0" ] && [ "$(cat $R)" != "$share0" ]; then
		echo "$share0" >$R || { echo "rqshare $share0 failed"; exit 1; }
	fi
	echo "${1%%:*}" >$K || { echo "switch to ${1%%:*} failed"; exit 1; }
	case $1 in
	*:*)
		for _f in $(echo "${1#*:}" | tr '+' ' '); do
			case $_f in
			rqshare=*)
				echo "${_f#rqshare=}" >$R || { echo "$_f failed"; exit 1; }
				continue
				;;
			esac
			mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
			echo "$_f" >$F || { echo "feature $_f failed"; exit 1; }
			set_feats="$set_feats $_f"
		done
		;;
	esac
	sleep 1
}

# Suite walk: the waiting threads, started once under the class booted,
# which releases them at once whatever it is. Equals taking turns are no
# stall, so the watchdog gets its longest timeout while they run.
W=/proc/sys/kernel/sched_watchdog_ms
walkers=""
if [ "$suite" = walk ]; then
	wd0=$(cat $W 2>/dev/null)
	echo $((waiters * 4 + 10000)) >/proc/sys/kernel/threads-max
	[ -z "$wd0" ] || echo 3600000 >$W
	trap 'kill $walkers 2>/dev/null' EXIT
	taskset -c 0-1 "$helper" spinners "$waiters" </dev/null >/tmp/class-bench-walk &
	walkers=$!
	while ! grep -q ready /tmp/class-bench-walk 2>/dev/null; do
		kill -0 $walkers 2>/dev/null || { echo "class_bench.sh: the waiting threads died"; exit 1; }
		sleep 0.5
	done
	echo "waiters $waiters"
fi

r=0
while [ $r -lt "$rounds" ]; do
	r=$((r + 1))
	# Rotate the order of the classes every round.
	order=$classes
	i=1
	while [ $i -lt $r ]; do
		set -- $order
		_head=$1
		shift
		order="$* $_head"
		i=$((i + 1))
	done
	for cls in $order; do
		use "$cls"
		for b in $benches; do
			s=$(seconds $b)
			echo "result $b $cls $r ${s:-fail}"
		done
	done
done
if [ -n "$walkers" ]; then
	kill $walkers
	wait $walkers 2>/dev/null
	walkers=""
	[ -z "$wd0" ] || echo "$wd0" >$W
fi
[ -z "$first" ] || use "$first"
echo "watchdog $(dmesg | grep -c "sched: watchdog:")"
