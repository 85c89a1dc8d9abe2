#!/bin/sh
# check-names.sh HACKING.md OBJECT...: every symbol a file of src/ exports names that file
# (make check-names; make check runs it as tests/integration/t_names.sh). A symbol defined in
# src/FILE.o must be FILE or begin with "FILE_", or be allowed by the table of short aliases
# in HACKING.md ("Names"), whose rows read | `FILE` | `ALIAS` | why |: an ALIAS ending in "_"
# or "*" is a prefix, any other is one exact name; a FILE ending in "*" covers every file
# whose name begins with the rest. A name must also not begin with the name of another,
# longer file ("config_policy_x" defined in config.c would send a reader to config_policy.c).
# Names that begin with "__" are the implementation's (C11 7.1.3), not ours: a sanitizer build
# adds one per global (ASan's "__odr_asan.NAME"), and they are skipped.
# Each broken rule is printed as FILE: SYMBOL: the rule; the exit status is 1 if there is any.
set -u
[ $# -ge 2 ] || { echo "usage: check-names.sh HACKING.md OBJECT..." >&2; exit 2; }
hacking=$1
shift
[ -r "$hacking" ] || { echo "check-names: cannot read $hacking" >&2; exit 2; }
NM=${NM:-nm}

# The alias table: the rows of the "## Names" section whose first two cells are code.
aliases=$(awk '
/^## / { in_names = ($0 ~ /^## Names/) ; next }
in_names && /^\| *`[^`]+` *\| *`[^`]+` *\|/ {
	split($0, cell, "|")
	f = cell[2]; a = cell[3]
	gsub(/[ `]/, "", f); gsub(/[ `]/, "", a)
	print f, a
}' "$hacking")
[ -n "$aliases" ] || { echo "check-names: no alias table under \"## Names\" in $hacking" >&2; exit 2; }

stems=
for o in "$@"; do
	[ -r "$o" ] || { echo "check-names: no object $o (build first)" >&2; exit 2; }
	s=${o##*/}
	stems="$stems ${s%.o}"
done

for o in "$@"; do
	s=${o##*/}
	s=${s%.o}
	# Defined, global: code, data, read-only data, bss.
	"$NM" -g --defined-only "$o" | awk '$2 ~ /^[TDRBV]$/ && $3 !~ /^__/ { print $3 }' |
	while read -r sym; do
		echo "$s $sym"
	done
done | awk -v stems="$stems" -v aliases="$aliases" '
BEGIN {
	n = split(stems, st, " ")
	m = split(aliases, al, "\n")
	for (i = 1; i <= m; i++) {
		split(al[i], p, " ")
		afile[i] = p[1]; aname[i] = p[2]
	}
}
function names(sym, stem) { return sym == stem || index(sym, stem "_") == 1 }
function covers(pattern, file) {
	if (pattern ~ /\*$/) return index(file, substr(pattern, 1, length(pattern) - 1)) == 1
	return pattern == file
}
function matches(pattern, sym) {
	if (pattern ~ /[_*]$/) {
		sub(/\*$/, "", pattern)
		return index(sym, pattern) == 1
	}
	return pattern == sym
}
{
	file = $1; sym = $2
	ok = names(sym, file)
	for (i = 1; !ok && i <= m; i++)
		if (covers(afile[i], file) && matches(aname[i], sym))
			ok = 1
	if (!ok) {
		printf "%s: %s: does not begin with \"%s_\" nor with an alias of HACKING.md for it\n", file, sym, file
		bad = 1
		next
	}
	for (i = 1; i <= n; i++)
		if (length(st[i]) > length(file) && names(sym, st[i])) {
			printf "%s: %s: reads as a name of %s.c\n", file, sym, st[i]
			bad = 1
		}
}
END { exit bad }'
