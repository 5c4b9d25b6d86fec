#!/bin/sh
# In-guest measurement of scripts/reproduce's starvation experiment ("The
# Battle of the Schedulers: FreeBSD ULE vs. Linux CFS", ATC 2018, section
# 5.1, Figure 1) under the class the guest runs now: on CPU 1 a CPU-bound
# "fibo" spinner runs alone for ALONE_S, then beside uleload's pool of 80
# threads that each run 1 ms and sleep 4 ms for POOL_S, then alone again
# for AFTER_S: ule_starvation.c's scenario, which that test checks
# once per boot. The spinner's run time (/proc/PID/schedstat) is sampled
# every STEP seconds (every 0.1 s while the pool is being set up, so the
# pool's start is known to about that), and the host turns the samples
# into the spinner's share of CPU 1 over time.
#
# The spinner and the pool each run in their own session (setsid), as two
# applications started apart do, and autogroup is switched on for the run
# (AUTOGROUP=0 leaves it off; the guest boots with it off): CFS then
# shares CPU 1 between the two sessions, as between the paper's fibo and
# sysbench, rather than giving the spinner 1/81 of it as among 81 tasks
# (ULE and BMQ ignore autogroup). Both are started by a subshell
# that exits at once, so they are init's children: ULE charges a dead
# child's run time to its parent, and a spinner charged to this shell
# would make the next run's pool start as a CPU hog (class_bench.sh's
# frames_missed does the same).
#
# Usage: starvation_series.sh ULELOAD   (sizes from the environment:
# POOL_S, ALONE_S, AFTER_S, STEP; scripts/reproduce --quick shortens them)
# Prints TAP; writes to the JSON lines file SCHED_TEST_METRICS names
# (tap.sh's metric()) {"name": "hog", "t_cs": T, "run_ns": NS} per sample
# (uptime in centiseconds, the spinner's run time in ns) and {"name":
# "pool", "event": "launch|start|end|gone", "t_cs": T}: the pool started;
# the latest its threads can have been released (2 s after uleload
# printed their tids, which the sample that saw them bounds from above)
# and the earliest they can have ended (POOL_S after a release bounded
# from below by the sample before), so that a window between the two
# holds the pool running; and the pool seen gone.
uleload=${1:?usage: $0 ULELOAD}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/tap.sh"
. "$here/ule_lib.sh"
CPU=1
THREADS=80
RUN_US=1000
SLEEP_US=4000
POOL_S=${POOL_S:-10}
ALONE_S=${ALONE_S:-4}
AFTER_S=${AFTER_S:-3}
STEP=${STEP:-0.5}
# uleload starts the pool's threads this long after printing their tids.
HOLD_CS=200
POOL_OUT=/tmp/starvation-pool.out
class=$(cat $K/sched_class 2>/dev/null)
AG=$K/sched_autogroup_enabled

echo "TAP version 13"
echo "1..5"
if [ "$(nproc)" -lt 2 ]; then
	not_ok "needs 2 CPUs (the loads on CPU $CPU, this shell on CPU 0), have $(nproc)"
	tap_done
	exit
fi
ok "CPU $CPU for the loads, CPU 0 for this shell"
# This shell and its helpers stay on CPU 0, off the CPU under test.
taskset -pc 0 $$ >/dev/null
autogroup=$(cat $AG 2>/dev/null)
[ -n "$autogroup" ] && echo "${AUTOGROUP:-1}" >$AG
echo "# starvation class $class cpu $CPU threads $THREADS run_us $RUN_US" \
	"sleep_us $SLEEP_US pool_s $POOL_S step $STEP" \
	"autogroup $(cat $AG 2>/dev/null || echo none)"

# gone PID: true once PID has exited (init reaps it: it is not ours).
gone() {
	read -r _l 2>/dev/null </proc/"$1"/stat || return 0
	set -- ${_l##*) }
	[ "$1" = Z ] || [ "$1" = X ]
}

: >$POOL_OUT
hog=$(setsid taskset -c $CPU "$uleload" spinner $((ALONE_S + POOL_S + AFTER_S + 60)) \
	>/dev/null 2>&1 & echo $!)
now_cs
t0=$now
phase=alone
pool=""
while :; do
	cpu_ns "$hog"
	prev=$now
	now_cs
	metric hog t_cs=$now run_ns=$ns
	case $phase in
	alone)
		if [ $((now - t0)) -ge $((ALONE_S * 100)) ]; then
			if [ -n "$class" ]; then
				ule_read /proc/$hog/sched
				check "$s_class" "$class" "the spinner runs on $class"
			else
				ok "the spinner runs # SKIP no kernel.sched_class: a reference kernel"
			fi
			pool=$(setsid taskset -c $CPU "$uleload" pool $THREADS $RUN_US $SLEEP_US \
				"$POOL_S" >$POOL_OUT 2>&1 & echo $!)
			metric pool event=launch t_cs=$now
			phase=wait
		fi
		;;
	wait)
		# Builtins only: no fork between the tids and the note of their time.
		read -r _w _rest 2>/dev/null <$POOL_OUT
		if [ "$_w" = tids ]; then
			set -- $_rest
			check "$#" "$THREADS" "the pool's $THREADS threads exist"
			start=$((now + HOLD_CS))
			end=$((prev + HOLD_CS + POOL_S * 100))
			metric pool event=start t_cs=$start
			metric pool event=end t_cs=$end
			phase=pool
		elif [ $((now - t0)) -ge $((ALONE_S * 100 + 3000)) ]; then
			not_ok "the pool's $THREADS threads exist within 30 s"
			break
		fi
		;;
	pool)
		if [ "$now" -ge "$end" ] && gone "$pool"; then
			metric pool event=gone t_cs=$now
			last=$((now + AFTER_S * 100))
			phase=after
		elif [ "$now" -ge $((end + 1000)) ]; then
			break
		fi
		;;
	after)
		[ "$now" -ge "$last" ] && break
		;;
	esac
	if [ $phase = wait ]; then sleep 0.1; else sleep "$STEP"; fi
done
if [ "$phase" = after ]; then
	ok "the pool ended on time"
else
	not_ok "the pool ended on time (phase $phase at $((now - t0)) cs)"
fi
if gone "$hog"; then
	not_ok "the spinner ran to the end of the run"
else
	ok "the spinner ran to the end of the run"
fi
kill "$hog" $pool 2>/dev/null
while ! gone "$hog" || { [ -n "$pool" ] && ! gone "$pool"; }; do
	sleep 0.1
done
[ -n "$autogroup" ] && echo "$autogroup" >$AG
tap_done
