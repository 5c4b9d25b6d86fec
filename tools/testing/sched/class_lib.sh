# Helpers of the class-selection guest tests; source after tap.sh.

# normal_tasks_on CLASS: sets bad to the tasks with a normal policy (0
# normal, 3 batch, 5 idle: field 41 of /proc/<pid>/stat) that are not on
# CLASS and the other tasks not on rt/dl/stop ("none" if all are right),
# and counts both kinds in normal and others; zombies are left out. Builtins only in the loop:
# forks are slow under TCG with lockdep. A failed redirection of a function
# call does not end the shell, so tasks that exit meanwhile are skipped.
_third_line() { read -r _ && read -r _ && read -r class; }
normal_tasks_on() {
	_want=$1
	bad=""
	normal=0
	others=0
	for stat in /proc/[0-9]*/task/[0-9]*/stat; do
		dir=${stat%/stat}
		read -r line 2>/dev/null <"$stat" || continue
		_third_line 2>/dev/null <"$dir/sched" || continue
		class=${class##* }
		set -- ${line##*) }
		# A zombie keeps the class it died on: a switch no longer moves it.
		case $1 in Z|X) continue ;; esac
		shift 38
		case $1 in
		0|3|5)
			normal=$((normal + 1))
			[ "$class" = "$_want" ] || bad="$bad ${dir#/proc/}:$class"
			;;
		*)
			others=$((others + 1))
			case $class in rt|dl|stop) ;; *) bad="$bad ${dir#/proc/}:policy$1:$class" ;; esac
			;;
		esac
	done
	bad=${bad:-none}
}

# stat_field PID N: field N of /proc/PID/stat (14 utime, 39 last CPU);
# fails if the task is gone.
stat_field() {
	read -r _line 2>/dev/null <"/proc/$1/stat" || return 1
	set -- "$2" ${_line##*) }
	shift $(($1 - 2))
	echo "$1"
}

# spinners_run "PIDS" [CLASS]: sets stuck to the spinners that are gone,
# gain no CPU time within 2 s, or (with CLASS) are not on CLASS; "none" if
# every one runs.
spinners_run() {
	stuck=""
	for _p in $1; do
		eval "_t_$_p=\$(stat_field $_p 14)"
	done
	sleep 2
	for _p in $1; do
		eval "_before=\$_t_$_p"
		_after=$(stat_field "$_p" 14) || { stuck="$stuck $_p:gone"; continue; }
		[ -n "$_before" ] && [ "$_after" -gt "$_before" ] || stuck="$stuck $_p:$_before->$_after"
		[ -z "$2" ] && continue
		_cls=$(sed -n 's/^class *: *//p' "/proc/$_p/sched")
		[ "$_cls" = "$2" ] || stuck="$stuck $_p:$_cls"
	done
	stuck=${stuck:-none}
}

# now_cs: sets now to the uptime in centiseconds (the guest is up for
# seconds before a test runs, so there is no leading zero).
now_cs() {
	read -r _up _ </proc/uptime
	now=${_up%.*}${_up#*.}
}

# runs_uleload DIR: the task of /proc DIR (PID or PID/task/TID) has
# exec'd uleload. Before that it is the shell's fork (taskset, nice),
# whose inherited state can already pass a check meant for uleload.
runs_uleload() {
	_comm=
	read -r _comm 2>/dev/null <"$1/comm"
	[ "$_comm" = uleload ]
}

# cpu_ns PID: sets ns to the time the task has run, wait_ns to the time
# it waited on a run queue and runs to the times it got a CPU, from
# /proc/PID/schedstat. No command
# substitution: a fork under TCG takes long enough to skew a window timed
# around it.
cpu_ns() {
	read -r ns wait_ns runs 2>/dev/null </proc/"$1"/schedstat || ns=0 wait_ns=0 runs=0
}

# sched_debug SECTION FIELD: FIELD's value in SECTION of
# /sys/kernel/debug/sched/debug ("cpu#1", "cfs_rq[1]:/"), debugfs mounted
# if it is not.
sched_debug() {
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
	awk -v sec="$1" -v want=".$2" '$1 == sec || $1 == sec "," { on = 1; next }
		on && /^(cpu#|cfs_rq\[|rt_rq\[|dl_rq\[)/ { on = 0 }
		on && $1 == want { print $3; exit }' /sys/kernel/debug/sched/debug
}
