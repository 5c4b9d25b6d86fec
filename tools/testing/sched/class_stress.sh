#!/bin/sh
# In-guest stress test of a class for normal tasks: a stress-ng storm and
# repeated CPU offline/online under load. Run on the debug kernel; the
# harness fails the boot on any splat, hang or RCU stall.
# Usage: class_stress.sh CLASS [SECONDS] [HOTPLUG_ROUNDS]
#
# 1. stress-ng fork, switch, affinity and cpu-online stressors together
#    for SECONDS: stress-ng must succeed.
# 2. 2 spinners per CPU, then every CPU but 0 offlined and onlined
#    HOTPLUG_ROUNDS times: while a CPU is offline no spinner may be on it,
#    and at the end every spinner is alive and running on CLASS.
# 3. Under cfs: a cgroup capped by cpu.max to 1 ms per second, throttled
#    on the CPUs, while every CPU but 0 goes offline and while the cpuset
#    flag rebuilds the sched domains. Both take runqueues offline with
#    throttled groups on them, which 6.1 unthrottled with one clock update
#    each: the guests run with WARN_DOUBLE_CLOCK on, so dmesg must stay
#    free of that warning, and the capped tasks must survive.
want=${1:?usage: $0 CLASS [SECONDS] [HOTPLUG_ROUNDS]}
secs=${2:-30}
rounds=${3:-3}
. "$(dirname "$0")/tap.sh"
. "$(dirname "$0")/class_lib.sh"
S=/sys/devices/system/cpu

echo "TAP version 13"
echo "1..7"
check "$(cat /proc/sys/kernel/sched_class)" "$want" "normal tasks run on $want"

ncpu=$(nproc)
# cpu-online is "pathological" to stress-ng (it may hang a machine): here
# hanging is what the test looks for, and the harness times the boot out.
if stress-ng --fork "$ncpu" --switch "$ncpu" --affinity "$ncpu" --cpu-online 1 \
	--pathological --timeout "${secs}s" --metrics-brief >/tmp/stress.log 2>&1; then
	ok "stress-ng fork/switch/affinity/cpu-online storm for ${secs}s"
else
	not_ok "stress-ng fork/switch/affinity/cpu-online storm for ${secs}s (exit $?)"
	sed 's/^/# /' /tmp/stress.log | tail -20
fi
grep -E "metrc|skipped|cpu-online" /tmp/stress.log | sed 's/^/# /'
# Every CPU is back online (stress-ng restores them).
offline=$(cat $S/offline)
check "${offline:-none}" none "every CPU online after the storm"

spinners=""
i=0
while [ $i -lt $((ncpu * 2)) ]; do
	(while :; do :; done) &
	spinners="$spinners $!"
	i=$((i + 1))
done
trap 'kill $spinners 2>/dev/null' EXIT

wrong=""
r=0
while [ $r -lt "$rounds" ]; do
	r=$((r + 1))
	for c in $S/cpu[1-9]*; do
		[ -w "$c/online" ] || continue
		cpu=${c##*cpu}
		echo 0 >"$c/online" || { wrong="$wrong offline$cpu:failed"; continue; }
		sleep 0.2
		for p in $spinners; do
			[ "$(stat_field "$p" 39)" = "$cpu" ] && wrong="$wrong $p:on-offline-cpu$cpu"
		done
		echo 1 >"$c/online" || wrong="$wrong online$cpu:failed"
	done
done
check "${wrong:-none}" none "$rounds rounds of offlining each CPU under load: no spinner left on an offline CPU"

spinners_run "$spinners" "$want"
check "$stuck" none "all $((ncpu * 2)) spinners alive, running and on $want after hotplug"
kill $spinners
wait $spinners 2>/dev/null

G=/sys/fs/cgroup
if [ "$want" = cfs ]; then
	echo +cpu >$G/cgroup.subtree_control
	mkdir $G/capped
	# One shell joins the group and forks the spinners there: each write
	# to cgroup.procs waits for an RCU grace period, seconds under TCG.
	sh -c "echo \$\$ >$G/capped/cgroup.procs
		i=0
		while [ \$i -lt $ncpu ]; do
			(while :; do :; done) &
			i=\$((i + 1))
		done
		wait" &
	while [ "$(wc -l <$G/capped/cgroup.procs)" -le "$ncpu" ]; do sleep 0.1; done
	capped=$(cat $G/capped/cgroup.procs)
	trap 'kill $capped 2>/dev/null' EXIT
	# The cap comes once all are in: a task throttled inside its own
	# cgroup.procs write would hold cgroup_mutex for seconds.
	echo "1000 1000000" >$G/capped/cpu.max
	sleep 2
	throttled=$(sed -n 's/^nr_throttled //p' $G/capped/cpu.stat)
	for c in $S/cpu[1-9]*; do
		[ -w "$c/online" ] || continue
		echo 0 >"$c/online" && echo 1 >"$c/online"
	done
	mkdir -p /tmp/cpuset
	mount -t cgroup -o cpuset cpuset /tmp/cpuset
	for flag in 0 1 0 1; do
		echo $flag >/tmp/cpuset/cpuset.sched_load_balance
		sleep 0.2
	done
	umount /tmp/cpuset
	echo "# capped group throttled in $throttled periods before the hotplug"
	warned=$(dmesg | grep -c "RQCF_UPDATED")
	check "$((throttled > 0)), $warned" "1, 0" \
		"throttled group across hotplug and domain rebuilds: no double clock update"
	lost=""
	for p in $capped; do
		[ -d /proc/$p ] || lost="$lost $p"
	done
	check "${lost:-none}" none "the $ncpu capped spinners and their shell survive"
	echo max >$G/capped/cpu.max
	kill $capped
	wait $capped 2>/dev/null
	rmdir $G/capped
else
	ok "throttled group across hotplug # SKIP no CFS bandwidth control under $want"
	ok "the capped tasks survive # SKIP no CFS bandwidth control under $want"
fi
tap_done
