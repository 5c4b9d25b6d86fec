#!/bin/sh
# In-guest TAP test of SMT placement on the "smt" preset (4 cores x 2
# threads), under whatever class the guest booted with: N = 2, 3 and 4
# independent spinners started back to back on an idle machine run one per
# core, as CFS, BMQ and FreeBSD's ULE (cpu_search compares SMT groups by
# load) place them. Under ULE a spinner still lands on a busy core's
# sibling now and then: at a fork while the launching shell keeps its core
# busy, or when an idle sibling steals it from a CPU a kthread woke on.
# FreeBSD's balancer repairs that by having the lone running thread pick a
# CPU again (TDF_PICKCPU), one per pass, every 0.5 to 1.5 s, if a whole
# core is idle then. So after SETTLE_S the spinners' CPUs are sampled
# every STEP_MS from C (uleload cpuwatch: the shell's loop forked a sleep
# per sample, whose exec and exit woke kthreads beside the spinners and
# ran on the idle core), and a misplacement (fewer than N cores busy
# while another core idles) must not last MAX_BAD_CS or more (four passes
# at their longest) nor show in three quarters of the samples. Left
# alone, spinners are misplaced only now and then (without the balancer,
# 4 spinners stayed misplaced in every sample of half the runs), so a
# last point makes one: with one spinner per core, one is pinned to
# another's sibling and let go; only the re-pick (ULE) or active
# balancing (CFS) moves a lone running task, within MAX_BAD_CS. REPAIR=0
# leaves that point out (scripts/reproduce measures placement only).
# COUNTS (default "2 3 4") lists the spinner counts; above the number of
# cores a sample is misplaced when fewer cores than there are run any.
# Each count's line also gives the cores in use summed over its samples,
# and the same counts go to the JSON lines file SCHED_TEST_METRICS names
# ({"name": "smt", "spinners": N, "misplaced": B, "samples": S,
# "longest_cs": L, "busy_cores": C}): scripts/reproduce's smt-spread turns
# them into the SMT note's modelled throughput.
# Usage: smt_spread.sh ULELOAD
uleload=${1:?usage: $0 ULELOAD}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/tap.sh"
. "$here/ule_lib.sh"
C=/sys/devices/system/cpu
cls=$(cat $K/sched_class)
# Shorter with SETTLE_S and SAMPLES in the environment (scripts/reproduce --quick).
SETTLE_S=${SETTLE_S:-2}
SAMPLES=${SAMPLES:-16}
COUNTS=${COUNTS:-2 3 4}
REPAIR=${REPAIR:-1}
MAX_BAD_CS=600
STEP_MS=500

# core_N: the first SMT sibling of CPU N, read once (a fork per sample
# under TCG would stretch the sampling past the spinners' lives).
for c in $(seq 0 $(($(nproc) - 1))); do
	s=$(cat $C/cpu$c/topology/thread_siblings_list)
	eval "core_$c=${s%%[,-]*}"
done

# count_cores CPU...: sets cpus to the spinners' CPUs and ncores to how
# many cores they use; gone=1 if one of them had exited ("-").
count_cores() {
	cpus=""
	_cores=" "
	ncores=0
	gone=0
	for _c in "$@"; do
		if [ "$_c" = - ]; then
			gone=1
			return
		fi
		cpus="$cpus $_c"
		eval "_k=\$core_$_c"
		case $_cores in
		*" $_k "*) ;;
		*) _cores="$_cores$_k " ncores=$((ncores + 1)) ;;
		esac
	done
}

# start_spinners N: N spinners started back to back, their PIDs in pids,
# then SETTLE_S to settle.
start_spinners() {
	pids=""
	_i=0
	while [ $_i -lt "$1" ]; do
		"$uleload" spinner 60 >/dev/null &
		pids="$pids $!"
		_i=$((_i + 1))
	done
	sleep $SETTLE_S
}
stop_spinners() {
	kill $pids 2>/dev/null
	wait $pids 2>/dev/null
}

cores=0
for c in $(seq 0 $(($(nproc) - 1))); do
	eval "[ \$core_$c = $c ]" && cores=$((cores + 1))
done
echo "TAP version 13"
echo "1..$((1 + $(echo $COUNTS | wc -w) + REPAIR))"
siblings=$(cat $C/cpu0/topology/thread_siblings_list)
case $siblings in
*[,-]*) ok "CPU 0 has SMT siblings: $siblings under $cls" ;;
*) not_ok "CPU 0 has SMT siblings: $siblings" ;;
esac

for count in $COUNTS; do
	want=$((count < cores ? count : cores))
	start_spinners "$count"
	bad=0
	seen=""
	streak=""
	longest=0
	s=0
	busy=0
	# Sampled from C (uleload cpuwatch), read once the window has ended.
	spread=$(SCHED_TEST_METRICS= "$uleload" cpuwatch 0 $STEP_MS $((SAMPLES * STEP_MS)) $pids)
	while read -r _hash _word now rest; do
		[ "$_word" = spread ] || continue
		count_cores $rest
		[ $gone = 1 ] && break
		busy=$((busy + ncores))
		if [ $ncores -lt $want ]; then
			bad=$((bad + 1))
			[ -z "$seen" ] && seen=" first: CPUs$cpus"
			streak=${streak:-$now}
			[ $((now - streak)) -gt $longest ] && longest=$((now - streak))
		else
			streak=""
		fi
		s=$((s + 1))
		[ $s -ge "$SAMPLES" ] && break
	done <<EOF
$spread
EOF
	echo "# $count spinners: $bad of $s samples misplaced, longest for $longest cs," \
		"busy cores $busy"
	metric smt spinners=$count misplaced=$bad samples=$s longest_cs=$longest busy_cores=$busy
	what="$count spinners on $want cores, misplaced for less than $MAX_BAD_CS cs at a time"
	if [ $s -ge $((SAMPLES / 2)) ] && [ $longest -lt $MAX_BAD_CS ] && [ $((bad * 4)) -lt $((s * 3)) ]; then
		ok "$what"
	else
		not_ok "$what ($bad bad, longest $longest cs,$seen)"
	fi
	stop_spinners
	sleep 0.3
done

# cpu_of PID: sets cpu to the CPU PID last ran on.
cpu_of() {
	cpus_in "$1" "$1"
	cpu=$_cpus
}

# sibling_of CPU: sets sib to another SMT thread of CPU's core.
sibling_of() {
	eval "_k=\$core_$1"
	for _c in $(seq 0 $(($(nproc) - 1))); do
		eval "[ \$core_$_c = $_k ]" && [ "$_c" != "$1" ] && sib=$_c && return
	done
}

if [ "$REPAIR" = 1 ]; then
	start_spinners $cores
	set -- $pids
	a=$1 b=$2
	cpu_of $a
	ca=$cpu
	sibling_of $ca
	taskset -pc $sib $b >/dev/null
	# Wait (at most 2 s) until the pinned spinner runs there.
	i=0
	while cpu_of $b && [ "$cpu" != "$sib" ] && [ $i -lt 20 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	taskset -pc 0-$(($(nproc) - 1)) $b >/dev/null
	made=$cpu
	repaired=""
	spread=$(SCHED_TEST_METRICS= "$uleload" cpuwatch 0 $STEP_MS $((SAMPLES * STEP_MS)) $pids)
	while read -r _hash _word now rest; do
		[ "$_word" = spread ] || continue
		count_cores $rest
		[ $gone = 1 ] && break
		if [ $ncores -eq $cores ]; then
			repaired=$now
			break
		fi
	done <<EOF
$spread
EOF
	after=${repaired:-more than $((SAMPLES * STEP_MS / 10))}
	echo "# made: a spinner on CPU $made beside CPU $ca's, repaired after $after cs"
	what="a spinner moved onto a busy core's sibling leaves within $MAX_BAD_CS cs"
	if [ "$made" != "$sib" ]; then
		not_ok "$what (could not pin it to CPU $sib: on CPU $made)"
	elif [ -n "$repaired" ] && [ "$repaired" -lt $MAX_BAD_CS ]; then
		ok "$what"
	else
		not_ok "$what (after $after cs)"
	fi
	stop_spinners
fi
tap_done
