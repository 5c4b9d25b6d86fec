#!/bin/sh
# In-guest TAP test of the run-time class switch under churn
# (Documentation/scheduler/sched-class-select.rst, "Switching at run time").
# Usage: sched_class_storm.sh TASKS_BIN [ROUNDS]   (boot on cfs, ULE, BMQ and MuQSS built)
#
# 1. Zombies: a hog and ZOMBIES unreaped children that each spun on CPU 1.
#    cfs -> ule -> cfs must not move the zombies (their load was already
#    given back by task_dead) and leave CPU 1's CFS utilisation what the
#    hog explains.
# 2. Storm: one hog per CPU, detached threads that come and go (stress-ng
#    --pthread), a fork storm and a setscheduler storm (stress-ng --fork,
#    --schedpolicy) while the class changes ROUNDS times; every switch must
#    succeed, the kernel warns if a class still holds tasks after its walk
#    (the harness fails on any warning), and in the end every stressor
#    dies when killed (a task no class picks again would not), every
#    normal task is on cfs and every hog runs. The setscheduler stressor
#    turns SCHED_IDLE while running and runs up seconds of vruntime debt,
#    which CFS has it wait out; preempted in an RCU read-side section, it
#    makes RCU report a stall (sched-class-select.rst, "Switching at run
#    time"), which the host side accepts for that task alone. The stall
#    watchdog is off during the storm: the same stressor starves by design
#    as SCHED_IDLE under ULE behind the hogs, and a switch that takes tens
#    of seconds while threads exit lets the watchdog fall back (rightly)
#    between two writes (sched_watchdog.sh tests the watchdog).
tasks=${1:?usage: $0 TASKS_BIN [ROUNDS]}
rounds=${2:-50}
. "$(dirname "$0")/tap.sh"
. "$(dirname "$0")/class_lib.sh"
K=/proc/sys/kernel/sched_class
W=/proc/sys/kernel/sched_watchdog_ms
ZOMBIES=500
SPIN_MS=2

echo "TAP version 13"
echo "1..11"
check "$(cat $K)" cfs "booted on cfs"

# moved_last: the task count of the last "normal tasks moved" line.
moved_last() {
	dmesg | sed -n 's/.*sched: normal tasks moved from .* (\([0-9]*\) tasks, .*/\1/p' | tail -1
}
taskset -c 1 sh -c 'while :; do :; done' &
zhog=$!
taskset -c 1 "$tasks" zombies $ZOMBIES $SPIN_MS </dev/null >/tmp/zombies.out &
zparent=$!
trap 'kill $zhog $zparent $hogs $stress 2>/dev/null' EXIT
i=0
while ! grep -q ready /tmp/zombies.out 2>/dev/null && [ $i -lt 600 ]; do
	sleep 0.5
	i=$((i + 1))
done
nz=0
z1=""
for st in /proc/[0-9]*/stat; do
	read -r line 2>/dev/null <"$st" || continue
	set -- ${line##*) }
	[ "$1" = Z ] && [ "$2" = "$zparent" ] || continue
	nz=$((nz + 1))
	pid=${st#/proc/}
	z1=${z1:-${pid%/stat}}
done
check "$nz" $ZOMBIES "$ZOMBIES unreaped zombies that ran on CPU 1"
echo ule >$K
moved=$(moved_last)
echo "# cfs -> ule moved $moved tasks with $nz zombies around"
[ -n "$moved" ] && [ "$moved" -lt $ZOMBIES ] && ok "the switch leaves the zombies alone" ||
	not_ok "the switch leaves the zombies alone (moved ${moved:-?})"
check "$(sed -n 's/^class *: *//p' /proc/$z1/sched)" cfs "a zombie keeps the class it died on"
echo cfs >$K
util=$(sched_debug "cfs_rq[1]:/" util_avg)
load=$(sched_debug "cfs_rq[1]:/" load_avg)
hog_util=$(sed -n 's/^se.avg.util_avg *: *//p' /proc/$zhog/sched)
hog_load=$(sed -n 's/^se.avg.load_avg *: *//p' /proc/$zhog/sched)
echo "# back on cfs: CPU 1 root cfs_rq util_avg $util load_avg $load, the hog's $hog_util and $hog_load"
# Moving the zombies out and back would add each one's util and load again.
[ -n "$util" ] && [ -n "$hog_util" ] && [ "$util" -le $((hog_util + 200)) ] &&
	[ -n "$load" ] && [ -n "$hog_load" ] && [ "$load" -le $((hog_load + 200)) ] &&
	ok "CPU 1's CFS utilisation and load are what the hog explains" ||
	not_ok "CPU 1's CFS utilisation and load are what the hog explains"
kill $zhog $zparent
wait $zhog $zparent 2>/dev/null

hogs=""
for cpu in $(seq 0 $(($(nproc) - 1))); do
	taskset -c "$cpu" sh -c 'while :; do :; done' &
	hogs="$hogs $!"
done
stress-ng --quiet --pthread 2 --fork 2 --schedpolicy 2 --timeout 0 >/dev/null 2>&1 &
stress=$!
sleep 2
watchdog=$(cat $W)
echo 0 >$W
failed=0
same=0
r=0
before=$(dmesg | grep -c "sched: normal tasks moved from")
while [ $r -lt "$rounds" ]; do
	r=$((r + 1))
	case $((r % 4)) in 1) to=ule ;; 2) to=bmq ;; 3) to=muqss ;; 0) to=cfs ;; esac
	[ $r -eq "$rounds" ] && to=cfs
	# Writing the class already running is no switch and logs nothing.
	[ "$(cat $K)" = $to ] && same=$((same + 1))
	(echo $to >$K) 2>/dev/null && [ "$(cat $K)" = $to ] || failed=$((failed + 1))
done
check "$failed" 0 "$rounds writes under churn all succeed"
after=$(dmesg | grep -c "sched: normal tasks moved from")
check $((after - before)) $((rounds - same)) "each switch is logged once ($same writes of the running class)"
echo "$watchdog" >$W
kill -INT $stress 2>/dev/null
i=0
while kill -0 $stress 2>/dev/null && [ $i -lt 60 ]; do sleep 0.5; i=$((i + 1)); done
kill -KILL $stress 2>/dev/null
wait $stress 2>/dev/null
# Orphaned stressor children die only when they run again: a SCHED_IDLE
# one may first wait out up to 40 s of CFS debt (measured).
pkill -KILL stress-ng 2>/dev/null
i=0
while pgrep stress-ng >/dev/null && [ $i -lt 120 ]; do sleep 0.5; i=$((i + 1)); done
left=$(pgrep stress-ng | tr '\n' ' ')
for pid in $left; do
	echo "# left: $pid on CPU $(stat_field "$pid" 39)"
	grep -E '^(class|policy|prio|se\.(vruntime|sum_exec_runtime)) ' /proc/"$pid"/sched 2>/dev/null |
		sed 's/^/#   /'
done
check "${left:-none}" none "every stressor dies within 60 s of SIGKILL"
check "$(cat $K)" cfs "ends on cfs"
normal_tasks_on cfs
[ "$bad" = none ] || { sleep 0.5; normal_tasks_on cfs; }
echo "# $normal normal-policy tasks, $others others"
check "$bad" none "every normal task is on cfs after the storm"
spinners_run "$hogs" cfs
check "$stuck" none "every hog is alive and running on cfs"
tap_done
