#!/bin/sh
# In-guest measurement of scripts/reproduce's unpin-spread experiment ("The
# Battle of the Schedulers: FreeBSD ULE vs. Linux CFS", ATC 2018, section
# 6.1, Figure 6) under the class the guest runs now: one spinner per CPU
# (nproc of them) pinned to CPU 0, then all unpinned at once (uleload
# spinners on SIGUSR1, as in ule_balance.sh part b, whose TAP test checks
# the end state under ULE). Every STEP seconds for WINDOW_S after the
# unpinning, the CPU each spinner is on (field 39 of its stat: the run
# queue it waits on, or the CPU it last ran on) is printed; the host
# counts the CPUs that have a spinner and finds when each has exactly one.
# The scheduler's knobs stay as the class ships them
# (kernel.sched_ule_always_steal is printed, not set).
#
# This shell stays on CPU 0 with the spinners, so the CPUs that should
# take them are idle when they are unpinned, and it runs as a realtime
# task, as in ule_balance.sh: a normal one waits behind the spinners at
# each wakeup and samples far less often than asked; realtime, it runs
# at once and adds nothing to the load the classes balance.
#
# Usage: unpin_series.sh ULELOAD   (WINDOW_S and STEP from the
# environment; scripts/reproduce sets them)
# Prints, besides TAP, "# unpin cpus N window_cs W step S always_steal A",
# "# pinned C1 ... CN" (the spinners' CPUs before the unpinning) and
# "# spread T C1 ... CN" per sample (centiseconds since the unpinning,
# then the spinners' CPUs, "-" for one that is gone).
uleload=${1:?usage: $0 ULELOAD}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/tap.sh"
. "$here/ule_lib.sh"
WINDOW_S=${WINDOW_S:-15}
STEP=${STEP:-0.25}
N=$(nproc)
OUT=/tmp/unpin-spinners.out

echo "TAP version 13"
echo "1..3"
echo "# unpin cpus $N window_cs $((WINDOW_S * 100)) step $STEP" \
	"always_steal $(cat $K/sched_ule_always_steal 2>/dev/null || echo none)"
taskset -pc 0 $$ >/dev/null
chrt -f -p 10 $$ >/dev/null
taskset -c 0 chrt -o 0 "$uleload" spinners "$N" $((WINDOW_S + 30)) >$OUT &
pid=$!
tids=$(wait_line $OUT tids 100)
set -- $tids
check "$#" "$N" "uleload started $N spinners"
sleep 1		# uleload starts them 0.5 s after printing their tids
cpus=$(cpus_of $pid "$tids")
echo "# pinned $cpus"
check "$(distinct "$cpus") $(echo $cpus | cut -d' ' -f1)" "1 0" \
	"$N spinners on CPU 0 before the unpinning"

# sample: sets cpus to each spinner's CPU; cpus_in, not cpus_of, whose
# command substitution is one more fork per sample, and with every vCPU
# busy a fork under TCG stretches the sampling.
sample() {
	cpus_in $pid "$tids"
	cpus=$_cpus
}

now_cs
t0=$now
kill -USR1 $pid
samples=0
while :; do
	sleep "$STEP"
	sample
	now_cs
	echo "# spread $((now - t0)) $cpus"
	samples=$((samples + 1))
	[ $((now - t0)) -ge $((WINDOW_S * 100)) ] && break
done
kill $pid
wait $pid 2>/dev/null
check "$(grep -c '^unpinned' $OUT)" 1 "the spinners were unpinned ($samples samples)"
tap_done
