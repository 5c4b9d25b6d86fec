# Helpers of the BMQ guest test bmq_smt.sh; source
# after tap.sh and ule_lib.sh (now_cs, cpu_ns, wait_line, events_on).

# ORIGINAL=1 on Project C's original BMQ (6.1 with its patch, which
# replaces the core scheduler): no kernel.sched_class, and its own
# kernel.yield_type (ours is kernel.sched_bmq_yield_type; MuQSS's
# kernel.sched_muqss_yield_type). It has no bmq.* lines (no SCHED_DEBUG)
# and no sched_events tracepoints, only the standard interfaces.
if [ ! -e $K/sched_class ] && [ -e $K/yield_type ]; then
	ORIGINAL=1
else
	ORIGINAL=0
fi

# skip_original DESCRIPTION WHY: a point only our interfaces show.
skip_original() { ok "$1 # SKIP not observable on Project C ($2)"; }

if [ $ORIGINAL = 1 ]; then
	migrations_on() { events_on sched/sched_migrate_task; }
	migrations_off() { events_off sched/sched_migrate_task; }
else
	migrations_on() { events_on sched_events/task_migrate; }
	migrations_off() { events_off sched_events/task_migrate; }
fi

# idle_pulls SRC PID DSTMIN, on the original: the sched_migrate_task lines
# in the trace buffer of uleload tasks (PID, "" for any) moved off CPU SRC
# ("" for any) to a CPU DSTMIN or above, recorded on that CPU. The event
# has no reason; an idle pull is the move the taking CPU makes itself (a
# wakeup places on the waker's CPU, an affinity change moves from the
# source's stopper), and a spinner never wakes.
idle_pulls() {
	awk -v src="$1" -v pid="$2" -v lo="${3:-0}" '/ sched_migrate_task: comm=uleload / {
		c = -1; o = -1; d = -1; p = ""
		for (i = 1; i <= NF; i++)
			if (c < 0 && $i ~ /^\[[0-9]+\]$/) c = substr($i, 2) + 0
			else if ($i ~ /^pid=/) p = substr($i, 5)
			else if ($i ~ /^orig_cpu=/) o = substr($i, 10) + 0
			else if ($i ~ /^dest_cpu=/) d = substr($i, 10) + 0
		if ((src == "" || o == src + 0) && (pid == "" || p == pid) &&
			d != o && d == c && d >= lo + 0)
			n++
	} END { print n + 0 }' $T/trace
}

# bmq_read SCHEDFILE: sets s_class, s_policy, s_prio and b_* (empty if
# absent); fails if the task is gone. On the original only s_policy,
# s_prio (120 + nice, as ours) and b_boost, from the stat file beside
# SCHEDFILE: Project C's priority field (18) is prio + boost - 100, its
# normal prio 7 above ours (127 at nice 0); wrong while a PI mutex lends
# a priority.
bmq_read() {
	s_class= s_policy= s_prio= b_boost= b_level= b_static= b_slice= b_queued=
	if [ $ORIGINAL = 1 ]; then
		read -r _l 2>/dev/null <"${1%/sched}/stat" || return 1
		set -- ${_l##*) }
		shift 15
		_pr=$1
		s_prio=$((120 + $2))
		shift 23
		s_policy=$1
		case $s_policy in
		0|3|5) b_boost=$((_pr + 100 - 7 - s_prio)) ;;
		*) s_prio=$((_pr + 100)) ;;
		esac
		return 0
	fi
	_ule_parse 2>/dev/null <"$1" && [ -n "$s_class" ]
}

bmq_state() {
	if [ $ORIGINAL = 1 ]; then
		echo "prio $s_prio boost $b_boost (from stat)"
		return
	fi
	echo "prio $s_prio boost $b_boost level $b_level static_level $b_static" \
		"slice_us $b_slice queued $b_queued"
}

# in_range for numbers that may be negative.
int_between() {
	case $1 in '' | - | *[!0-9-]* | ?*-*) return 1 ;; esac
	[ "$1" -ge "$2" ] && [ "$1" -le "$3" ]
}

# wait_boost SCHEDFILE MIN MAX START_CS LIMIT_CS: poll until bmq.boost is
# within MIN..MAX; sets waited.
wait_boost() {
	while :; do
		now_cs
		waited=$((now - $4))
		bmq_read "$1" && int_between "$b_boost" "$2" "$3" && return 0
		[ "$waited" -ge "$5" ] && return 1
		sleep 0.1
	done
}

# slice_max_us MS: the longest slice in us, for sched_timeslice=MS.
slice_max_us() {
	echo $(($1 * 1048576 / 1000 + 1))
}

# rr_interval_check MS: sched_rr_get_interval() of a BMQ task reports the
# slice (Project C gives MS << 20 ns exactly; the class interface counts
# whole jiffies, so the nearest, and never 0, which would mean no limit).
rr_interval_check() {
	_us=$(python3 -c 'import os; print(round(os.sched_rr_get_interval(0) * 1e6))')
	_want=$(slice_max_us "$1")
	if is_int "$_us" && [ "$_us" -gt 0 ] && [ "$_us" -le $((_want + 10000)) ] &&
		[ $((_us + 10000)) -ge "$_want" ]; then
		ok "sched_rr_get_interval() is the slice of $1 ms to a jiffy: $_us us"
	else
		not_ok "sched_rr_get_interval() is the slice of $1 ms to a jiffy: ${_us:-none} us"
	fi
}

# slice_check ULELOAD MS CPU: a spinner alone on CPU, sampled 30 times:
# its bmq.slice_us never above MS ms (Project C's MS << 20 ns) and above
# half of that at least once.
slice_check() {
	if [ $ORIGINAL = 1 ]; then
		skip_original "slice of $2 ms: bmq.slice_us" "no bmq.slice_us, the slice left is not exported"
		return
	fi
	_max=$(slice_max_us "$2")
	taskset -c "$3" "$1" spinner 60 >/dev/null &
	_sp=$!
	sleep 0.3
	_hi=-1
	_seen=""
	_i=0
	while [ $_i -lt 30 ]; do
		bmq_read /proc/$_sp/sched
		_seen="$_seen $b_slice"
		int_between "$b_slice" -1000000 1000000 && [ "$b_slice" -gt $_hi ] && _hi=$b_slice
		sleep 0.03
		_i=$((_i + 1))
	done
	kill $_sp
	wait $_sp 2>/dev/null
	if [ $_hi -le "$_max" ] && [ $_hi -gt $((_max / 2)) ]; then
		ok "slice of $2 ms: bmq.slice_us at most $_hi"
	else
		not_ok "slice of $2 ms: bmq.slice_us at most $_hi (want $((_max / 2))-$_max):$_seen"
	fi
}
