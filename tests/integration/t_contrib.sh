#!/bin/bash
# t_contrib: what contrib/ ships works — the example policies are valid (paranoid does not
# capture packets at all), bash completion completes both programs, the initramfs scripts
# parse, the metrics timer and service pass systemd-analyze verify, and check-commits.sh (the
# commit-msg hook and CI's check of a submission's commits) refuses what breaks the rules.
. "$(dirname "$0")/lib.sh"

C=$top_srcdir/contrib

# ---- example policies ----
for name in paranoid server desktop; do
	f=$C/policies/$name.conf
	[ -f "$f" ] || fail "contrib/policies/$name.conf is missing"
	out=$("$ENTROPYD" -n -f "$f" 2>&1) || fail "$name.conf is not valid: $out"
done
"$ENTROPYD" -p -f "$C/policies/paranoid.conf" | sed -n '/^  network = {/,/};/p' |
	grep -q 'mode = "disabled";' || fail "paranoid.conf does not disable the network class"
pass "example policies are valid; paranoid disables the network class"

# ---- bash completion ----
BC=/usr/share/bash-completion/bash_completion
if [ -r "$BC" ]; then
	# complete LINE: what completing the last word of LINE offers, one per line.
	complete_line() {
		bash -c '
			. "$1"; . "$2/completion/entropyd"; . "$2/completion/entropyctl"
			# as bash splits the line: "=" is a word of its own (COMP_WORDBREAKS)
			read -ra COMP_WORDS <<< "${3//=/ = }"
			[ "${3: -1}" = " " ] && COMP_WORDS+=("")
			COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMP_LINE=$3; COMP_POINT=${#3}
			"$(complete -p "${COMP_WORDS[0]}" | sed "s/.*-F \([^ ]*\) .*/\1/")" \
				"${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
			printf "%s\n" "${COMPREPLY[@]}"' sh "$BC" "$C" "$1"
	}
	expect() { # LINE WORD...: each WORD is offered for LINE
		local line=$1 got; shift
		got=$(complete_line "$line") || fail "completing \"$line\" failed"
		for w in "$@"; do
			echo "$got" | grep -qx -- "$w" || fail "completing \"$line\" does not offer $w: $got"
		done
	}
	expect "entropyd --cl" --class
	expect "entropyd --class " input block network
	expect "entropyd --bits " 1 8
	expect "entropyd -" --config --check --print --dry-run --assess --record --initramfs --boot-record
	expect "entropyctl " status sources watch reload metrics
	expect "entropyctl st" status
	expect "entropyctl --color " auto always never
	expect "entropyctl -" --socket --json --timeout --interval
	[ -z "$(complete_line "entropyctl status ")" ] || fail "a second command is offered"
	# --opt=value: the value completes as after "--opt value", and only the values
	expect "entropyctl --color=" auto always never
	[ "$(complete_line "entropyctl --color=al")" = always ] ||
		fail "entropyctl --color=al: $(complete_line "entropyctl --color=al")"
	complete_line "entropyctl --color=" | grep -qx status && fail "--color= offers the commands"
	[ "$(complete_line "entropyd --class=bl")" = block ] ||
		fail "entropyd --class=bl: $(complete_line "entropyd --class=bl")"
	mkdir "$T/cwd" && : > "$T/cwd/policy.conf" && : > "$T/cwd/other.conf"
	[ "$(cd "$T/cwd" && complete_line "entropyd --config=pol")" = policy.conf ] ||
		fail "entropyd --config=pol: $(cd "$T/cwd" && complete_line "entropyd --config=pol")"
	[ -z "$(complete_line "entropyctl --json=")" ] || fail "--json= offers values"
	expect "entropyd --ins" --instance
	pass "bash completion for entropyd and entropyctl, --opt=value forms too"
else
	echo "bash-completion not installed: completion not exercised"
fi

# ---- initramfs-tools hook and dracut module ----
for f in "$C"/initramfs-tools/hooks/entropyd "$C"/initramfs-tools/scripts/*/entropyd \
	"$C"/dracut/90entropyd/entropyd-*.sh; do
	sh -n "$f" || fail "$f does not parse"
	[ "${f#*/dracut/}" != "$f" ] || [ -x "$f" ] || fail "$f is not executable"
done
bash -n "$C/dracut/90entropyd/module-setup.sh" || fail "module-setup.sh does not parse"
if command -v shellcheck > /dev/null; then
	out=$(shellcheck -s sh "$C"/initramfs-tools/hooks/entropyd "$C"/initramfs-tools/scripts/*/entropyd \
		"$C"/dracut/90entropyd/entropyd-*.sh 2>&1 &&
		shellcheck -s bash "$C/dracut/90entropyd/module-setup.sh" 2>&1) || fail "shellcheck: $out"
fi
pass "initramfs-tools hook and dracut module parse"

# ---- metrics timer and service ----
if command -v systemd-analyze > /dev/null; then
	mkdir -p "$T/man/man8"
	cp "$top_builddir/man/entropyctl.8" "$top_builddir/man/entropyd.8" "$T/man/man8/"
	cp "$C"/metrics/entropyd-metrics.* "$T/"
	out=$(cd "$T" && MANPATH=$T/man systemd-analyze verify ./entropyd-metrics.service \
		./entropyd-metrics.timer 2>&1) || fail "systemd-analyze verify (metrics): $out"
	[ -z "$out" ] || fail "systemd-analyze verify (metrics): $out"
	pass "metrics timer and service verify clean"
fi

# ---- the commit-msg hook and CI's check of a submission's commits ----
CC=$C/check-commits.sh
msg() { printf '%b' "$1" > "$T/msg"; "$CC" --msg "$T/msg" 2>&1; }
out=$(msg 'priv, tests/guest: hand over a locked filter\n\nWhy.\n') ||
	fail "check-commits refuses a subject that keeps the rules: $out"
out=$(msg 'entropyd(8): say what the collector can send\n') ||
	fail "check-commits refuses a man page as prefix: $out"
for bad in 'Frobnicate the pool\n' 'privsep: an old prefix\n' 'net: x\nno blank line\n' \
	"net: $(printf '%070d' 0)\n"; do
	if out=$(msg "$bad"); then
		fail "check-commits accepts \"$bad\""
	fi
	[ -n "$out" ] || fail "check-commits refuses \"$bad\" without saying why"
done
if command -v git > /dev/null; then
	G=$T/git
	git init -q "$G" && cd "$G" || fail "git init"
	git -c user.name=t -c user.email=t@localhost commit -q --allow-empty -m 'tests: the base'
	git -c user.name=t -c user.email=t@localhost commit -q --allow-empty -m 'net: keeps the rules'
	out=$("$CC" HEAD~1..HEAD) || fail "check-commits refuses a range that keeps the rules: $out"
	git -c user.name=t -c user.email=t@localhost commit -q --allow-empty -m 'Breaks the rules'
	out=$("$CC" HEAD~2..HEAD) && fail "check-commits accepts a range with a bad subject: $out"
	echo "$out" | grep -q 'Breaks the rules: subject has no' ||
		fail "check-commits does not name the bad commit: $out"
	cd "$T" || fail "cd $T"
fi
pass "check-commits keeps subjects to 72 characters and the prefix vocabulary"
