# shellcheck shell=bash
# tests/system/mirror.sh: find_mirror, sourced by tests/system/lib.sh and tests/distro/run.sh.

# find_mirror CODENAME: the first Debian mirror apt uses here for that release (deb822 or
# one-line format).
find_mirror() {
	local codename=$1 f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk -v suite="$codename" '
			function flush() {
				if (types ~ /(^| )deb( |$)/ && (" " suites " ") ~ (" " suite " ") &&
				    enabled != "no" && uri != "") { print uri; found = 1; exit }
				types = suites = uri = enabled = ""
			}
			/^[ \t]*#/ { next }
			/^[ \t]*$/ { flush(); next }
			tolower($1) == "types:" { types = substr($0, index($0, ":") + 1) }
			tolower($1) == "suites:" { suites = substr($0, index($0, ":") + 1) }
			tolower($1) == "uris:" { uri = $2 }
			tolower($1) == "enabled:" { enabled = tolower($2) }
			END { if (!found) flush() }' "$f" | head -1 | grep . && return 0
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		sed -e 's/\[[^]]*\]//' "$f" |
			awk -v suite="$codename" '$1 == "deb" && $3 == suite { print $2; exit }' |
			grep . && return 0
	done
	return 1
}
