#!/bin/sh
# In-guest TAP test of the sanity checker and the flight recorder
# (Documentation/scheduler/sched-sanity.rst, sched-events.rst).
# Usage: sanity_checker.sh OUTDIR   (OUTDIR receives flight.bin)
#
# A real violation is made by switching load balancing off with the cgroup
# v1 cpuset flag sched_load_balance=0 (no sched domains: no periodic, idle or
# wakeup balancing) and forking spinners on CPU 1 that may run anywhere.
# ULE balances without sched domains, so when it is the class of normal
# tasks its idle stealing and periodic balancer are turned off as well;
# BMQ pulls and MuQSS looks across queues only through sched domains, so
# the flag is enough for them.
out=${1:?usage: $0 OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
K=/proc/sys/kernel
R=/proc/sched_sanity
E=/sys/kernel/debug/sched/events
S_MS=1000
M_MS=100
. "$here/tap.sh"
reports() { sed -n '/^id /,$p' "${1:-$R}" | tail -n +2; }
class=$(cat $K/sched_class 2>/dev/null || echo cfs)
ule=no
[ "$class" = ule ] && ule=yes
n_cpus=$(nproc)
if [ $ule = yes ]; then
	steal=$(cat $K/sched_ule_steal_thresh)
	interval=$(cat $K/sched_ule_balance_interval_ms)
fi
# balancing 0|1: what sched_load_balance does for CFS, and for ULE.
balancing() {
	echo "$1" >/tmp/cpuset/cpuset.sched_load_balance
	[ $ule = yes ] || return 0
	if [ "$1" = 0 ]; then
		echo 0 >$K/sched_ule_steal_thresh
		echo 60000 >$K/sched_ule_balance_interval_ms
	else
		echo "$steal" >$K/sched_ule_steal_thresh
		echo "$interval" >$K/sched_ule_balance_interval_ms
	fi
}
field() { awk -v f="$1" '{ print $f }'; }	# of a report line
# counter NAME [FILE]: a counter of the stats line
counter() { sed -n "/^checks /s/.*\\<$1 \\([0-9]*\\).*/\\1/p" "${2:-$R}"; }
# Wait up to $1 tenths of a second for "reports | $2" to print something.
# /tmp/snap keeps the read that printed it: its counters are of that moment.
wait_for() {
	i=0
	while [ $i -lt "$1" ]; do
		cat $R >/tmp/snap
		got=$(reports /tmp/snap | eval "$2")
		[ -n "$got" ] && { echo "$got"; return 0; }
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
dmesg_time() { dmesg | sed -n "s/^\[ *\([0-9.]*\)\] $1.*/\1/p" | tail -1; }

echo "TAP version 13"
echo "1..27"

# Keep this shell and its children off the CPUs the scenarios use.
taskset -pc 0 $$ >/dev/null

check "$(cat $K/sched_sanity)" 0 "off by default"
rejects $K/sched_sanity 2
rejects $K/sched_sanity_interval_ms abc
rejects $K/sched_sanity_interval_ms 5
rejects $K/sched_sanity_confirm_ms 0
if (echo nonsense >$R) 2>/dev/null; then not_ok "$R rejects 'nonsense'"; else ok "$R rejects 'nonsense'"; fi

# It names every task of the machine: root only.
check "$(stat -c %a $R)" 400 "$R is root-only (0400)"
if setpriv --reuid=65534 --regid=65534 --clear-groups cat $R >/dev/null 2>&1; then
	not_ok "an unprivileged user cannot read $R"
else
	ok "an unprivileged user cannot read $R"
fi

# A lowered interval applies at once, not after the check planned an hour on.
echo 3600000 >$K/sched_sanity_interval_ms
echo 1 >$K/sched_sanity
sleep 0.5
c0=$(counter checks)
echo $S_MS >$K/sched_sanity_interval_ms
sleep $((S_MS * 3 / 1000))
c1=$(counter checks)
check "$((c1 > c0))" 1 "interval lowered from 1 h to $S_MS ms applies at once (checks $c0 -> $c1)"
echo 0 >$K/sched_sanity

echo $S_MS >$K/sched_sanity_interval_ms
echo $M_MS >$K/sched_sanity_confirm_ms
echo clear >$R
echo 1024 >$E/buffer_kb
echo flight >$E/mode
echo start >$E/control
echo 1 >$K/sched_sanity

mkdir -p /tmp/cpuset
mount -t cgroup -o cpuset cpuset /tmp/cpuset
balancing 0

# 1. A persistent violation is confirmed within S + M of its start. The
# spinners may not use CPU 0, where this shell and its children run, so
# the idle CPU of the violation stays idle.
# A kprobe on the scan counts the scans before the one that first saw the
# violation; without it (the function inlined) the counters say.
T=/sys/kernel/tracing
mountpoint -q $T || mount -t tracefs none $T
scan_probe=no
if echo 'p:sanity_scan_hit sanity_scan' >>$T/kprobe_events 2>/dev/null; then
	echo 0 >$T/tracing_on
	echo >$T/trace
	echo 1 >$T/events/kprobes/sanity_scan_hit/enable && scan_probe=yes
	echo 1 >$T/tracing_on
fi
python3 "$here/spinners.py" --count 3 --from-cpu 1 --allowed 1-$(($(nproc) - 1)) \
	>/tmp/spin.out &
spin=$!
while ! grep -q pids /tmp/spin.out 2>/dev/null; do sleep 0.1; done
echo "sanity_checker: spinners running" >/dev/kmsg
grep '^checks ' $R >/tmp/stats0
line=$(wait_for 50 "awk '\$5 == 1'" | head -n 1)
if [ -n "$line" ]; then
	ok "violation with CPU 1 busy reported"
	id=$(echo "$line" | field 1)
	echo "# $line"
	# sched_load_balance=0 leaves every CPU without sched domains.
	check "$(echo "$line" | field 9)" none "report says no sched domain spans the two CPUs"
	# A candidate whose idle CPU runs something within M, with no other
	# idle CPU left to follow it on, is a transient; the next scan, S
	# later, finds the violation again.
	# The guest's timers can fire hundreds of ms late on a loaded host: a
	# later confirmation passes if the scan that first saw the violation
	# was the first after the spinners started (+1 per transient), so no
	# look was missed. The trace's clock is dmesg's and start_s's.
	extra=$(($(counter transient /tmp/snap) - $(counter transient /tmp/stats0)))
	start=$(dmesg_time "sanity_checker: spinners running")
	seen=$(dmesg_time "sched_sanity: CPU [0-9]* idle .*(report $id)")
	first=$(echo "$line" | field 2)
	if [ $scan_probe = yes ]; then
		scans=$(awk -v a="$start" -v b="$first" '
			match($0, / [0-9]+\.[0-9]+: sanity_scan_hit:/) {
				t = substr($0, RSTART + 1) + 0
				if (t > a + 0 && t < b + 0) c++
			} END { print c + 1 }' $T/trace)
		how="counted by a kprobe up to its start at $first"
	else
		# Read with the report, within 0.1 s of it: later scans count too.
		scans=$(($(counter checks /tmp/snap) - $(counter checks /tmp/stats0)))
		how="counted up to the report's read"
	fi
	ms=$(awk -v a="$start" -v b="$seen" 'BEGIN { if (b != "") printf "%d", (b - a) * 1000 }')
	echo "# since the spinners started: $scans scans ($how), $extra transient, confirmed after ${ms:-?} ms"
	if [ -z "$ms" ]; then
		late="no dmesg line"
	elif [ "$ms" -le $(((S_MS + M_MS) * 11 / 10 + extra * S_MS)) ] ||
	     [ $((scans - extra)) -le 1 ]; then
		late="in time"
	else
		late="late: $ms ms, $scans scans"
	fi
	check "$late" "in time" "confirmed within S + M (+10%, +S per transient), or by the first scan, of the spinners running"
	# A pair whose idle CPU briefly runs a kernel thread moves to another
	# idle CPU; should none be left, the next scan finds it again.
	live=$(wait_for 30 "awk '\$5 == 1 && \$7 == \"ongoing\"'" | tail -n 1)
	check "$(echo "$live" | field 7)" ongoing "still ongoing while balancing is off"
	id=$(echo "$live" | field 1)
	check "$(cat $E/control)" frozen "flight recording frozen by the violation"
	i=0
	while [ "$(sed -n 's/^probes //p' $E/stats)" != off ] && [ $i -lt 30 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	check "$(sed -n 's/^probes //p' $E/stats)" off "frozen recording unhooked its probes"
	first=$(echo "$line" | field 1)
	check "$(sed -n 's/^frozen_report //p' $E/stats)" "$first" "frozen window belongs to report $first"
	cat $E/dump >"$out/flight.bin"
	echo "# flight dump: $(wc -c <"$out/flight.bin") bytes, report $first"
	echo "$first" >"$out/flight.id"
	# Half a second of work on the idle CPU: the checker follows the
	# violation on another idle CPU instead of ending the report. The
	# report names the CPU of the last look, which may have moved since.
	repaired0=$(counter repaired)
	idle=$(reports | awk -v id="$id" '$1 == id { print $4 }')
	echo "# work on CPU $idle, repaired so far $repaired0"
	taskset -c "$idle" python3 -c '
import time
end = time.monotonic() + 0.5
while time.monotonic() < end:
    pass'
	now=$(reports | awk -v id="$id" '$1 == id { print $7 }')
	echo "# $(reports | awk -v id="$id" '$1 == id')"
	check "$now, $(($(counter repaired) > repaired0))" "ongoing, 1" \
		"work on the idle CPU moves the violation to another idle CPU"
else
	for i in 1 2 3 4 5 6 7 8; do not_ok "violation with CPU 1 busy reported"; done
	cat $R | sed 's/^/# /'
fi
if [ $scan_probe = yes ]; then
	echo 0 >$T/events/kprobes/sanity_scan_hit/enable
	echo '-:sanity_scan_hit' >>$T/kprobe_events
fi

# 1b. While that report goes on, many short violations on CPU 3 (two
# spinners unpinned and pinned again, S = 10 ms, M = 1 ms): 65 newer
# reports later it still has its own slot. The slots are the checker's,
# whichever class made the violations, so this runs under CFS only.
if [ "$class" != cfs ]; then
	ok "report keeps its slot after 65 newer reports # SKIP the checker's slots: checked under cfs"
elif [ -n "$id" ]; then
	echo 10 >$K/sched_sanity_interval_ms
	echo 1 >$K/sched_sanity_confirm_ms
	python3 "$here/spinners.py" --count 2 --from-cpu 3 --pinned >/tmp/spin3.out &
	spin3=$!
	while ! grep -q pids /tmp/spin3.out 2>/dev/null; do sleep 0.1; done
	p3=$(sed -n 's/^pids //p' /tmp/spin3.out)
	v0=$(counter violations)
	i=0
	# Each round the report is looked up: it may end for its own reasons
	# (its idle CPU taken, none free), and then, as the oldest finished
	# report, lose its slot before the next look. The tracepoint tells
	# that apart from a slot taken while the report was ongoing.
	T=/sys/kernel/tracing
	echo 0 >$T/tracing_on
	echo >$T/trace
	echo 1 >$T/events/sched_events/sanity_violation/enable
	echo 1 >$T/tracing_on
	was=ongoing
	lost=no
	while [ $(($(counter violations) - v0)) -lt 66 ] && [ $i -lt 300 ]; do
		for p in $p3; do taskset -pc 2-$((n_cpus - 1)) "$p" >/dev/null; done
		sleep 0.05
		for p in $p3; do taskset -pc 3 "$p" >/dev/null; done
		sleep 0.02
		i=$((i + 1))
		now=$(reports | awk -v id="$id" '$1 == id { print $7 }')
		if [ -z "$now" ] && [ "$was" = ongoing ] &&
			! grep -q "sanity_violation: id=$id phase=end" $T/trace; then
			lost="round $i"
		fi
		[ "$now" != "$was" ] && echo "# round $i: report $id ${now:-gone}"
		was=$now
	done
	kill $spin3
	wait $spin3 2>/dev/null
	echo 0 >$T/events/sched_events/sanity_violation/enable
	grep "sanity_violation: id=$id phase=end" $T/trace | sed 's/^/# /'
	echo $S_MS >$K/sched_sanity_interval_ms
	echo $M_MS >$K/sched_sanity_confirm_ms
	echo "# $(($(counter violations) - v0)) newer violations in $i rounds"
	check "$lost, $(($(counter violations) - v0 >= 65))" "no, 1" \
		"65 newer reports: report $id never lost its slot while ongoing"
	if [ "$was" != ongoing ]; then
		# It ended by itself; the next scan finds the violation again.
		id=$(wait_for 30 "awk '\$5 == 1 && \$7 == \"ongoing\"'" | tail -n 1 | field 1)
	fi
else
	not_ok "report keeps its slot after 65 newer reports"
fi

# 2. It ends once balancing is back, and the report says how.
balancing 1
if [ -n "$id" ] && end=$(wait_for 100 "awk '\$1 == $id && \$7 != \"ongoing\"'"); then
	echo "# $end"
	check "$(echo "$end" | field 7)" migrated "ended by migration once balancing is back"
else
	not_ok "ended by migration once balancing is back"
fi
kill $spin
wait $spin 2>/dev/null
echo stop >$E/control
if dmesg | grep -q "sched_sanity: CPU [0-9]* idle for [0-9]* ms while CPU"; then
	ok "one-line warning in dmesg"
else
	not_ok "one-line warning in dmesg"
fi

# 3. Waiting tasks that cannot move are not a violation, even unbalanced.
balancing 0
echo clear >$R
python3 "$here/spinners.py" --count 3 --from-cpu 2 --pinned --seconds 4 >/dev/null
check "$(reports | awk '$5 == 2' | wc -l)" 0 "pinned waiters on CPU 2: nothing reported"

# 3b. Tasks throttled by CFS bandwidth control wait for their quota, not for
# a CPU: two pinned spinners and three capped to 1 ms per second on CPU 2.
restart() { echo 0 >$K/sched_sanity; echo clear >$R; echo 1 >$K/sched_sanity; }
if [ "$class" = cfs ]; then
	G=/sys/fs/cgroup
	echo +cpu >$G/cgroup.subtree_control
	mkdir $G/capped
	echo "1000 1000000" >$G/capped/cpu.max
	python3 "$here/spinners.py" --count 2 --from-cpu 2 --pinned >/tmp/pin2.out &
	pin2=$!
	python3 "$here/spinners.py" --count 3 --from-cpu 2 --allowed 1-$((n_cpus - 1)) \
		>/tmp/cap.out &
	cap=$!
	while ! grep -q pids /tmp/pin2.out 2>/dev/null || ! grep -q pids /tmp/cap.out 2>/dev/null; do
		sleep 0.1
	done
	for p in $(sed -n 's/^pids //p' /tmp/cap.out); do echo "$p" >$G/capped/cgroup.procs; done
	restart
	sleep $((S_MS * 3 / 1000))
	throttled=$(sed -n 's/^nr_throttled //p' $G/capped/cpu.stat)
	echo "# capped group throttled $throttled times; $(sed -n 2p $R)"
	check "$(reports | awk '$5 == 2' | wc -l), $((throttled > 0))" "0, 1" \
		"tasks throttled by cpu.max on CPU 2: nothing reported"
	kill $cap $pin2
	wait $cap $pin2 2>/dev/null
	rmdir $G/capped
else
	ok "tasks throttled by cpu.max # SKIP no CFS bandwidth control under sched=$class"
fi

# 3c. Two cpuset partitions, CPUs 1-3 and 4-7, are separate root domains:
# the kernel balances inside each, never across. Six spinners that may run
# on 1-7 fill 1-3 while 4-7 idle by the administrator's choice. The check
# starts once every CPU of 1-3 runs one: ULE's balancer moves one task
# from CPU 1 per pass, and until it has, 1-3 holds a real violation.
C=/tmp/cpuset
mkdir $C/p1 $C/p2
for d in p1 p2; do cat $C/cpuset.mems >$C/$d/cpuset.mems; done
echo 1-3 >$C/p1/cpuset.cpus
echo 4-$((n_cpus - 1)) >$C/p2/cpuset.cpus
balancing 1
echo 0 >$C/cpuset.sched_load_balance
python3 "$here/spinners.py" --count 6 --from-cpu 1 --allowed 1-$((n_cpus - 1)) >/tmp/p.out &
parts=$!
while ! grep -q pids /tmp/p.out 2>/dev/null; do sleep 0.1; done
i=0
while [ $i -lt 100 ]; do
	on=$(for p in $(sed -n 's/^pids //p' /tmp/p.out); do
		cut -d' ' -f39 /proc/$p/stat; done | sort -u | tr '\n' ' ')
	[ "$on" = "1 2 3 " ] && break
	sleep 0.1
	i=$((i + 1))
done
echo "# spinners on CPUs $on after $i tenths of a second"
restart
sleep $((S_MS * 3 / 1000))
echo "# $(sed -n 2p $R)"
reports | sed 's/^/# /'
check "$(reports | wc -l)" 0 "waiters on one cpuset partition, the other idle: nothing reported"
kill $parts
wait $parts 2>/dev/null
rmdir $C/p1 $C/p2
balancing 1

# 4. A steady hackbench run with balancing on reports nothing.
echo clear >$R
taskset -pc 0-$(($(nproc) - 1)) $$ >/dev/null
hackbench -g 2 -f 4 -l 40 >/dev/null
check "$(reports | wc -l)" 0 "steady hackbench: nothing reported"
sed -n 2p $R | sed 's/^/# /'

# 5. Switching off ends what is being followed; clear empties the list.
echo 0 >$K/sched_sanity
check "$(sed -n 's/^enabled //p' $R | field 1)" 0 "switched off"
echo clear >$R
check "$(reports | wc -l)" 0 "clear empties the list"

# 6. Two writers racing: the file and the checker agree after each pair.
differ=0
i=0
while [ $i -lt 200 ]; do
	echo 1 >$K/sched_sanity &
	echo 0 >$K/sched_sanity &
	wait
	read -r file <$K/sched_sanity
	read -r _ running _ <$R
	[ "$file" = "$running" ] || differ=$((differ + 1))
	i=$((i + 1))
done
echo 0 >$K/sched_sanity
check "$differ" 0 "200 racing on/off write pairs: the file always says what runs"
umount /tmp/cpuset

tap_done
