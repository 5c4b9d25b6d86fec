#!/bin/sh
# In-guest TAP test of the ULE class in a guest booted with sched=ule:
#   a. every normal-policy task, kernel threads included, runs on ule and
#      its ule.* lines in /proc/<pid>/sched are consistent, most kernel
#      threads in the kernel band;
#   b. a sleeper (1 ms run, 9 ms sleep) becomes interactive (realtime
#      queue, priority 120-151) and a spinner batch (timeshare queue,
#      priority >= 152), each within 3 s; so does a sleeper of 0.1 ms runs
#      and 0.6 ms sleeps within 8 s (FreeBSD credits the tick boundaries a
#      sleep crosses, so sleeps shorter than a tick count);
#   c. the kernel.sched_ule_* sysctls: defaults, rejected writes, writes
#      that take effect (sched_ule_interact=0 makes the sleeper batch;
#      at 40 a nice -15 spinner is interactive, FreeBSD's score shortcut;
#      sched_ule_slice_us sets the minimum slice to a sixth of it);
#   d. a nice 19 spinner gets a larger (worse) priority than a nice 0 one;
#   e. the ule tracepoints: ule_interactive traces the sleeper's band
#      changes of b and c; spinners pinned to CPU 0 then unpinned are
#      stolen by idle CPUs at once, traced by ule_transfer with by=steal;
#   f. sched_ule_wakeup_gran_us: a sleeper waking beside a spinner gets the
#      CPU at once at 0, and a tick after the spinner has run 20 ms at 20000,
#      also while the spinner's policy flips between batch and normal, and
#      at once under kernel.sched_ule_strict=1 (FreeBSD's rules), which
#      also puts a spinner preempted by a local wakeup at the tail of its
#      list where the default puts it back at the head; under both a
#      reader woken by write() on its CPU runs when the writer returns to
#      user space, interactive or batch;
#   g. priority lending: a batch thread holding a PI mutex runs at the
#      priority of the interactive thread blocked on it, at its own after;
#   h. exit and fork: a dead child's run time goes to its parent, whose
#      score rises, and the parent's next child starts batch from that
#      history, also when the child's threads outlive its group leader;
#      a child forked by a second thread charges the main thread; a new
#      thread starts with its creator's whole history at no charge;
#   i. renice: a running spinner reniced below the one waiting beside it
#      keeps the CPU until its slice ends (FreeBSD's sched_nice() asks for
#      no switch);
#   j. idle stealing: a CPU that goes idle beside a busiest CPU whose
#      tasks may not come to it takes one from the next busiest in the same
#      domain (FreeBSD's tdq_idled() leaves the first out and searches
#      the level again).
# Usage: ule_checks.sh OUTDIR ULELOAD
out=${1:?usage: $0 OUTDIR ULELOAD}
uleload=${2:?usage: $0 OUTDIR ULELOAD}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/tap.sh"
. "$here/ule_lib.sh"
mkdir -p "$out"

# name=default
SYSCTLS="sched_ule_interact=30 sched_ule_slice_us=94488 sched_ule_slice_min_us=15748
sched_ule_balance_interval_ms=1000 sched_ule_steal_thresh=2 sched_ule_preempt_thresh=80
sched_ule_always_steal=0"
# name=value accepted and different from the default; with these slices
# slice_min_us stays below slice_us whatever the order of the writes.
VALID="sched_ule_interact=40 sched_ule_slice_us=78740 sched_ule_slice_min_us=7874
sched_ule_balance_interval_ms=500 sched_ule_steal_thresh=3 sched_ule_preempt_thresh=120
sched_ule_wakeup_gran_us=500 sched_ule_always_steal=1"
# Flip the policy of task argv[1] between batch and normal as fast as it goes.
FLIP='import os, sys
pid, zero = int(sys.argv[1]), os.sched_param(0)
while True:
    os.sched_setscheduler(pid, os.SCHED_BATCH, zero)
    os.sched_setscheduler(pid, os.SCHED_OTHER, zero)'
PF_KTHREAD=2097152	# 0x00200000, in field 9 (flags) of /proc/<pid>/stat

# consistent LO HI: the ule.* lines ule_read found are well-formed: the
# priority in LO-HI, the queue of that priority, score and %CPU as
# percentages, the slice at most kernel.sched_ule_slice_us.
consistent() {
	in_range "$u_prio" "$1" "$2" || return 1
	queue_of "$u_prio"
	[ "$u_queue" = "$q" ] && in_range "$u_score" 0 100 && in_range "$u_cpu_pct" 0 100 &&
		in_range "$u_slice" 0 "$max_slice" && is_int "$u_runtime" && is_int "$u_slptime"
}

echo "TAP version 13"
echo "1..80"

# a. Classes and the ule.* lines of every task.
check "$(cat $K/sched_class)" ule "kernel.sched_class is ule"
max_slice=$(cat $K/sched_ule_slice_us)
bad=""
badule=""
normal=0
kthreads=0
spent=""
others=0
for stat in /proc/[0-9]*/task/[0-9]*/stat; do
	dir=${stat%/stat}
	read -r line 2>/dev/null <"$stat" || continue
	ule_read "$dir/sched" || continue
	set -- ${line##*) }
	flags=$7
	id=${dir#/proc/}
	case $s_policy in
	0|3|5)
		normal=$((normal + 1))
		[ "$s_class" = ule ] || { bad="$bad $id:$s_class"; continue; }
		band="120 255"
		if [ $((flags & PF_KTHREAD)) -ne 0 ]; then
			kthreads=$((kthreads + 1))
			# The kernel band until a whole slice without
			# sleeping; then what its history gives, until
			# it next wakes.
			band="80 223"
			in_range "$u_prio" 120 223 && spent="$spent $id:$u_prio"
		fi
		[ "$s_policy" = 5 ] && band="224 255"	# SCHED_IDLE: the idle band
		consistent $band || badule="$badule $id:[$(ule_state)]"
		;;
	*)
		others=$((others + 1))
		case $s_class in rt|dl|stop) ;; *) bad="$bad $id:policy$s_policy:$s_class" ;; esac
		;;
	esac
done
echo "# $normal normal-policy tasks ($kthreads kernel threads), $others realtime or deadline tasks"
[ "$normal" -gt 0 ] || bad="no-normal-task-read"
check "$(echo ${bad:-none} | cut -d' ' -f1-10)" none \
	"every normal task is on ule, the others on rt/dl/stop"
if [ "$kthreads" -gt 0 ]; then
	ok "$kthreads normal-policy kernel threads seen"
else
	not_ok "normal-policy kernel threads seen (none)"
fi
check "$(echo ${badule:-none} | cut -d' ' -f1-40)" none \
	"ule.* lines consistent (kernel threads 80-223, SCHED_IDLE 224-255, others 120-255)"
nspent=$(echo $spent | wc -w)
if [ "$kthreads" -gt 0 ] && [ $((nspent * 4)) -le "$kthreads" ]; then
	ok "$((kthreads - nspent)) of $kthreads kernel threads in the kernel band 80-119 (above it:${spent:- none})"
else
	not_ok "most kernel threads in the kernel band 80-119 ($nspent of $kthreads above it:$spent)"
fi

# b. Interactive and batch. Both run on through c.
now_cs
start=$now
# The ule tracepoints record the sleeper's band changes (checked in e).
echo >$T/trace
echo 1 >$T/events/ule/enable
"$uleload" sleeper 1000 9000 120 >/dev/null &
sleeper=$!
"$uleload" spinner 120 >/dev/null &
spinner=$!
# 6 s: a host stall during its 1 ms bursts counts as the sleeper's run
# time (CI once saw score 30 at 3 s, interactive a second later).
if wait_ule /proc/$sleeper/sched realtime 120 151 "$start" 600; then
	ok "sleeper interactive after $waited cs: $(ule_state)"
else
	not_ok "sleeper interactive within 6 s: $(ule_state)"
fi
if wait_ule /proc/$spinner/sched timeshare 152 223 "$start" 300; then
	ok "spinner batch after $waited cs: $(ule_state)"
else
	not_ok "spinner batch within 3 s: $(ule_state)"
fi
# Let the spinner's history fill before comparing the two.
sleep 1
ule_read /proc/$sleeper/sched
s_score=$u_score s_cpu=$u_cpu_pct s_run=$u_runtime s_slp=$u_slptime
echo "# sleeper: $(ule_state)"
ule_read /proc/$spinner/sched
echo "# spinner: $(ule_state)"
if in_range "$s_score" 0 29 && in_range "$u_score" 30 100; then
	ok "ule.score: sleeper $s_score < 30 <= spinner $u_score"
else
	not_ok "ule.score: sleeper $s_score < 30 <= spinner $u_score"
fi
# Same age, so the recent %CPU compares whatever window it covers.
if is_int "$s_run" && is_int "$s_slp" && [ "$s_slp" -gt "$s_run" ] &&
	is_int "$u_runtime" && is_int "$u_slptime" && [ "$u_runtime" -gt "$u_slptime" ] &&
	is_int "$s_cpu" && is_int "$u_cpu_pct" && [ "$u_cpu_pct" -gt "$s_cpu" ]; then
	ok "history: the sleeper sleeps more than it runs, the spinner runs more and has more %CPU"
else
	got="sleeper $s_run/$s_slp/$s_cpu, spinner $u_runtime/$u_slptime/$u_cpu_pct"
	not_ok "history (runtime/slptime/cpu_pct): $got"
fi

# Sub-tick sleeps: 86 % asleep in 0.6 ms naps is interactive on FreeBSD
# (score 8; the emulator stretches the runs: 0.3/0.7 and 0.2/0.6 scored 29).
now_cs
start=$now
"$uleload" sleeper 100 600 20 >/dev/null &
short=$!
if wait_ule /proc/$short/sched realtime 120 151 "$start" 800; then
	ok "a sleeper of 0.1 ms runs and 0.6 ms sleeps is interactive after $waited cs: $(ule_state)"
else
	not_ok "a sleeper of 0.1 ms runs and 0.6 ms sleeps is interactive within 8 s: $(ule_state)"
fi
kill $short 2>/dev/null
wait $short 2>/dev/null

# c. Sysctls. The wakeup granularity defaults to CFS's on the same machine.
# (Not read with the read builtin: it reads a byte at a time and a sysctl
# file ends at the first read that does not start at offset 0.)
G=$K/sched_ule_wakeup_gran_us
gran=$(cat $G)
cfs_gran=$(cat /sys/kernel/debug/sched/wakeup_granularity_ns)
check "$gran" "$((cfs_gran / 1000))" "kernel.sched_ule_wakeup_gran_us defaults to CFS's granularity"
for kv in $SYSCTLS; do
	check "$(cat $K/${kv%=*})" "${kv#*=}" "kernel.${kv%=*} defaults to ${kv#*=}"
done
# rejects_einval NAME VALUE: the write fails with EINVAL, the value stays.
rejects_einval() {
	before=$(cat $K/$1)
	got=$("$uleload" write $K/$1 "$2")
	check "$got $(cat $K/$1)" "EINVAL $before" "kernel.$1 rejects '$2' with EINVAL"
}
for v in abc "" -1 101; do
	rejects_einval sched_ule_interact "$v"
done
rejects_einval sched_ule_preempt_thresh 256
rejects_einval sched_ule_preempt_thresh -1
rejects_einval sched_ule_wakeup_gran_us 1000001
check "$(cat $K/sched_ule_strict)" 0 "kernel.sched_ule_strict defaults to 0"
for v in 2 -1 abc; do
	rejects_einval sched_ule_strict "$v"
	rejects_einval sched_ule_always_steal "$v"
done
for name in sched_ule_slice_us sched_ule_slice_min_us sched_ule_balance_interval_ms \
	sched_ule_steal_thresh sched_ule_wakeup_gran_us; do
	rejects_einval $name abc
done
# FreeBSD's kern.sched.quantum (microseconds) sets the minimum slice too.
got=$("$uleload" write $K/sched_ule_slice_us 60000)
check "$got $(cat $K/sched_ule_slice_min_us)" "ok 10000" \
	"kernel.sched_ule_slice_us=60000 sets sched_ule_slice_min_us to 10000"
for kv in $VALID; do
	got=$("$uleload" write $K/${kv%=*} ${kv#*=})
	check "$got $(cat $K/${kv%=*})" "ok ${kv#*=}" "kernel.${kv%=*} takes ${kv#*=}"
done
# at_interact N PID QUEUE LO HI WHAT: with sched_ule_interact set to N,
# task PID reaches QUEUE at a priority in LO-HI within 3 s.
at_interact() {
	echo "$1" >$K/sched_ule_interact
	now_cs
	if wait_ule /proc/$2/sched "$3" "$4" "$5" "$now" 300; then
		ok "sched_ule_interact=$1: $6 after $waited cs"
	else
		not_ok "sched_ule_interact=$1: $6 within 3 s: $(ule_state)"
	fi
}
# Nothing is interactive below a threshold of 0, so the sleeper turns
# batch at its next wakeup; back at 30 it is interactive again.
at_interact 0 $sleeper timeshare 152 223 "sleeper batch"
at_interact 30 $sleeper realtime 120 151 "sleeper interactive again"
# At a threshold of 50 or less FreeBSD scores a task that runs at least as
# long as it sleeps 50 without working out the ratio, so nice alone
# decides: at 40 a nice -15 spinner scores 35 and is interactive (120:
# 32 interactive priorities over 40 scores round to 0 per score); at 30
# it is batch. The full ratio (about 100 here) would keep it batch.
taskset -c 1 nice -n -15 "$uleload" spinner 20 >/dev/null &
hog=$!
# The 3 s start once it spins: its exec reads uleload over 9p, and one CI
# run's read stalled for more than 6 s, asleep, before it ran at all.
i=0
until [ "$(cat /proc/$hog/comm 2>/dev/null)" = uleload ] &&
	[ "$(cut -d' ' -f3 /proc/$hog/stat)" = R ] || [ $i -ge 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
at_interact 40 $hog realtime 120 120 "a nice -15 spinner interactive"
at_interact 30 $hog timeshare 152 223 "the nice -15 spinner batch"
kill $hog
wait $hog 2>/dev/null
kill $sleeper $spinner
wait $sleeper $spinner 2>/dev/null
# e. ule:ule_interactive saw the sleeper turn batch and interactive.
for band in batch interactive; do
	if grep -q "ule_interactive: pid=$sleeper .* now=$band" $T/trace; then
		ok "ule_interactive traced the sleeper turning $band"
	else
		not_ok "ule_interactive traced the sleeper turning $band"
		grep "ule_interactive: pid=$sleeper " $T/trace | tail -5 | sed 's/^/# /'
	fi
done
for kv in $SYSCTLS; do
	echo "${kv#*=}" >$K/${kv%=*}
done
echo "$gran" >$G
vals=""
for kv in $SYSCTLS; do
	vals="$vals ${kv%=*}=$(cat $K/${kv%=*})"
done
check "$(echo $vals) $(cat $G)" "$(echo $SYSCTLS) $gran" "defaults restored"

# d. Nice: both spinners at 100 % of a CPU of their own, so only nice
# separates their priorities.
now_cs
start=$now
taskset -c 2 "$uleload" spinner 20 >/dev/null &
nice0=$!
taskset -c 3 nice -n 19 "$uleload" spinner 20 >/dev/null &
nice19=$!
if wait_ule /proc/$nice0/sched timeshare 152 223 "$start" 500 &&
	wait_ule /proc/$nice19/sched timeshare 152 223 "$start" 500; then
	ok "nice 0 and nice 19 spinners batch after $waited cs"
else
	not_ok "nice 0 and nice 19 spinners batch within 5 s"
fi
sleep 1
worse=0
seen=""
for i in 1 2 3; do
	ule_read /proc/$nice0/sched
	p0=$u_prio
	ule_read /proc/$nice19/sched
	p19=$u_prio
	seen="$seen $p0/$p19"
	is_int "$p0" && is_int "$p19" && [ "$p19" -gt "$p0" ] && worse=$((worse + 1))
	sleep 0.2
done
check "$worse" 3 "nice 19 spinner's ule.prio above nice 0's (nice 0/19:$seen)"
kill $nice0 $nice19
wait $nice0 $nice19 2>/dev/null

# e. Idle stealing: 4 spinners on CPU 0 while the other CPUs idle; once
# unpinned (SIGUSR1), idle CPUs take them within 2 s, each move traced.
echo >$T/trace
taskset -c 0 "$uleload" spinners 4 8 >/dev/null &
pinned=$!
sleep 1
kill -USR1 $pinned
sleep 2
steals=$(grep -c "ule_transfer: .* src=0 .* by=steal" $T/trace)
want=$(($(nproc) - 1))
[ $want -gt 3 ] && want=3
if [ "$steals" -ge $want ]; then
	ok "ule_transfer: $steals steals from CPU 0 within 2 s of unpinning"
else
	not_ok "ule_transfer: $steals steals from CPU 0 within 2 s of unpinning (want >= $want)"
	grep "ule_transfer" $T/trace | tail -10 | sed 's/^/# /'
fi
echo 0 >$T/events/ule/enable
kill $pinned 2>/dev/null
wait $pinned 2>/dev/null

# f. Wakeup granularity. A sleeper (1 ms run, 9 ms sleep) turns
# interactive alone on CPU 2, then joins a batch spinner on CPU 1. At 0 its
# wakeups preempt the spinner at once; at 20000 each waits until the
# spinner has run 20 ms since it got the CPU (the 9 ms sleep and about 11
# more), and then the tick preempts it; without that tick it would wait
# for the end of the spinner's slice (94 ms at a load of 2).
now_cs
start=$now
taskset -c 1 "$uleload" spinner 180 >/dev/null &
spinner=$!
taskset -c 2 "$uleload" sleeper 1000 9000 180 >$out/lateness.txt &
sleeper=$!
wait_ule /proc/$spinner/sched timeshare 152 223 "$start" 500 || echo "# spinner not batch"
wait_ule /proc/$sleeper/sched realtime 120 151 "$start" 1000 || echo "# sleeper not interactive"
taskset -p -c 1 $sleeper >/dev/null
reports=0
# report: SIGUSR1 to the sleeper; wait (up to 2 s) for the line it prints.
report() {
	kill -USR1 $sleeper
	reports=$((reports + 1))
	i=0
	while [ "$(grep -c late_med_us $out/lateness.txt)" -lt $reports ] && [ $i -lt 20 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}
# A third round at 20000 flips the spinner between SCHED_BATCH and
# SCHED_OTHER from CPU 0 all along: setting the running task again after a
# policy change must neither restart its 20 ms nor drop the waiting
# preemption, or the sleeper waits for the end of the slice.
# A fourth at 20000 sets kernel.sched_ule_strict, FreeBSD's rules: no
# granularity, so the sleeper is back as at 0.
for g in 0 20000 flips strict; do
	flipper=""
	lbl=$g
	case $g in
	flips)
		echo 20000 >$G
		taskset -c 0 python3 -c "$FLIP" $spinner &
		flipper=$!
		lbl="20000 (policy flipping)"
		;;
	strict)
		echo 20000 >$G
		echo 1 >$K/sched_ule_strict
		lbl="20000 (sched_ule_strict=1)"
		;;
	*) echo $g >$G ;;
	esac
	sleep 0.5
	report
	sleep 4
	report
	late=$(sed -n 's/^late_med_us //p' $out/lateness.txt | tail -1)
	med=${late%% *}
	echo "# wakeup_gran_us=$lbl: lateness median ${med}us, p90 ${late##* }us; $(ule_read /proc/$sleeper/sched && ule_state)"
	case $g in
	0 | strict) lo=0 hi=3000 ;;
	*) lo=6000 hi=19000 ;;
	esac
	# Flips that restarted the 20 ms or dropped the preemption left one
	# wakeup in ten waiting for the end of the 94 ms slice (p90 ~90 ms).
	p90=${late##* }
	if [ $g = flips ] && ! in_range "$p90" 0 40000; then
		not_ok "wakeup_gran_us=$lbl: sleeper back on the CPU with a p90 of ${p90}us (want <= 40000)"
	elif in_range "$med" $lo $hi; then
		ok "wakeup_gran_us=$lbl: sleeper back on the CPU a median ${med}us late (p90 ${p90}us)"
	else
		not_ok "wakeup_gran_us=$lbl: sleeper back on the CPU a median ${med}us late (want $lo-$hi)"
	fi
	[ -n "$flipper" ] && kill $flipper && wait $flipper 2>/dev/null
done
echo "$gran" >$G
# Requeue position. A second batch spinner joins CPU 1; each wakeup of the
# sleeper preempts one spinner. By default the preempted one goes back to
# the head of its list and runs again after the sleeper; under
# sched_ule_strict a local wakeup is TDF_NEEDRESCHED, not SW_PREEMPT, so it
# goes back to a calendar slot by its priority, as a slice end does, and
# the other spinner runs when its slot comes first (about a third of the
# time; 87 % against 71 % in one run). same_after STRICT: the share
# (%) of the sleeper's runs after which the spinner before it runs again,
# from 2 s of sched_switch on CPU 1.
taskset -c 1 "$uleload" spinner 180 >/dev/null &
spinner2=$!
now_cs
wait_ule /proc/$spinner2/sched timeshare 152 223 "$now" 500 || echo "# second spinner not batch"
same_after() {
	echo "$1" >$K/sched_ule_strict
	sleep 0.5
	events_on sched/sched_switch
	sleep 2
	events_off sched/sched_switch
	same=$(awk -v a=$spinner -v b=$spinner2 -v c=$sleeper '
		/sched_switch:/ {
			prev = next_ = ""
			for (i = 1; i <= NF; i++) {
				if ($i ~ /^prev_pid=/) prev = substr($i, 10)
				if ($i ~ /^next_pid=/) next_ = substr($i, 10)
			}
			if (next_ == c && (prev == a || prev == b))
				before = prev
			else if (prev == c && before != "" && (next_ == a || next_ == b)) {
				runs++
				if (next_ == before)
					again++
				before = ""
			}
		}
		END { print runs ? int(100 * again / runs) " " runs : "-1 0" }
	' $T/per_cpu/cpu1/trace)
	echo "# sched_ule_strict=$1: the preempted spinner ran again after ${same% *} % of ${same#* } sleeper runs"
	same=${same% *}
}
same_after 0
default_same=$same
same_after 1
strict_same=$same
echo 0 >$K/sched_ule_strict
if [ "$default_same" -ge 70 ] && [ "$strict_same" -ge 0 ] &&
	[ "$strict_same" -le $((default_same - 8)) ]; then
	ok "a preempted spinner goes back to the head ($default_same %), not under sched_ule_strict ($strict_same %)"
else
	not_ok "a preempted spinner goes back to the head ($default_same %, want >= 70), not under sched_ule_strict ($strict_same %, want <= $((default_same - 8)))"
fi
kill $spinner $spinner2 $sleeper
wait $spinner $spinner2 $sleeper 2>/dev/null
# When a wakeup from a system call switches. A batch sender writes 256 KiB
# at a time to a unix socket whose reader shares CPU 1, interactive or
# SCHED_BATCH with a better priority than the sender's. As on FreeBSD
# (TDF_NEEDRESCHED, taken at userret) the reader gets the CPU on the
# sender's way back to user space: under sched_ule_strict through the
# deferral, by default because the sender preempted in the kernel runs
# boosted until then. A batch sender put back at the head of the calendar
# slot being drained would be picked again, and a batch reader wait for
# the end of its slice.
for strict in 0 1; do
	echo $strict >$K/sched_ule_strict
	for reader in interactive batch; do
		b=$(taskset -c 1 "$uleload" burst 256 5 ${reader#interactive} | grep '^bursts ')
		echo "# sched_ule_strict=$strict, $reader reader: $b"
		set -- $b
		bursts=${2:-0} back=${6:-0}
		msg="sched_ule_strict=$strict: a reader ($reader) woken by write() on its CPU runs on the writer's way back to user space in $back of $bursts bursts"
		if [ "$bursts" -ge 20 ] && [ $((5 * back)) -ge $((4 * bursts)) ]; then
			ok "$msg"
		else
			not_ok "$msg (want 20 or more, at least four fifths)"
		fi
	done
done
echo 0 >$K/sched_ule_strict
# g. Priority lending (FreeBSD's sched_lend_prio() through turnstiles; here
# rt_mutex, i.e. PI futexes): a batch owner spins holding the mutex; once
# the waiter is interactive it blocks on it, and the owner runs at the
# waiter's priority until it unlocks 5 s later. Both on CPU 1: with the
# owner on another CPU the waiter would spin in rt_mutex's adaptive wait
# and turn batch instead of blocking.
pi_start $out/pi.txt
sleep 0.5
ule_read /proc/$pi/task/$waiter/sched
wprio=$u_prio
ule_read /proc/$pi/task/$owner/sched
echo "# owner: $(ule_state); waiter prio $wprio"
if in_range "$wprio" 120 151 && [ "$u_prio" = "$wprio" ]; then
	ok "the PI mutex's owner runs at its waiter's priority $wprio"
else
	not_ok "the PI mutex's owner runs at its waiter's priority (owner $u_prio, waiter $wprio)"
fi
check "$(wait_line $out/pi.txt unlocked 50)" "$owner" "the owner unlocks"
sleep 0.5
ule_read /proc/$pi/task/$owner/sched
if in_range "$u_prio" 152 223; then
	ok "after unlocking, the owner is batch again: prio $u_prio"
else
	not_ok "after unlocking, the owner is batch again: $(ule_state)"
fi
grep "lock failed" $out/pi.txt | sed 's/^/# /'
kill $pi 2>/dev/null
wait $pi 2>/dev/null

# h. Exit and fork (FreeBSD's sched_exit and sched_fork): a parent sleeps
# 4 s (interactive), waits for 8 threads spinning 1 s, then forks a sleep.
# The dead child's run time, 8 s against the parent's 1 s wait, raises the
# parent's score, and the sleep starts from the parent's history: batch,
# where a fresh history would be interactive. (Why a frame task started
# right after a CPU-heavy benchmark misses frames at first:
# reproduction.rst, bmq-thesis.) Again with threads that outlive their
# group leader: FreeBSD gives an exiting thread's time to the oldest one
# left, and the last one's to the parent, so all of it reaches the parent
# there too. Last, a child forked by a second thread while the main thread
# sleeps: FreeBSD charges the parent process's first thread
# (FIRST_THREAD_IN_PROC), not the thread that forked.
# exit_history "UL_ARGS" WHAT: the three checks, the child "uleload UL_ARGS".
exit_history() {
	sh -c 'sleep 4; "$1" $2 >/dev/null; sleep 5; :' sh "$uleload" "$1" &
	parent=$!
	sleep 4.5
	ule_read /proc/$parent/sched
	run0=$u_runtime
	score0=${u_score:-0}
	echo "# $2: the parent while its child spins: $(ule_state)"
	interact=$(cat $K/sched_ule_interact)
	if is_int "$u_score" && [ "$u_score" -le "$interact" ]; then
		ok "$2: a parent that slept 4 s is interactive (score $u_score)"
	else
		not_ok "$2: a parent that slept 4 s is interactive (score ${u_score:-none})"
	fi
	i=0
	child=""
	while [ -z "$child" ] && [ $i -lt 50 ]; do
		sleep 0.1
		child=$(pgrep -P $parent -x sleep)
		i=$((i + 1))
	done
	ule_read /proc/$parent/sched
	echo "# $2: the parent after: $(ule_state)"
	# Only sleeping itself, the parent could only have become more
	# interactive; run time and sleep time are rescaled past 5 s
	# together, so the score, not the run time, shows what it was given.
	# Where it ends depends on how the child's history was capped:
	# 36-38 joined, 35-39 outliving (FreeBSD's arithmetic, ule.rst).
	if is_int "$u_score" && [ "$u_score" -ge $((score0 + 10)) ]; then
		ok "$2: a dead child's run time goes to its parent (score $score0 -> $u_score)"
	else
		not_ok "$2: a dead child's run time goes to its parent (score $score0 -> ${u_score:-none}, run time ${run0:-none} -> ${u_runtime:-none} us)"
	fi
	ule_read /proc/${child:-0}/sched
	echo "# $2: the next child: $(ule_state)"
	if is_int "$u_score" && [ "$u_score" -gt "$interact" ]; then
		ok "$2: the next child starts batch, from its parent's history (score $u_score)"
	else
		not_ok "$2: the next child starts batch, from its parent's history (score ${u_score:-none})"
	fi
	kill $parent $child 2>/dev/null
	wait $parent 2>/dev/null
}
exit_history "spinners 8 1" "threads joined"
exit_history "orphans 8 1" "threads outliving their leader"
set -- $("$uleload" forker 1)
echo "# forked from a second thread, ule.score before -> after: main $3 -> $4, forker $6 -> $7"
if [ "$1" = scores ] && is_int "$3" && is_int "$4" && [ "$4" -ge $(($3 + 10)) ]; then
	ok "a child forked by another thread charges the main thread (score $3 -> $4)"
else
	not_ok "a child forked by another thread charges the main thread (score ${3:-none} -> ${4:-none})"
fi
if [ "$1" = scores ] && is_int "$6" && is_int "$7" && [ "$7" -le "$6" ]; then
	ok "and not the thread that forked it (score $6 -> $7)"
else
	not_ok "and not the thread that forked it (score ${6:-none} -> ${7:-none})"
fi
# Threads are not processes: FreeBSD's thread creation is
# sched_fork_thread() alone, the creator's whole history and no charge
# (a process fork charges the parent 7.87 ms and cuts the child's to 0.5 s).
# The creator's own run time for 32 pthread_create() calls is 50-55 ms
# here; 32 charges would add 252 ms, so half of that tells them apart.
set -- $("$uleload" spawn 32)
echo "# 32 threads created: main runtime_us $2 -> $3, slptime_us $4; first thread runtime_us $6, slptime_us $7"
if [ "$1" = main ] && is_int "$2" && is_int "$3" && [ $(($3 - $2)) -lt $((32 * 7874 / 2)) ]; then
	ok "creating 32 threads does not charge their creator ($2 -> $3 us run)"
else
	not_ok "creating 32 threads does not charge their creator (${2:-none} -> ${3:-none} us run)"
fi
if [ "$1" = main ] && is_int "$4" && is_int "$7" && [ "$7" -gt 600000 ] &&
	[ $(($7 * 10)) -ge $(($4 * 9)) ]; then
	ok "a new thread inherits its creator's whole history ($7 of $4 us slept)"
else
	not_ok "a new thread inherits its creator's whole history (${7:-none} of ${4:-none} us slept)"
fi

# i. Renice. Two spinners share CPU 2; when the first has just got the
# CPU, another CPU renices it from 0 to 19. FreeBSD's sched_nice() only
# updates its priority: the second, now better, waits for the end of the
# first's slice (the whole slice_us, as one other task waits: 88-95 ms
# median in two runs). CFS and an immediate switch give it the CPU within
# the reschedule IPI: 1-10 ms median on a busy host.
set -- $("$uleload" renice 2 15)
echo "# renice 0 -> 19 of the running spinner, the other's wait: $*"
if [ "$1" = renice ] && is_int "$3" && [ "$3" -ge 10 ] &&
	in_range "$5" $((max_slice / 2)) $((2 * max_slice)); then
	ok "a reniced running spinner keeps the CPU until its slice ends (median wait $5 us of $3 trials)"
else
	not_ok "a reniced running spinner keeps the CPU until its slice ends (median wait ${5:-none} us of ${3:-no} trials, want $((max_slice / 2))-$((2 * max_slice)))"
fi

# j. Idle stealing past a CPU with nothing to give this one. In CPU 0's
# smallest domain (0-3 on 2x4): CPU 1 runs 3 spinners allowed on 1 and
# 3, CPU 2 two allowed on 0 and 2, CPU 3 one of its own, CPU 0 one of
# its own; all placed pinned, then widened. The balancer is held off, so
# when CPU 0's spinner ends, only its idle steal can take CPU 2's
# waiting spinner; the search first finds CPU 1, whose tasks may not
# come. Before, it went on to the next domain, found CPU 1 again and
# left CPU 0 idle.
interval=$(cat $K/sched_ule_balance_interval_ms)
echo 60000 >$K/sched_ule_balance_interval_ms
sleep 2
taskset -c 1 "$uleload" spinners 3 60 >/dev/null &
b=$!
taskset -c 2 "$uleload" spinners 2 60 >/dev/null &
c=$!
taskset -c 3 "$uleload" spinner 60 >/dev/null &
d=$!
taskset -c 0 "$uleload" spinner 60 >/dev/null &
a=$!
sleep 1
taskset -a -p -c 1,3 $b >/dev/null
taskset -a -p -c 0,2 $c >/dev/null
sleep 1
echo >$T/trace
echo 1 >$T/events/ule/ule_transfer/enable
kill $a
sleep 1
echo 0 >$T/events/ule/ule_transfer/enable
if grep -q "ule_transfer: .* src=2 dst=0 .* by=steal" $T/trace; then
	ok "idle CPU 0 stole from CPU 2 past CPU 1, whose tasks may not run on it"
else
	not_ok "idle CPU 0 stole from CPU 2 past CPU 1, whose tasks may not run on it"
	grep "ule_transfer" $T/trace | tail -5 | sed 's/^/# /'
	echo "# CPUs of CPU 2's spinners: $(cpus_of $c "$(ls /proc/$c/task)")"
fi
kill $b $c $d 2>/dev/null
wait $a $b $c $d 2>/dev/null
echo "$interval" >$K/sched_ule_balance_interval_ms
tap_done
