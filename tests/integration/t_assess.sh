#!/bin/bash
# t_assess: entropyd --assess against NIST's reference results (tests/data/sp80090b/*.res),
# its text and JSON forms, the credit a policy gives, and its usage and file errors.
. "$(dirname "$0")/lib.sh"

command -v jq > /dev/null || skip "jq is not installed (it parses the JSON report; apt-get install jq)"

DATA=$top_srcdir/tests/data/sp80090b
: > "$T/empty.conf" # built-in defaults, whatever /etc/entropyd.conf says

# near A B: |A - B| <= 1e-6
near() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-6) }'; }

# nist RES VIEW NAME FIELD: a "VIEW NAME Estimate: FIELD = X" value of NIST's verbose output.
nist() {
	awk -v want="$2 $3 Estimate: $4 = " \
		'index($0, want) == 1 { print substr($0, length(want) + 1); exit }' "$1"
}

# Estimator keys of the JSON report and their names in NIST's output.
KEYS="mcv collision markov compression t_tuple lrs multimcw lag multimmc lz78y"
declare -A NIST_NAME=([mcv]="Most Common Value" [collision]=Collision [markov]=Markov
	[compression]=Compression [t_tuple]=t-Tuple [lrs]=LRS [multimcw]="MultiMCW Prediction"
	[lag]="Lag Prediction" [multimmc]="MultiMMC Prediction" [lz78y]="LZ78Y Prediction")

# ---- every reference file: each estimator of both views, and the assessment, equal NIST's ----
for ref in rand8_short:8 rand4_short:4 rand1_short:1 normal:8 biased-random-bytes:8 truerand_8bit:8; do
	name=${ref%:*} bits=${ref#*:}
	bin=$DATA/$name.bin res=$DATA/$name.res
	"$ENTROPYD" --assess "$bin" --bits "$bits" --json -f "$T/empty.conf" > "$T/$name.json" \
		2> "$T/err" || fail "$name: --assess failed: $(cat "$T/err")"
	jq_holds . "$T/$name.json" > /dev/null || fail "$name: the report is not JSON"
	jq_holds --argjson n "$(stat -c %s "$bin")" '.samples == $n' "$T/$name.json" > /dev/null || fail "$name: samples"
	jq_holds --argjson b "$bits" '.bits == $b' "$T/$name.json" > /dev/null || fail "$name: bits"
	for k in $KEYS; do
		for view in Literal Bitstring; do
			want=$(nist "$res" $view "${NIST_NAME[$k]}" "min entropy")
			if [ $view = Literal ]; then
				got=$(jq -r ".estimators.$k" "$T/$name.json")
			else
				got=$(jq -r ".bitstring.estimators.$k // null" "$T/$name.json")
			fi
			if [ -z "$want" ]; then
				[ "$got" = null ] || fail "$name: $view $k = $got where NIST ran none"
				continue
			fi
			near "$got" "$want" || fail "$name: $view $k = $got, NIST says $want"
		done
		if [ "$k" = mcv ]; then
			w=$(nist "$res" Literal "${NIST_NAME[$k]}" "Mode count")
			g=$(jq -r .details.mcv.mode "$T/$name.json")
			jq_holds --argjson w "$w" '.details.mcv.mode == $w' "$T/$name.json" > /dev/null ||
				fail "$name: MCV mode count $g, NIST says $w"
		elif [ "$k" = multimcw ] || [ "$k" = lag ] || [ "$k" = multimmc ] || [ "$k" = lz78y ]; then
			for f in C N; do
				w=$(nist "$res" Literal "${NIST_NAME[$k]}" "$f")
				g=$(jq -r ".details.$k.$f" "$T/$name.json")
				jq_holds --argjson w "$w" ".details.$k.$f == \$w" "$T/$name.json" > /dev/null ||
					fail "$name: $k $f = $g, NIST says $w"
			done
		fi
	done
	min=$(sed -n 's/^Assessed min entropy: //p' "$res")
	got=$(jq -r .min_entropy "$T/$name.json")
	near "$got" "$min" || fail "$name: min_entropy = $got, NIST assessed $min"
	# min_by names an estimator whose result (times the sample width, for a bit) is it
	jq_holds --argjson b "$bits" '.min_by as $m | .min_entropy as $h |
		if ($m | startswith("bitstring ")) then .bitstring.estimators[$m[10:]] * $b
		else .estimators[$m] end | . == $h' "$T/$name.json" > /dev/null ||
		fail "$name: min_by $(jq -r .min_by "$T/$name.json") did not set $got"
	# input, trusted by default: credit = min(cap, H)
	credit=$(jq -r .credit_per_event "$T/$name.json")
	want=$(awk -v h="$min" 'BEGIN { printf "%.17g", h < 2 ? h : 2 }')
	near "$credit" "$want" || fail "$name: credit_per_event = $credit, want min(2, $min) = $want"
done
pass "each of the ten estimators in both views, and the assessment, equal NIST's on 6 reference files"

# ---- the text form ----
"$ENTROPYD" --assess "$DATA/rand8_short.bin" --bits 8 -f "$T/empty.conf" > "$T/text" 2>&1 ||
	fail "text form failed: $(cat "$T/text")"
for word in "Most Common Value" Collision Markov Compression t-Tuple LRS MultiMCW Lag MultiMMC \
	LZ78Y H_original "H_bitstring .*set by Compression" "minimum .*set by bitstring Compression" \
	"credit per event" "ea_non_iid" "restart tests" "IID tests"; do
	grep -q "$word" "$T/text" || fail "the text form lacks \"$word\": $(cat "$T/text")"
done
h=$(jq -r .estimators.lag "$T/rand8_short.json")
grep -qE "^  Lag +$(printf %.6f "$h") +[0-9.]+\$" "$T/text" || fail "text: Lag is not $h, aligned"
pass "the text form names every estimator, the minimum and the limits of the tool"

# ---- policy: network with the default policy gets 0.25 x min(cap 0.5, H) ----
B=$DATA/rand8_short.bin
# biased-random-bytes is below the cap (H = 0.2577...), rand8_short above it
for name in biased-random-bytes rand8_short; do
	"$ENTROPYD" --assess "$DATA/$name.bin" --bits 8 --class network --json \
		-f "$T/empty.conf" > "$T/net.json" || fail "--class network failed"
	h=$(jq -r .min_entropy "$T/net.json")
	want=$(awk -v h="$h" 'BEGIN { printf "%.17g", 0.25 * (h < 0.5 ? h : 0.5) }')
	near "$(jq -r .credit_per_event "$T/net.json")" "$want" ||
		fail "$name: network credit $(jq -r .credit_per_event "$T/net.json"), want $want"
	jq_holds '.class == "network" and .policy.mode == "reduced" and .policy.scale == 0.25 and
		.policy.cap_bits_per_event == 0.5' "$T/net.json" > /dev/null ||
		fail "network policy in the report: $(jq -c .policy "$T/net.json")"
done
# A loaded config's rule is the one used.
cat > "$T/policy.conf" <<'CONF'
policy = {
  block = { mode = "trusted"; cap_bits_per_event = 3.0; };
  input = { mode = "mix-only"; };
};
CONF
out=$("$ENTROPYD" --assess "$B" --bits 8 --class block --json -f "$T/policy.conf") ||
	fail "--class block with a config failed"
h=$(echo "$out" | jq -r .min_entropy)
near "$(echo "$out" | jq -r .credit_per_event)" "$(awk -v h="$h" 'BEGIN { print (h < 3 ? h : 3) }')" ||
	fail "block credit is not min(3, $h): $(echo "$out" | jq -c .)"
[ "$(echo "$out" | jq -r .config)" = "$T/policy.conf" ] || fail "config not named"
out=$("$ENTROPYD" --assess "$B" --bits 8 --json -f "$T/policy.conf")
echo "$out" | jq_holds '.credit_per_event == 0' > /dev/null ||
	fail "mix-only credited $(echo "$out" | jq -r .credit_per_event)"
pass "credit per event follows the class policy (network 0.25 x min(0.5, H); a loaded config)"

# ---- --instance: the class rule with the instance's first matching override ----
cat > "$T/inst.conf" <<'CONF'
policy = { network = { mode = "reduced"; scale = 0.5;
  instances = ( { name = "eth1"; mode = "trusted"; cap_bits_per_event = 1.0; },
                { name = "wl*"; mode = "mix-only"; } ); }; };
CONF
out=$("$ENTROPYD" --assess "$B" --bits 8 --class network --instance eth1 --json -f "$T/inst.conf" 2>/dev/null) ||
	fail "--instance eth1 failed"
h=$(echo "$out" | jq -r .min_entropy)
echo "$out" | jq_holds '.instance == "eth1" and .override == "eth1" and .policy.mode == "trusted" and
	.policy.cap_bits_per_event == 1' > /dev/null || fail "eth1's override not applied: $(echo "$out" | jq -c .)"
near "$(echo "$out" | jq -r .credit_per_event)" "$(awk -v h="$h" 'BEGIN { print (h < 1 ? h : 1) }')" ||
	fail "eth1: credit is not min(1, $h): $(echo "$out" | jq -c .)"
out=$("$ENTROPYD" --assess "$B" --bits 8 --class network --instance wlan0 --json -f "$T/inst.conf" 2>/dev/null)
echo "$out" | jq_holds '.override == "wl*" and .policy.mode == "mix-only" and .credit_per_event == 0' \
	> /dev/null || fail "wlan0: the glob's override not applied: $(echo "$out" | jq -c .)"
out=$("$ENTROPYD" --assess "$B" --bits 8 --class network --instance eth0 --json -f "$T/inst.conf" 2>/dev/null)
echo "$out" | jq_holds '.instance == "eth0" and .override == null and .policy.mode == "reduced" and
	.policy.scale == 0.5' > /dev/null || fail "eth0: not the class rule: $(echo "$out" | jq -c .)"
"$ENTROPYD" --assess "$B" --bits 8 --class network --instance eth0 -f "$T/inst.conf" 2>/dev/null |
	grep -q "override  *none matches eth0: the class rule applies" || fail "eth0: the text does not say no override matches"
"$ENTROPYD" --assess "$B" --bits 8 --class network --instance eth1 -f "$T/inst.conf" 2>/dev/null |
	grep -q "^Policy for instance eth1 of class network" || fail "the text does not name the instance"
pass "--instance applies the instance's override (by name and by glob), or says none matches"

# ---- small and degenerate files ----
head -c 1000 "$DATA/rand8_short.bin" > "$T/short.bin"
out=$("$ENTROPYD" --assess "$T/short.bin" --bits 8 --json -f "$T/empty.conf") || fail "short file"
[ "$(echo "$out" | jq -r .estimators.multimcw)" = null ] || fail "MultiMCW ran on 1000 samples"
[ "$(echo "$out" | jq -r .estimators.mcv)" != null ] || fail "MCV did not run on 1000 samples"
"$ENTROPYD" --assess "$T/short.bin" --bits 8 -f "$T/empty.conf" 2> "$T/err" > "$T/text" ||
	fail "short file, text form"
grep -qE "^  MultiMCW +- \(needs 4096 samples\) +[0-9.]+\$" "$T/text" ||
	fail "the text form does not say, in its column, why MultiMCW did not run: $(cat "$T/text")"
grep -q "warning: $T/short.bin holds 1000 samples; SP 800-90B asks for at least 1000000" "$T/err" ||
	fail "no warning about a 1000-sample file: $(cat "$T/err")"
[ "$(wc -l < "$T/err")" -eq 1 ] || fail "more than the warning on stderr: $(cat "$T/err")"
head -c 1000000 /dev/urandom > "$T/million.bin"
"$ENTROPYD" --assess "$T/million.bin" --bits 1 --json -f "$T/empty.conf" 2> "$T/err" > /dev/null ||
	fail "a file of 1000000 samples: $(cat "$T/err")"
[ -s "$T/err" ] && fail "a file of 1000000 samples was warned about: $(cat "$T/err")"
head -c 5000 /dev/zero > "$T/zero.bin"
out=$("$ENTROPYD" --assess "$T/zero.bin" --bits 8 --json -f "$T/empty.conf") || fail "constant file"
echo "$out" | jq_holds '.min_entropy == 0 and .min_by == null and .credit_per_event == 0 and
	([.estimators[]] | all(. == null))' > /dev/null || fail "constant file: $(echo "$out" | jq -c .)"
out=$("$ENTROPYD" --assess "$DATA/rand8_short.bin" --bits 4 --json -f "$T/empty.conf")
echo "$out" | jq_holds '.above_bits > 0' > /dev/null || fail "--bits 4 on 8-bit data: above_bits not counted"
pass "too few samples for an estimator or for SP 800-90B, a constant file, and masked bits are reported"

# ---- errors: status 2 for usage, 1 for a file that cannot be read; one clear line ----
# expect STATUS PATTERN ARGS...
expect() {
	local want=$1 pattern=$2 rc=0; shift 2
	"$ENTROPYD" "$@" > "$T/out" 2> "$T/err" || rc=$?
	[ "$rc" -eq "$want" ] || fail "entropyd $*: status $rc, want $want; $(cat "$T/err")"
	grep -q -- "$pattern" "$T/err" || fail "entropyd $*: no \"$pattern\" in: $(cat "$T/err")"
	[ -s "$T/out" ] && fail "entropyd $*: printed a report: $(cat "$T/out")"
	return 0
}
expect 2 "--bits" --assess "$B" -f "$T/empty.conf"
expect 2 '--bits: "0" is not allowed; allowed: an integer from 1 to 8' --assess "$B" --bits 0
expect 2 '--bits: "9" is not allowed' --assess "$B" --bits 9
expect 2 '--bits: "8x" is not allowed' --assess "$B" --bits 8x
expect 2 'unknown class "disk"; allowed: input, block, network' --assess "$B" --bits 8 --class disk
expect 2 "go with --assess" --bits 8
expect 2 "go with --assess" --json
expect 2 "go with --assess" --instance eth0
expect 2 "--instance needs --class" --assess "$B" --bits 8 --instance eth0
expect 2 "--instance: the instance name is empty" --assess "$B" --bits 8 --class network --instance ""
expect 2 "does not go with" --assess "$B" --bits 8 -n
expect 2 "does not go with" --assess "$B" --bits 8 --record "$T/rec"
expect 1 "$T/missing.bin: No such file or directory" --assess "$T/missing.bin" --bits 8 -f "$T/empty.conf"
expect 1 "$T is a directory" --assess "$T" --bits 8 -f "$T/empty.conf"
: > "$T/empty.bin"
expect 1 "$T/empty.bin is empty" --assess "$T/empty.bin" --bits 8 -f "$T/empty.conf"
printf 'x' > "$T/one.bin"
expect 1 "$T/one.bin holds 1 sample" --assess "$T/one.bin" --bits 8 -f "$T/empty.conf"
if [ "$(id -u)" -ne 0 ]; then
	cp "$B" "$T/locked.bin" && chmod 000 "$T/locked.bin"
	expect 1 "Permission denied" --assess "$T/locked.bin" --bits 8 -f "$T/empty.conf"
fi
echo 'policy = { input = { mode = "sometimes"; }; };' > "$T/bad.conf"
expect 1 "policy.input.mode" --assess "$B" --bits 8 -f "$T/bad.conf"
pass "usage errors exit 2, unreadable, empty and too short files 1, each with a clear message"

# ---- --record: an empty directory name is refused; -p shows the directory in effect ----
expect 2 "--record: the directory name is empty" --record "" -n -f "$T/empty.conf"
(cd "$T" && "$ENTROPYD" -p --record rec -f "$T/empty.conf") > "$T/p.conf" || fail "-p --record"
grep -q "dir = \"$T/rec\";" "$T/p.conf" || fail "-p --record rec: $(grep -A3 '^record' "$T/p.conf")"
pass "--record makes a relative directory absolute and replaces record.dir"
