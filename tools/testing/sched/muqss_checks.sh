#!/bin/sh
# In-guest TAP test of the MuQSS class (Documentation/scheduler/muqss.rst),
# booted with sched=muqss:
#   a. every normal task runs on muqss, with muqss.* lines in
#      /proc/<pid>/sched; the sysctls reject out-of-range values;
#   b. nice 0 and nice 19 spinners on one CPU share it as MuQSS's
#      deadlines give (about 34:1; CFS's weights give 68:1);
#   c. a task that sleeps keeps its deadline and the rest of its slice;
#   d. spinners started on one CPU reach the idle CPUs through the pick's
#      look across queues (no periodic balancer).
# Usage: muqss_checks.sh
here=$(cd "$(dirname "$0")" && pwd)
K=/proc/sys/kernel
. "$here/tap.sh"

echo "TAP version 13"
echo "1..11"
# Keep this shell and its helpers off CPU 1, which part b measures.
taskset -pc 0 $$ >/dev/null
field() { sed -n "s/^$2 *: *//p" /proc/$1/sched; }
# Run time in ms, from the scheduler's own count: the tick-sampled times of
# /proc/PID/stat counted the nice 19 spinner's short turns twice as often.
runtime() { field $1 se.sum_exec_runtime | cut -d. -f1; }

# a. Every normal task on muqss.
check "$(cat $K/sched_class)" muqss "kernel.sched_class reads muqss"
other=0
for d in /proc/[0-9]*; do
	pol=$(sed -n 's/^policy *: *//p' $d/sched 2>/dev/null)
	cls=$(sed -n 's/^class *: *//p' $d/sched 2>/dev/null)
	[ "$pol" = 0 ] || [ "$pol" = 3 ] || [ "$pol" = 5 ] || continue
	[ "$cls" = muqss ] || other=$((other + 1))
done
check "$other" 0 "every normal task is on muqss"
check "$(field self muqss.ratio) $(field self muqss.queued)" "836 running" \
	"muqss lines of a running nice-0 task"
for v in 0 1001 abc; do rejects $K/sched_muqss_rr_interval_ms $v; done
rejects $K/sched_muqss_interactive 2
rejects $K/sched_muqss_yield_type 3

# b. nice 0 and 19 on CPU 1 for 6 s.
taskset -c 1 sh -c 'while :; do :; done' &
a=$!
taskset -c 1 nice -n 19 sh -c 'while :; do :; done' &
b=$!
sleep 1
a0=$(runtime $a)
b0=$(runtime $b)
sleep 5
ta=$(($(runtime $a) - a0))
tb=$(($(runtime $b) - b0))
kill $a $b
wait $a $b 2>/dev/null
tb=$((tb > 0 ? tb : 1))
ratio=$((ta / tb))
echo "# nice 0: $ta ms, nice 19: $tb ms"
if [ $ratio -ge 22 ] && [ $ratio -le 50 ]; then
	ok "nice 0 : nice 19 = $ratio : 1 (MuQSS 34, CFS 68)"
else
	not_ok "nice 0 : nice 19 = $ratio : 1 (want 22-50; MuQSS 34, CFS 68)"
fi

# c. A sleeper keeps its deadline and the rest of its slice: sampled
# asleep every 0.6 s once its start-up (more than a slice) is over. Each
# wakeup uses some of the slice, and a used-up slice brings a new deadline
# (the slice read then is larger): between samples where the slice only
# shrank, the deadline must be the same.
python3 -c 'import time
while True:
    time.sleep(0.5)' &
s=$!
sleep 3
kept=0
renewed=0
moved=""
prev=""
for i in 1 2 3 4 5 6 7; do
	cur="$(field $s muqss.deadline_ns) $(field $s muqss.slice_us)"
	if [ -n "$prev" ]; then
		set -- $prev $cur
		if [ "$4" -gt "$2" ]; then
			renewed=$((renewed + 1))
		elif [ "$3" = "$1" ]; then
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
	not_ok "a sleeper keeps its deadline while its slice lasts (kept $kept, moved:${moved:- none})"
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

tap_done
