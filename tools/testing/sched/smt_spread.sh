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
# core is idle then (often it is not: the sampling shell runs there). So
# after SETTLE_S the spinners' cores are sampled every 500 ms (more often,
# the sampling shell and its sleep children keep the idle core busy), and
# a misplacement (fewer than N cores busy while another core idles) must
# not last MAX_BAD_CS or more (four passes at their longest) nor show in
# three quarters of the samples. Without the re-pick, 4 spinners stayed
# misplaced in every sample of every run.
# COUNTS (default "2 3 4") lists the spinner counts; above the number of
# cores a sample is misplaced when fewer cores than there are run any.
# Each count's line also gives the cores in use summed over its samples:
# scripts/reproduce's smt-throughput turns them into seed 003's modelled
# throughput.
# Usage: smt_spread.sh ULELOAD
uleload=${1:?usage: $0 ULELOAD}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/tap.sh"
. "$here/ule_lib.sh"
C=/sys/devices/system/cpu
cls=$(cat $K/sched_class)
# Shorter with SETTLE_S and SAMPLES in the environment (scripts/reproduce --quick).
SETTLE_S=${SETTLE_S:-2}
SAMPLES=${SAMPLES:-12}
COUNTS=${COUNTS:-2 3 4}
MAX_BAD_CS=600

# core_N: the first SMT sibling of CPU N, read once (a fork per sample
# under TCG would stretch the sampling past the spinners' lives).
for c in $(seq 0 $(($(nproc) - 1))); do
	s=$(cat $C/cpu$c/topology/thread_siblings_list)
	eval "core_$c=${s%%[,-]*}"
done

# sample: sets cpus to the spinners' CPUs and ncores to how many cores
# they use, with builtins only (forks are slow under TCG); gone=1 if one
# of them has exited.
sample() {
	cpus=""
	_cores=" "
	ncores=0
	gone=0
	for _p in $pids; do
		if ! read -r _l 2>/dev/null <"/proc/$_p/stat"; then
			gone=1
			return
		fi
		set -- ${_l##*) }
		shift 36
		cpus="$cpus $1"
		eval "_k=\$core_$1"
		case $_cores in
		*" $_k "*) ;;
		*) _cores="$_cores$_k " ncores=$((ncores + 1)) ;;
		esac
	done
}

cores=0
for c in $(seq 0 $(($(nproc) - 1))); do
	eval "[ \$core_$c = $c ]" && cores=$((cores + 1))
done
echo "TAP version 13"
echo "1..$((1 + $(echo $COUNTS | wc -w)))"
siblings=$(cat $C/cpu0/topology/thread_siblings_list)
case $siblings in
*[,-]*) ok "CPU 0 has SMT siblings: $siblings under $cls" ;;
*) not_ok "CPU 0 has SMT siblings: $siblings" ;;
esac

for n in $COUNTS; do
	want=$((n < cores ? n : cores))
	pids=""
	i=0
	while [ $i -lt "$n" ]; do
		"$uleload" spinner 60 >/dev/null &
		pids="$pids $!"
		i=$((i + 1))
	done
	sleep $SETTLE_S
	bad=0
	seen=""
	streak=""
	longest=0
	s=0
	busy=0
	while [ $s -lt $SAMPLES ]; do
		sample
		[ $gone = 1 ] && break
		busy=$((busy + ncores))
		now_cs
		if [ $ncores -lt $want ]; then
			bad=$((bad + 1))
			[ -z "$seen" ] && seen=" first: CPUs$cpus"
			streak=${streak:-$now}
			[ $((now - streak)) -gt $longest ] && longest=$((now - streak))
		else
			streak=""
		fi
		sleep 0.5
		s=$((s + 1))
	done
	echo "# $n spinners: $bad of $s samples misplaced, longest for $longest cs," \
		"busy cores $busy"
	what="$n spinners on $want cores, misplaced for less than $MAX_BAD_CS cs at a time"
	if [ $s -ge $((SAMPLES / 2)) ] && [ $longest -lt $MAX_BAD_CS ] && [ $((bad * 4)) -lt $((s * 3)) ]; then
		ok "$what"
	else
		not_ok "$what ($bad bad, longest $longest cs,$seen)"
	fi
	kill $pids 2>/dev/null
	wait $pids 2>/dev/null
	sleep 0.3
done
tap_done
