# Checks with two cpuset partitions (two root domains), shared by the
# classes that can run normal tasks: their idle marks live in each root
# domain (class_common.h), and a CPU learns of waiting work through the
# marks of its own root domain only. Needs tap.sh and ule_lib.sh.

# partitions_make: two cpuset partitions, p1 the first half of the
# online CPUs (part_h of part_n) and p2 the rest, made two root domains
# by turning the root cpuset's sched_load_balance off.
partitions_make() {
	# Every online CPU, whatever this shell's affinity (nproc's count).
	part_n=$(getconf _NPROCESSORS_ONLN)
	part_h=$((part_n / 2))
	_C=/tmp/cpuset
	mkdir -p $_C
	mount -t cgroup -o cpuset cpuset $_C
	mkdir $_C/p1 $_C/p2
	for _d in p1 p2; do cat $_C/cpuset.mems >$_C/$_d/cpuset.mems; done
	echo 0-$((part_h - 1)) >$_C/p1/cpuset.cpus
	echo $part_h-$((part_n - 1)) >$_C/p2/cpuset.cpus
	echo 0 >$_C/cpuset.sched_load_balance
}

# partitions_remove: one root domain again.
partitions_remove() {
	echo 1 >$_C/cpuset.sched_load_balance
	rmdir $_C/p1 $_C/p2
	umount $_C
}

# _part_idle PREFIX: sets PREFIX_N to CPU N's idle time (USER_HZ ticks,
# /proc/stat), with builtins only: a fork per sample costs seconds on a
# guest whose every CPU spins.
_part_idle() {
	while read -r _c _u _n _s _id _rest; do
		case $_c in
		cpu[0-9]*) eval "$1_${_c#cpu}=$_id" ;;
		esac
	done </proc/stat
}

# _part_now: sets _now to the uptime in centiseconds.
_part_now() {
	read -r _up _ </proc/uptime
	_now=${_up%.*}${_up#*.}
	_now=${_now#0}
}

# _part_spread LABEL COUNT FROM LO HI: COUNT spinners forked on CPU FROM,
# then allowed CPUs LO-HI; true once they get COUNT CPUs' worth of time
# there (idle time of LO-HI under a tenth of a CPU per spinner over a
# half-second window), within 8 s of uptime. Time, not where each one
# ran: under a shared queue (MuQSS's rqshare) and MuQSS's kicks at each
# put-back spinners change CPUs all the time. Sets part_busy to the
# hundredths of CPUs they got in the last window and part_cs to the
# centiseconds taken.
_part_spread() {
	python3 "$here/spinners.py" --count "$2" --from-cpu "$3" --allowed "$4-$5" \
		>/tmp/part-$1.out &
	_sp=$!
	wait_line /tmp/part-$1.out pids 100 >/dev/null
	_part_now
	_t0=$_now
	while :; do
		_part_now
		_w0=$_now
		_part_idle _i0
		sleep 0.5
		_part_idle _i1
		_part_now
		part_cs=$((_now - _t0))
		_win=$((_now - _w0))
		_idle=0
		_c=$4
		while [ $_c -le $5 ]; do
			eval "_idle=\$((_idle + _i1_$_c - _i0_$_c))"
			_c=$((_c + 1))
		done
		part_busy=$(((($5 - $4 + 1) * _win - _idle) * 100 / _win))
		_ok=$((part_busy >= $2 * 90))
		[ $_ok = 1 ] || [ $part_cs -ge 800 ] && break
	done
	kill $_sp
	wait $_sp 2>/dev/null
	[ $_ok = 1 ]
}

# _part_both TAG: the two partitions at once, one TAP line.
_part_both() {
	_part_spread p1 $part_h 0 0 $((part_h - 1)) && _w1="$part_busy % after $part_cs cs" ||
		_w1="$part_busy %, not spread"
	_part_spread p2 $part_h $part_h $part_h $((part_n - 1)) &&
		_w2="$part_busy % after $part_cs cs" || _w2="$part_busy %, not spread"
	case "$_w1$_w2" in
	*"not spread"*)
		not_ok "$1: the spinners of each partition get its $part_h CPUs within 8 s (CPU time, p1: $_w1; p2: $_w2)" ;;
	*)
		ok "$1: the spinners of each partition get its $part_h CPUs (CPU time, p1: $_w1; p2: $_w2)" ;;
	esac
}

# partition_checks CLASS: three TAP lines. In each of two partitions
# (the first half of the CPUs and the rest), spinners forked on its first
# CPU spread one per CPU; the same after a switch to cfs and back to
# CLASS (the marks are reseeded in each root domain; "# SKIP" where
# kernel.sched_class does not exist); then, the partitions gone, one
# spinner per CPU from CPU 0 keeps every CPU busy (the marks moved back).
partition_checks() {
	partitions_make
	_part_both "two root domains"
	if [ -w $K/sched_class ]; then
		echo cfs >$K/sched_class
		echo "$1" >$K/sched_class
		_part_both "two root domains, after a switch to cfs and back to $(cat $K/sched_class)"
	else
		ok "# SKIP two root domains after a switch: no kernel.sched_class"
	fi
	partitions_remove
	if _part_spread all $part_n 0 0 $((part_n - 1)); then
		ok "one root domain again: $part_n spinners from CPU 0 get all $part_n CPUs after $part_cs cs ($part_busy %)"
	else
		not_ok "one root domain again: $part_n spinners from CPU 0 get all $part_n CPUs within 8 s ($part_busy %)"
	fi
}
