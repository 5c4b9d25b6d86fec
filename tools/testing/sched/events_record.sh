#!/bin/sh
# In-guest part of the event recorder round trip
# (Documentation/scheduler/sched-events.rst). Usage: events_record.sh OUTDIR
#
# Records a known workload twice over: with the recorder (binary dump) while
# ftrace records the same task_migrate tracepoint, then with trace-cmd. The
# host decodes OUTDIR/{recorder.bin,ftrace.txt,trace.dat} and compares them
# with what hopper.py says it did (OUTDIR/hopper.txt). Also checks the
# control files' answers to bad input. TAP on stdout.
out=${1:?usage: $0 OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
E=/sys/kernel/debug/sched/events
T=/sys/kernel/tracing
. "$here/tap.sh"

echo "TAP version 13"
echo "1..14"

check "$(cat $E/control)" stopped "recorder stopped at boot"
if cat $E/dump >/dev/null 2>&1; then not_ok "no dump before a recording"; else ok "no dump before a recording"; fi
rejects $E/control bogus
rejects $E/mode sometimes
rejects $E/buffer_kb 3
rejects $E/buffer_kb 99999999
# 1 GiB per CPU is in range but more than half the guest's RAM in all:
# refused when written, not left for an allocation that would call the
# OOM killer.
rejects $E/buffer_kb 1048576
rejects $E/buffer_kb lots

echo fill >$E/mode
echo 4096 >$E/buffer_kb
echo >$T/trace
echo 1 >$T/events/sched_events/task_migrate/enable
echo start >$E/control
check "$(cat $E/control)" recording "recording after start"
if (echo 64 >$E/buffer_kb) 2>/dev/null; then not_ok "buffer size locked while recording"; else ok "buffer size locked while recording"; fi
python3 "$here/hopper.py" 2 >"$out/hopper.txt"
hackbench -g 1 -f 4 -l 20 >/dev/null
echo stop >$E/control
echo 0 >$T/events/sched_events/task_migrate/enable
check "$(cat $E/control)" stopped "stopped after stop"
cat $E/dump >"$out/recorder.bin"
cat $E/stats >"$out/recorder.stats"
cat $T/trace >"$out/ftrace.txt"
echo "# $(wc -c <"$out/recorder.bin") bytes dumped; $(grep -c task_migrate: "$out/ftrace.txt") ftrace task_migrate lines"

# trace-cmd records the same tracepoints through ftrace. One short task
# pinned to each CPU first, so every CPU's run queue length is recorded even
# when hackbench's eight tasks leave a CPU untouched.
cd "$out" || exit 1
if trace-cmd record -q -e sched_events -o "$out/trace.dat" sh -c '
	c=0; while [ $c -lt "$(nproc)" ]; do taskset -c $c true; c=$((c + 1)); done
	exec hackbench -g 1 -f 4 -l 20' >/dev/null 2>"$out/trace-cmd.err"; then
	ok "trace-cmd record -e sched_events"
else
	not_ok "trace-cmd record -e sched_events"
	sed 's/^/# /' "$out/trace-cmd.err"
fi
# perf counts the same tracepoints.
count=$(perf stat -x, -e sched_events:rq_nr_running -e sched_events:cpus_considered \
	-- hackbench -g 1 -f 2 -l 5 2>&1 >/dev/null | awk -F, '/sched_events/ { print $1 }')
echo "# perf stat counts: $(echo $count)"
case "$(echo $count | awk '{ print ($1 > 0 && $2 > 0) ? "yes" : "no" }')" in
yes) ok "perf stat -e sched_events:..." ;;
*) not_ok "perf stat -e sched_events:... (got '$count')" ;;
esac
echo release >$E/control
if cat $E/dump >/dev/null 2>&1; then not_ok "release frees the buffers"; else ok "release frees the buffers"; fi

tap_done
