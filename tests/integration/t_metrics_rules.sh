#!/bin/bash
# t_metrics_rules: the Prometheus alert rules shipped in contrib/metrics are valid
# ("promtool check rules"), each alert fires as its unit tests say ("promtool test rules"),
# and every entropyd metric they use is one entropyctl metrics produces (entropyctl(8)'s list,
# which t_manoutput holds to the program's output).
. "$(dirname "$0")/lib.sh"

command -v promtool > /dev/null || skip "no promtool (Debian package prometheus)"
M=$top_srcdir/contrib/metrics
cp "$M/entropyd.rules.yml" "$M/entropyd.rules.test.yml" "$T/"
out=$(promtool check rules "$T/entropyd.rules.yml" 2>&1) || fail "promtool check rules: $out"
n=$(echo "$out" | grep -oE '[0-9]+ rules found' | cut -d' ' -f1)
[ "${n:-0}" -ge 4 ] || fail "fewer rules than the alerts promised: $out"
out=$(cd "$T" && promtool test rules entropyd.rules.test.yml 2>&1) || fail "promtool test rules: $out"
pass "promtool: $n rules valid, their unit tests pass"

for alert in EntropydSourceDown EntropydSourceHealthFailing EntropydCrngWaitedLongAtBoot; do
	grep -q "alert: $alert\$" "$T/entropyd.rules.yml" || fail "no alert $alert"
	grep -q "alertname: $alert\$" "$T/entropyd.rules.test.yml" || fail "$alert has no unit test"
done
for m in $(grep -oE 'entropyd_[a-z_]+' "$T/entropyd.rules.yml" | sort -u); do
	grep -qx "\\.B $m" "$top_builddir/man/entropyctl.8" || fail "$m is not a metric entropyctl produces"
done
pass "a dead source, a failing source and a long wait for the CRNG each alert, on metrics entropyctl produces"
