# Helpers of the guest scripts that read ULE's lines or where threads run
# (smt_spread.sh and the reproduce series); source after
# tap.sh. The loops use builtins only: forks are slow under TCG with lockdep.
K=/proc/sys/kernel
. "$(dirname "$0")/class_lib.sh"

# "name : value" lines of /proc/<pid>[/task/<tid>]/sched (ule.*, for
# ule_read); the value is the last word.
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
