#!/bin/sh
# In-guest TAP test of batch starvation ("The Battle of the Schedulers:
# FreeBSD ULE vs. Linux CFS", ATC 2018, section 5.1): on CPU 1 alone, a
# CPU-bound "fibo" spinner shares the CPU with 80 threads that each run
# 1 ms and sleep 4 ms. Each thread sleeps four times as long as it runs, so
# ULE scores it interactive however long it waits for the CPU, and together
# they want 16 CPUs' worth. The spinner's share of CPU 1 is measured while
# they run, from its /proc/<pid>/schedstat run time.
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
POOL_S=8
# A fair scheduler owes the spinner about 1/81 of the CPU (12345 ppm): the
# threads wait ~80 ms for each 1 ms burst, so nearly all 81 tasks are
# runnable all the time. ULE runs its timeshare queue only when no
# interactive thread is runnable, which never happens here: the spinner
# starves (~0). Half the fair share separates the two with room for
# tick-sized noise and CFS's wakeup credit for sleepers; a bound like 5 %
# would pass CFS's fair 1.2 % as starvation too.
LIMIT_PPM=$((1000000 / (THREADS + 1) / 2))
class=$(cat $K/sched_class)

echo "TAP version 13"
echo "1..6"
# This shell and its helpers stay on CPU 0, off the CPU under test.
taskset -pc 0 $$ >/dev/null

# mark PID, then measure PID: sets window (cs since the mark) and ppm (the
# task's run time since the mark, in millionths of the window).
mark() {
	m_ns=$(cpu_ns "$1")
	now_cs
	m_cs=$now
}
measure() {
	_ns=$(cpu_ns "$1")
	now_cs
	window=$((now - m_cs))
	[ "$window" -gt 0 ] || window=1
	ppm=$(((_ns - m_ns) / (window * 10)))
}
# ticks PID: utime + stime of the whole process (clock ticks, 100 a second).
ticks() {
	read -r _l 2>/dev/null </proc/"$1"/stat || { echo 0; return; }
	set -- ${_l##*) }
	echo $(($12 + $13))
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
if [ "$alone" -gt 800000 ]; then
	ok "spinner alone gets $(pct "$alone") of CPU $CPU"
else
	not_ok "spinner alone gets $(pct "$alone") of CPU $CPU, want > 80 %"
fi

taskset -c $CPU "$uleload" pool $THREADS $RUN_US $SLEEP_US $POOL_S >/tmp/pool.out &
pool=$!
tids=$(wait_line /tmp/pool.out tids 100)
# uleload starts the threads 0.5 s after printing their tids; the window
# starts 0.5 s later and ends well before they stop (POOL_S after start).
sleep 1
mark $spin
pool_ticks=$(ticks $pool)
sleep 2
# Under ULE the threads must be interactive, or the test shows nothing.
good=0
for t in $tids; do
	ule_read /proc/$pool/task/$t/sched || continue
	if [ "$class" = ule ]; then
		[ "$u_queue" = realtime ] && good=$((good + 1))
	else
		[ "$s_class" = "$class" ] && good=$((good + 1))
	fi
done
what=$([ "$class" = ule ] && echo "on ULE's realtime queue" || echo "on $class")
if [ "$good" -ge $((THREADS * 9 / 10)) ]; then
	ok "$good of $THREADS pool threads $what"
else
	not_ok "$good of $THREADS pool threads $what, want >= 90 %"
fi
sleep 2
pool_ticks=$(($(ticks $pool) - pool_ticks))
measure $spin
share=$ppm
if ! kill -0 $pool 2>/dev/null; then
	not_ok "spinner share measured while the pool ran (the pool ended first)"
elif [ "$class" = ule ] && [ "$share" -lt $LIMIT_PPM ]; then
	ok "ULE starves the spinner: $(pct "$share") of CPU $CPU"
elif [ "$class" != ule ] && [ "$share" -gt $LIMIT_PPM ]; then
	ok "$class gives the spinner $(pct "$share") of CPU $CPU"
else
	not_ok "$class gives the spinner $(pct "$share") of CPU $CPU (want $([ "$class" = ule ] &&
		echo "<" || echo ">") $(pct $LIMIT_PPM))"
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
kill $spin
wait $spin 2>/dev/null
printf '%s\n' "class $class" "alone_ppm $alone" "share_ppm $share" "pool_ppm $pool_ppm" \
	"after_ppm $after" "limit_ppm $LIMIT_PPM" "interactive $good" >"$out/starvation.txt"
echo "# $(echo $(cat "$out/starvation.txt"))"
tap_done
