#!/bin/sh
# In-guest TAP test of the scheduler selection (Documentation/scheduler/
# sched-class-select.rst). Usage: sched_class_select.sh EXPECTED_CLASS
# Checks /proc/sys/kernel/sched_class, that it is read-only, and that every
# task with a normal policy (kernel threads and init included) reports the
# expected class in /proc/<pid>/sched while the others report theirs.
expected=${1:?usage: $0 EXPECTED_CLASS}
. "$(dirname "$0")/tap.sh"

echo "TAP version 13"
echo "1..5"
check "$(cat /proc/sys/kernel/sched_class)" "$expected" "sysctl kernel.sched_class"

if (echo cfs >/proc/sys/kernel/sched_class) 2>/dev/null; then
	not_ok "kernel.sched_class is read-only"
else
	ok "kernel.sched_class is read-only"
fi

check "$(sed -n 's/^class *: *//p' /proc/self/sched)" "$expected" "this shell's class"

# Field 41 of /proc/<pid>/stat is the policy: 0 normal, 3 batch, 5 idle.
bad=""
normal=0
others=0
# Builtins only in this loop: forks are slow under TCG with lockdep. A
# failed redirection of a function call does not end the shell, so tasks
# that exit meanwhile are simply skipped.
third_line() { read -r _ && read -r _ && read -r class; }
for stat in /proc/[0-9]*/task/[0-9]*/stat; do
	dir=${stat%/stat}
	read -r line 2>/dev/null <"$stat" || continue
	third_line 2>/dev/null <"$dir/sched" || continue
	class=${class##* }
	set -- ${line##*) }
	shift 38
	policy=$1
	case $policy in
	0|3|5)
		normal=$((normal + 1))
		[ "$class" = "$expected" ] || bad="$bad ${dir#/proc/}:$class"
		;;
	*)
		others=$((others + 1))
		case $class in rt|dl|stop) ;; *) bad="$bad ${dir#/proc/}:policy$policy:$class" ;; esac
		;;
	esac
done
echo "# $normal normal-policy tasks, $others realtime or deadline tasks"
check "${bad:-none}" none "every normal task is on $expected, the others on rt/dl/stop"

kthreads=$(sed -n 's/^class *: *//p' /proc/2/sched)
check "$kthreads" "$expected" "kthreadd (pid 2) is on $expected"
tap_done
