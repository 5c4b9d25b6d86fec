#!/bin/sh
# In-guest TAP test of SMT placement on the "smt" preset (4 cores x 2
# threads), under whatever class the guest booted with: N = 2, 3 and 4
# independent spinners started back to back on an idle machine run one per
# core, as CFS, BMQ and FreeBSD's ULE (cpu_search compares SMT groups by
# load) place them. Sampled every 50 ms for 1 s after 0.5 s: a sample in
# which the spinners use fewer than N cores has two on one core while
# another core idles. Under ULE the 3- and 4-spinner points are TODO: a
# misplacement (the launching shell's core busy at a fork, an idle sibling
# stealing first) is repaired only by a balancer that moves a lone running
# thread (FreeBSD's TDF_PICKCPU), which ULE here lacks.
# Usage: smt_spread.sh ULELOAD
uleload=${1:?usage: $0 ULELOAD}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/tap.sh"
. "$here/ule_lib.sh"
C=/sys/devices/system/cpu
cls=$(cat $K/sched_class)

# core_N: the first SMT sibling of CPU N, read once (a fork per sample
# under TCG would stretch the sampling past the spinners' lives).
for c in $(seq 0 $(($(nproc) - 1))); do
	s=$(cat $C/cpu$c/topology/thread_siblings_list)
	eval "core_$c=${s%%[,-]*}"
done

# cores_of "CPUS": sets cores to the core of each CPU ("-": a task gone).
cores_of() {
	cores=
	for _c in $1; do
		case $_c in
		*[!0-9]* | "") cores="$cores -" ;;
		*) eval "cores=\"\$cores \$core_$_c\"" ;;
		esac
	done
}

echo "TAP version 13"
echo "1..4"
siblings=$(cat $C/cpu0/topology/thread_siblings_list)
case $siblings in
*[,-]*) ok "CPU 0 has SMT siblings: $siblings under $cls" ;;
*) not_ok "CPU 0 has SMT siblings: $siblings" ;;
esac

for want in 2 3 4; do
	pids=""
	i=0
	while [ $i -lt $want ]; do
		"$uleload" spinner 60 >/dev/null &
		pids="$pids $!"
		i=$((i + 1))
	done
	sleep 0.5
	bad=0
	seen=""
	s=0
	while [ $s -lt 20 ]; do
		cpus=""
		for p in $pids; do
			cpus="$cpus $(cpus_of $p $p)"
		done
		cores_of "$cpus"
		if [ "$(distinct "$cores")" -lt $want ]; then
			bad=$((bad + 1))
			[ -z "$seen" ] && seen=" first: CPUs$cpus (cores$cores)"
		fi
		sleep 0.05
		s=$((s + 1))
	done
	what="$want spinners on $want cores in all 20 samples"
	if [ $bad -eq 0 ]; then
		ok "$what"
	elif [ $want -ge 3 ] && [ "$cls" = ule ]; then
		# The launching shell's core may be busy at a fork, and idle stealing
		# wakes a sibling first; FreeBSD's balancer then has the lone running
		# thread pick a CPU again. 3 failed in 1 of 4 runs, 4 in every run.
		todo "$what ($bad bad,$seen)" "ULE's balancer moves no lone running thread"
	else
		not_ok "$what ($bad bad,$seen)"
	fi
	kill $pids 2>/dev/null
	wait $pids 2>/dev/null
	sleep 0.3
done
tap_done
