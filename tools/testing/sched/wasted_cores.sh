#!/bin/sh
# In-guest runner of the "wasted cores" scenarios (Documentation/scheduler/
# sched-wasted-cores.rst); scripts/wasted-cores boots the VM, calls this and
# prints the tables.
#
# wasted_cores.sh OUTDIR WCLOAD SEED SCENARIO...
#   group-imbalance     a job of nproc threads plus two CPU hogs, each in
#                       its own session (autogroup on), GROUP_MIN_LOAD off
#                       then on
#   overload-on-wakeup  a pool of nproc threads meeting at a barrier plus
#                       transient threads (autogroup off), WAKE_IDLE_LONGEST
#                       off then on
#   missing-domains     offline/online a CPU; NUMA domains must survive and
#                       new threads must reach every node
#   group-construction  threads bound to the two nodes farthest apart must
#                       use both
# A measured scenario runs REPEAT (default 1) rounds of off and on,
# alternating which goes first so drift of the host does not favour one
# side. Run I leaves OUTDIR/SCENARIO-off-I.bin and -on-I.bin (recorder
# dumps) and prints "result SCENARIO off|on I elapsed_ms N violations N";
# the regression scenarios print "result SCENARIO pass|fail DETAILS".
# JOB_UNITS, POOL_ROUNDS and HOG_S scale the measured runs.
out=${1:?usage: $0 OUTDIR WCLOAD SEED SCENARIO...}
wcload=${2:?}
seed=${3:?}
shift 3
K=/proc/sys/kernel
E=/sys/kernel/debug/sched/events
F=/sys/kernel/debug/sched/features
ncpu=$(nproc)
mkdir -p "$out"

# Nodes with CPUs, and the node of each CPU as "cpu node" lines.
cpu_nodes() {
	for d in /sys/devices/system/node/node[0-9]*; do
		n=${d##*node}
		for c in $(tr ',' ' ' <"$d/cpulist"); do
			case $c in
			*-*) seq "${c%-*}" "${c#*-}" ;;
			*) echo "$c" ;;
			esac | sed "s/\$/ $n/"
		done
	done
}

# record NAME CMD...: run CMD under the recorder and the sanity checker.
record() {
	name=$1
	shift
	echo clear >/proc/sched_sanity
	echo 4096 >$E/buffer_kb
	echo fill >$E/mode
	echo start >$E/control
	echo 1 >$K/sched_sanity
	"$@" >"$out/$name.txt"
	echo 0 >$K/sched_sanity
	echo stop >$E/control
	cat $E/dump >"$out/$name.bin"
	cp /proc/sched_sanity "$out/$name.sanity"
	cat $E/stats >"$out/$name.stats"
}

violations() { sed -n 's/.* violations \([0-9]*\) .*/\1/p' /proc/sched_sanity; }

# The hogs run from before the recording until after it.
gi_setup() {
	setsid "$wcload" hog "${HOG_S:-600}" &
	setsid "$wcload" hog "${HOG_S:-600}" &
	sleep 2
}
gi_run() { setsid -w "$wcload" job "$ncpu" "${JOB_UNITS:-$((ncpu * 60))}" "$seed"; }
gi_cleanup() {
	pkill -f "$wcload hog"
	wait
}

ow_setup() { :; }
ow_run() { "$wcload" pool "$ncpu" "${POOL_ROUNDS:-100}" "$seed"; }
ow_cleanup() { :; }

measure_one() {	# SCENARIO FEATURE PREFIX off|on RUN
	if [ "$4" = on ]; then echo "$2" >$F; else echo "NO_$2" >$F; fi
	"$3_setup"
	record "$1-$4-$5" "$3_run"
	"$3_cleanup"
	echo "result $1 $4 $5 elapsed_ms $(sed -n 's/^elapsed_ms //p' "$out/$1-$4-$5.txt")" \
	     "violations $(violations)"
}

measure() {	# SCENARIO FEATURE AUTOGROUP PREFIX
	echo "$3" >$K/sched_autogroup_enabled
	for run in $(seq "${REPEAT:-1}"); do
		if [ $((run % 2)) = 1 ]; then order="off on"; else order="on off"; fi
		for fix in $order; do
			measure_one "$1" "$2" "$4" $fix "$run"
		done
	done
	echo "NO_$2" >$F
	echo 0 >$K/sched_autogroup_enabled
}

spread_nodes() {	# THREADS [BIND...]: nodes the spinners ended on
	"$@" "$wcload" spread "$n_threads" 3 >"$out/spread.txt"
	cpu_nodes >"$out/cpu-nodes.txt"
	awk 'NR == FNR { node[$1] = $2; next } { print node[$1] }' \
	    "$out/cpu-nodes.txt" "$out/spread.txt" | sort -un | tr '\n' ' '
}

missing_domains() {
	dom=/sys/kernel/debug/sched/domains/cpu0
	before=$(cat $dom/domain*/name | tr '\n' ' ')
	last=$((ncpu - 1))
	echo 0 >/sys/devices/system/cpu/cpu$last/online
	echo 1 >/sys/devices/system/cpu/cpu$last/online
	after=$(cat $dom/domain*/name | tr '\n' ' ')
	n_threads=$ncpu
	used=$(spread_nodes)
	all=$(cpu_nodes | awk '{ print $2 }' | sort -un | tr '\n' ' ')
	verdict=fail
	[ "$before" = "$after" ] && [ "$used" = "$all" ] && verdict=pass
	echo "result missing-domains $verdict domains [$after] nodes-used [$used] of [$all]"
}

group_construction() {
	# The pair of nodes with the largest distance, lowest numbers first.
	pair=$(for d in /sys/devices/system/node/node[0-9]*; do
		i=${d##*node}
		j=0
		for dist in $(cat "$d/distance"); do
			[ "$j" -gt "$i" ] && echo "$dist $i $j"
			j=$((j + 1))
		done
	done | sort -k1,1nr -k2,2n -k3,3n | head -1)
	set -- $pair
	a=$2
	b=$3
	n_threads=$(cpu_nodes | awk -v a="$a" -v b="$b" '$2 == a || $2 == b' | wc -l)
	used=$(spread_nodes numactl --cpunodebind="$a,$b")
	cpus=$(sort -un "$out/spread.txt" | wc -l)
	verdict=fail
	[ "$used" = "$a $b " ] && [ "$cpus" -ge $((n_threads * 3 / 4)) ] && verdict=pass
	echo "result group-construction $verdict distance $1 nodes [$a $b] used [$used] cpus $cpus of $n_threads"
}

# One calibration on an idle machine: every run then does the same work.
WCLOAD_IPU=$("$wcload" calibrate)
export WCLOAD_IPU
echo "calibration iters_per_us $WCLOAD_IPU"
echo 1000 >$K/sched_sanity_interval_ms
echo 100 >$K/sched_sanity_confirm_ms
for scenario in "$@"; do
	case $scenario in
	group-imbalance) measure group-imbalance GROUP_MIN_LOAD 1 gi ;;
	overload-on-wakeup) measure overload-on-wakeup WAKE_IDLE_LONGEST 0 ow ;;
	missing-domains) missing_domains ;;
	group-construction) group_construction ;;
	*) echo "wasted_cores.sh: unknown scenario '$scenario'" >&2; exit 2 ;;
	esac
done
echo release >$E/control
