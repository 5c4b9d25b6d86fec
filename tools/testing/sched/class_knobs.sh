#!/bin/sh
# In-guest TAP test of the classes' integer sysctls (kernel.sched_ule_*,
# sched_bmq_*, sched_muqss_*): a word, the value above the top of the range
# and the one below its bottom are refused with EINVAL, leave the value as
# it was and log one line each that gives the range; the current value
# written back is taken silently. The range is read from the first line,
# so that the test holds whatever each knob's bounds are.
# Usage: class_knobs.sh
. "$(dirname "$0")/tap.sh"

K=/proc/sys/kernel
# pr_warn_ratelimited() lets 10 lines through in 5 s: stay under that.
GAP=0.3

knobs=""
for f in $K/sched_ule_* $K/sched_bmq_* $K/sched_muqss_*; do
	[ -f "$f" ] || continue
	case $(cat "$f") in
	*[!0-9-]*) ;;	# a word (sched_muqss_rqshare): not an integer knob
	*) knobs="$knobs ${f##*/}" ;;
	esac
done
set -- $knobs

echo "TAP version 13"
echo "1..$(($# * 4 + 1))"
[ $# -ge 15 ] && ok "$# integer knobs" || not_ok "$# integer knobs, want 15 or more"

lines() {
	dmesg | grep -c "sched: kernel\.$1 takes an integer from"
}

# refused KNOB VALUE WHAT: the write fails, keeps the value, logs one line.
refused() {
	before=$(cat $K/$1)
	seen=$(lines "$1")
	if (echo "$2" >$K/$1) 2>/dev/null; then
		not_ok "$1: $3 '$2' accepted"
	else
		sleep $GAP
		check "$(cat $K/$1) $(($(lines "$1") - seen))" "$before 1" \
			"$1: $3 '$2' refused, value kept, one line"
	fi
}

for knob; do
	refused "$knob" "many" "a word"
	range=$(dmesg | sed -n "s/.*sched: kernel\.$knob takes an integer from \(-\{0,1\}[0-9]*\) to \(-\{0,1\}[0-9]*\)\$/\1 \2/p" | tail -n 1)
	low=${range% *}
	high=${range#* }
	if [ -z "$range" ]; then
		not_ok "$knob: no range in the line"
		not_ok "$knob: above the range (unknown)"
		not_ok "$knob: below the range (unknown)"
		continue
	fi
	echo "# $knob: $low..$high"
	refused "$knob" $((high + 1)) "above the range:"
	refused "$knob" $((low - 1)) "below the range:"
	seen=$(lines "$knob")
	value=$(cat $K/$knob)
	if (echo "$value" >$K/$knob) 2>/dev/null; then
		check "$(cat $K/$knob) $(($(lines "$knob") - seen))" "$value 0" \
			"$knob: its current value written back silently"
	else
		not_ok "$knob: its current value $value refused"
	fi
done
tap_done
