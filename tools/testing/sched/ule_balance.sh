#!/bin/sh
# In-guest TAP test of ULE's balancing, one spinner per CPU (nproc of them):
#   a. started together, they end up one per CPU within 10 s and stay one
#      per CPU for the next 5 s, trading places reported, not failed (each
#      thread's CPU sampled every 0.5 s, or as often as a guest with every
#      vCPU busy manages;
#      OUTDIR/spread.txt: centiseconds since start, then the CPUs);
#   b. pinned to CPU 0, then all unpinned at once, with the event recorder
#      and ftrace's task_migrate on: one spinner per CPU at the end. The
#      host checks the idle steals and the balancer runs in the recording:
#      OUTDIR/balance.bin (dump), balance-ftrace.txt, task_migrate.format
#      (reason numbers to names) and balance.txt (pid, tids, nproc, marker).
# Usage: ule_balance.sh OUTDIR ULELOAD
out=${1:?usage: $0 OUTDIR ULELOAD}
uleload=${2:?usage: $0 OUTDIR ULELOAD}
here=$(cd "$(dirname "$0")" && pwd)
E=/sys/kernel/debug/sched/events
T=/sys/kernel/tracing
. "$here/tap.sh"
. "$here/ule_lib.sh"
mkdir -p "$out"
N=$(nproc)

echo "TAP version 13"
echo "1..5"
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
# that should steal are idle when they are unpinned.
taskset -pc 0 $$ >/dev/null
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
taskset -pc 0-$((N - 1)) $$ >/dev/null

tap_done
