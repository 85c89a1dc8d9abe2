# prom_check.awk: a strict checker of the Prometheus text exposition format (0.0.4), stricter
# than Prometheus itself where entropyd promises more: every family has HELP and TYPE before its
# samples, families are not interleaved, counters end in _total and are never negative or NaN,
# no series appears twice, and there are no blank lines. Exit 0 if the input passes, 1 with
# every problem on stderr otherwise. POSIX awk (mawk, gawk).
#   awk -f prom_check.awk FILE

function problem(msg) {
	printf "prom_check: line %d: %s: %s\n", NR, msg, $0 > "/dev/stderr"
	bad = 1
}

function valid_name(s) { return s ~ /^[a-zA-Z_:][a-zA-Z0-9_:]*$/ }

function valid_value(s) {
	return s ~ /^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$/ || s ~ /^[+-]?Inf$/ || s == "NaN"
}

# The family a sample or a metadata line belongs to; a change closes the previous one.
function enter(fam) {
	if (fam == current)
		return
	if (fam in closed)
		problem("family " fam " is interleaved with another")
	if (current != "")
		closed[current] = 1
	current = fam
}

# Parse the label set of a sample starting at position i of $0 ("{" there); set `labels` to a
# canonical form (sorted pairs) and return the position after "}", or 0 on a syntax error.
function parse_labels(i,    n, c, lname, lval, k, keys, nk, j, t, seen) {
	n = length($0)
	i++
	nk = 0
	for (;;) {
		while (substr($0, i, 1) == " ") i++
		if (substr($0, i, 1) == "}") { i++; break }
		lname = ""
		while (i <= n && substr($0, i, 1) ~ /[a-zA-Z0-9_]/) { lname = lname substr($0, i, 1); i++ }
		if (lname !~ /^[a-zA-Z_][a-zA-Z0-9_]*$/ || lname ~ /^__/) return 0
		if (substr($0, i, 1) != "=" || substr($0, i + 1, 1) != "\"") return 0
		i += 2
		lval = ""
		for (;;) {
			if (i > n) return 0
			c = substr($0, i, 1)
			if (c == "\"") { i++; break }
			if (c == "\\") {
				c = substr($0, i + 1, 1)
				if (c != "\\" && c != "\"" && c != "n") return 0
				lval = lval "\\" c
				i += 2
				continue
			}
			lval = lval c
			i++
		}
		for (j = 1; j <= nk; j++) if (keys[j] == lname) return 0
		keys[++nk] = lname
		seen[lname] = lval
		c = substr($0, i, 1)
		if (c == ",") { i++; continue }
		if (c == "}") { i++; break }
		return 0
	}
	# insertion sort of the label names, for a canonical series key
	for (j = 2; j <= nk; j++) {
		t = keys[j]
		for (k = j - 1; k >= 1 && keys[k] > t; k--) keys[k + 1] = keys[k]
		keys[k + 1] = t
	}
	labels = ""
	for (j = 1; j <= nk; j++) labels = labels keys[j] "=\"" seen[keys[j]] "\","
	return i
}

/^$/ { problem("blank line"); next }

/^#/ {
	if ($2 == "HELP" || $2 == "TYPE") {
		if (!valid_name($3)) { problem("bad metric name"); next }
		enter($3)
		if ($2 == "HELP") {
			if ($3 in help) problem("second HELP for " $3)
			if (NF < 4) problem("HELP without text")
			help[$3] = 1
		} else {
			if ($3 in type) problem("second TYPE for " $3)
			if (NF != 4 || $4 !~ /^(counter|gauge|histogram|summary|untyped)$/)
				problem("bad TYPE")
			if ($3 in sampled) problem("TYPE after samples of " $3)
			type[$3] = $4
		}
	}
	next
}

{
	name = $0
	sub(/[{ ].*$/, "", name)
	if (!valid_name(name)) { problem("bad metric name"); next }
	pos = length(name) + 1
	labels = ""
	if (substr($0, pos, 1) == "{") {
		pos = parse_labels(pos)
		if (!pos) { problem("bad label set"); next }
	}
	rest = substr($0, pos)
	if (rest !~ /^ [^ ]+( -?[0-9]+)?$/) { problem("bad value part"); next }
	split(substr(rest, 2), v, " ")
	if (!valid_value(v[1])) { problem("bad value " v[1]); next }
	enter(name)
	if (!(name in type)) problem("sample of " name " before its TYPE")
	if (!(name in help)) problem("sample of " name " before its HELP")
	if (type[name] == "counter") {
		if (name !~ /_total$/) problem("counter " name " does not end in _total")
		if (v[1] == "NaN" || v[1] ~ /^-/) problem("counter " name " is " v[1])
	}
	if (type[name] == "gauge" && name ~ /_total$/) problem("gauge " name " ends in _total")
	key = name "{" labels "}"
	if (key in series) problem("series " key " twice")
	series[key] = 1
	sampled[name] = 1
	samples++
}

END {
	for (f in type) if (!(f in sampled)) { printf "prom_check: %s has a TYPE but no sample\n", f > "/dev/stderr"; bad = 1 }
	for (f in help) if (!(f in type)) { printf "prom_check: %s has a HELP but no TYPE\n", f > "/dev/stderr"; bad = 1 }
	if (!samples) { print "prom_check: no samples" > "/dev/stderr"; bad = 1 }
	exit bad
}
