#!/bin/sh
# In-guest TAP test of the wasted-cores fixes' knobs (Documentation/
# scheduler/sched-wasted-cores.rst): both features off by default and
# switchable, wake_idle_longest_cpus' answers to good and bad lists, and a
# recording of idle-longest wakeups (min-load balancing on too) restricted
# to the last node's CPUs
# (OUTDIR/wil-trace.txt, OUTDIR/wil-mask.txt; the host checks that every
# choice outside the list was the task's previous CPU).
# Usage: wasted_cores_knobs.sh OUTDIR WCLOAD
out=${1:?usage: $0 OUTDIR WCLOAD}
wcload=${2:?usage: $0 OUTDIR WCLOAD}
here=$(cd "$(dirname "$0")" && pwd)
F=/sys/kernel/debug/sched/features
W=/sys/kernel/debug/sched/wake_idle_longest_cpus
T=/sys/kernel/tracing
. "$here/tap.sh"
has() { tr ' ' '\n' <$F | grep -qx "$1" && echo yes || echo no; }
mkdir -p "$out"

echo "TAP version 13"
echo "1..13"
for feat in GROUP_MIN_LOAD WAKE_IDLE_LONGEST; do
	check "$(has NO_$feat)" yes "$feat off by default"
	echo $feat >$F
	check "$(has $feat)" yes "$feat switched on"
	echo NO_$feat >$F
	check "$(has NO_$feat)" yes "$feat switched off"
done

last=$(($(nproc) - 1))
check "$(cat $W)" "0-$last" "wake_idle_longest_cpus: every CPU by default"
rejects $W abc
rejects $W ""
rejects $W 4-2
rejects $W 100000
node=$(ls -d /sys/devices/system/node/node[0-9]* | sort -V | tail -1)
mask=$(cat "$node/cpulist")
echo "$mask" >$W
check "$(cat $W)" "$mask" "wake_idle_longest_cpus takes the last node's CPUs ($mask)"

# Both fixes on under the debug kernel's lock checking.
echo "$mask" >"$out/wil-mask.txt"
echo WAKE_IDLE_LONGEST >$F
echo GROUP_MIN_LOAD >$F
echo 0 >$T/tracing_on
echo >$T/trace
echo 'kind == 4' >$T/events/sched_events/cpus_considered/filter
echo 1 >$T/events/sched_events/cpus_considered/enable
echo 1 >$T/tracing_on
"$wcload" pool "$(nproc)" 40 1 >/dev/null
echo 0 >$T/tracing_on
echo 0 >$T/events/sched_events/cpus_considered/enable
echo 0 >$T/events/sched_events/cpus_considered/filter
echo NO_WAKE_IDLE_LONGEST >$F
echo NO_GROUP_MIN_LOAD >$F
cp $T/trace "$out/wil-trace.txt"
echo "0-$last" >$W
n=$(grep -c 'kind=wake_idle_longest' "$out/wil-trace.txt")
if [ "$n" -gt 0 ]; then ok "idle-longest wakeups traced ($n)"; else not_ok "idle-longest wakeups traced"; fi
tap_done
