#!/bin/bash
# t_metrics: from entropyd's metrics to an alert, end to end, as an administrator sets it up on
# Debian (entropyd(8), MONITORING). In the container of t_system.sh, with Debian's own
# prometheus-node-exporter and Prometheus server as packaged: the shipped
# entropyd-metrics.service and .timer, copied to /etc/systemd/system, write entropyd.prom into
# the exporter's textfile directory (root's, as Debian leaves it); Prometheus scrapes the
# exporter and evaluates the shipped rules (a copy with for: and the staleness bound
# shortened, so that the run takes a minute, not an hour). The test waits, polling
# /api/v1/alerts, for the alerts that must fire — an interface that never opens (named, not
# there), the metrics no longer refreshed (the timer stopped), the metrics file removed —
# and checks that an interface set down, which waits for its link, does not fire
# EntropydSourceDown. Last, with entropyd stopped, the service fails and leaves no file.
#
# Run it with "make check-system". Needs what t_system.sh needs.
set -u

. "$(dirname "$0")/lib.sh"

# The container runs through every wait below.
BOOT_LIMIT=600
# Seconds to wait for an alert's state; its for: is FOR_S here, the scrapes 1 s apart.
ALERT_LIMIT=120
FOR_S=5
TEXTFILE=/var/lib/prometheus/node-exporter

# ---- entropyd installed the way a user would, the metrics units as the man page says ----
timeout -k 10 "$INSTALL_LIMIT" make -C "$top_builddir" --no-print-directory -s install \
	DESTDIR="$ROOT" > "$W/install.log" 2>&1 || { cat "$W/install.log" >&2; fail "make install failed"; }
systemd-sysusers --root="$ROOT" > "$W/sysusers.log" 2>&1 || { cat "$W/sysusers.log"; fail "systemd-sysusers"; }
systemctl --root="$ROOT" enable entropyd.service > /dev/null 2>&1 || fail "systemctl enable entropyd.service"
ln -sf /dev/null "$ROOT/etc/systemd/system/console-getty.service"

[ -d "$ROOT$TEXTFILE" ] || fail "prometheus-node-exporter made no $TEXTFILE"
owner=$(stat -c '%U:%G %a' "$ROOT$TEXTFILE")
say "$TEXTFILE is $owner, as Debian's package leaves it"
cp "$top_srcdir"/contrib/metrics/entropyd-metrics.service \
	"$top_srcdir"/contrib/metrics/entropyd-metrics.timer "$ROOT/etc/systemd/system/" ||
	fail "cannot copy the metrics units"
# The shipped timer, every 2 s instead of 30 (an empty setting resets every one of its
# time settings).
mkdir -p "$ROOT/etc/systemd/system/entropyd-metrics.timer.d"
printf '[Timer]\nOnBootSec=\nOnBootSec=1s\nOnUnitActiveSec=2s\nAccuracySec=100ms\n' \
	> "$ROOT/etc/systemd/system/entropyd-metrics.timer.d/test.conf"
systemctl --root="$ROOT" enable entropyd-metrics.timer > /dev/null 2>&1 ||
	fail "systemctl enable entropyd-metrics.timer"
monitoring enable

# Prometheus: the exporter on the container's loopback, every second; the shipped rules with
# every for: at FOR_S seconds, the staleness bound at 10 s and the flapping window at 2 m.
sed -e "s/^\( *for:\) .*/\1 ${FOR_S}s/" \
	-e 's/node_textfile_mtime_seconds\(.*\) > 300$/node_textfile_mtime_seconds\1 > 10/' \
	-e 's/\[1h\]/[2m]/g' "$top_srcdir/contrib/metrics/entropyd.rules.yml" \
	> "$ROOT/etc/prometheus/entropyd.rules.yml" || fail "cannot copy the rules"
grep -q 'mtime_seconds.* > 10$' "$ROOT/etc/prometheus/entropyd.rules.yml" ||
	fail "the staleness bound of the rules was not shortened"
cat > "$ROOT/etc/prometheus/prometheus.yml" << 'PROM'
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - /etc/prometheus/entropyd.rules.yml
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ['127.0.0.1:9100']
PROM

boot

# ---- entropyd with three interfaces: lo, one that will be set down, one that never exists ----
CONF=$(inside entropyd -p 2> /dev/null | sed -n 's/^# entropyd configuration in effect.*; from //p')
case "$CONF" in /*) ;; *) fail "cannot tell the configuration file (entropyd -p): $CONF" ;; esac
nsenter -t "$LEADER" -n ip link add edtest0 type veth peer name edtest1 || fail "no veth in the container"
nsenter -t "$LEADER" -n ip link set edtest1 up
nsenter -t "$LEADER" -n ip link set edtest0 up
inside sh -c "cat > '$CONF'" << 'CONF'
policy = { input = { mode = "disabled"; }; block = { mode = "disabled"; };
           network = { mode = "trusted"; }; };
sources = { network = { interfaces = [ "lo", "edtest0", "nosuch0" ]; }; };
CONF
inside systemctl restart entropyd.service || fail "systemctl restart entropyd"
state_of() { inside entropyctl --json sources | jq -r --arg n "$1" '.sources[] | select(.name == $n) | .state'; }
wait_for 20 eval '[ "$(state_of edtest0)" = open ]' || fail "network/edtest0 not open: $(inside entropyctl sources)"
nsenter -t "$LEADER" -n ip link set edtest0 down
wait_for 20 eval '[ "$(state_of edtest0)" = waiting ]' ||
	fail "network/edtest0 set down is $(state_of edtest0), not waiting"
[ "$(state_of nosuch0)" = not-open ] || fail "network/nosuch0 is $(state_of nosuch0), not not-open"
DOWN_AT=$(date +%s)
pass "entropyd: network/lo open, edtest0 set down (waiting), nosuch0 not-open"

# ---- the shipped service writes the file as root; node_exporter serves it ----
wait_for 20 inside test -s "$TEXTFILE/entropyd.prom" ||
	fail "no $TEXTFILE/entropyd.prom: $(inside systemctl status --no-pager entropyd-metrics.timer entropyd-metrics.service 2>&1 | tail -20)"
[ "$(inside stat -c %U "$TEXTFILE/entropyd.prom")" = root ] || fail "entropyd.prom not written by root"
inside systemctl is-active -q prometheus-node-exporter.service || fail "node_exporter is not running"
inside systemctl is-active -q prometheus.service || fail "Prometheus is not running"
# api PATH: the answer of the container's Prometheus, from its network namespace
api() {
	nsenter -t "$LEADER" -n python3 -c 'import sys, urllib.request
sys.stdout.write(urllib.request.urlopen("http://127.0.0.1:9090" + sys.argv[1], timeout=5).read().decode())' "$1" 2> /dev/null
}
query() { api "/api/v1/query?query=$1" | jq -r '.data.result[] | .value[1]'; }
wait_for 60 eval '[ "$(query entropyd_uptime_seconds)" != "" ]' ||
	fail "Prometheus has no entropyd_uptime_seconds: $(api '/api/v1/targets' | jq -c '.data.activeTargets[] | {health, lastError}')"
rules=$(api /api/v1/rules | jq '[.data.groups[].rules[]] | length')
[ "$rules" -ge 10 ] || fail "Prometheus loaded $rules rules, want the 10 shipped"
pass "entropyd-metrics.service wrote entropyd.prom as root into $TEXTFILE ($owner); node_exporter serves it, Prometheus scrapes it and loaded $rules rules"

# firing NAME [LABEL=VALUE]: the alert NAME fires (with that label)
firing() {
	local kv=${2:-}

	api /api/v1/alerts | jq -e --arg a "$1" --arg l "${kv%%=*}" --arg v "${kv#*=}" \
		'[.data.alerts[] | select(.labels.alertname == $a and .state == "firing" and
			($l == "" or .labels[$l] == $v))] | length > 0' > /dev/null
}
alerts() { api /api/v1/alerts | jq -c '[.data.alerts[] | {a: .labels.alertname, n: .labels.name, s: .state, sev: .labels.severity}]'; }

# ---- an interface that never opens fires EntropydSourceDown; one set down does not ----
wait_for "$ALERT_LIMIT" firing EntropydSourceDown name=nosuch0 ||
	fail "EntropydSourceDown for network/nosuch0 did not fire: $(alerts)"
sev=$(api /api/v1/alerts | jq -r '.data.alerts[] | select(.labels.alertname == "EntropydSourceDown" and .labels.name == "nosuch0") | .labels.severity')
counts=$(query entropyd_kernel_credit_counts)
case "$counts/$sev" in 1/warning | 0/info) ;; *) fail "severity $sev where entropyd_kernel_credit_counts is $counts" ;; esac
[ "$(query 'entropyd_source_up{name="edtest0"}')" = 0 ] || fail "Prometheus does not see edtest0 down"
# As long again as the rule needs, and more, edtest0 stays out of every alert.
until_t=$(($(date +%s) + 3 * FOR_S + 5))
[ "$until_t" -gt $((DOWN_AT + 3 * FOR_S + 5)) ] || until_t=$((DOWN_AT + 3 * FOR_S + 5))
while [ "$(date +%s)" -le "$until_t" ]; do
	# jq 1.6 passes an empty answer: a Prometheus that did not answer must not count as no alert.
	a=$(api /api/v1/alerts) && [ -n "$a" ] || fail "Prometheus did not answer /api/v1/alerts"
	echo "$a" | jq -e '[.data.alerts[] | select(.labels.name == "edtest0")] | length == 0' > /dev/null ||
		fail "an alert for network/edtest0, which is only set down: $(alerts)"
	sleep 1
done
pass "EntropydSourceDown fires for network/nosuch0 (severity $sev: the kernel counts credit: $counts); none for edtest0, down for $(($(date +%s) - DOWN_AT)) s"

# ---- the metrics no longer refreshed: EntropydMetricsStale ----
inside systemctl stop entropyd-metrics.timer || fail "systemctl stop entropyd-metrics.timer"
wait_for "$ALERT_LIMIT" firing EntropydMetricsStale ||
	fail "EntropydMetricsStale did not fire with the timer stopped: $(alerts)"
pass "the timer stopped: EntropydMetricsStale fires"

# ---- the file removed: EntropydMetricsAbsent, for this host ----
inside rm "$TEXTFILE/entropyd.prom" || fail "cannot remove entropyd.prom"
wait_for "$ALERT_LIMIT" firing EntropydMetricsAbsent instance=127.0.0.1:9100 ||
	fail "EntropydMetricsAbsent did not fire with the file removed: $(alerts)"
pass "the file removed: EntropydMetricsAbsent fires for 127.0.0.1:9100"

# ---- entropyd stopped: the service fails and removes the file, old values are not served ----
inside systemctl start entropyd-metrics.service || fail "entropyd-metrics.service failed with entropyd running"
inside test -s "$TEXTFILE/entropyd.prom" || fail "entropyd-metrics.service wrote no file"
inside systemctl stop entropyd.service
inside systemctl start entropyd-metrics.service > /dev/null 2>&1 &&
	fail "entropyd-metrics.service succeeded with entropyd stopped"
inside test -e "$TEXTFILE/entropyd.prom" && fail "entropyd.prom left with old values after entropyd stopped"
pass "entropyd stopped: entropyd-metrics.service fails and leaves no file"

inside systemctl poweroff > /dev/null 2>&1
wait_for 30 eval '! kill -0 "$NSPAWN_PID" 2> /dev/null' || say "the container did not power off: killing it"
LEADER=
say "total $(($(date +%s) - T0)) s"
pass "from entropyd's metrics to Prometheus's alerts"
