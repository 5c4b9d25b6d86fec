#!/bin/sh
# In-guest TAP test: priority inversion through an inode lock is bounded
# (Documentation/scheduler/sched-class-select.rst, "Priority inversion").
# Usage: inversion.sh CLASS...   (one boot, 2 CPUs or more; cfs is measured
# and reported, not bounded: it is mainline's)
#
# As uid 65534, a writer that CLASS ranks low (BMQ: nice 19; the others:
# SCHED_IDLE) rewrites 1 MiB of a tmpfs file on CPU 1 in a loop, so it
# nearly always holds the file's inode lock, and a nice-0 spinner of the
# same user joins it there. Root then appends one line to the file. The
# append must complete within BOUND_MS: a task preempted in kernel code
# finishes that code before it loses its place for good. Under BMQ and
# MuQSS with kernel.sched_CLASS_kernel_boost=0 (Project C's and MuQSS's
# behaviour) the append waits until the spinner is killed.
. "$(dirname "$0")/tap.sh"
K=/proc/sys/kernel/sched_class
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
BOUND_MS=1000
# How long the original behaviour must keep the append waiting.
HELD_MS=3000
D=/tmp/inversion.$$
F=$D/file

nclasses=0
for cls in "$@"; do
	case $cls in
	cfs) ;;
	bmq | muqss) nclasses=$((nclasses + 3)) ;;
	*) nclasses=$((nclasses + 1)) ;;
	esac
done
echo "TAP version 13"
echo "1..$((nclasses + 1))"

mkdir -p $D
mount -t tmpfs -o size=16m none $D
head -c 1048576 /dev/zero >$F
chmod 666 $F
writer=""
spinner=""
appends=0
trap 'kill $writer $spinner 2>/dev/null; umount $D; rmdir $D' EXIT

now_ms() { now=$(($(date +%s%N) / 1000000)); }

# probe POLICY-PREFIX: sets took (ms the append took, or the wait limit
# when it had not completed and the spinner had to be killed).
probe() {
	$NOBODY $1 taskset -c 1 python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
buf = bytes(1 << 20)
while True:
    os.pwrite(fd, buf, 0)' $F &
	writer=$!
	sleep 1
	$NOBODY taskset -c 1 sh -c 'while :; do :; done' &
	spinner=$!
	sleep 1
	now_ms
	start=$now
	(echo root >>$F) &
	append=$!
	appends=$((appends + 1))
	limit=$((BOUND_MS > HELD_MS ? BOUND_MS : HELD_MS))
	took=""
	while [ -z "$took" ]; do
		now_ms
		if ! kill -0 $append 2>/dev/null; then
			took=$((now - start))
		elif [ $((now - start)) -ge $limit ]; then
			took=$limit
		fi
		sleep 0.02
	done
	kill $spinner
	wait $append $spinner 2>/dev/null
	kill $writer
	wait $writer 2>/dev/null
	writer=""
	spinner=""
}

for cls in "$@"; do
	echo "$cls" >$K
	case $cls in
	bmq) low="nice -n 19" ;;
	*) low="chrt -i 0" ;;
	esac
	probe "$low"
	echo "# $cls: root's append waited $took ms behind uid 65534's low writer and spinner"
	case $cls in
	cfs) ;;
	*)
		[ "$took" -lt $BOUND_MS ] && ok "$cls: root's append completes within $BOUND_MS ms" ||
			not_ok "$cls: root's append completes within $BOUND_MS ms (took $took ms)" ;;
	esac
	case $cls in bmq | muqss) ;; *) continue ;; esac
	# The original behaviour, one switch away: the writer waits behind
	# the spinner in kernel code, and the append with it. A try in which
	# the spinner caught the writer between two writes proves nothing;
	# take the first of three in which it did not.
	KB=/proc/sys/kernel/sched_${cls}_kernel_boost
	check "$(cat $KB)" 1 "kernel.sched_${cls}_kernel_boost is on by default"
	echo 0 >$KB
	for try in 1 2 3; do
		probe "$low"
		echo "# $cls, kernel boost off, try $try: the append waited $took ms"
		[ "$took" -ge $HELD_MS ] && break
	done
	echo 1 >$KB
	[ "$took" -ge $HELD_MS ] &&
		ok "$cls with kernel.sched_${cls}_kernel_boost=0: the append waits for the spinner" ||
		not_ok "$cls with kernel.sched_${cls}_kernel_boost=0: the append waits for the spinner (took $took ms)"
done
check "$(grep -a -c root $F)" $appends "every append reached the file"
tap_done
