# Helpers of the BMQ guest tests (bmq_checks.sh, bmq_smt.sh); source
# after tap.sh and ule_lib.sh (now_cs, cpu_ns, wait_line, events_on).
migrations_on() { events_on sched_events/task_migrate; }
migrations_off() { events_off sched_events/task_migrate; }

# bmq_read SCHEDFILE: sets s_class, s_policy, s_prio and b_* (empty if
# absent); fails if the task is gone.
bmq_read() {
	s_class= s_policy= s_prio= b_boost= b_level= b_static= b_slice= b_queued=
	_ule_parse 2>/dev/null <"$1" && [ -n "$s_class" ]
}

bmq_state() {
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
