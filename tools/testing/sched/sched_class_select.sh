#!/bin/sh
# In-guest TAP test of the scheduler selection (Documentation/scheduler/
# sched-class-select.rst). Usage: sched_class_select.sh EXPECTED_CLASS
# Checks /proc/sys/kernel/sched_class, that it refuses unknown names, and
# that every task with a normal policy (kernel threads and init included)
# reports the expected class in /proc/<pid>/sched while the others report
# theirs.
expected=${1:?usage: $0 EXPECTED_CLASS}
. "$(dirname "$0")/tap.sh"
. "$(dirname "$0")/class_lib.sh"

echo "TAP version 13"
echo "1..6"
check "$(cat /proc/sys/kernel/sched_class)" "$expected" "sysctl kernel.sched_class"

# Writing the current class is accepted and changes nothing; a name that
# is not a built-in class is refused (sched_class_switch.sh switches).
if (echo "$expected" >/proc/sys/kernel/sched_class) 2>/dev/null; then
	check "$(cat /proc/sys/kernel/sched_class)" "$expected" "writing the current class keeps it"
else
	not_ok "writing the current class keeps it (write failed)"
fi
rejects /proc/sys/kernel/sched_class bogus

check "$(sed -n 's/^class *: *//p' /proc/self/sched)" "$expected" "this shell's class"

normal_tasks_on "$expected"
echo "# $normal normal-policy tasks, $others realtime or deadline tasks"
check "$bad" none "every normal task is on $expected, the others on rt/dl/stop"

kthreads=$(sed -n 's/^class *: *//p' /proc/2/sched)
check "$kthreads" "$expected" "kthreadd (pid 2) is on $expected"
tap_done
