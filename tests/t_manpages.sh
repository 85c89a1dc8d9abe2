#!/bin/bash
# t_manpages: the man pages are lint-clean (mandoc -T lint prints nothing) and complete:
# entropyd.conf(5) describes, and lists, exactly the keys the config parser accepts;
# entropyd(8) and entropyctl(8) name every option and command their --help gives.
. "$(dirname "$0")/lib.sh"
: "${ENTROPYCTL:=$top_builddir/src/entropyctl}"

MAN=$top_srcdir/man
command -v mandoc > /dev/null || skip "mandoc not found (apt-get install mandoc)"

for page in "$MAN"/*.[0-9]; do
	out=$(mandoc -T lint "$page" 2>&1)
	[ -z "$out" ] || fail "mandoc -T lint $(basename "$page"): $out"
	grep -q "man/$(basename "$page")" "$top_srcdir/Makefile.am" ||
		fail "$(basename "$page") is not installed (dist_man_MANS in Makefile.am)"
done
for page in entropyd.8 entropyd.conf.5 entropyctl.8; do
	[ -f "$MAN/$page" ] || fail "man/$page is missing"
done
pass "mandoc -T lint is clean: $(cd "$MAN" && echo *.[0-9])"

# ---- entropyd.conf(5) against the parser ----
"$ENTROPYD" --print-keys > "$T/parser" || fail "entropyd --print-keys failed"
[ -s "$T/parser" ] || fail "entropyd --print-keys printed nothing"
sort -u -o "$T/parser" "$T/parser"

# The list in LIST OF KEYS.
sed -n '/^\.SH LIST OF KEYS/,/^\.SH [^L]/p' "$MAN/entropyd.conf.5" |
	grep -E '^[a-z_]+(\.[a-z_]+(\[\])?)+$' | sort -u > "$T/listed"
# The keys described: the tag of each .TP, as .B key or .BI policy. CLASS .key (CLASS
# standing for each class).
awk '
	prev == ".TP" && ($1 == ".B" || $1 == ".BI") {
		key = ""
		for (i = 2; i <= NF; i++) key = key $i
		if (key ~ /^[a-z_]+(\.[A-Za-z_]+(\[\])?)+$/) {
			if (key ~ /CLASS/) {
				n = split("input block network", cls, " ")
				for (c = 1; c <= n; c++) { k = key; sub(/CLASS/, cls[c], k); print k }
			} else print key
		}
	}
	{ prev = $1 }' "$MAN/entropyd.conf.5" | sort -u > "$T/described"

check_sets() { # what-is-missing FILE-A NAME-A FILE-B NAME-B
	local extra
	extra=$(comm -23 "$1" "$3")
	[ -z "$extra" ] || fail "$(echo "$extra" | tr '\n' ' ')— in $2 but not in $4"
}
check_sets "$T/parser" "the parser" "$T/described" "entropyd.conf(5)'s descriptions"
check_sets "$T/parser" "the parser" "$T/listed" "entropyd.conf(5)'s LIST OF KEYS"
check_sets "$T/described" "entropyd.conf(5)'s descriptions" "$T/parser" "the parser"
check_sets "$T/listed" "entropyd.conf(5)'s LIST OF KEYS" "$T/parser" "the parser"
pass "entropyd.conf(5) documents exactly the $(wc -l < "$T/parser") keys the parser accepts"

# ---- options and commands against --help ----
# Every long option of PROGRAM's --help must be in PAGE (written \-\-option there).
options_in_page() {
	local prog=$1 page=$2 opt
	for opt in $("$prog" --help | grep -oE -- '--[a-z][a-z-]*' | sort -u); do
		sed 's/\\-/-/g' "$page" | grep -qF -- "$opt" || fail "$(basename "$page") lacks $opt"
	done
}
options_in_page "$ENTROPYD" "$MAN/entropyd.8"
pass "entropyd(8) names every option of entropyd --help"
if [ -x "$ENTROPYCTL" ]; then
	options_in_page "$ENTROPYCTL" "$MAN/entropyctl.8"
	# Commands: the words indented by two spaces in the Commands part of --help.
	for cmd in $("$ENTROPYCTL" --help | sed -n '/^Commands/,/^$/p' | grep -oE '^  [a-z]+' | sort -u); do
		grep -qE "^\.(TP|SS|SH|B|It|Cm).*\b$cmd\b|^\.B $cmd\$" "$MAN/entropyctl.8" ||
			fail "entropyctl.8 does not describe the command $cmd"
	done
	# Exit statuses: each number of the Exit status part of --help is a .TP in the page.
	for st in $("$ENTROPYCTL" --help | sed -n '/^Exit status/,/^$/p' | grep -oE '^  [0-9]+'); do
		grep -qE "^\.B $st\$" "$MAN/entropyctl.8" || fail "entropyctl.8 does not describe exit status $st"
	done
	pass "entropyctl(8) names every option, command and exit status of entropyctl --help"
else
	echo "entropyctl not built: its page checked by lint only"
fi
