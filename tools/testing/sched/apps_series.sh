#!/bin/sh
# In-guest measurement of scripts/reproduce's applications experiment
# under the class the guest runs now: packaged applications standing in
# for the ULE paper's application comparison and the MuQSS thesis's turnaround test,
# each with a fixed amount of work, timed alone and then in pairs started
# together. The inputs are prepared on the host in APPS (the lua source
# tree, a raw video, a text corpus); this script's folder has the
# POV-Ray scene.
#
#   make-j1, make-jN  build eight of Lua 5.4's objects (Debian's orig
#                     tarball) with its Makefile, -j1 and -j$(nproc): under
#                     TCG each compiler process costs seconds, mostly
#                     translating cc1 anew
#   povray            render apps_scene.pov, one render thread per CPU
#   x264              encode the raw video, one thread per CPU
#   xz, zstd, 7z      compress the corpus with one thread per CPU
#
# Usage: apps_series.sh APPS   (from the environment: ALONE, the
# applications to time alone; PAIRS, pairs as A+B; MAKE_OBJS, the objects
# make builds; scripts/reproduce --quick shortens them)
# Prints TAP and "# app NAME SECONDS" for an application alone and "# pair
# A+B NAME SECONDS" for each of a pair's two, or the same line with
# "failed" before it and the tool's last line for the time when the
# application exits non-zero; writes the same to the JSON lines file
# SCHED_TEST_METRICS names: {"name": "app", "app": NAME, "seconds": S},
# with "pair": "A+B" for a pair's, and "failed": LAST_LINE in place of
# "seconds".
apps=${1:?usage: $0 APPS}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/tap.sh"
ALONE=${ALONE:-make-j1 make-jN povray x264 xz zstd 7z}
PAIRS=${PAIRS:-make-jN+x264 povray+xz}
N=$(nproc)
MAKE_OBJS=${MAKE_OBJS:-"lopcodes.o lctype.o linit.o lzio.o lmem.o ldump.o lcorolib.o lfunc.o"}
WORK=/tmp/apps-series
class=$(cat /proc/sys/kernel/sched_class 2>/dev/null || echo own)

# prepare NAME: untimed set-up of NAME's working copy in $WORK/NAME.
prepare() {
	rm -rf "$WORK/$1"
	mkdir -p "$WORK/$1"
	case $1 in
	make-*) cp -r "$apps/lua" "$WORK/$1/lua" ;;
	esac
}

# work NAME: NAME's fixed amount of work, in $WORK/NAME.
work() {
	d=$WORK/$1
	case $1 in
	make-j1|make-jN)
		j=1
		[ "$1" = make-jN ] && j=$N
		make -s -j"$j" -C "$d/lua/src" CC=gcc CFLAGS="-O0 -DLUA_USE_LINUX" \
			$MAKE_OBJS ;;
	povray)
		povray +I"$here/apps_scene.pov" +O"$d/out.png" +W160 +H120 +A0.3 \
			+WT"$N" -D -V -GA ;;
	x264)
		x264 --quiet --threads "$N" --preset medium -o "$d/out.264" \
			"$apps/video.y4m" ;;
	xz)
		xz -T"$N" -3 --block-size=1MiB -c "$apps/corpus.txt" >"$d/out.xz" ;;
	zstd)
		zstd -q -T"$N" -B1MiB -6 -c "$apps/corpus.txt" >"$d/out.zst" ;;
	7z)
		7z a -mx=1 -mmt="$N" "$d/out.7z" "$apps/corpus.txt" >/dev/null ;;
	*)
		echo "unknown application $1" >&2
		return 2 ;;
	esac
}

now_ns() { date +%s%N; }

# timed NAME [PAIR]: run NAME's work, alone or in PAIR, and print and
# record its time.
timed() {
	_in=${2:+pair $2}
	t0=$(now_ns)
	if work "$1" >"$WORK/$1.log" 2>&1; then
		t1=$(now_ns)
		_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
		echo "# ${_in:-app} $1 $_s"
		metric app app="$1" ${2:+pair="$2"} seconds="$_s"
	else
		_last=$(tail -n 1 "$WORK/$1.log")
		echo "# failed ${_in:-app} $1 $_last"
		metric app app="$1" ${2:+pair="$2"} failed="$(json_escape "$_last")"
		return 1
	fi
}

echo "TAP version 13"
echo "1..2"
echo "# apps class $class cpus $N"
failed=0
for a in $ALONE; do
	prepare "$a"
	timed "$a" || failed=$((failed + 1))
	rm -rf "${WORK:?}/$a"
done
check $failed 0 "every application alone ran"
failed=0
for p in $PAIRS; do
	a=${p%+*}
	b=${p#*+}
	prepare "$a"
	prepare "$b"
	timed "$a" "$p" >$WORK/pair-a.out &
	timed "$b" "$p" >$WORK/pair-b.out || failed=$((failed + 1))
	wait $! || failed=$((failed + 1))
	cat $WORK/pair-a.out $WORK/pair-b.out
	rm -rf "${WORK:?}/$a" "${WORK:?}/$b"
done
check $failed 0 "every pair ran"
rm -rf $WORK
tap_done
