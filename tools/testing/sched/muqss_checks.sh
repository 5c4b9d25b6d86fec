#!/bin/sh
# In-guest TAP test of the MuQSS class (Documentation/scheduler/muqss.rst),
# booted with sched=muqss:
#   a. every normal task runs on muqss, with muqss.* lines in
#      /proc/<pid>/sched; the sysctls reject out-of-range values;
#   b. nice 0 against nice 19 and against nice 5 spinners on one CPU
#      share it as MuQSS's deadlines give (34:1 in run time and 4:1 in
#      median turns; CFS's weights give 68:1 and 3.06:1);
#   c. a task that sleeps keeps its deadline and the rest of its slice;
#   d. spinners started on one CPU reach the idle CPUs through the pick's
#      look across queues (no periodic balancer);
#   e. SCHED_ISO (policy 4): unprivileged tasks may take it, an
#      unprivileged SCHED_FIFO request becomes it (mainline's EPERM under
#      CFS, where ISO runs as a normal task, preempting on wakeup);
#      reset-on-fork gives a
#      child SCHED_NORMAL; realtime ticks count against
#      iso_cpu too; an ISO spinner starves a normal one at iso_cpu 100,
#      shares as a normal task at 0, and at 50 takes the share the limit's
#      window gives (model: 74 %), and two ISO spinners beside a
#      nice-0 one leave it about a tenth (the cap bounds time run as ISO);
#   f. a sync wakeup (a pipe write) never preempts the waker: a burst
#      of pipe messages on one CPU switches per message no more than
#      under CFS, measured in the same boot;
#   g. yield_type 2 gives the yielder a new slice and deadline from an
#      updated clock;
#   h. a MuQSS task that a realtime task keeps off its CPU is offered to
#      an idle CPU it may use, as MuQSS does whatever runs next: that
#      CPU's kick handler runs between the preemption and its taking the
#      task (kprobe);
#   i. rqshare: under mc (the Kconfig default) the CPUs of each package
#      (2x4: 0-3 and 4-7) use one queue, under none each its own, and
#      kernel.sched_muqss_rqshare regroups them at run time; a CPU
#      brought online rejoins its group, the CPUs of an offline leader
#      keep its queue and run on, and a switch to CFS and back ungroups
#      and regroups them;
#   j. a task whose CPU an affinity change takes away runs on an idle
#      allowed CPU at once, under rqshare mc and none.
#   k. two cpuset partitions (partition_lib.sh): spinners forked on the
#      first CPU of each spread one per CPU of it, again after a switch to
#      cfs and back, and over every CPU once the partitions are gone.
# Usage: muqss_checks.sh
here=$(cd "$(dirname "$0")" && pwd)
. "$here/tap.sh"
. "$here/ule_lib.sh"
. "$here/partition_lib.sh"

echo "TAP version 13"
echo "1..52"
# Keep this shell and its helpers off the CPUs whose queue CPU 1 shares
# under rqshare=mc (0-3), where the shares of CPU 1 are measured: in the
# emulator, with more busy vCPUs than host cores, a vCPU preempted by the
# host while it holds the shared lock leaves CPU 1 spinning for
# milliseconds, charged to whichever spinner runs (36 % of CPU 1's time
# in one trace, nice 0 : 5 = 2.6 : 1 by run time).
taskset -pc 7 $$ >/dev/null
field() { sed -n "s/^$2 *: *//p" /proc/$1/sched; }
# Run time in ms, from the scheduler's own count: the tick-sampled times of
# /proc/PID/stat counted the nice 19 spinner's short turns twice as often.
runtime() { field $1 se.sum_exec_runtime | cut -d. -f1; }

# a. Every normal task on muqss.
check "$(cat $K/sched_class)" muqss "kernel.sched_class reads muqss"
# One awk over every process's sched file (each starts with its
# "name (pid, #threads: n)" line): forks are slow under TCG with lockdep.
other=$(cat /proc/[0-9]*/sched 2>/dev/null | awk '
	function count() { if (pol ~ /^[0345]$/ && cls != "muqss") n++ }
	/, #threads: / { count(); pol = ""; cls = ""; seen++ }
	$1 == "policy" { pol = $NF }
	$1 == "class" { cls = $NF }
	END { count(); print (seen > 10 ? n + 0 : "only " seen " processes read") }')
check "$other" 0 "every normal task is on muqss"
check "$(field self muqss.ratio) $(field self muqss.queued)" "836 running" \
	"muqss lines of a running nice-0 task"
for v in 0 1001 abc; do rejects $K/sched_muqss_rr_interval_ms $v; done
rejects $K/sched_muqss_interactive 2
rejects $K/sched_muqss_yield_type 3
for v in -1 101 abc; do rejects $K/sched_muqss_iso_cpu $v; done

# b. nice 0 against nice N on CPU 1 for 6 s. A slice ends with a new
# deadline now + prio_ratio * rr, so the nice 0 spinner runs slices until
# its deadline passes the other's: (offset N - offset 0) / slice of its
# slices for each one of the other's. nice 5: 24.97 ms / 6.29 ms, 4 : 1
# (CFS's weights 1024 : 335, 3.06 : 1); nice 19: 34 : 1 (CFS 68 : 1).
# Spinners on CPU 1, each started by a function that ends in exec.
spin_normal() { exec taskset -c 1 sh -c 'while :; do :; done'; }
spin_nice() { exec taskset -c 1 nice -n "$spin_nice" sh -c 'while :; do :; done'; }
# spin_pair WARM SECS A B [POLICY]: spinners started by A and B; after
# WARM s, their run times in ms over SECS s in _ta and _tb; they run on as
# _a and _b. With POLICY, WARM starts once A has it: a python3 start-up
# that sets it runs under the normal policy, for over a second on a slow
# host.
spin_pair() {
	$3 &
	_a=$!
	$4 &
	_b=$!
	if [ -n "$5" ]; then
		for _ in $(seq 100); do
			[ "$(field $_a policy)" = "$5" ] && break
			sleep 0.1
		done
	fi
	sleep "$1"
	_a0=$(runtime $_a)
	_b0=$(runtime $_b)
	sleep "$2"
	_ta=$(($(runtime $_a) - _a0))
	_tb=$(($(runtime $_b) - _b0))
}
stop_pair() {
	kill $_a $_b
	wait $_a $_b 2>/dev/null
}
# share NICE: ratio = 100 x (run time at nice 0) / (run time at NICE).
share() {
	spin_nice=$1
	spin_pair 1 5 spin_normal spin_nice
	stop_pair
	echo "# nice 0: $_ta ms, nice $1: $_tb ms"
	ratio=$((_ta * 100 / (_tb > 0 ? _tb : 1)))
}
share 19
if [ "$ratio" -ge 2200 ] && [ "$ratio" -le 5000 ]; then
	ok "nice 0 : nice 19 = $((ratio / 100)) : 1 (MuQSS 34, CFS 68)"
else
	not_ok "nice 0 : nice 19 = $((ratio / 100)) : 1 (want 22-50; MuQSS 34, CFS 68)"
fi
# At 4 : 1 a host stall inside one of the few nice 5 slices moves the
# run-time ratio (333 in one CI run on a loaded host), so nice 5 is
# judged by each spinner's median turn on CPU 1 between two switches,
# from sched_switch: a stall lengthens one turn, not the median.
median() { sort -n | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : 0 }'; }
# turn PID: PID's median turn on CPU 1 in us, from the trace.
turn() {
	awk -v p="$1" '/sched_switch:/ {
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^[0-9]+\.[0-9]+:$/)
				ts = substr($i, 1, length($i) - 1)
			if ($i ~ /^prev_pid=/)
				prev = substr($i, 10)
		}
		if (last != "" && prev == p)
			printf "%d\n", (ts - last) * 1000000
		last = ts
	}' $T/per_cpu/cpu1/trace | median
}
events_on sched/sched_switch
share 5
events_off sched/sched_switch
turn_a=$(turn $_a)
turn_b=$(turn $_b)
echo "# median turns: nice 0 $turn_a us, nice 5 $turn_b us"
ratio=$((turn_a * 100 / (turn_b > 0 ? turn_b : 1)))
if [ "$ratio" -ge 360 ] && [ "$ratio" -le 440 ]; then
	ok "nice 0 : nice 5 turns = $ratio : 100 (MuQSS 400, CFS 306)"
else
	not_ok "nice 0 : nice 5 turns = $ratio : 100 (want 360-440; MuQSS 400, CFS 306)"
fi

# c. A sleeper keeps its deadline and the rest of its slice: sampled
# asleep every 0.6 s (longer on a loaded host) once its start-up (more
# than a slice) is over. A deadline changes only when a slice is used
# up: between two samples where the sleeper ran less than the slice left
# at the first (from se.sum_exec_runtime; less than 100 MuQSS "us",
# 102.4 us, left ends a slice: 104 with the rounding of both reads),
# the deadline must be the same;
# where it ran more, a new deadline is allowed.
python3 -c 'import time
while True:
    time.sleep(0.5)' &
s=$!
sleep 3
kept=0
renewed=0
moved=""
prev=""
# sample PID: "deadline_ns slice_us run_us" from one read of
# /proc/PID/sched, so that a run between separate reads cannot mix two
# states (se.sum_exec_runtime is in ms).
sample() {
	awk '$1 == "muqss.deadline_ns" { d = $3 } $1 == "muqss.slice_us" { s = $3 }
	     $1 == "se.sum_exec_runtime" { r = $3 }
	     END { printf "%s %s %d", d, s, r * 1000 }' /proc/$1/sched
}
for i in 1 2 3 4 5 6 7; do
	cur=$(sample $s)
	if [ -n "$prev" ]; then
		set -- $prev $cur
		if [ $(($6 - $3)) -ge $(($2 - 104)) ]; then
			renewed=$((renewed + 1))
		elif [ "$4" = "$1" ]; then
			kept=$((kept + 1))
		else
			moved="$moved [$prev -> $cur]"
		fi
	fi
	prev=$cur
	sleep 0.6
done
kill $s
echo "# sleeper: deadline kept over $kept intervals, new slice in $renewed"
if [ $kept -ge 1 ] && [ -z "$moved" ]; then
	ok "a sleeper keeps its deadline while its slice lasts"
else
	not_ok "a sleeper keeps its deadline while its slice lasts (kept $kept, moved:${moved:- none}; deadline_ns slice_us run_us)"
fi

# d. Four spinners forked on CPU 1, then allowed everywhere: nothing but
# the look of idle CPUs told by the wakeup and by each put-back moves them.
python3 "$here/spinners.py" --count 4 --from-cpu 1 >/tmp/sp.out &
sp=$!
while ! grep -q pids /tmp/sp.out 2>/dev/null; do sleep 0.1; done
pids=$(sed -n 's/^pids //p' /tmp/sp.out)
i=0
while [ $i -lt 20 ]; do
	sleep 0.25
	on=$(for p in $pids; do cut -d' ' -f39 /proc/$p/stat; done | sort -u | tr '\n' ' ')
	[ $(echo $on | wc -w) -eq 4 ] && break
	i=$((i + 1))
done
kill $sp
wait $sp 2>/dev/null
if [ $i -lt 20 ]; then
	ok "four spinners from CPU 1 on four CPUs after $(((i + 1) * 25)) cs: $on"
else
	not_ok "four spinners from CPU 1 on four CPUs within 5 s: $on"
fi

# e. SCHED_ISO.
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
# Run a command as SCHED_ISO (no chrt option for policy 4).
ISO_EXEC='import os, sys
os.sched_setscheduler(0, 4, os.sched_param(0))
os.execvp(sys.argv[1], sys.argv[1:])'
check "$(python3 -c 'import os; print(os.sched_get_priority_min(4), os.sched_get_priority_max(4))')" \
	"0 0" "SCHED_ISO's priority range is 0..0"
check "$(python3 -c 'import os
try:
    os.sched_setscheduler(0, 4, os.sched_param(1))
    print("accepted")
except OSError as e:
    print(e.errno, os.sched_getscheduler(0))')" "22 0" \
	"SCHED_ISO with priority 1 gets EINVAL and the policy stays"
check "$($NOBODY python3 -c "$ISO_EXEC" sh -c 'cut -d" " -f40,41 /proc/self/stat' 2>&1)" "0 4" \
	"an unprivileged task may take SCHED_ISO"
check "$($NOBODY chrt -f 10 sh -c 'cut -d" " -f40,41 /proc/self/stat' 2>&1)" "0 4" \
	"an unprivileged SCHED_FIFO request becomes SCHED_ISO"
# With reset-on-fork (0x40000000) a child starts as SCHED_NORMAL, nice kept.
check "$(nice -n 3 python3 -c 'import os
os.sched_setscheduler(0, 4 | 0x40000000, os.sched_param(0))
pid = os.fork()
if pid == 0:
    print(os.sched_getscheduler(0), os.nice(0), flush=True)
    os._exit(0)
os.waitpid(pid, 0)
print(os.sched_getscheduler(0) & 0xff)' | tr '\n' ' ')" "0 3 4 " \
	"a reset-on-fork ISO task's child starts as SCHED_NORMAL, nice kept"
echo cfs >$K/sched_class
fifo=$($NOBODY chrt -f 10 true 2>/dev/null && echo allowed || echo refused)
iso=$($NOBODY python3 -c "$ISO_EXEC" sh -c 'cut -d" " -f41 /proc/self/stat; sed -n "s/^class *: *//p" /proc/self/sched' 2>&1 | tr '\n' ' ')
echo muqss >$K/sched_class
check "$fifo $iso$(cat $K/sched_class)" "refused 4 cfs muqss" \
	"under CFS: unprivileged SCHED_FIFO refused, SCHED_ISO runs on cfs"

# Under CFS SCHED_ISO is SCHED_NORMAL: a sleeper waking every 5 ms beside
# a spinner on CPU 1 preempts it on wakeup as a normal one does, where a
# SCHED_BATCH one waits for the tick. wake_wait POLICY: its mean wait per
# run in us (schedstat) over 200 wakeups.
wake_wait() {
	taskset -c 1 python3 -c 'import os, sys, time
os.sched_setscheduler(0, int(sys.argv[1]), os.sched_param(0))
def rd():
    f = open("/proc/self/schedstat").read().split()
    return int(f[1]), int(f[2])
time.sleep(0.01)
d0, n0 = rd()
for _ in range(200):
    time.sleep(0.005)
d1, n1 = rd()
print((d1 - d0) // max(1, n1 - n0) // 1000)' "$1"
}
echo cfs >$K/sched_class
spin_normal &
sp=$!
sleep 0.5
w_normal=$(wake_wait 0)
w_iso=$(wake_wait 4)
w_batch=$(wake_wait 3)
kill $sp
wait $sp 2>/dev/null
echo muqss >$K/sched_class
echo "# under CFS, mean wait per run beside a spinner: normal $w_normal us, ISO $w_iso us, batch $w_batch us"
if [ "$w_iso" -lt $(((w_normal + w_batch) / 2)) ] && [ "$w_batch" -gt $((w_normal * 2)) ]; then
	ok "under CFS an ISO sleeper preempts on wakeup as a normal one ($w_iso us, normal $w_normal, batch $w_batch)"
else
	not_ok "under CFS an ISO sleeper preempts on wakeup as a normal one ($w_iso us; want nearer normal's $w_normal than batch's $w_batch, batch over twice normal)"
fi

# 2 s of a SCHED_FIFO spinner on CPU 1 fill about a third of its window
# (1 - e^(-2/5), less RT throttling's 5 %), read through a sleeper there.
taskset -c 1 sleep 60 &
sl=$!
chrt -f 50 taskset -c 1 sh -c 'while :; do :; done' &
rt=$!
sleep 2
pct=$(field $sl muqss.cpu_iso_pct)
kill $rt $sl
wait $rt $sl 2>/dev/null
if [ "${pct:-0}" -ge 20 ] && [ "$pct" -le 45 ]; then
	ok "2 s of SCHED_FIFO count $pct % against iso_cpu (model 31 %)"
else
	not_ok "2 s of SCHED_FIFO count ${pct:-none} % against iso_cpu (want 20-45, model 31 %)"
fi

# iso_pair PCT WARM SECS: an ISO (_a) and a normal spinner (_b) on CPU 1
# with iso_cpu at PCT, measured as spin_pair does; _pct is the CPU's ISO
# use (percent of the window) at the end.
spin_iso() { exec taskset -c 1 python3 -c "$ISO_EXEC" sh -c 'while :; do :; done'; }
iso_pair() {
	echo "$1" >$K/sched_muqss_iso_cpu
	spin_pair "$2" "$3" spin_iso spin_normal 4
	_pct=$(field $_a muqss.cpu_iso_pct)
	_pol=$(field $_a policy)
	stop_pair
	echo "# iso_cpu $1: ISO (policy $_pol) $_ta ms, normal $_tb ms, CPU ISO use $_pct %"
}
iso_pair 100 1 3
set -- "$_ta" "$_tb" "$_pct"
if [ $(($2 * 50)) -le "$1" ] && [ "$3" -ge 30 ]; then
	ok "iso_cpu 100: an ISO spinner keeps a normal one off its CPU ($1 : $2 ms)"
else
	not_ok "iso_cpu 100: an ISO spinner keeps a normal one off its CPU ($1 : $2 ms, ISO use $3 %)"
fi
iso_pair 0 1 3
set -- "$_ta" "$_tb"
if [ $(($1 * 100)) -ge $(($2 * 60)) ] && [ $(($1 * 100)) -le $(($2 * 160)) ]; then
	ok "iso_cpu 0: an ISO spinner shares as a normal one ($1 : $2 ms)"
else
	not_ok "iso_cpu 0: an ISO spinner shares as a normal one ($1 : $2 ms, want 0.6-1.6)"
fi
iso_pair 50 4 6
set -- "$_ta" "$_tb"
share=$(($1 * 100 / ($1 + $2 > 0 ? $1 + $2 : 1)))
if [ $share -ge 62 ] && [ $share -le 86 ]; then
	ok "iso_cpu 50: the ISO spinner takes $share % (model 74 %)"
else
	not_ok "iso_cpu 50: the ISO spinner takes $share % (want 62-86, model 74 %; $1 : $2 ms)"
fi
echo 70 >$K/sched_muqss_iso_cpu

# The cap bounds the time ISO tasks run as ISO, not what they take: two
# unprivileged FIFO requests (ISO) beside a root nice-0 spinner on CPU 1
# run as ISO a little under 70 % of it and then as three normal tasks
# share the rest, so the nice-0 one gets about a tenth (model 10-12 %).
spin_iso_user() { exec $NOBODY chrt -f 1 taskset -c 1 sh -c 'while :; do :; done'; }
spin_iso_user &
i1=$!
spin_iso_user &
i2=$!
spin_normal &
n1=$!
sleep 4
set -- $(runtime $i1) $(runtime $i2) $(runtime $n1)
sleep 6
set -- $(($(runtime $i1) - $1)) $(($(runtime $i2) - $2)) $(($(runtime $n1) - $3))
kill $i1 $i2 $n1
wait $i1 $i2 $n1 2>/dev/null
share=$(($3 * 100 / ($1 + $2 + $3 > 0 ? $1 + $2 + $3 : 1)))
echo "# iso_cpu 70: two ISO spinners $1 and $2 ms, a nice-0 one $3 ms"
if [ $share -ge 5 ] && [ $share -le 18 ]; then
	ok "beside two ISO spinners a nice-0 one keeps $share % (model 10-12 %)"
else
	not_ok "beside two ISO spinners a nice-0 one keeps $share % (want 5-18, model 10-12 %)"
fi

# f. Sync wakeups. pingpong.py: 200 rounds of 20 one-byte pipe messages
# between two tasks on CPU 1. MuQSS skips try_preempt() for WF_SYNC, so
# the writer is switched out involuntarily only when its slice ends, not
# about once a message as when the wakeup preempts it.
# pingpong CLASS: run it under CLASS; "messages switches writer reader" in _pp.
pingpong() {
	echo "$1" >$K/sched_class
	_pp=$(python3 "$here/pingpong.py" --cpu 1 --rounds 200 --burst 20 |
		awk '{ print $2, $4, $6, $8 }')
	echo "# $1: messages, switches, writer and reader involuntary: $_pp"
}
pingpong cfs
set -- $_pp
cfs_sw=$2
pingpong muqss
set -- $_pp
if [ "$3" -le $(($1 / 20)) ]; then
	ok "a sync wakeup does not preempt the waker ($3 involuntary switches in $1 messages)"
else
	not_ok "a sync wakeup does not preempt the waker ($3 involuntary switches in $1 messages, want at most $(($1 / 20)))"
fi
# At most twice CFS's switches per message, plus 5 in 100.
if [ "$2" -le $((cfs_sw * 2 + $1 / 20)) ]; then
	ok "switches per pipe message: muqss $2, cfs $cfs_sw in $1"
else
	not_ok "switches per pipe message: muqss $2, cfs $cfs_sw in $1 (want at most twice CFS's + 5 %)"
fi

# g. yield_type 2: 20000 yields on CPU 1; right after the last one the
# yielder reads its own slice and deadline. The last yield drew a full
# slice (6291 us) and a deadline one nice-0 offset (41 091 us) after it,
# from a clock updated for it (the debug kernel warns on a stale one).
echo 2 >$K/sched_muqss_yield_type
set -- $(taskset -c 1 python3 -c 'import os
for _ in range(20000):
    os.sched_yield()
f = dict(map(str.strip, l.split(":", 1)) for l in open("/proc/self/sched") if ":" in l)
print(f["muqss.slice_us"], f["muqss.deadline_in_us"])')
echo 1 >$K/sched_muqss_yield_type
echo "# right after yield_type 2 yields: slice ${1:-?} us, deadline in ${2:-?} us"
if [ "${1:-0}" -ge 4000 ] && [ "${2:-0}" -ge 30000 ] && [ "${2:-99999}" -le 41100 ]; then
	ok "yield_type 2 renews the slice and deadline ($1 us left, deadline in $2 us)"
else
	not_ok "yield_type 2 renews the slice and deadline (slice ${1:-?} us, want >= 4000; deadline in ${2:-?} us, want 30000-41100)"
fi

# h. A spinner that may use CPUs 1 and 2, then a SCHED_FIFO spinner,
# started on CPU 3, moved onto its CPU: MuQSS's pick does not run while
# the realtime task does, so the put-back offers the waiting spinner to
# the other, idle CPU. The realtime task has done its exec (file reads)
# before it moves, and this shell forks nothing while the spinner waits
# (a fork here tells an idle CPU too). An idle CPU's own picks, woken by
# unrelated work, find a waiting task within tens of ms as well, so the
# outcome alone cannot tell the offer happened: a kprobe on the handler
# of MuQSS's kick (muqss_look_ipi) shows whether the CPU that took the
# spinner was told to look after the realtime task preempted it and
# before it took it.
T=/sys/kernel/tracing
mountpoint -q $T || mount -t tracefs none $T
echo 'p:muqss_look muqss_look_ipi' >>$T/kprobe_events
taskset -c 1,2 sh -c 'while :; do :; done' &
m=$!
chrt -f 50 taskset -c 3 sh -c 'while :; do :; done' &
rt=$!
sleep 0.5
echo 1 >$T/events/sched/sched_switch/enable
echo 1 >$T/events/kprobes/muqss_look/enable
# The spinner changes CPU whenever a kernel thread preempts it, so it may
# have left the CPU read just before the realtime task arrives there; the
# other CPU may be running a kernel thread then, not idle, so that nothing
# tells it; or, woken by its own interrupt at that moment, it may take
# the spinner before the kick's handler runs (about half the tries in
# which it was idle, here). A try shows the offer only when the kick's
# handler ran first, so the part starts again (the realtime task back on
# CPU 3) until one does, up to twelve times. On a kernel without the
# offer no try of 4 runs did.
# took: the CPU the realtime task replaced the spinner on, the first other
# CPU to switch to the spinner after that, and "told" (a look kick reached
# it in between), "not-told" (it was idle and no kick reached it) or
# "busy" (it was not idle); empty when the two never met. The switches to
# and from the idle task (pid 0) give each CPU's state.
echo "prev_pid == $m || next_pid == $m || prev_pid == 0 || next_pid == 0" \
	>$T/events/sched/sched_switch/filter
echo >$T/trace
took=""
tries=0
until [ "${took##* }" = told ] || [ $tries -ge 12 ]; do
	tries=$((tries + 1))
	[ -z "$took" ] || { taskset -pc 3 $rt >/dev/null; sleep 0.3; }
	echo "muqss-h try $tries" >$T/trace_marker
	c=$(cut -d' ' -f39 /proc/$m/stat)
	d0=$(cut -d' ' -f2 /proc/$m/schedstat)
	sleep 1 &
	sl=$!
	taskset -pc "$c" $rt >/dev/null
	wait $sl
	d1=$(cut -d' ' -f2 /proc/$m/schedstat)
	now=$(cut -d' ' -f39 /proc/$m/stat)
	took=$(awk -v m=$m -v rt=$rt -v try="muqss-h try $tries" '
		{ cpu = $0; sub(/^[^[]*\[/, "", cpu); cpu = substr(cpu, 1, 3) + 0 }
		index($0, try) { armed = 1; next }
		/sched_switch:/ && / next_pid=0 / { idle[cpu] = 1 }
		/sched_switch:/ && / prev_pid=0 / { idle[cpu] = 0 }
		!armed { next }
		/sched_switch:/ && c == "" && $0 ~ ("prev_pid=" m " ") && $0 ~ ("next_pid=" rt " ") {
			c = cpu
			for (i in idle)
				idle0[i] = idle[i]
			next
		}
		c != "" && /muqss_look:/ { kicked[cpu] = 1; next }
		c != "" && /sched_switch:/ && cpu != c && $0 ~ ("next_pid=" m " ") {
			print c, cpu, (cpu in kicked) ? "told" : idle0[cpu] ? "not-told" : "busy"
			done = 1
			exit
		}
		END { if (c != "" && !done) print c, "none", "-" }' $T/trace)
	echo "# try $tries: ${took:-the realtime task did not meet the spinner}"
	[ "$took" ] || took=" "
done
[ "$took" = " " ] && took=""
kill $rt $m
wait $rt $m 2>/dev/null
echo 0 >$T/events/kprobes/muqss_look/enable
echo 0 >$T/events/sched/sched_switch/enable
echo 0 >$T/events/sched/sched_switch/filter
echo '-:muqss_look' >>$T/kprobe_events
echo >$T/trace
echo 1 >$T/tracing_on
set -- ${took:-? none -}
waited=$(((d1 - d0) / 1000))
echo "# realtime task met the spinner on CPU $1 (try $tries); CPU $2 took it ($3); it waited $waited us, now on $now"
if [ "$2" != none ] && [ "$now" != "$1" ]; then
	ok "a task a realtime one keeps off CPU $1 moves to idle CPU $2 after waiting $waited us"
else
	not_ok "a task a realtime one keeps off CPU $1 moves to the idle CPU (${took:-the two never met in $tries tries}, now on $now)"
fi
if [ "$3" = told ]; then
	ok "the put-back told idle CPU $2 to look before it took the task"
else
	not_ok "the put-back told the idle CPU to look before it took the task (${took:-the two never met})"
fi

# i. rqshare. queues: the CPU whose queue each CPU uses, CPUs 0-7.
# The spinners of this part run on CPUs 5-6, in CPU 7's group.
taskset -pc 0 $$ >/dev/null
queues() {
	for c in 0 1 2 3 4 5 6 7; do
		taskset -c $c sed -n 's/^muqss.queue_cpu *: *//p' /proc/self/sched
	done | tr '\n' ' ' | sed 's/ $//'
}
# wait_queues WANT: a CPU brought online regroups from a work item.
wait_queues() {
	for _ in $(seq 40); do
		[ "$(queues)" = "$1" ] && break
		sleep 0.25
	done
}
MC="0 0 0 0 4 4 4 4"
check "$(cat $K/sched_muqss_rqshare)" mc "rqshare is mc, MuQSS's Kconfig default"
check "$(queues)" "$MC" "under mc the CPUs of each package share a queue"
echo none >$K/sched_muqss_rqshare
check "$(queues)" "0 1 2 3 4 5 6 7" "under none every CPU has its own queue"
echo all >$K/sched_muqss_rqshare
check "$(queues)" "0 0 0 0 0 0 0 0" "under all one queue serves every CPU"
check "$(dmesg | sed -n 's/.*sched: muqss: \(rqshare=.*\)/\1/p' | tail -1)" \
	"rqshare=all, 1 queue for 8 CPUs" "the regrouping's line counts one queue"
echo llc >$K/sched_muqss_rqshare
check "$(queues)" "$MC" "under llc the CPUs of each cache share a queue"
echo mc >$K/sched_muqss_rqshare
for v in bogus mc_llc MC; do rejects $K/sched_muqss_rqshare $v; done
# Spinners on CPUs 5-6 run on while CPU 4, whose queue they use, is
# offline; CPU 2 rejoins its package's queue when it comes back.
taskset -c 5,6 sh -c 'while :; do :; done' &
s1=$!
taskset -c 5,6 sh -c 'while :; do :; done' &
s2=$!
S=/sys/devices/system/cpu
echo 0 >$S/cpu4/online
echo 0 >$S/cpu2/online
r0=$(($(runtime $s1) + $(runtime $s2)))
sleep 1
r1=$(($(runtime $s1) + $(runtime $s2)))
check "$(taskset -c 5 sed -n 's/^muqss.queue_cpu *: *//p' /proc/self/sched)" 4 \
	"CPU 5 keeps the queue of CPU 4 while it is offline"
if [ $((r1 - r0)) -ge 1000 ]; then
	ok "two spinners on CPUs 5-6 ran $((r1 - r0)) ms in 1 s with CPU 4 offline"
else
	not_ok "two spinners on CPUs 5-6 ran $((r1 - r0)) ms in 1 s with CPU 4 offline (want >= 1000)"
fi
echo 1 >$S/cpu2/online
echo 1 >$S/cpu4/online
wait_queues "$MC"
check "$(queues)" "$MC" "CPUs 2 and 4 back online rejoin their queues"
kill $s1 $s2
wait $s1 $s2 2>/dev/null
echo cfs >$K/sched_class
# CFS tasks have no muqss lines: the regrouping's log says it. The queues
# are ungrouped from a work item after the switch (a fallback must not
# wait for the regrouping's locks).
ungrouped() { dmesg | sed -n 's/.*sched: muqss: \(rqshare=.*\)/\1/p' | tail -1; }
for _ in $(seq 40); do
	[ "$(ungrouped)" = "rqshare=none, 8 queues for 8 CPUs" ] && break
	sleep 0.25
done
check "$(ungrouped)" "rqshare=none, 8 queues for 8 CPUs" "under CFS no runqueue shares a lock"
echo muqss >$K/sched_class
check "$(queues)" "$MC" "back on muqss the packages share their queues again"
if dmesg | grep -q "sched: muqss: unknown rqshare \"bogus\""; then
	ok "a bad rqshare write is logged"
else
	not_ok "a bad rqshare write is logged"
fi

# j. An affinity change that takes a waiting or running task's CPU away
# moves it to an allowed CPU and offers it from there, as MuQSS's
# try_preempt() from the new queue does: a spinner beside another on
# CPU 1, restricted to the idle CPUs 2-3, runs there within an IPI's
# latency of its sched_migrate_task (tens of ms when nothing tells the
# CPU: only unrelated work wakes it). A task whose CPU stays allowed is
# left where it is, as in MuQSS; that is not pinned, for the same
# unrelated wakeups find it (muqss.rst, Tests).
# moved_wait PID: us from the move of PID off CPU 1 to its first switch in.
moved_wait() {
	awk -v p="$1" '{
		ts = ""
		for (i = 1; i <= NF; i++)
			if ($i ~ /^[0-9]+\.[0-9]+:$/)
				ts = substr($i, 1, length($i) - 1)
	}
	/sched_migrate_task:/ && $0 ~ (" pid=" p " ") && / orig_cpu=1 / && moved == "" {
		moved = ts
	}
	/sched_switch:/ && $0 ~ ("next_pid=" p " ") && moved != "" {
		printf "%d\n", (ts - moved) * 1000000
		exit
	}' $T/trace
}
# A host stall of the 8 vCPUs on 2 cores can hold one move beyond the
# bound (32 ms once under mc, CI): up to 3 tries, the first within it
# counts; a missing offer leaves every try to unrelated wakeups.
taskset -pc 7 $$ >/dev/null
for mode in mc none; do
	echo $mode >$K/sched_muqss_rqshare
	tries=""
	for try in 1 2 3; do
		taskset -c 1 sh -c 'while :; do :; done' &
		a=$!
		taskset -c 1 sh -c 'while :; do :; done' &
		b=$!
		sleep 0.5
		events_on sched/sched_switch sched/sched_migrate_task
		taskset -pc 2,3 $b >/dev/null
		sleep 0.5
		events_off sched/sched_switch sched/sched_migrate_task
		w=$(moved_wait $b)
		cpu=$(cut -d' ' -f39 /proc/$b/stat)
		kill $a $b
		wait $a $b 2>/dev/null
		tries="$tries ${w:-never}"
		[ -n "$w" ] && [ "$w" -le 25000 ] && [ "$cpu" -ge 2 ] && break
	done
	if [ -n "$w" ] && [ "$w" -le 25000 ] && [ "$cpu" -ge 2 ]; then
		ok "rqshare=$mode: a task moved off CPU 1 runs on CPU $cpu $w us after the move (us per try:$tries)"
	else
		not_ok "rqshare=$mode: a task moved off CPU 1 runs on CPU $cpu, us per try:$tries (want <= 25000)"
	fi
done
echo mc >$K/sched_muqss_rqshare

# k. Two root domains.
partition_checks muqss

tap_done
