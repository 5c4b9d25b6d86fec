#!/bin/sh
# In-guest TAP test on the "smt" preset, booted with sched=muqss: MuQSS's
# SMT_NICE is not ported (muqss.rst, Differences from MuQSS), so a nice 19
# spinner on the sibling of a CPU that runs a nice 0 spinner keeps its
# own CPU, as under CFS. MuQSS with SMT_NICE would hold it off while its
# sibling runs the better task. The two spinners' run times are compared
# with each other, not with the clock: in the emulator a vCPU is not run
# all the time. The shell samples from another core.
# The bound is half: under SMT_NICE a nice 0 task's bias steps 20..1, one
# step a slice, and a nice 19 task (bias 1) runs beside it only at the
# five steps 4k+1, a quarter of the time. The emulator's host stalls one
# vCPU now and then (78 % seen on a busy CI host, 117 % on a quiet one).
# Usage: muqss_smt_nice.sh
here=$(cd "$(dirname "$0")" && pwd)
. "$here/tap.sh"
echo "TAP version 13"
echo "1..1"
MIN_PCT=50
taskset -pc 0 $$ >/dev/null
# A core other than CPU 0's, and its two threads.
set -- $(sed 's/[,-]/ /' /sys/devices/system/cpu/cpu2/topology/thread_siblings_list)
one=$1 two=$2
runtime() { sed -n 's/^se.sum_exec_runtime *: *//p' /proc/$1/sched | cut -d. -f1; }
taskset -c "$one" sh -c 'while :; do :; done' &
a=$!
taskset -c "$two" nice -n 19 sh -c 'while :; do :; done' &
b=$!
sleep 1
a0=$(runtime $a)
b0=$(runtime $b)
sleep 2
a1=$(runtime $a)
b1=$(runtime $b)
kill $a $b
wait $a $b 2>/dev/null
pct=$(((b1 - b0) * 100 / (a1 - a0 > 0 ? a1 - a0 : 1)))
echo "# CPUs $one and $two are one core's threads: nice 0 on $one ran $((a1 - a0)) ms, nice 19 on $two $((b1 - b0)) ms"
if [ -n "$two" ] && [ $pct -ge $MIN_PCT ]; then
	ok "SMT_NICE not ported: a nice 19 spinner on a nice 0 one's sibling runs $pct % as long"
else
	not_ok "SMT_NICE not ported: a nice 19 spinner on a nice 0 one's sibling runs $pct % as long (want >= $MIN_PCT; CPUs '$one' '$two')"
fi
tap_done
