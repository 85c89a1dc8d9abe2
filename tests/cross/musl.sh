#!/bin/bash
# musl.sh BUILDDIR: compile every file of src/ against musl's C library (musl-gcc, Debian's
# musl-tools), warnings as errors, without linking. Alpine, OpenWrt and Buildroot are musl:
# what glibc alone has (strerrorname_np, say) fails here. Only the C library is musl's: the
# other libraries' headers are the host's (put beside musl's, with the kernel's), since
# Debian has no musl builds of them, so nothing is linked.
#
# Exit status: 0 every file compiled, 1 one did not (its errors are shown), 77 no musl-gcc.
set -euo pipefail

: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
out=${1:?usage: musl.sh BUILDDIR}
command -v musl-gcc > /dev/null || { echo "SKIP: musl: no musl-gcc (apt-get install musl-tools)"; exit 77; }

mkdir -p "$out/include"
multiarch=$(gcc -print-multiarch)
# The libraries' and the kernel's headers, not glibc's.
for h in linux asm-generic event2 libconfig.h pcap pcap.h jansson.h jansson_config.h cap-ng.h \
	seccomp.h seccomp-syscalls.h systemd zlib.h zconf.h valgrind; do
	if [ -e "/usr/include/$h" ]; then
		ln -sfn "/usr/include/$h" "$out/include/$h"
	elif [ -e "/usr/include/$multiarch/$h" ]; then
		ln -sfn "/usr/include/$multiarch/$h" "$out/include/$h"
	fi
done
ln -sfn "/usr/include/$multiarch/asm" "$out/include/asm"

cd "$out"
if [ ! -f Makefile ]; then
	"$top_srcdir/configure" -q CC=musl-gcc CPPFLAGS="-isystem $out/include" --disable-lto \
		> configure.log 2>&1 || {
		cat configure.log; echo "FAIL: musl: configure failed"; exit 1; }
fi
objs=()
for f in "$top_srcdir"/src/*.c; do
	objs+=("src/$(basename "${f%.c}").o")
done
rc=0
make -k --no-print-directory CFLAGS="-O2 -Werror" "${objs[@]}" > make.log 2>&1 || rc=1
n=0
for o in "${objs[@]}"; do
	[ -f "$o" ] && n=$((n + 1))
done
if [ "$rc" -ne 0 ]; then
	grep -E 'error|warning' make.log | head -40
	echo "FAIL: musl: $n of ${#objs[@]} files of src/ compile with musl-gcc"
	exit 1
fi
echo "PASS: musl: all ${#objs[@]} files of src/ compile with musl-gcc (warnings as errors)"
