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
# Prints, besides TAP, "# latency class C load N seconds S" and per probe
# "# hist PROBE US:COUNT ..." (non-empty 1 us bins) or, for wakelat, its
# own "wakelat ..." summary line.
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
hist_line() {
	sort -n | uniq -c | awk -v p="$1" '{ s = s " " $2 ":" $1 }
		END { print "# hist " p s }'
}

cyclictest -q -m -t1 -i 1000 -D "$RUN_S" -h $HIST_US >$DIR/cyclictest.out 2>&1
# Bins, then the overflows as samples at the maximum.
awk -v cap=$HIST_US '
	/^[0-9]+ +[0-9]+$/ { if ($2 + 0) s = s " " ($1 + 0) ":" ($2 + 0) }
	/^# Max Latencies:/ { max = $4 + 0 }
	/^# Histogram Overflows:/ { over = $4 + 0 }
	END { if (over) s = s " " max ":" over; print "# hist cyclictest" s }
' $DIR/cyclictest.out
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
	awk '!/^#/ && $11 > 0 { print $11 }' "$log" | hist_line rt-app
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
