#!/bin/sh
# In-guest part of the perf and SystemTap tests (README, "Observability").
# Usage: observers.sh OUTDIR STAPDIR CLASS...
#
# For each CLASS, switched to through kernel.sched_class: perf sched
# record of a hackbench run, then perf sched latency, map and timehist of
# it; perf record of the series' sched_events tracepoints; and the two
# SystemTap modules of tools/systemtap (built on the host with stap -r,
# in STAPDIR) run with staprun around the same workload. Everything goes
# to OUTDIR/CLASS.*; the host checks the contents. TAP on stdout.
out=${1:?usage: $0 OUTDIR STAPDIR CLASS...}
stap=${2:?usage: $0 OUTDIR STAPDIR CLASS...}
shift 2
. "$(dirname "$0")/tap.sh"
K=/proc/sys/kernel/sched_class
WORK="hackbench -g 2 -f 4 -l 40"

# loaded MODULE: wait (at most 20 s) until staprun has loaded MODULE and
# its "begin" probes have run (the module's /proc/systemtap folder).
loaded() {
	i=0
	while [ ! -e "/proc/systemtap/$1" ] && [ $i -lt 200 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

echo "TAP version 13"
echo "1..$(($# * 7))"
cd /tmp || exit 1
for c in "$@"; do
	echo "$c" >$K
	check "$(cat $K)" "$c" "$c: normal tasks on $c"

	perf sched record -o "$c.sched.data" -- $WORK >/dev/null 2>"$out/$c.record.err"
	check $? 0 "$c: perf sched record"
	perf sched latency -i "$c.sched.data" >"$out/$c.latency.txt" 2>/dev/null
	check $? 0 "$c: perf sched latency"
	perf sched map -i "$c.sched.data" >"$out/$c.map.txt" 2>/dev/null
	check $? 0 "$c: perf sched map"
	perf sched timehist -i "$c.sched.data" >"$out/$c.timehist.txt" 2>/dev/null
	check $? 0 "$c: perf sched timehist"

	perf record -q -a -e 'sched_events:*' -o "$c.events.data" -- $WORK \
		>/dev/null 2>"$out/$c.events.err"
	status=$?
	perf script -i "$c.events.data" -F event 2>/dev/null | sort | uniq -c \
		>"$out/$c.events.txt"
	check $status 0 "$c: perf record -e sched_events:*"

	# One module at a time: two loading at once race to create
	# /proc/systemtap, and the loser's proc_register() WARNs.
	staprun -o "$out/$c.wakeup.txt" "$stap/sched_wakeup_latency.ko" label="$c" seconds=4 \
		2>"$out/$c.stap.err" &
	w=$!
	loaded sched_wakeup_latency
	staprun -o "$out/$c.runqueue.txt" "$stap/sched_runqueue_length.ko" label="$c" seconds=3 \
		2>>"$out/$c.stap.err" &
	r=$!
	loaded sched_runqueue_length
	# The workload again and again until the shorter recording ends, so
	# that both watch it whenever their probes went live.
	while kill -0 $r 2>/dev/null; do
		$WORK >/dev/null
	done
	wait $w
	ws=$?
	wait $r
	check "$ws $?" "0 0" "$c: staprun of both SystemTap scripts"
	rm -f "$c.sched.data" "$c.events.data"
done
tap_done
