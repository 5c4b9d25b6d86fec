#!/bin/sh
# In-guest TAP test of ULE's balancing, one spinner per CPU (nproc of them):
#   a. started together, they end up one per CPU within 10 s and stay one
#      per CPU for the next 5 s, trading places reported, not failed (each
#      thread's CPU sampled every 0.5 s, or as often as a guest with every
#      vCPU busy manages;
#      OUTDIR/spread.txt: centiseconds since start, then the CPUs);
#   b. pinned to CPU 0, then all unpinned at once (sched_ule_always_steal
#      on), with the event recorder
#      and ftrace's task_migrate on: one spinner per CPU at the end. The
#      host checks the idle steals and the balancer runs in the recording:
#      OUTDIR/balance.bin (dump), balance-ftrace.txt, task_migrate.format
#      (reason numbers to names) and balance.txt (pid, tids, nproc, marker);
#   c. two cpuset partitions (two root domains), idle stealing off: spinners
#      started on one CPU of each, allowed their partition, are spread by
#      the periodic balancer in both;
#   d. the balancer held off with its longest interval and set back: the
#      shorter interval applies at once (spinners on one CPU, stealing off).
# Usage: ule_balance.sh OUTDIR ULELOAD
out=${1:?usage: $0 OUTDIR ULELOAD}
uleload=${2:?usage: $0 OUTDIR ULELOAD}
here=$(cd "$(dirname "$0")" && pwd)
E=/sys/kernel/debug/sched/events
T=/sys/kernel/tracing
. "$here/tap.sh"
. "$here/ule_lib.sh"
. "$here/partition_lib.sh"
mkdir -p "$out"
N=$(nproc)

echo "TAP version 13"
echo "1..8"
# The observer must not be one of the loads: as a ULE timeshare task this
# shell (charged its children's run time, so batch) waits up to a whole
# calendar turn behind a spinner at each wakeup, and one 0.5 s sample took
# 10 s. As a realtime task it runs at once and adds no ULE load; so do
# its helpers (sleep, sed), while the spinners are started as normal tasks.
chrt -f -p 10 $$ >/dev/null

# a. Spread and stay.
chrt -o 0 "$uleload" spinners "$N" 300 >/tmp/spread.out &
pid=$!
tids=$(wait_line /tmp/spread.out tids 100)
sleep 0.5	# uleload starts them 0.5 s after printing their tids
now_cs
start=$now
settled=""
moved=""
traded=""
: >"$out/spread.txt"
while :; do
	sleep 0.5
	cpus=$(cpus_of $pid "$tids")
	now_cs
	t=$((now - start))
	echo "$t $cpus" >>"$out/spread.txt"
	if [ -z "$settled" ]; then
		if [ "$(distinct "$cpus")" -eq "$N" ]; then
			settled=$t
			where=$cpus
		fi
		[ -z "$settled" ] && [ $t -gt 1000 ] && break
	else
		# A kernel thread waking next to a spinner makes that CPU's load
		# 2, and ULE's balancer (FreeBSD's sched_balance_pair) may then
		# move a spinner, which the emptied CPU steals back: spinners can
		# trade places, but the CPUs must stay one spinner each.
		[ "$cpus" = "$where" ] || traded="$traded $t:[$cpus]"
		[ "$(distinct "$cpus")" -eq "$N" ] || moved="$moved $t:[$cpus]"
		[ $t -ge $((settled + 500)) ] && break
	fi
done
if [ -n "$settled" ]; then
	ok "$N spinners one per CPU after $settled cs: $where"
	check "${moved:-none}" none "one per CPU for 5 more s (traded places:${traded:- none})"
else
	not_ok "$N spinners one per CPU within 10 s: $cpus"
	not_ok "one per CPU for 5 more s (never spread)"
fi
kill $pid
wait $pid 2>/dev/null

# b. Unpinning. This shell stays on CPU 0 with the spinners, so the CPUs
# that should steal are idle when they are unpinned. They steal right
# away when CPU 0's tick wakes them (kernel.sched_ule_always_steal, off by
# default; without it they steal when something else wakes them, or the
# balancer moves the spinners).
taskset -pc 0 $$ >/dev/null
always=$(cat $K/sched_ule_always_steal)
echo 1 >$K/sched_ule_always_steal
taskset -c 0 chrt -o 0 "$uleload" spinners "$N" 300 >/tmp/pinned.out &
pid=$!
tids=$(wait_line /tmp/pinned.out tids 100)
sleep 1
cpus=$(cpus_of $pid "$tids")
check "$(distinct "$cpus") $(echo $cpus | cut -d' ' -f1)" "1 0" "$N spinners pinned to CPU 0: $cpus"

echo fill >$E/mode
echo 4096 >$E/buffer_kb
echo >$T/trace
echo 1 >$T/events/sched_events/task_migrate/enable
cat $T/events/sched_events/task_migrate/format >"$out/task_migrate.format"
echo start >$E/control
sleep 1
kill -USR1 $pid
marker=$(wait_line /tmp/pinned.out unpinned 50)
# Idle stealing fills the CPUs at once; the balancer (every 0.5-1.5 s)
# mends what it missed, and 10 s are enough for several of its runs.
sleep 10
cpus=$(cpus_of $pid "$tids")
check "$(distinct "$cpus")" "$N" "one spinner per CPU 10 s after unpinning: $cpus"
echo stop >$E/control
echo 0 >$T/events/sched_events/task_migrate/enable
if cat $E/dump >"$out/balance.bin" && [ -s "$out/balance.bin" ]; then
	ok "recording dumped ($(wc -c <"$out/balance.bin") bytes)"
else
	not_ok "recording dumped"
fi
cat $E/stats >"$out/balance.stats"
cat $T/trace >"$out/balance-ftrace.txt"
echo release >$E/control
printf '%s\n' "pid $pid" "tids $tids" "nproc $N" "$marker" >"$out/balance.txt"
echo "# $(grep -c task_migrate: "$out/balance-ftrace.txt") task_migrate lines; $marker"
kill $pid
wait $pid 2>/dev/null
echo "$always" >$K/sched_ule_always_steal
taskset -pc 0-$((N - 1)) $$ >/dev/null

# c. A balancer per root domain. With the root cpuset's sched_load_balance
# off, partitions p1 (the first half of the CPUs) and p2 (the second) are
# two root domains. Idle stealing off, so only the periodic balancer
# moves spinners; it used to balance only the root domain of the CPU its
# timer fired on, and the other partition stayed piled up for good.
partitions_make
h=$part_h
steal=$(cat $K/sched_ule_steal_thresh)
echo 0 >$K/sched_ule_steal_thresh
chrt -o 0 python3 "$here/spinners.py" --count $h --from-cpu 0 \
	--allowed 0-$((h - 1)) >/tmp/part1.out &
s1=$!
chrt -o 0 python3 "$here/spinners.py" --count $h --from-cpu $h \
	--allowed $h-$((N - 1)) >/tmp/part2.out &
s2=$!
pids1=$(wait_line /tmp/part1.out pids 100)
pids2=$(wait_line /tmp/part2.out pids 100)
# spread PIDS: sets where to the CPUs they ran on last; true if distinct.
spread() {
	where=""
	for _p in $1; do
		where="$where $(cpus_of $_p $_p)"
	done
	[ "$(distinct "$where")" -eq "$(echo $1 | wc -w)" ]
}
spread "$pids1"
echo "# started: p1 on$where"
spread "$pids2"
echo "# started: p2 on$where"
now_cs
start=$now
t1="" t2=""
while [ -z "$t1" ] || [ -z "$t2" ]; do
	sleep 0.5
	now_cs
	[ -z "$t1" ] && spread "$pids1" && t1=$((now - start)) && w1=$where
	[ -z "$t2" ] && spread "$pids2" && t2=$((now - start)) && w2=$where
	[ $((now - start)) -gt 800 ] && break
done
for i in 1 2; do
	eval "t=\$t$i w=\$w$i pids=\$pids$i"
	if [ -n "$t" ]; then
		ok "partition p$i: its spinners spread by the balancer after $t cs:$w"
	else
		spread "$pids"
		not_ok "partition p$i: its spinners spread by the balancer within 8 s:$where"
	fi
done
kill $s1 $s2
wait $s1 $s2 2>/dev/null
partitions_remove

# d. A new interval applies at once. The longest one held for 2 s makes
# the timer draw the next pass 30-90 s away; set back, spinners started
# on CPU 0 (stealing still off) are spread by passes drawn from it, one
# move per pass from CPU 0. A FreeBSD-like countdown left them piled up.
interval=$(cat $K/sched_ule_balance_interval_ms)
echo 60000 >$K/sched_ule_balance_interval_ms
sleep 2
echo "$interval" >$K/sched_ule_balance_interval_ms
chrt -o 0 python3 "$here/spinners.py" --count $N --from-cpu 0 >/tmp/late.out &
s1=$!
pids1=$(wait_line /tmp/late.out pids 100)
now_cs
start=$now
t1=""
while [ -z "$t1" ] && [ $((now - start)) -le $((interval * 3 * N / 2 / 10 + 300)) ]; do
	sleep 0.5
	now_cs
	spread "$pids1" && t1=$((now - start))
done
if [ -n "$t1" ]; then
	ok "interval 60000 ms set back to $interval: spinners spread after $t1 cs:$where"
else
	not_ok "interval 60000 ms set back to $interval: spinners on$where after $((now - start)) cs"
fi
kill $s1
wait $s1 2>/dev/null
echo "$steal" >$K/sched_ule_steal_thresh

tap_done
