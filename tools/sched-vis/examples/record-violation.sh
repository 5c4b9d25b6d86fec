#!/bin/sh
# Records the picture in README.md ("Observability"), inside a guest:
#   scripts/boot -t 2x4 --outdir /tmp/ex "sh $PWD/tools/sched-vis/examples/record-violation.sh"
#   tools/sched-vis/sched-vis heatmap /tmp/ex/violation.bin --violations --migrations \
#       --consider lb_busiest_queue -o tools/sched-vis/examples/violation.png \
#       --title "4 spinners forked on CPU 1, load balancing off for 3 s (2x4 VM)"
# Four spinners forked on CPU 1 while load balancing is off (cpuset
# sched_load_balance=0): the sanity checker confirms the violation; after
# 3 s of spinning balancing is switched back on and the spinners spread out.
here=$(cd "$(dirname "$0")/../../testing/sched" && pwd)
E=/sys/kernel/debug/sched/events
taskset -pc 0 $$ >/dev/null
echo fill >$E/mode
echo 4096 >$E/buffer_kb
echo 1 >/proc/sys/kernel/sched_sanity
mkdir -p /tmp/cpuset
mount -t cgroup -o cpuset none /tmp/cpuset
echo start >$E/control
sleep 0.5
echo 0 >/tmp/cpuset/cpuset.sched_load_balance
python3 "$here/spinners.py" --count 4 --from-cpu 1 >/tmp/spin.out &
spin=$!
while ! grep -q pids /tmp/spin.out 2>/dev/null; do sleep 0.1; done
sleep 3
echo 1 >/tmp/cpuset/cpuset.sched_load_balance
sleep 2
kill $spin
wait
echo stop >$E/control
cat $E/dump >/tmp/out/violation.bin
cat /proc/sched_sanity
