#!/bin/bash
# t_bootrecord: the boot record between entropyd in the initramfs and the service's instance.
# A daemon started with --initramfs leaves it (root's, 0644, this boot's id, ended, its
# sources) when it stops; a daemon started after it reads it: the verdict, entropyctl status,
# --json and the metrics (entropyd_kernel_crng_ready_after_seconds,
# entropyd_initramfs_credited_bits) tell what the initramfs's instance did. A record of
# another boot, a malformed or oversized one, one others may write, or a symlink, is refused
# with a log line that names the problem, and the daemon runs on as if there were none.
# As root (the record must be root's, and the daemon's collector takes its own user).
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root (the boot record is trusted only if root's)"
command -v jq > /dev/null || skip "no jq"
BOOT_ID=$(cat /proc/sys/kernel/random/boot_id) || skip "no /proc/sys/kernel/random/boot_id"
ctl() { "$ENTROPYCTL" -s "$CTL_SOCKET" "$@"; }
write_config "$T/e.conf"
REC=$T/initramfs/entropyd-boot.json

# ---- the initramfs's instance leaves the record ----
start_daemon --dry-run --initramfs --boot-record "$REC" -f "$T/e.conf"
[ -s "$REC" ] || fail "no boot record at start"
stop_daemon
[ "$(stat -c '%U %a' "$REC")" = "root 644" ] || fail "boot record is $(stat -c '%U %a' "$REC"), not root 644"
jq_holds --arg id "$BOOT_ID" '.version == 1 and .boot_id == $id and .ended == true and
	(.ran_s | type) == "number" and (.ready_at_start | type) == "boolean" and
	(.credited_bits | type) == "number" and (.sources | type) == "array"' "$REC" > /dev/null ||
	fail "the record: $(cat "$REC")"
pass "--initramfs leaves the record: root 0644, this boot, ended, $(jq -c '{ran_s, ready_at_start, credited_bits}' "$REC")"

# ---- the service's instance reads it: verdict, status, JSON, metrics ----
# The host's CRNG is ready long since: as it was when the service's instance started on a
# machine where the initramfs's credited the last bits.
jq_holds '.ready_at_start' "$REC" > /dev/null ||
	skip "the host's CRNG was not ready: the case of a service started after it is not this host's"
cat > "$REC" <<EOF
{"version":1,"boot_id":"$BOOT_ID","started_s":1.5,"ran_s":4.25,"ended":true,
 "ready_at_start":false,"needed_bits_at_start":256,"ready_after_s":1.36,
 "credited_bits":300,"credited_before_ready_bits":256,
 "sources":[{"class":"block","name":"vda","events":4200,"credited_bits":251.5},
            {"class":"input","name":"event0","events":40,"credited_bits":0}]}
EOF
chmod 0644 "$REC"
start_daemon --dry-run --boot-record "$REC" -f "$T/e.conf"
grep -q "boot record $REC: entropyd ran in the initramfs for 4.2 s and credited 300 bits, 256 before the CRNG was ready (which it saw become ready)" "$T/log" ||
	fail "no log line of the record read: $(grep -i 'boot record' "$T/log")"
ctl --json status > "$T/st.json" || fail "status --json"
jq_holds '.kernel.seed.verdict == "credited" and
	.kernel.seed.summary == "entropyd in the initramfs credited 256 of the 256 bits the CRNG waited for; ready 1.4 s after entropyd started there" and
	(.kernel.ready_after_s - 1.4 | fabs) < 1e-9 and .kernel.seed.initramfs.credited_bits == 300 and
	.kernel.seed.initramfs.ended == true and
	(.kernel.seed.initramfs.sources | map(.name)) == ["vda", "event0"]' "$T/st.json" > /dev/null ||
	fail "status --json: $(jq -c .kernel.seed "$T/st.json")"
ctl status > "$T/status" || fail "status"
grep -qx 'verdict: entropyd in the initramfs credited 256 of the 256 bits the CRNG waited for; ready 1.4 s after entropyd started there' "$T/status" ||
	fail "no verdict of the initramfs in status: $(cat "$T/status")"
grep -qx 'initramfs: entropyd ran 4.2 s, credited 300 bits (256 before the CRNG was ready): block/vda 251.5' "$T/status" ||
	fail "no initramfs line in status: $(cat "$T/status")"
grep -q '^kernel .*: CRNG ready (1.4 s after entropyd started in the initramfs)' "$T/status" ||
	fail "the kernel line: $(grep '^kernel' "$T/status")"
ctl metrics > "$T/metrics" || fail "metrics"
grep -qx 'entropyd_kernel_crng_ready_after_seconds 1.4' "$T/metrics" ||
	fail "no entropyd_kernel_crng_ready_after_seconds: $(grep ready_after "$T/metrics")"
grep -qx 'entropyd_initramfs_credited_bits 300' "$T/metrics" ||
	fail "no entropyd_initramfs_credited_bits: $(grep initramfs "$T/metrics")"
stop_daemon
pass "read by the next instance: $(grep '^verdict:' "$T/status"); metrics ready_after 1.4 s, 300 bits"

# ---- records not to be believed: refused, said, and the daemon runs as without one ----
# refused WHAT REASON: start on the record as it is now, see the reason logged, no initramfs
refused() {
	start_daemon --dry-run --boot-record "$REC" -f "$T/e.conf"
	grep -qF "boot record $REC: ignored: $2" "$T/log" ||
		fail "$1: no \"ignored: $2\": $(grep -i 'boot record' "$T/log")"
	ctl --json status | jq_holds '.kernel.seed.initramfs == null and .kernel.seed.verdict != "credited"' > /dev/null ||
		fail "$1: the record was believed: $(ctl --json status | jq -c .kernel.seed)"
	ctl metrics | grep -q '^entropyd_initramfs_credited_bits' && fail "$1: metric from a refused record"
	stop_daemon
}
good=$(cat "$REC")
sed -i "s/$BOOT_ID/00000000-0000-4000-8000-000000000000/" "$REC"
refused "another boot's" "it is of another boot"
echo "$good" | sed 's/"credited_bits":300/"credited_bits":-300/' > "$REC"
refused "negative credit" '"credited_bits" is -300, outside'
printf '{"version":1,"boot_id":"%s",\001\377garbage' "$BOOT_ID" > "$REC"
refused "malformed" "not JSON"
head -c 70000 /dev/zero | tr '\0' ' ' > "$REC"
refused "oversized" "larger than 65536 bytes"
echo "$good" > "$REC"
chmod 0666 "$REC"
refused "writable by all" "not root's alone"
chmod 0644 "$REC"
mv "$REC" "$T/elsewhere.json" && ln -s "$T/elsewhere.json" "$REC"
refused "a symlink" "cannot open it"
rm "$REC"
start_daemon --dry-run --boot-record "$REC" -f "$T/e.conf"
grep -qi 'boot record' "$T/log" && fail "a line about a record that is not there: $(grep -i 'boot record' "$T/log")"
stop_daemon
pass "refused, each with its reason, the daemon running on: another boot's, out of range, malformed, oversized, writable by all, a symlink; none: not a word"
