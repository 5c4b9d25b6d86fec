#!/bin/sh
# In-guest TAP test of BMQ on an SMT topology (the "smt" preset: 4 cores x
# 2 threads), booted with sched=bmq and sched_timeslice=SLICE_MS:
#   1. kernel.sched_class is bmq, and the slice is SLICE_MS ms (also as
#      sched_rr_get_interval() reports it);
#   2. two spinners started on an idle machine run on different cores
#      (placement prefers a fully idle core);
#   3. two spinners pinned to the two threads of core 0 and then allowed
#      every CPU end up on different cores: neither waits, so only the SMT
#      active balance can move one (task_migrate reason=active_balance);
#   4. four spinning threads allowed on the first two cores of CPU 0's
#      last-level cache, then every CPU (at once, from C), are one per
#      core in the last second of a 5 s window sampled from C; on a
#      machine of two or more LLCs (2x2x2) the idle cores are in another
#      one, and the active balance must move a spinner there: Project C
#      looks at every online CPU, not only the LLC.
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
echo "1..7"
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

# 4. SMT active balance to the nearest idle cores, in or beyond the LLC.
llc=$(cat $C/cpu0/cache/index3/shared_cpu_list 2>/dev/null || echo 0-$(($(nproc) - 1)))
llc_cpus=" $(echo "$llc" | tr ',' '\n' | while IFS=- read -r lo hi; do seq $lo ${hi:-$lo}; done | tr '\n' ' ')"
cores=""
for cpu in $llc_cpus; do
	core_of $cpu
	case " $cores " in *" $core "*) ;; *) cores="$cores $core" ;; esac
done
set -- $cores
pinned=""
for c in $1 $2; do
	pinned="$pinned,$(cat $C/cpu$c/topology/thread_siblings_list)"
done
pinned=${pinned#,}
echo "# LLC of CPU 0: $llc; spinners allowed on CPUs $pinned"
taskset -c "$pinned" "$uleload" spinners 4 30 >"$out/four.txt" &
four=$!
tids=$(wait_line "$out/four.txt" tids 50)
sleep 1.5
migrations_on
# The sampler on the last CPU, away from the spinners: where it woke it
# preempted one, and an idle CPU of the other LLC pulled that one first.
samples=$(taskset -c $(($(nproc) - 1)) "$uleload" cpuwatch $four 100 5000 $tids |
	grep '^# spread' | tail -10)
migrations_off
kill $four
wait $four 2>/dev/null
# Samples of the last second with the four on four cores.
apart_samples=0
last=""
printf '%s\n' "$samples" >"$out/four-samples.txt"
while read -r _hash _word _t c1 c2 c3 c4; do
	last="$c1 $c2 $c3 $c4"
	_cores=" "
	for _c in $last; do
		is_int "$_c" || continue 2
		core_of $_c
		case "$_cores" in *" $core "*) continue 2 ;; esac
		_cores="$_cores$core "
	done
	apart_samples=$((apart_samples + 1))
done <"$out/four-samples.txt"
# in_llc CPU: CPU is in CPU 0's LLC.
in_llc() { case "$llc_cpus" in *" $1 "*) return 0 ;; esac; return 1; }
# Moves of the spinners by the active balance out of that LLC: none while
# it looked only inside it (idle pulls may still take a spinner that a
# kernel thread has preempted).
moved_out=0
for move in $(grep "comm=uleload .*reason=active_balance" $T/trace |
		sed -n 's/.* src=\([0-9]*\) dst=\([0-9]*\) .*/\1:\2/p'); do
	in_llc ${move%:*} && ! in_llc ${move#*:} && moved_out=$((moved_out + 1))
done
one_llc=0
[ $(echo $llc_cpus | wc -w) -eq "$(nproc)" ] && one_llc=1
what="four spinners on two cores: one per core in $apart_samples of the last 10 samples (last on CPUs $last)"
[ $one_llc = 1 ] || what="$what, $moved_out active balance moves out of the LLC"
if [ $apart_samples -ge 8 ] && { [ $one_llc = 1 ] || [ $moved_out -ge 1 ]; }; then
	ok "$what"
else
	not_ok "$what (want 8 or more, and a move out of the LLC on more than one)"
fi
tap_done
