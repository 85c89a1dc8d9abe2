#!/bin/bash
# t_manpages: the man pages are lint-clean (mandoc -T lint prints nothing) and complete:
# entropyd.conf(5) describes, and lists, exactly the keys the config parser accepts;
# entropyd(8) and entropyctl(8) name every option and command their --help gives.
. "$(dirname "$0")/lib.sh"
: "${ENTROPYCTL:=$top_builddir/src/entropyctl}"

# The pages as built: man/*.in with the configured paths put in.
MAN=$top_builddir/man
command -v mandoc > /dev/null || skip "mandoc not found (apt-get install mandoc)"

for page in entropyd.8 entropyd.conf.5 entropyctl.8; do
	[ -f "$MAN/$page" ] || fail "man/$page was not built"
	[ -f "$top_srcdir/man/$page.in" ] || fail "man/$page.in is missing"
	grep -qE "^man_MANS = .*man/$page( |\$)" "$top_srcdir/Makefile.am" ||
		fail "$page is not installed (man_MANS in Makefile.am)"
	out=$(mandoc -T lint "$MAN/$page" 2>&1)
	[ -z "$out" ] || fail "mandoc -T lint $page: $out"
	grep -n '@[A-Za-z_]*@' "$MAN/$page" | grep -v '@include' &&
		fail "$page: a placeholder left unsubstituted"
done
pass "mandoc -T lint is clean: $(cd "$MAN" && echo *.[0-9])"

# ---- the paths they name are the build's ----
conf=$("$ENTROPYD" --help | sed -n 's/.*read FILE instead of \(.*\)$/\1/p')
[ -n "$conf" ] || fail "entropyd --help names no default configuration file"
for page in entropyd.8 entropyd.conf.5; do
	grep -qF "$conf" "$MAN/$page" || fail "$page does not name $conf, the file entropyd reads"
	other=$(grep -oE '/[A-Za-z0-9_/.-]*/entropyd\.conf\b' "$MAN/$page" | sort -u | grep -vxF "$conf")
	[ -z "$other" ] || fail "$page names $other, but entropyd reads $conf"
done
# what make install puts in place is what was built
make -s -C "$top_builddir" install-man DESTDIR="$T/inst" > "$T/inst.log" 2>&1 ||
	fail "make install-man: $(cat "$T/inst.log")"
n=0
for f in $(find "$T/inst" -type f); do
	cmp -s "$f" "$MAN/$(basename "$f")" || fail "installed $(basename "$f") differs from the built page"
	n=$((n + 1))
done
[ "$n" -eq 3 ] || fail "make install-man installed $n pages, not 3"
# a --sysconfdir=/etc build names /etc/entropyd.conf
mkdir "$T/etc-build"
if (cd "$T/etc-build" && "$top_srcdir/configure" -q --sysconfdir=/etc > "$T/conf.log" 2>&1); then
	make -s -C "$T/etc-build" man/entropyd.conf.5 man/entropyd.8 > "$T/make.log" 2>&1 ||
		fail "making the pages of a --sysconfdir=/etc build: $(cat "$T/make.log")"
	grep -q '^\.I /etc/entropyd\.conf$' "$T/etc-build/man/entropyd.conf.5" &&
		! grep -q '/usr/local/etc' "$T/etc-build/man/entropyd.conf.5" "$T/etc-build/man/entropyd.8" ||
		fail "a --sysconfdir=/etc build's pages do not name /etc/entropyd.conf"
	etc="; a --sysconfdir=/etc build's, /etc/entropyd.conf"
else
	etc="; configure --sysconfdir=/etc failed here, that build not checked: $(tail -1 "$T/conf.log")"
fi
pass "the pages name $conf, as entropyd does, and are installed as built$etc"

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
