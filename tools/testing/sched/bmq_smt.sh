#!/bin/sh
# In-guest TAP test of BMQ on an SMT topology (the "smt" preset: 4 cores x
# 2 threads), booted with sched=bmq and sched_timeslice=SLICE_MS:
#   1. kernel.sched_class is bmq, and the slice is SLICE_MS ms (also as
#      sched_rr_get_interval() reports it);
#   2. two spinners started on an idle machine run on different cores
#      (placement prefers a fully idle core);
#   3. two spinners pinned to the two threads of core 0 and then allowed
#      every CPU end up on different cores: neither waits, so only the SMT
#      active balance can move one (task_migrate reason=active_balance).
# Usage: bmq_smt.sh OUTDIR ULELOAD SLICE_MS
out=${1:?usage: $0 OUTDIR ULELOAD SLICE_MS}
uleload=${2:?usage: $0 OUTDIR ULELOAD SLICE_MS}
slice_ms=${3:?usage: $0 OUTDIR ULELOAD SLICE_MS}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/tap.sh"
. "$here/ule_lib.sh"
. "$here/bmq_lib.sh"
mkdir -p "$out"
C=/sys/devices/system/cpu

# core_of CPU: sets core to the first CPU of CPU's SMT siblings. (cat:
# the shell's read builtin reads sysfs a byte at a time and gets nothing.)
core_of() {
	core=$(cat $C/cpu$1/topology/thread_siblings_list)
	core=${core%%[,-]*}
}

# apart PID1 PID2: both spinners ran last on different cores; sets where.
apart() {
	set -- $(cpus_of $1 $1) $(cpus_of $2 $2)
	where="CPUs $1 and $2"
	is_int "$1" && is_int "$2" || return 1
	core_of $1
	c1=$core
	core_of $2
	where="$where (cores $c1 and $core)"
	[ "$c1" != "$core" ]
}

echo "TAP version 13"
echo "1..6"
check "$(cat $K/sched_class)" bmq "kernel.sched_class is bmq"
siblings=$(cat $C/cpu0/topology/thread_siblings_list)
set -- $(echo "$siblings" | tr ',-' '  ')
if [ $# -ge 2 ]; then
	ok "CPU 0 has SMT siblings: $siblings"
else
	not_ok "CPU 0 has SMT siblings: $siblings"
fi
t0=$1
t1=$2
slice_check "$uleload" "$slice_ms" 3
rr_interval_check "$slice_ms"

# 2. Placement on an idle machine.
"$uleload" spinner 30 >/dev/null &
a=$!
sleep 0.3
"$uleload" spinner 30 >/dev/null &
b=$!
sleep 1
same=0
seen=""
for i in 1 2 3; do
	apart $a $b || same=$((same + 1))
	seen="$seen; $where"
	sleep 0.5
done
check "$same" 0 "two spinners on different cores in 3 samples:$seen"
kill $a $b
wait $a $b 2>/dev/null
sleep 0.5

# 3. SMT active balance.
migrations_on
taskset -c $t0 "$uleload" spinner 30 >/dev/null &
a=$!
taskset -c $t1 "$uleload" spinner 30 >/dev/null &
b=$!
sleep 1
apart $a $b && echo "# not on one core before unpinning: $where"
taskset -p -c 0-$(($(nproc) - 1)) $a >/dev/null
taskset -p -c 0-$(($(nproc) - 1)) $b >/dev/null
now_cs
start=$now
until apart $a $b; do
	now_cs
	[ $((now - start)) -ge 300 ] && break
	sleep 0.1
done
now_cs
if apart $a $b; then
	ok "siblings' spinners on different cores $((now - start)) cs after unpinning: $where"
else
	not_ok "siblings' spinners on different cores within 3 s of unpinning: $where"
fi
grep "task_migrate: .* reason=active_balance" $T/trace | head -3 | sed 's/^/# /'
migrations_off
kill $a $b
wait $a $b 2>/dev/null
tap_done
