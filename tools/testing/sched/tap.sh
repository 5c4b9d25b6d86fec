# TAP helpers for the in-guest test programs; source it, then call
# ok/not_ok/check/rejects and end with tap_done (exit status: any failure).
n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
check() { if [ "$1" = "$2" ]; then ok "$3"; else not_ok "$3 (got '$1', want '$2')"; fi; }
# rejects FILE VALUE: writing VALUE must fail and leave FILE's value alone.
rejects() {
	before=$(cat "$1")
	if (echo "$2" >"$1") 2>/dev/null; then
		not_ok "$1 rejects '$2'"
	else
		check "$(cat "$1")" "$before" "$1 rejects '$2'"
	fi
}
# metric NAME KEY=VALUE...: one JSON object a line, {"name": NAME,
# "KEY": VALUE, ...}, appended to the file SCHED_TEST_METRICS names
# (nothing without it), as sched_test.h's metric() does for the C tests.
# A VALUE that is not a JSON number is written as a string: one that may
# hold a quote, a backslash or a control character must go through
# json_escape first. Builtins only: callers sample in loops that must not
# fork.
metric() {
	[ -n "$SCHED_TEST_METRICS" ] || return 0
	_m="{\"name\": \"$1\""
	shift
	for _kv; do
		_v=${_kv#*=}
		case $_v in
		'' | - | *[!0-9.-]* | ?*-* | *.*.* | .* | *. | -.* | 0[0-9]* | -0[0-9]*) _v="\"$_v\"" ;;
		esac
		_m="$_m, \"${_kv%%=*}\": $_v"
	done
	printf '%s}\n' "$_m" >>"$SCHED_TEST_METRICS"
}
# json_escape TEXT: TEXT as the inside of a JSON string (control
# characters dropped), for metric(). Forks: not for sampling loops.
json_escape() {
	printf '%s' "$1" | tr -d '\000-\037' | sed 's/[\\"]/\\&/g'
}
tap_done() {
	echo "# $fails of $n failed"
	[ $fails -eq 0 ]
}
