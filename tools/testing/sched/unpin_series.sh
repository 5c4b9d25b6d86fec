#!/bin/sh
# In-guest measurement of scripts/reproduce's unpin-spread experiment ("The
# Battle of the Schedulers: FreeBSD ULE vs. Linux CFS", ATC 2018, section
# 6.1, Figure 6) under the class the guest runs now: one spinner per CPU
# (nproc of them) pinned to CPU 0, then all unpinned at once (uleload
# spinners on SIGUSR1, as in ule_balance.c's unpinning test, which checks
# the end state under ULE). Every STEP seconds for WINDOW_S after the
# unpinning, the CPU each spinner is on (field 39 of its stat: the run
# queue it waits on, or the CPU it last ran on) is printed; the host
# counts the CPUs that have a spinner and finds when each has exactly one.
# The scheduler's knobs stay as the class ships them
# (kernel.sched_ule_always_steal is printed, not set).
#
# This shell and its sampler stay on CPU 0 with the spinners, so the CPUs
# that should take them are idle when they are unpinned, and run as
# realtime tasks, as in ule_balance.c: a normal one waits behind the
# spinners at each wakeup and samples far less often than asked;
# realtime, it runs at once and adds nothing to the load the classes
# balance.
#
# Usage: unpin_series.sh ULELOAD   (WINDOW_S and STEP from the
# environment; scripts/reproduce sets them)
# Prints TAP; writes to the JSON lines file SCHED_TEST_METRICS names
# (tap.sh's metric(), uleload cpuwatch) {"name": "unpin", "cpus": N,
# "window_cs": W, "step": S, "always_steal": A}, {"name": "pinned",
# "cpus": "C1 ... CN"} (the spinners' CPUs before the unpinning) and
# {"name": "spread", "t_cs": T, "cpus": [C1, ..., CN]} per sample
# (centiseconds since the unpinning, then the spinners' CPUs, null for one
# that is gone).
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
metric unpin cpus=$N window_cs=$((WINDOW_S * 100)) step=$STEP \
	always_steal=$(cat $K/sched_ule_always_steal 2>/dev/null || echo none)
taskset -pc 0 $$ >/dev/null
chrt -f -p 10 $$ >/dev/null
taskset -c 0 chrt -o 0 "$uleload" spinners "$N" $((WINDOW_S + 30)) >$OUT &
pid=$!
tids=$(wait_line $OUT tids 100)
set -- $tids
check "$#" "$N" "uleload started $N spinners"
sleep 1		# uleload starts them 0.5 s after printing their tids
cpus=$(cpus_of $pid "$tids")
metric pinned cpus="$cpus"
check "$(distinct "$cpus") $(echo $cpus | cut -d' ' -f1)" "1 0" \
	"$N spinners on CPU 0 before the unpinning"

# uleload cpuwatch signals the unpinning and samples from C: a sleep
# forked from the 9p root and a console line per sample took seconds of
# guest time each with every vCPU spinning, under every class (even with
# icount), so the shell loop measured its own delays. It inherits this
# shell's CPU 0 and SCHED_FIFO.
step_ms=$(awk "BEGIN { print int($STEP * 1000) }")
spread=$("$uleload" cpuwatch $pid $step_ms $((WINDOW_S * 1000)) $tids)
printf '%s\n' "$spread"
samples=$(printf '%s\n' "$spread" | grep -c '^# spread ')
kill $pid
wait $pid 2>/dev/null
check "$(grep -c '^unpinned' $OUT)" 1 "the spinners were unpinned ($samples samples)"
tap_done
