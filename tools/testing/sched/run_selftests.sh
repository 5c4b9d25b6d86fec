#!/bin/sh
# Run the kernel selftests named in selftests.list inside a guest and print
# one TAP line per command, with the command's own output as diagnostics.
# Usage: run_selftests.sh KSELFTEST_DIR [COLLECTION...]
# The installed folder is copied to /tmp because some tests write beside
# themselves and the guest's root filesystem is read-only.
src=${1:?usage: $0 KSELFTEST_DIR [COLLECTION...]}
shift
list=$(dirname "$0")/selftests.list
want=" $* "
work=/tmp/kselftest
# A RETRY line runs up to this many times and passes if one run passes:
# 8 vCPUs on 2 host cores stall a vCPU for tens of ms now and then.
RETRY_RUNS=3
rm -rf "$work" && cp -a "$src" "$work" || { echo "Bail out! cannot copy $src"; exit 1; }

lines=$(grep -v '^#' "$list" | while read -r coll tmo dir cmd; do
	[ -n "$coll" ] || continue
	[ "$want" = "  " ] || case $want in *" $coll "*) ;; *) continue ;; esac
	echo "$coll	$tmo	$dir	$cmd"
done)
# timeout(1) cannot end a test blocked in the kernel (a hung hotplug write,
# say): poll for its exit status instead of waiting on it, so a stuck test
# ends the run at once with the kernel's list of blocked tasks rather than
# holding the guest until the host gives up on it.
wait_for_test() {
	ticks=$(($1 * 5))
	while [ ! -s /tmp/selftest.rc ] && [ $ticks -gt 0 ]; do
		sleep 0.2
		ticks=$((ticks - 1))
	done
	[ -s /tmp/selftest.rc ]
}

stuck() {
	sed 's/^/# /' /tmp/selftest.out | tail -n 40
	echo w >/proc/sysrq-trigger
	sleep 2
	dmesg | tail -n 150 | sed 's/^/# /'
	echo "Bail out! $1 still running $2 s after its start: stuck in the kernel"
	exit 1
}

total=$(printf '%s\n' "$lines" | grep -c .)
echo "TAP version 13"
echo "1..$total"
n=0
fails=0
printf '%s\n' "$lines" | {
while IFS='	' read -r coll tmo dir cmd; do
	[ -n "$coll" ] || continue
	n=$((n + 1))
	tries=1
	retried=""
	[ "${dir%%:*}" = RETRY ] && tries=$RETRY_RUNS
	while :; do
		start=$(cut -d' ' -f1 /proc/uptime)
		rm -f /tmp/selftest.rc
		( (cd "$work/$coll" && exec timeout -k 5 "$tmo" $cmd) >/tmp/selftest.out 2>&1 </dev/null
		  echo $? >/tmp/selftest.rc ) &
		wait_for_test $((tmo + 30)) || stuck "$coll: $cmd" $((tmo + 30))
		wait	# reap it: the status file is its last act
		rc=$(cat /tmp/selftest.rc)
		secs=$(awk -v s="$start" '{ printf "%.1f", $1 - s }' /proc/uptime)
		sed 's/^/# /' /tmp/selftest.out | tail -n 40
		tries=$((tries - 1))
		[ $rc -ne 0 ] && [ $rc -ne 4 ] && [ $tries -gt 0 ] || break
		echo "# failed with exit $rc; retrying (${dir#RETRY:})"
		retried=", failed $RETRY_RUNS times"
	done
	[ -n "$retried" ] && [ $rc -eq 0 ] && retried=", passed on retry"
	name="$coll: $cmd (${secs} s$retried)"
	todo=""
	case $dir in TODO:*) todo=" # TODO ${dir#TODO:}" ;; esac
	if [ $rc -eq 0 ]; then
		echo "ok $n $name$todo"
	elif [ $rc -eq 4 ]; then
		echo "ok $n $name # SKIP exit status 4"
	else
		[ $rc -eq 124 ] && echo "# timed out after $tmo s"
		echo "not ok $n $name (exit $rc)$todo"
		[ -n "$todo" ] || fails=$((fails + 1))
	fi
done
exit $((fails != 0))
}
