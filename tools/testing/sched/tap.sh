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
# A VALUE that is not a JSON number is written as a string; no KEY or
# VALUE may hold a quote or a backslash. Builtins only: callers sample in
# loops that must not fork.
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
	echo "$_m}" >>"$SCHED_TEST_METRICS"
}
tap_done() {
	echo "# $fails of $n failed"
	[ $fails -eq 0 ]
}
