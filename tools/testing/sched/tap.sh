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
tap_done() {
	echo "# $fails of $n failed"
	[ $fails -eq 0 ]
}
