#!/bin/sh
# In-guest measurement of scripts/reproduce's wakeup-latency experiment
# under the class the guest runs now: with LOAD CPU-bound spinners running
# (default: one per CPU), three normal-priority (SCHED_OTHER) latency
# probes run one after the other for RUN_S seconds each:
#   cyclictest  one thread woken by a 1 ms timer (rt-tests);
#   rt-app      a periodic task, 1 ms of busy time every 4 ms, whose timer
#               wakeup latency rt-app logs every period (0 when the period
#               overran and the task did not sleep: left out);
#   wakelat     message threads waking worker threads through futexes,
#               in the spirit of schbench (not packaged in Debian).
# Each prints its latencies as one histogram line, which the host turns
# into percentiles.
#
# Usage: latency_series.sh ULELOAD WAKELAT   (sizes from the environment:
# RUN_S, LOAD; scripts/reproduce --quick shortens them)
# Prints TAP, "# latency class C load N seconds S" and wakelat's own
# summary line; writes to the JSON lines file SCHED_TEST_METRICS names
# {"name": "hist", "probe": PROBE, "bins": [[US, COUNT], ...]} (non-empty
# 1 us bins) for cyclictest and rt-app, and wakelat writes its
# percentiles there ({"name": "wakelat", ...}).
uleload=${1:?usage: $0 ULELOAD WAKELAT}
wakelat=${2:?usage: $0 ULELOAD WAKELAT}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/tap.sh"
RUN_S=${RUN_S:-10}
LOAD=${LOAD:-$(nproc)}
# cyclictest's histogram has 1 us bins up to this; later samples count as
# overflows, which the host places at the run's maximum.
HIST_US=100000
DIR=/tmp/latency-series
# rt-app's work is a "runtime" event (wall-clock time, not calibrated
# loops), so its calibration, seconds under TCG, is skipped with any value.
RTAPP_NS_PER_LOOP=100
class=$(cat /proc/sys/kernel/sched_class 2>/dev/null || echo own)

echo "TAP version 13"
echo "1..4"
rm -rf $DIR
mkdir -p $DIR
echo "# latency class $class load $LOAD seconds $RUN_S"
pids=""
i=0
while [ $i -lt "$LOAD" ]; do
	"$uleload" spinner $((3 * RUN_S + 60)) >/dev/null 2>&1 &
	pids="$pids $!"
	i=$((i + 1))
done
ok "$LOAD spinners started"
sleep 1

# hist_line PROBE: "# hist PROBE US:COUNT ..." of the latencies (one per
# line, in us) on stdin.
# hist_metric PROBE: the latencies on stdin, one a line, as PROBE's
# histogram record.
hist_metric() {
	sort -n | uniq -c | awk -v p="$1" -v f="$SCHED_TEST_METRICS" '
		{ s = s sep "[" $2 ", " $1 "]"; sep = ", " }
		END { if (f != "") print "{\"name\": \"hist\", \"probe\": \"" p "\", \"bins\": [" s "]}" >>f }'
}

cyclictest -q -m -t1 -i 1000 -D "$RUN_S" -h $HIST_US >$DIR/cyclictest.out 2>&1
# Bins, then the overflows as samples at the maximum.
# Its histogram's bins as latencies, one a line (overflows at its maximum).
awk '
	/^[0-9]+ +[0-9]+$/ { for (i = 0; i < $2; i++) print $1 + 0 }
	/^# Max Latencies:/ { max = $4 + 0 }
	/^# Histogram Overflows:/ { over = $4 + 0 }
	END { for (i = 0; i < over; i++) print max }
' $DIR/cyclictest.out | hist_metric cyclictest
grep -q "^# Total:" $DIR/cyclictest.out && ok "cyclictest ran" ||
	not_ok "cyclictest failed: $(tail -n 2 $DIR/cyclictest.out | tr '\n' ' ')"

cat >$DIR/rt-app.json <<JSON
{
	"global": { "duration": $RUN_S, "default_policy": "SCHED_OTHER",
		    "calibration": $RTAPP_NS_PER_LOOP, "logdir": "$DIR",
		    "log_basename": "lat" },
	"tasks": { "periodic": { "loop": -1, "runtime": 1000,
				 "timer": { "ref": "tick", "period": 4000 } } }
}
JSON
rt-app $DIR/rt-app.json >$DIR/rt-app.out 2>&1
log=$(ls $DIR/lat-periodic-*.log 2>/dev/null | head -n 1)
if [ -n "$log" ] && [ "$(wc -l <"$log")" -gt 2 ]; then
	awk '!/^#/ && $11 > 0 { print $11 }' "$log" | hist_metric rt-app
	ok "rt-app ran"
else
	not_ok "rt-app logged nothing: $(tail -n 2 $DIR/rt-app.out | tr '\n' ' ')"
fi

"$wakelat" 2 4 "$RUN_S" >$DIR/wakelat.out 2>&1
cat $DIR/wakelat.out
grep -q "^wakelat .* samples [1-9]" $DIR/wakelat.out && ok "wakelat ran" ||
	not_ok "wakelat failed: $(tail -n 2 $DIR/wakelat.out | tr '\n' ' ')"

for p in $pids; do kill "$p" 2>/dev/null; done
wait 2>/dev/null
tap_done
