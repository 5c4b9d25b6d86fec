#!/bin/sh
# In-guest TAP test of switching the class of normal tasks at run time
# (kernel.sched_class, Documentation/scheduler/sched-class-select.rst).
# Usage: sched_class_switch.sh OTHER_CLASS [ROUNDS]
# With spinners, sleepers and a fork loop running, switches to OTHER_CLASS
# and back ROUNDS times; after each switch every normal task must be on the
# new class and every spinner alive and still getting CPU time. A cgroup
# with a cpu.weight of its own must be named by each switch away from cfs.
other=${1:?usage: $0 OTHER_CLASS [ROUNDS]}
rounds=${2:-3}
. "$(dirname "$0")/tap.sh"
. "$(dirname "$0")/class_lib.sh"
K=/proc/sys/kernel/sched_class

first=$(cat $K)
echo "TAP version 13"
echo "1..$((rounds * 6 + 4))"

# One cgroup with a limit only cfs enforces.
G=/sys/fs/cgroup
limited=""
if grep -qw cpu $G/cgroup.controllers 2>/dev/null; then
	echo +cpu >$G/cgroup.subtree_control
	mkdir -p $G/limited && echo 50 >$G/limited/cpu.weight && limited=1
fi

spinners=""
for i in 1 2 3 4; do
	(while :; do :; done) &
	spinners="$spinners $!"
done
(while :; do sleep 0.01; done) &
sleeper=$!
# Children forked around a switch take the TASK_NEW path.
(while :; do /bin/true; done) &
forker=$!
trap 'kill $spinners $sleeper $forker 2>/dev/null' EXIT

# settled CLASS: like normal_tasks_on, but a task found on the old class is
# looked at again: a child of the fork loop may be caught before it is
# woken (it takes the new class then) or while it exits.
settled() {
	normal_tasks_on "$1"
	[ "$bad" = none ] && return
	sleep 0.2
	first_bad=$bad
	normal_tasks_on "$1"
	[ "$bad" = none ] || echo "# first look:$first_bad"
}

switch_to() {
	if (echo "$1" >$K) 2>/dev/null; then
		check "$(cat $K)" "$1" "round $r: kernel.sched_class switched to $1"
	else
		not_ok "round $r: kernel.sched_class switched to $1 (write failed)"
	fi
	settled "$1"
	echo "# $normal normal-policy tasks, $others others"
	check "$bad" none "round $r: every normal task is on $1"
	spinners_run "$spinners"
	check "$stuck" none "round $r: all spinners alive and running on $1"
}

r=0
while [ $r -lt "$rounds" ]; do
	r=$((r + 1))
	switch_to "$other"
	switch_to "$first"
done

rejects $K bogus
rejects $K ""
moves=$(dmesg | grep -c "sched: normal tasks moved from")
check "$moves" $((rounds * 2)) "each switch logged once"
if [ -n "$limited" ]; then
	case "$first $other" in *cfs*) want=$rounds ;; *) want=0 ;; esac
	named=$(dmesg | grep -c "does not enforce cpu.weight, cpu.max or cpu.idle; cgroups with them set: 1$")
	check "$named" "$want" "each switch away from cfs names the one limited cgroup"
	rmdir $G/limited
else
	ok "each switch away from cfs names the one limited cgroup # SKIP no cpu controller"
fi
tap_done
