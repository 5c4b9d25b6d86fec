#!/bin/sh
# In-guest TAP test of batch starvation ("The Battle of the Schedulers:
# FreeBSD ULE vs. Linux CFS", ATC 2018, section 5.1): on CPU 1 alone, a
# CPU-bound "fibo" spinner shares the CPU with 80 threads that each run
# 1 ms and sleep 4 ms. Each thread sleeps four times as long as it runs, so
# ULE scores it interactive however long it waits for the CPU, and together
# they want 16 CPUs' worth. The spinner's share of CPU 1 is measured while
# they run, from its /proc/<pid>/schedstat run time. Then two starvations
# ULE must bound: a looping kernel thread (ksmd) beside the spinner, and a
# SCHED_IDLE task preempted in the kernel holding its mmap_lock while the
# threads keep CPU 1 busy. The stall watchdog runs with a 2 s timeout
# throughout: each starvation here is behind better work by ULE's rules
# and must not end the run by a fallback.
# Usage: ule_starvation.sh OUTDIR ULELOAD   (same script for every class;
# OUTDIR/starvation.txt gets the measured shares in millionths)
out=${1:?usage: $0 OUTDIR ULELOAD}
uleload=${2:?usage: $0 OUTDIR ULELOAD}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/tap.sh"
. "$here/ule_lib.sh"
mkdir -p "$out"
CPU=1
THREADS=80
RUN_US=1000
SLEEP_US=4000
POOL_S=12
WINDOW_S=3
# A fair scheduler owes the spinner about 1/81 of the CPU (12345 ppm): the
# threads wait ~80 ms for each 1 ms burst, so nearly all 81 tasks are
# runnable all the time. ULE runs its timeshare queue only when no
# interactive thread is runnable, which never happens here: the spinner
# starves (~0). Half the fair share separates the two with room for
# tick-sized noise and CFS's wakeup credit for sleepers; a bound like 5 %
# would pass CFS's fair 1.2 % as starvation too.
LIMIT_PPM=$((1000000 / (THREADS + 1) / 2))
# Far shorter than the POOL_S seconds the spinner starves under ULE.
WATCHDOG_MS=2000
class=$(cat $K/sched_class)
watchdog=$(cat $K/sched_watchdog_ms)
echo $WATCHDOG_MS >$K/sched_watchdog_ms

echo "TAP version 13"
echo "1..10"
# This shell and its helpers stay on CPU 0, off the CPU under test.
taskset -pc 0 $$ >/dev/null

# mark PID, then measure PID: sets window (cs since the mark) and ppm (the
# task's run time since the mark, in millionths of the window).
mark() {
	cpu_ns "$1"
	m_ns=$ns m_wait=$wait_ns
	now_cs
	m_cs=$now
}
measure() {
	cpu_ns "$1"
	_ns=$ns
	waited_ms=$(((wait_ns - m_wait) / 1000000))
	now_cs
	window=$((now - m_cs))
	[ "$window" -gt 0 ] || window=1
	ppm=$(((_ns - m_ns) / (window * 10)))
}
# ticks PID: utime + stime of the whole process (clock ticks, 100 a second).
ticks() {
	read -r _l 2>/dev/null </proc/"$1"/stat || { echo 0; return; }
	set -- ${_l##*) }
	echo $((${12} + ${13}))
}
pct() { awk -v p="$1" 'BEGIN { printf "%.2f %%", p / 10000 }'; }

now_cs
start=$now
taskset -c $CPU "$uleload" spinner 40 >/dev/null &
spin=$!
if [ "$class" = ule ]; then
	if wait_ule /proc/$spin/sched timeshare 152 223 "$start" 300; then
		ok "spinner batch after $waited cs: $(ule_state)"
	else
		not_ok "spinner batch within 3 s: $(ule_state)"
	fi
else
	sleep 1
	ule_read /proc/$spin/sched
	check "$s_class" "$class" "spinner runs on $class"
fi
mark $spin
sleep 1
measure $spin
alone=$ppm
# A baseline, not a measurement of the class. Under ULE this first second
# reads about 87 % and the spinner waits ~150 ms on its run queue (CFS:
# ~100 %, 3 ms): something else runs on CPU 1 then, not yet identified.
# The last second, after the pool, reads ~100 % under both.
if [ "$alone" -gt 500000 ]; then
	ok "spinner alone gets $(pct "$alone") of CPU $CPU (waited ${waited_ms} ms, window ${window} cs)"
else
	not_ok "spinner alone gets $(pct "$alone") of CPU $CPU, want > 50 %"
fi

taskset -c $CPU "$uleload" pool $THREADS $RUN_US $SLEEP_US $POOL_S >/tmp/pool.out &
pool=$!
tids=$(wait_line /tmp/pool.out tids 100)
# uleload starts the threads 2 s after printing their tids; the window
# starts 1 s after that and ends well before they stop (POOL_S after start).
sleep 3
# One grep reads every thread's file: parsing 80 of them line by line in
# the shell takes seconds under TCG, longer than the pool lives.
grep -H . /proc/$pool/task/*/schedstat >/tmp/pool-ran.0 2>/dev/null
mark $spin
pool_ticks=$(ticks $pool)
sleep $WINDOW_S
measure $spin
share=$ppm
pool_ticks=$(($(ticks $pool) - pool_ticks))
grep -H . /proc/$pool/task/*/schedstat >/tmp/pool-ran.1 2>/dev/null
running=$(kill -0 $pool 2>/dev/null && echo yes)
if [ "$class" = ule ]; then
	grep -H '^ule.queue' /proc/$pool/task/*/sched >/tmp/pool-where 2>/dev/null
	want=realtime
	what="on ULE's realtime queue"
else
	grep -H '^class ' /proc/$pool/task/*/sched >/tmp/pool-where 2>/dev/null
	want=$class
	what="on $class"
fi
# Per pool thread (not the main thread, which waits in pthread_join): did
# it run in the window, and where is it now. Prints "ran ran_there".
counts=$(awk -v main=$pool -v want="$want" '
	{ split($0, f, "/"); tid = f[5] }
	tid == main { next }
	FILENAME ~ /pool-ran.0$/ { split($0, a, ":"); split(a[2], b, " "); t0[tid] = b[1]; next }
	FILENAME ~ /pool-ran.1$/ { split($0, a, ":"); split(a[2], b, " "); t1[tid] = b[1]; next }
	{ where[tid] = $NF }
	END {
		for (t in t1)
			if (t in t0 && t1[t] > t0[t]) { ran++; if (where[t] == want) there++ }
		print ran + 0, there + 0
	}' /tmp/pool-ran.0 /tmp/pool-ran.1 /tmp/pool-where)
set -- $counts
ran=$1 ran_there=$2
if [ -z "$running" ]; then
	not_ok "spinner share measured while the pool ran (the pool ended first)"
elif [ "$class" = ule ] && [ "$share" -lt $LIMIT_PPM ]; then
	ok "ULE starves the spinner: $(pct "$share") of CPU $CPU"
elif [ "$class" != ule ] && [ "$share" -gt $LIMIT_PPM ]; then
	ok "$class gives the spinner $(pct "$share") of CPU $CPU"
else
	not_ok "$class gives the spinner $(pct "$share") of CPU $CPU (want $([ "$class" = ule ] &&
		echo "<" || echo ">") $(pct $LIMIT_PPM))"
fi
# Under ULE the threads that keep the CPU must be interactive, or the test
# shows nothing; pool threads that start batch (their history is the test
# shell's) starve with the spinner. A fair class runs all of them.
if [ "$class" = ule ]; then
	msg="every pool thread that ran in the window is $what"
	msg="$msg ($ran ran, $((THREADS - ran)) starved with the spinner)"
	check "$([ "$ran" -gt 0 ] && echo "$ran_there")" "$ran" "$msg"
else
	check "$ran_there $ran" "$THREADS $THREADS" "all $THREADS pool threads ran in the window, $what"
fi
# 100 ticks a second, window in centiseconds: ppm = ticks * 1e6 / window.
pool_ppm=$((pool_ticks * 1000000 / window))
if [ "$pool_ppm" -gt 800000 ]; then
	ok "the pool keeps CPU $CPU busy: $(pct "$pool_ppm")"
else
	not_ok "the pool keeps CPU $CPU busy: $(pct "$pool_ppm"), want > 80 %"
fi
wait $pool
echo "# pool: $(tail -n 1 /tmp/pool.out)"

mark $spin
sleep 1
measure $spin
after=$ppm
if [ "$after" -gt 500000 ]; then
	ok "spinner runs again once the pool is gone: $(pct "$after")"
else
	not_ok "spinner runs again once the pool is gone: $(pct "$after"), want > 50 %"
fi
printf '%s\n' "class $class" "alone_ppm $alone" "share_ppm $share" "pool_ppm $pool_ppm" \
	"after_ppm $after" "limit_ppm $LIMIT_PPM" "ran $ran" "ran_there $ran_there" >"$out/starvation.txt"
echo "# $(echo $(cat "$out/starvation.txt"))"

# Starvation ULE's design does not have. 1: a kernel thread that loops.
# ksmd with no sleep between its passes over 16 MiB of mergeable pages,
# pinned beside the spinner: ULE gives kernel threads the kernel band,
# but one that runs a whole slice without sleeping drops to what its
# history gives a user task (ule_kthread_prio()), so the two share CPU 1.
# (ksmd is nice 5; CFS gives the spinner about 3/4.)
KSM=/sys/kernel/mm/ksm
ksmd=$(pgrep -x ksmd)
"$uleload" merge 16 30 >/tmp/merge.out &
merge=$!
wait_line /tmp/merge.out mergeable 100 >/dev/null
echo 0 >$KSM/sleep_millisecs
echo 4096 >$KSM/pages_to_scan
taskset -pc $CPU "$ksmd" >/dev/null
echo 1 >$KSM/run
sleep 1
cpu_ns "$ksmd"
k_ns=$ns
mark $spin
sleep 2
measure $spin
cpu_ns "$ksmd"
k_ppm=$(((ns - k_ns) / (window * 10)))
echo 0 >$KSM/run
kill $merge
wait $merge 2>/dev/null
[ "$class" = ule ] && ule_read /proc/$ksmd/sched && echo "# ksmd: $(ule_state)"
if [ "$ppm" -gt 200000 ] && [ "$k_ppm" -gt 200000 ]; then
	ok "a looping kernel thread shares CPU $CPU: spinner $(pct "$ppm"), ksmd $(pct "$k_ppm")"
else
	not_ok "a looping kernel thread shares CPU $CPU: spinner $(pct "$ppm"), ksmd $(pct "$k_ppm"), want > 20 % each"
fi
kill $spin
wait $spin 2>/dev/null

# 2: a task preempted inside the kernel holding a lock. A SCHED_IDLE task
# changes the protection of a mapping over and over (mmap_lock held for
# writing nearly all the time) on CPU 1 until the pool's interactive
# threads take the CPU; a reader of its /proc/PID/maps on CPU 2 needs that
# lock. ULE would leave the SCHED_IDLE task waiting, lock held, as long as
# the pool runs; a task preempted in the kernel now finishes its system
# call first (ULE_PRI_KERNEL_PREEMPT), so the reader's worst wait is
# short. CFS gives a SCHED_IDLE task so little beside the pool that it
# has the same inversion: its figure is printed, not checked.
taskset -c $CPU chrt -i 0 "$uleload" mapper 20 >/tmp/mapper.out &
mapper=$!
sleep 0.5
taskset -c $CPU "$uleload" pool $THREADS $RUN_US $SLEEP_US 6 >/tmp/pool2.out &
pool=$!
wait_line /tmp/pool2.out tids 100 >/dev/null
sleep 2.5
cpu_ns $mapper
m0=$ns
set -- $(taskset -c 2 "$uleload" mapsread $mapper 3)
worst_us=$4
cpu_ns $mapper
echo "# maps reads: $1 $2, worst wait ${worst_us} us; the mapper ran" \
	"$(((ns - m0) / 1000000)) ms meanwhile"
running=$(kill -0 $pool 2>/dev/null && echo yes)
if [ "$class" != ule ]; then
	ok "$class: worst wait for the SCHED_IDLE task's mmap_lock $((worst_us / 1000)) ms (not checked)"
elif [ "$running" = yes ] && in_range "$worst_us" 0 500000; then
	ok "a lock held by a SCHED_IDLE task preempted in the kernel is released: worst wait $((worst_us / 1000)) ms"
else
	not_ok "a lock held by a SCHED_IDLE task preempted in the kernel is released: worst wait ${worst_us:-?} us, want < 500 ms while the pool runs (${running:-pool ended})"
fi
wait $pool
kill $mapper
wait $mapper 2>/dev/null
# A spinner behind interactive threads, a SCHED_IDLE task behind the pool:
# waits behind better work, which the watchdog leaves alone however long.
echo "$watchdog" >$K/sched_watchdog_ms
lines=$(dmesg | grep "sched: watchdog:")
[ -n "$lines" ] && echo "$lines" | sed 's/^/# /'
check "$(printf '%s' "$lines" | grep -c .)" 0 \
	"a ${WATCHDOG_MS} ms stall watchdog stays quiet through ${POOL_S} s of starvation"
check "$(cat $K/sched_class)" "$class" "normal tasks still run on $class"
tap_done
