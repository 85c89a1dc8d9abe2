# shellcheck shell=bash
# aptlib.sh: apt with a state of its own, for packages of a Debian release and architecture
# that are fetched, never installed on this machine (kernel.sh, tests/cross/sysroot.sh): the
# machine's own apt configuration, lists and cache are not touched. Sourced, with bash.
#
#   apt_private DIR SUITE [ARCH]   set the state up in DIR for SUITE (lists once a day)
#   papt apt-get|apt-cache ARGS    apt under that state
: "${ENTROPYD_TEST_MIRROR:=http://deb.debian.org/debian}"
: "${ENTROPYD_TEST_SECURITY_MIRROR:=http://deb.debian.org/debian-security}"

papt() {
	"$1" -q -o Dir::State="$A/state" -o Dir::Cache="$A/cache" \
		-o Dir::Etc::SourceList="$A/sources.list" -o Dir::Etc::SourceParts="$A/parts" \
		-o Dir::Etc::Preferences="$A/preferences" -o Dir::Etc::PreferencesParts="$A/parts" \
		-o APT::Architecture="$papt_arch" -o APT::Architectures="$papt_arch" \
		-o Dir::State::status="$A/state/status" \
		-o APT::Sandbox::User="$(id -un)" "${@:2}"
}

apt_private() {
	local keys=/usr/share/keyrings/debian-archive-keyring.gpg suite=$2
	A=$1
	papt_arch=${3:-$(dpkg --print-architecture)}
	mkdir -p "$A/state/lists/partial" "$A/cache/archives/partial" "$A/parts"
	: > "$A/preferences"
	[ -f "$A/state/status" ] || : > "$A/state/status"
	[ -r "$keys" ] || { echo "apt: no $keys (apt-get install debian-archive-keyring)" >&2; return 1; }
	cat > "$A/sources.list" <<SRC
deb [signed-by=$keys] $ENTROPYD_TEST_MIRROR $suite main
deb [signed-by=$keys] $ENTROPYD_TEST_MIRROR $suite-updates main
deb [signed-by=$keys] $ENTROPYD_TEST_SECURITY_MIRROR $suite-security main
SRC
	# Once a day is enough: a release changes with its point releases.
	if [ -z "$(find "$A/state" -maxdepth 1 -name updated -mmin -1440 2>/dev/null)" ]; then
		# The release's own lists are needed; its -security or -updates lists may be missing
		# on a mirror for an architecture whose support there ended (Debian 11's armhf):
		# then the release's packages are used, without those updates.
		if ! papt apt-get update > "$A/update.log" 2>&1; then
			if grep -q '^E: Failed to fetch' "$A/update.log" &&
				! grep '^E: Failed to fetch' "$A/update.log" | grep -qv -e "/$suite-security/" -e "/$suite-updates/"; then
				echo "apt: $suite ($papt_arch): using the release's own lists without:" \
					"$(grep '^E: Failed to fetch' "$A/update.log" | sed 's/^E: Failed to fetch //')" >&2
			else
				echo "apt: apt-get update for $suite ($papt_arch) failed: $(tail -3 "$A/update.log")" >&2
				return 1
			fi
		fi
		touch "$A/state/updated"
	fi
}
