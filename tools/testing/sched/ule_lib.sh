# Helpers of the ULE guest tests (ule_checks.sh, ule_starvation.sh,
# ule_balance.sh); source after tap.sh. The loops use builtins only: forks
# are slow under TCG with lockdep.
K=/proc/sys/kernel
. "$(dirname "$0")/class_lib.sh"

# "name : value" lines of /proc/<pid>[/task/<tid>]/sched (ule.* and bmq.*,
# for ule_read and bmq_read); the value is the last word.
_ule_parse() {
	while IFS= read -r _l; do
		_k=${_l%%:*}
		_k=${_k%% *}
		_v=${_l##* }
		case $_k in
		class) s_class=$_v ;;
		policy) s_policy=$_v ;;
		ule.prio) u_prio=$_v ;;
		ule.score) u_score=$_v ;;
		ule.queue) u_queue=$_v ;;
		ule.slice_us) u_slice=$_v ;;
		ule.runtime_us) u_runtime=$_v ;;
		ule.slptime_us) u_slptime=$_v ;;
		ule.cpu_pct) u_cpu_pct=$_v ;;
		prio) s_prio=$_v ;;
		bmq.boost) b_boost=$_v ;;
		bmq.level) b_level=$_v ;;
		bmq.static_level) b_static=$_v ;;
		bmq.slice_us) b_slice=$_v ;;
		bmq.queued) b_queued=$_v ;;
		esac
	done
}

# ule_read SCHEDFILE: sets s_class, s_policy and u_* (empty if absent);
# fails if the task is gone. (A failed redirection of a function call does
# not end the shell.)
ule_read() {
	s_class= s_policy= u_prio= u_score= u_queue= u_slice= u_runtime= u_slptime= u_cpu_pct=
	_ule_parse 2>/dev/null <"$1" && [ -n "$s_class" ]
}

# What ule_read found, for diagnostics.
ule_state() {
	echo "prio $u_prio score $u_score queue $u_queue slice_us $u_slice" \
		"runtime_us $u_runtime slptime_us $u_slptime cpu_pct $u_cpu_pct"
}

is_int() { case $1 in '' | *[!0-9]*) return 1 ;; esac; }
in_range() { is_int "$1" && [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }

# queue_of PRIO: sets q to the run queue of that FreeBSD priority.
queue_of() {
	if [ "$1" -lt 152 ]; then q=realtime
	elif [ "$1" -le 223 ]; then q=timeshare
	else q=idle
	fi
}

# wait_ule SCHEDFILE QUEUE MIN MAX START_CS LIMIT_CS: poll every 0.1 s until
# the task's ule.queue is QUEUE and MIN <= ule.prio <= MAX, for at most
# LIMIT_CS centiseconds after START_CS; sets waited (cs since START_CS).
# The task must run uleload by then (runs_uleload).
wait_ule() {
	while :; do
		now_cs
		waited=$((now - $5))
		runs_uleload "${1%/sched}" && ule_read "$1" && [ "$u_queue" = "$2" ] &&
			in_range "$u_prio" "$3" "$4" && return 0
		[ "$waited" -ge "$6" ] && return 1
		sleep 0.1
	done
}

# cpus_in PID "TIDS": sets _cpus to the CPU each thread last ran on
# (field 39 of its stat), in order, "-" for a thread that is gone; with
# builtins only, so a sampling loop that calls it forks nothing.
cpus_in() {
	_dir=/proc/$1/task
	_cpus=
	for _t in $2; do
		if read -r _l 2>/dev/null <"$_dir/$_t/stat"; then
			set -- ${_l##*) }
			shift 36
			_cpus="$_cpus $1"
		else
			_cpus="$_cpus -"
		fi
	done
	_cpus=${_cpus# }
}

# cpus_of PID "TIDS": the same, printed.
cpus_of() {
	cpus_in "$1" "$2"
	echo "$_cpus"
}

# distinct "WORDS": how many different words.
distinct() { printf '%s\n' $1 | sort -u | wc -l; }

# wait_line FILE WORD TENTHS: wait until FILE has a line starting with
# WORD and print its other words.
wait_line() {
	_i=0
	while [ $_i -lt "$3" ]; do
		_got=$(sed -n "s/^$2 //p" "$1" 2>/dev/null)
		[ -n "$_got" ] && { echo "$_got"; return 0; }
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}

# pi_start OUT [NICE]: "$uleload" pi on CPU 1, output to OUT; sets pi,
# owner and waiter once the waiter blocks on the mutex (under ULE without
# NICE it first waits to turn interactive: up to 30 s).
pi_start() {
	taskset -c 1 "$uleload" pi $2 >"$1" &
	pi=$!
	owner=$(wait_line "$1" owner 50)
	waiter=$(wait_line "$1" waiting 300)
}

T=/sys/kernel/tracing

# events_on / events_off SYSTEM/EVENT...: record the events into an empty
# trace buffer, and stop recording them (the buffer stays for grep).
events_on() {
	echo 0 >$T/tracing_on
	echo >$T/trace
	for _e; do echo 1 >$T/events/$_e/enable; done
	echo 1 >$T/tracing_on
}
events_off() { for _e; do echo 0 >$T/events/$_e/enable; done; }
