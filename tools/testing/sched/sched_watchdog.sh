#!/bin/sh
# In-guest TAP test of the stall watchdog and sysrq-S
# (Documentation/scheduler/sched-class-select.rst, "Stall watchdog").
# Usage: sched_watchdog.sh CLASS   (boot with sched=CLASS, 2 CPUs or more)
#
# A broken class: a spinner pinned to CPU 1 that its class's pick passes
# over (debugfs sched/inject_stall_pid), so CPU 1 idles while it waits. The
# watchdog must leave it alone when off, fall back to cfs within the
# timeout plus 1 s when on, for root's task and an unprivileged user's,
# and time a stall that goes on across a switch to the other class from
# the switch. Starvation by the class's own rules is no stall: a spinner
# CLASS ranks below a hog on its CPU (ULE, MuQSS: SCHED_IDLE; BMQ: nice
# 19, levels below a nice-0 hog) starves with the watchdog on, as root's
# and as uid 65534's. sysrq-S must fall back while such a load keeps a
# shell from running; the tick must ask for the fallback when the checks
# themselves stop. With 1000 threads waiting behind a hog on CPU 1, which
# the checks look at in batches, nothing falls back, and a stall among
# them still does.
cls=${1:?usage: $0 CLASS TASKS_BIN}
tasks=${2:?usage: $0 CLASS TASKS_BIN}
. "$(dirname "$0")/tap.sh"
. "$(dirname "$0")/class_lib.sh"
K=/proc/sys/kernel/sched_class
W=/proc/sys/kernel/sched_watchdog_ms
LIMIT=2000

echo "TAP version 13"
echo "1..52"

watchdog_lines() { dmesg | grep -c "sched: watchdog:"; }
INJECT=/sys/kernel/debug/sched/inject_stall_pid
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
hog=""

# stall [USER-PREFIX]: a victim on CPU 1 that the class's pick passes over;
# sets victim. It is broken only once it spins in user space: starved
# inside its exec it could hold the shell binary's i_mmap_rwsem, and every
# later fork of this script would wait for it.
stall() {
	victim_on_cpu1 "$@"
	echo $victim >$INJECT
}
# victim_on_cpu1 [USER-PREFIX]: a spinner on CPU 1, returned once it spins
# in user space.
victim_on_cpu1() {
	$1 taskset -c 1 sh -c 'while :; do :; done' &
	victim=$!
	_i=0
	until grep -q while /proc/$victim/cmdline 2>/dev/null || [ $_i -ge 100 ]; do
		sleep 0.05
		_i=$((_i + 1))
	done
	sleep 0.2
}
hog_on_cpu1() {
	$1 taskset -c 1 sh -c 'while :; do :; done' &
	hog=$!
}
unstall() {
	echo 0 >$INJECT
	kill $hog $victim 2>/dev/null
	wait $hog $victim 2>/dev/null
	hog=""
}
# wait_ready FILE: until the tasks program says "ready" in FILE, 60 s at
# most.
wait_ready() {
	_i=0
	while ! grep -q ready "$1" 2>/dev/null && [ $_i -lt 600 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
}
# to_class NAME: kernel.sched_class reads cfs as soon as a fallback has
# published it, and refuses writes (EBUSY) until the fallback is done.
to_class() {
	_i=0
	until (echo "$1" >$K) 2>/dev/null || [ $_i -ge 100 ]; do
		sleep 0.05
		_i=$((_i + 1))
	done
}
trap 'echo 0 >$INJECT; kill $hog $victim $spinners $shell $many 2>/dev/null' EXIT

# wait_for_cfs SECONDS: polls kernel.sched_class; sets waited (centis).
wait_for_cfs() {
	now_cs
	_start=$now
	while [ "$(cat $K)" != cfs ] && [ "$now" -lt $((_start + $1 * 100)) ]; do
		sleep 0.05
		now_cs
	done
	now_cs
	waited=$((now - _start))
}

check "$(cat $K)" "$cls" "booted on $cls"
check "$(cat $W)" 30000 "kernel.sched_watchdog_ms defaults to 30000"
for bad in abc -1 1 99 3600001 ""; do
	rejects $W "$bad"
done
check "$(cat $INJECT)" 0 "no stall is injected at boot"
for bad in abc -1 99999999; do
	rejects $INJECT "$bad"
done

# starve USER-PREFIX WHO: a victim CLASS ranks below a nice-0 hog on CPU 1,
# both WHO's, starves for longer than the timeout with the watchdog on,
# and the watchdog leaves it: the class does what its rules say.
starve() {
	to_class "$cls"
	echo $LIMIT >$W
	_lines=$(watchdog_lines)
	victim_on_cpu1 "$1"
	case $cls in
	bmq) $1 renice -n 19 -p $victim >/dev/null ;;
	*) $1 chrt -i -p 0 $victim >/dev/null ;;
	esac
	hog_on_cpu1 "$1"
	sleep 1
	cpu_ns $victim; r0=$ns
	sleep $((LIMIT / 1000 + 2))
	cpu_ns $victim; r1=$ns
	echo "# $2's demoted victim $victim beside a hog: ${r0} ns -> ${r1} ns in $((LIMIT / 1000 + 2)) s"
	check "$r1" "$r0" "$2's demoted victim starves on $cls"
	check "$(cat $K)/$(($(watchdog_lines) - _lines))" "$cls/0" \
		"$2's starvation by $cls's own rules is no stall: still on $cls, nothing logged"
	unstall
}
starve "" root
starve "$NOBODY" "uid 65534"

# Off: the victim starves and nothing happens.
echo 0 >$W
check "$(cat $W)" 0 "the watchdog can be turned off"
stall
sleep 1
cpu_ns $victim; r0=$ns
sleep 4
cpu_ns $victim; r1=$ns
echo "# victim $victim: ${r0} ns -> ${r1} ns in 4 s"
check "$r1" "$r0" "watchdog off: the victim gets no CPU for 4 s"
check "$(cat $K)/$(watchdog_lines)" "$cls/0" "watchdog off: still on $cls, nothing logged"

# On, with a stall older than the timeout: the next check falls back.
# Timed by the log line's printk stamp against the uptime at the write
# (both guest time): this shell's polling lags on a busy host. The bound
# is the timeout itself: a watchdog that restarted the stall's clock when
# armed could not log before it, while a check every LIMIT/8 logs in a
# few hundred ms unless the host deschedules the guest.
now_cs
set_at=$now
echo $LIMIT >$W
wait_for_cfs 3
logged=$(dmesg | grep "sched: watchdog: $cls left .*\[$victim\]" | tail -1 |
	sed -n 's/^\[ *\([0-9]*\)\.\([0-9][0-9]\).*/\1\2/p')
echo "# fell back ${waited}0 ms after the watchdog was set, logged after $((${logged:-0} - set_at))0 ms"
check "$(cat $K)" cfs "an old stall falls back to cfs"
[ -n "$logged" ] && [ $((logged - set_at)) -lt $((LIMIT / 10)) ] &&
	ok "before a fresh timeout of turning the watchdog on" ||
	not_ok "before a fresh timeout of turning the watchdog on (logged after $((${logged:-0} - set_at))0 ms)"
line=$(dmesg | grep "sched: watchdog:" | tail -1)
echo "# $line"
case $line in
*"sched: watchdog: $cls left "*"[$victim] runnable on CPU 1 for "*" ms (limit $LIMIT ms), falling back to cfs")
	ok "the log line names the class, the victim, its CPU and the limit" ;;
*) not_ok "the log line names the class, the victim, its CPU and the limit" ;;
esac
settled() {
	normal_tasks_on cfs
	[ "$bad" = none ] && return
	sleep 0.2
	normal_tasks_on cfs
}
settled
check "$bad" none "after the fallback every normal task is on cfs"
cpu_ns $victim; r0=$ns
sleep 5
cpu_ns $victim; r1=$ns
echo "# victim on cfs: ${r0} ns -> ${r1} ns in 5 s"
[ "$r1" -gt "$r0" ] && ok "the starved victim runs on cfs" || not_ok "the starved victim runs on cfs"
unstall
check "$(dmesg | grep -c "sched: normal tasks moved from $cls to cfs (.* tasks, watchdog) in [0-9]* ms, the [0-9]* running or waiting in [0-9]* ms$")" 1 \
	"the fallback is logged as the watchdog's"

# A fresh stall: not before the timeout, and within timeout + 1 s.
to_class "$cls"
check "$(cat $K)" "$cls" "back on $cls"
stall
wait_for_cfs 5
echo "# fresh stall: fell back after ${waited}0 ms"
[ "$waited" -ge $((LIMIT / 10 - 30)) ] && ok "a fresh stall is not reported early" ||
	not_ok "a fresh stall is not reported early (${waited}0 ms)"
# How long the victim had waited when the check saw it, from the log line:
# guest jiffies, where the script's own polling forks and may lag by a
# second or more when the host is busy.
reported_ms() {
	dmesg | grep "sched: watchdog: .*\[$1\] runnable" | tail -1 |
		sed -n 's/.* for \([0-9]*\) ms (limit.*/\1/p'
}
# fell_back_in_time WHAT: the victim's stall was reported after the
# timeout but within it plus 1 s, and the normal tasks are on cfs.
fell_back_in_time() {
	seen=$(reported_ms $victim)
	echo "# $1: seen after ${seen:-none} ms, fell back after ${waited}0 ms"
	[ "$(cat $K)" = cfs ] && [ "${seen:-0}" -ge $LIMIT ] &&
		[ "$seen" -le $((LIMIT + 1000)) ] &&
		ok "$1 falls back within the timeout plus 1 s" ||
		not_ok "$1 falls back within the timeout plus 1 s (seen after ${seen:-none} ms, $(cat $K))"
}
fell_back_in_time "a fresh stall"
unstall

# An unprivileged user's task that the class fails to run falls back too.
to_class "$cls"
echo $LIMIT >$W
stall "$NOBODY"
check "$(stat -c %u /proc/$victim)" 65534 "the stalled victim is uid 65534's"
wait_for_cfs 5
fell_back_in_time "uid 65534's stalled task"
unstall

# A stall that began on CLASS and goes on after a switch to the other class
# is timed from the switch: the wait on CLASS is not the other's stall.
case $cls in ule) other=bmq ;; *) other=ule ;; esac
to_class "$cls"
echo 0 >$W
stall
sleep 3
cpu_ns $victim; r0=$ns
to_class $other
now_cs
switched=$now
echo $LIMIT >$W
sleep 0.5
cpu_ns $victim; r1=$ns
k1=$(cat $K)
echo "# victim $victim across the switch to $other: ${r0} ns -> ${r1} ns"
if [ "$k1" = $other ]; then
	check "$r1" "$r0" "the victim waited through the switch"
else
	ok "the victim waited through the switch # SKIP read after the fallback ($k1)"
fi
wait_for_cfs 6
now_cs
echo "# fell back $((now - switched))0 ms after the switch to $other"
# Stamped at the switch, the stall is seen after the timeout; a stamp
# kept from $cls would be seen by the first check, 3 s old.
seen=$(reported_ms $victim)
echo "# the check saw it after ${seen:-none} ms"
[ $((now - switched)) -ge $((LIMIT / 10 - 30)) ] && [ "${seen:-0}" -ge $LIMIT ] &&
	ok "a 3 s stall carried over a switch is timed from the switch" ||
	not_ok "a 3 s stall carried over a switch is timed from the switch (${seen:-none} ms)"
[ "$(cat $K)" = cfs ] && [ "${seen:-0}" -le $((LIMIT + 1000)) ] &&
	ok "it falls back within the timeout plus 1 s of the switch" ||
	not_ok "it falls back within the timeout plus 1 s of the switch ($(cat $K), ${seen:-none} ms)"
line=$(dmesg | grep "sched: watchdog:" | tail -1)
echo "# $line"
case $line in
*"sched: watchdog: $other left "*"[$victim] runnable on CPU 1 for "*)
	ok "the log line blames $other" ;;
*) not_ok "the log line blames $other" ;;
esac
unstall

# sysrq-S while a load keeps a shell from running: spinners on every CPU
# and a shell loop that CLASS ranks below them, as in starve() above (a
# builtin-only loop, so that its progress on cfs shows at once). The
# watchdog is off; this script runs as an RT task, as the console's
# interrupt would.
to_class "$cls"
echo 0 >$W
chrt -f -p 30 $$
rm -f /tmp/shell_ticks
case $cls in
ule | muqss) shell_policy="chrt -i 0" ;;
*) shell_policy="chrt -o 0 nice -n 4" ;;
esac
$shell_policy sh -c 'i=0; while :; do i=$((i + 1)); echo $i >/tmp/shell_ticks; done' &
shell=$!
# It runs before the load starts.
i=0
while [ ! -s /tmp/shell_ticks ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
spinners=""
for cpu in $(seq 0 $(($(nproc) - 1))); do
	chrt -o 0 taskset -c "$cpu" sh -c 'while :; do :; done' &
	spinners="$spinners $!"
done
sleep 1
# Its file may stay empty (stopped between truncation and write), so its
# run time, from schedstat, is what shows whether it runs.
t0=$(cat /tmp/shell_ticks 2>/dev/null)
cpu_ns $shell; s0=$ns
sleep 3
t1=$(cat /tmp/shell_ticks 2>/dev/null)
cpu_ns $shell; s1=$ns
echo "# shell ticks ${t0:-none} -> ${t1:-none}, run time $s0 -> $s1 ns in 3 s under $cls"
check "$s1/${t1:-none}" "$s0/${t0:-none}" "the load keeps the shell from running on $cls"
echo S >/proc/sysrq-trigger
wait_for_cfs 3
check "$(cat $K)" cfs "sysrq-S falls back to cfs"
# On cfs the shell keeps its policy (under ule SCHED_IDLE), so it may get
# only a tick now and then beside the spinners: its run time shows each.
cpu_ns $shell; r1=$ns
i=0
t2=""
r2=$r1
while [ $i -lt 100 ]; do
	sleep 0.1
	t2=$(cat /tmp/shell_ticks 2>/dev/null)
	cpu_ns $shell; r2=$ns
	[ -n "$t2" ] && [ "$t2" != "${t1:-none}" ] && break
	[ "${r2:-0}" -gt "${r1:-0}" ] && break
	i=$((i + 1))
done
echo "# shell ticks ${t1:-none} -> ${t2:-none}, run time ${r1:-none} -> ${r2:-none} ns in $((i + 1))00 ms on cfs"
{ [ -n "$t2" ] && [ "$t2" != "${t1:-none}" ]; } || [ "${r2:-0}" -gt "${r1:-0}" ] &&
	ok "the shell runs again" || not_ok "the shell runs again"
check "$(dmesg | grep -c "sched: normal tasks moved from $cls to cfs (.* tasks, sysrq) in [0-9]* ms, the [0-9]* running or waiting in [0-9]* ms$")" 1 \
	"the fallback is logged as sysrq's"
kill $spinners $shell 2>/dev/null
wait $spinners $shell 2>/dev/null
chrt -o -p 0 $$

# busy VALUE WHAT: a write of VALUE to kernel.sched_class is refused with
# EBUSY and changes nothing (coreutils' echo names the error).
busy() {
	_before=$(cat $K)
	_err=$( (/bin/echo "$1" >$K) 2>&1)
	case $_err in
	*"Device or resource busy"*) check "$(cat $K)" "$_before" "$2" ;;
	*) not_ok "$2 (${_err:-the write succeeded})" ;;
	esac
}

# The checks stop: their thread (SCHED_FIFO 50) pinned to CPU 1 behind a
# SCHED_FIFO 99 spinner. The tick asks for the fallback. Its own thread,
# held on CPU 1 too until the EBUSY checks are done, then runs it on
# another CPU while the spinner still holds the check thread.
to_class "$cls"
echo $LIMIT >$W
worker=$(pgrep -x sched_class)
fallback=$(pgrep -x sched_fallback)
taskset -p -c 1 "$worker" >/dev/null
taskset -p -c 1 "$fallback" >/dev/null
chrt -f 99 taskset -c 1 sh -c 'while :; do :; done' &
rthog=$!
now_cs
start=$now
until dmesg | grep -q "sched: watchdog: the stall check has not run"; do
	now_cs
	[ $((now - start)) -ge $((LIMIT / 10 + 500)) ] && break
	sleep 0.1
done
now_cs
# The kernel's own figure: how long the checks had stopped when the tick
# asked (this shell, on the other CPU, may see the line late).
line=$(dmesg | grep "sched: watchdog: the stall check has not run" | tail -1)
echo "# $line, seen after $((now - start))0 ms"
stopped=$(echo "$line" | sed -n "s/.* has not run for \([0-9]*\) ms (limit $LIMIT ms), falling back to cfs$/\1/p")
[ -n "$stopped" ] && [ "$stopped" -le $((LIMIT + 1000)) ] &&
	ok "with the checks stopped the tick asks for the fallback within the timeout plus 1 s" ||
	not_ok "with the checks stopped the tick asks for the fallback within the timeout plus 1 s (${stopped:-no line})"
# The class being left cannot be chosen again, nor anything else, until
# the fallback has run.
busy "$cls" "a write of the class being left gets EBUSY while the fallback is pending"
busy cfs "a write of cfs gets EBUSY while the fallback is pending"
taskset -p -c 0-$(($(nproc) - 1)) "$fallback" >/dev/null
wait_for_cfs 3
check "$(cat $K)" cfs "the fallback runs while the check thread is still held off"
kill $rthog
wait $rthog 2>/dev/null
taskset -p -c 0-$(($(nproc) - 1)) "$worker" >/dev/null
check "$(dmesg | grep -c "sched: normal tasks moved from $cls to cfs (.* tasks, watchdog: no check) in [0-9]* ms, the [0-9]* running or waiting in [0-9]* ms$")" 1 \
	"the fallback is logged as the tick's"

# A stall that realtime work causes: RT throttling off, a normal spinner
# pinned to CPU 1 under a SCHED_FIFO one. The line names realtime work,
# not the class; the task it names may be the victim or one of CPU 1's
# kworkers, whichever waited longest.
to_class "$cls"
echo $LIMIT >$W
blamed=$(dmesg | grep -c "sched: watchdog: $cls left ")
rt_runtime=$(cat /proc/sys/kernel/sched_rt_runtime_us)
echo -1 >/proc/sys/kernel/sched_rt_runtime_us
victim_on_cpu1
chrt -f 10 taskset -c 1 sh -c 'while :; do :; done' &
hog=$!
wait_for_cfs 6
unstall
echo "$rt_runtime" >/proc/sys/kernel/sched_rt_runtime_us
line=$(dmesg | grep "sched: watchdog:" | tail -1)
echo "# $line"
check "$(cat $K)" cfs "a stall under realtime work falls back to cfs"
case $line in
*"sched: watchdog: "*"] runnable on CPU 1 for "*" ms (limit $LIMIT ms) while realtime or deadline tasks held "*"% of it, falling back to cfs")
	ok "the log line names realtime work, not $cls" ;;
*) not_ok "the log line names realtime work, not $cls" ;;
esac
check "$(dmesg | grep -c "sched: watchdog: $cls left ")" "$blamed" "$cls is not blamed for it"

# Many waiters: 1000 spinning threads on CPU 1 that CLASS ranks below a
# nice-0 hog there (started after them: behind it they would never get
# made), checked SCHED_WATCHDOG_BATCH at a time with the lock dropped in
# between; then a task the pick passes over among them.
to_class "$cls"
# Off while they are made: alone on CPU 1 they are equals taking turns,
# and a thousand turns are a stall by the rule.
echo 0 >$W
lines=$(watchdog_lines)
case $cls in
bmq) low="nice -n 19" ;;
*) low="chrt -i 0" ;;
esac
rm -f /tmp/many.out
$low taskset -c 1 "$tasks" spinners 1000 </dev/null >/tmp/many.out &
many=$!
wait_ready /tmp/many.out
hog_on_cpu1
sleep 1
echo $LIMIT >$W
sleep $((LIMIT / 1000 + 2))
check "$(cat $K)/$(($(watchdog_lines) - lines))" "$cls/0" \
	"1000 threads behind a hog on CPU 1 for $((LIMIT / 1000 + 2)) s: still on $cls, nothing logged"
stall
wait_for_cfs 6
fell_back_in_time "a stall among 1000 waiting threads"
unstall
kill $many
wait $many 2>/dev/null

# The bypass: a fallback moves every running and waiting task first and
# only then walks the rest, so a task the class starves does not wait for
# the walk through every older task. 10000 sleeping threads older than a
# victim the pick passes over on CPU 1; the fallback's thread on CPU 0.
# The victim must run again well before the walk ends: its first
# sched_switch (ftrace) against the fallback's log line, both stamped by
# the local clock. Moved in fork order it would run after the walk; moved
# first, it waits for the emulator to wake idle CPU 1 (up to tens of ms).
to_class "$cls"
echo 0 >$W
T=/sys/kernel/tracing
mountpoint -q $T || mount -t tracefs nodev $T
threads_max=$(cat /proc/sys/kernel/threads-max)
echo 50000 >/proc/sys/kernel/threads-max
rm -f /tmp/sleepers.out
"$tasks" threads 10000 </dev/null >/tmp/sleepers.out &
many=$!
wait_ready /tmp/sleepers.out
stall
taskset -p -c 0 "$(pgrep -x sched_fallback)" >/dev/null
echo 0 >$T/tracing_on
echo >$T/trace
echo "next_pid == $victim" >$T/events/sched/sched_switch/filter
echo 1 >$T/events/sched/sched_switch/enable
echo 1 >$T/tracing_on
echo S >/proc/sysrq-trigger
wait_for_cfs 5
sleep 0.5
echo 0 >$T/tracing_on
echo 0 >$T/events/sched/sched_switch/enable
echo 0 >$T/events/sched/sched_switch/filter
taskset -p -c 0-$(($(nproc) - 1)) "$(pgrep -x sched_fallback)" >/dev/null
ran=$(awk '/sched_switch:/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) { sub(":", "", $i); print $i; exit } }' $T/trace)
line=$(dmesg | grep "sched: normal tasks moved from $cls to cfs (.* tasks, sysrq)" | tail -1)
echo "# victim ran at ${ran:-never}: $line"
done_at=$(echo "$line" | sed -n 's/^\[ *\([0-9.]*\)\].*/\1/p')
walk=$(echo "$line" | sed -n 's/.*sysrq) in \([0-9]*\) ms.*/\1/p')
first=$(echo "$line" | sed -n 's/.* in [0-9]* ms, the \([0-9]*\) running or waiting in [0-9]* ms$/\1/p')
[ "${first:-0}" -ge 1 ] && ok "the fallback moved the victim among the running and waiting tasks first" ||
	not_ok "the fallback moved the victim among the running and waiting tasks first (${line:-no line})"
ahead=$(awk -v r="${ran:-0}" -v d="${done_at:-0}" 'BEGIN { printf "%d", (d - r) * 1000 }')
echo "# the victim ran $ahead ms before the walk of ${walk:-?} ms ended"
[ -n "$ran" ] && [ -n "$walk" ] && [ "$walk" -ge 20 ] && [ $((ahead * 4)) -ge "$walk" ] &&
	ok "the victim runs before the last quarter of the walk through 10000 sleeping threads" ||
	not_ok "the victim runs before the last quarter of the walk through 10000 sleeping threads (ran at ${ran:-never}, ${ahead} ms before the end of a ${walk:-?} ms walk)"
unstall
kill $many
wait $many 2>/dev/null
echo "$threads_max" >/proc/sys/kernel/threads-max

check "$(watchdog_lines)" 7 "the watchdog reported each stall once, the off state and sysrq nothing"
busy_lines=$(dmesg | grep -c "sched: a class switch is under way, refusing \"cfs\" for kernel.sched_class")
check "$busy_lines" 1 "the refused write of cfs logged once"
tap_done
