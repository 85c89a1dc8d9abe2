#!/bin/bash
# t_metrics_rules: the Prometheus alert rules shipped in contrib/metrics are valid
# ("promtool check rules"), each alert fires as its unit tests say ("promtool test rules"):
# a dead source but not a link set down, a failing and a flapping source, each weighed by
# whether the kernel still counts credit, a long wait for the CRNG, metrics stale or absent;
# and every entropyd metric they use is one entropyctl metrics produces (entropyctl(8)'s list,
# which t_manoutput holds to the program's output). tests/system/t_metrics.sh runs the same
# rules in a real Prometheus.
. "$(dirname "$0")/lib.sh"

command -v promtool > /dev/null || skip "no promtool (Debian package prometheus)"
M=$top_srcdir/contrib/metrics
cp "$M/entropyd.rules.yml" "$M/entropyd.rules.test.yml" "$T/"
out=$(promtool check rules "$T/entropyd.rules.yml" 2>&1) || fail "promtool check rules: $out"
n=$(echo "$out" | grep -oE '[0-9]+ rules found' | cut -d' ' -f1)
[ "${n:-0}" -ge 10 ] || fail "fewer rules than the alerts promised: $out"
out=$(cd "$T" && promtool test rules entropyd.rules.test.yml 2>&1) || fail "promtool test rules: $out"
pass "promtool: $n rules valid, their unit tests pass"

for alert in EntropydSourceDown EntropydSourceHealthFailing EntropydSourceHealthFlapping \
	EntropydCrngWaitedLongAtBoot EntropydCrngNotReady EntropydMetricsAbsent EntropydMetricsStale; do
	grep -q "alert: $alert\$" "$T/entropyd.rules.yml" || fail "no alert $alert"
	grep -q "alertname: $alert\$" "$T/entropyd.rules.test.yml" || fail "$alert has no unit test"
done
for m in $(grep -oE 'entropyd_[a-z_]+' "$T/entropyd.rules.yml" | sort -u); do
	grep -qx "\\.B $m" "$top_builddir/man/entropyctl.8" || fail "$m is not a metric entropyctl produces"
done
# Each failure of a source has a warning where credit counts and information where not.
for alert in EntropydSourceDown EntropydSourceHealthFailing EntropydSourceHealthFlapping; do
	for sev in warning info; do
		awk -v a="$alert" -v s="$sev" '$0 ~ "alert: " a "$" { in_a = 1; next }
			/alert:/ { in_a = 0 } in_a && $0 ~ "severity: " s "$" { found = 1 }
			END { exit !found }' "$T/entropyd.rules.yml" || fail "$alert has no $sev rule"
	done
done
pass "a dead source (not a link set down), a failing and a flapping one (warning where credit counts, else information), a long wait for the CRNG, metrics stale or absent each alert, on metrics entropyctl produces"
