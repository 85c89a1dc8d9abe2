# hostlib.sh: what the host side of the guest runs shares (tests/guest/run.sh,
# tests/guest/initramfs.sh, bench/boot.sh): the trees and programs under test, where the
# kernel is cached, the prerequisites, the static helpers. Sourced, with bash.

# The trees and the programs under test, unless the caller gave them (make does).
: "${top_srcdir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
: "${ENTROPYD:=$top_builddir/src/entropyd}"
: "${ENTROPYCTL:=$top_builddir/src/entropyctl}"

# ENTROPYD_GUEST_CACHE: where kernel.sh keeps the kernel between runs.
if [ -z "${ENTROPYD_GUEST_CACHE:-}" ]; then
	ENTROPYD_GUEST_CACHE=/var/cache/entropyd-test/guest
	if ! mkdir -p "$ENTROPYD_GUEST_CACHE" 2>/dev/null || [ ! -w "$ENTROPYD_GUEST_CACHE" ]; then
		ENTROPYD_GUEST_CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/entropyd-test/guest
	fi
fi
QEMU=${ENTROPYD_GUEST_QEMU:-qemu-system-x86_64}

# missing WHAT: a prerequisite is missing: say so, exit 77.
missing() { echo "guest: cannot run: $*"; exit 77; }

# guest_prerequisites: qemu, python3, cpio, a C compiler, the static busybox, and $ENTROPYD.
guest_prerequisites() {
	command -v "$QEMU" > /dev/null || missing "no $QEMU (apt-get install qemu-system-x86)"
	command -v python3 > /dev/null || missing "no python3 (apt-get install python3)"
	command -v cpio > /dev/null || missing "no cpio (apt-get install cpio)"
	command -v "${CC:-cc}" > /dev/null || missing "no C compiler"
	case $(LC_ALL=C ldd "$(command -v busybox || echo /bin/busybox)" 2>&1) in
	*"not a dynamic"*) ;;
	*) missing "no static busybox (apt-get install busybox-static)" ;;
	esac
	[ -x "$ENTROPYD" ] || missing "$ENTROPYD is not built"
}

# static_helper SOURCE OUT: a helper for the guest, linked statically (it needs nothing
# from the initramfs).
static_helper() {
	"${CC:-cc}" -static -O2 -Wall -Wextra -Werror -o "$2" "$1" ||
		{ echo "guest: cannot build $(basename "$1") statically (glibc's static libc: libc6-dev)"; exit 1; }
}
