#!/bin/bash
# dracut module: entropyd in the initramfs, started before the root file system is mounted
# (when the CRNG is most likely not ready yet, and a passphrase typed at the prompt is good
# input) and stopped before the switch to the real root, where entropyd.service takes over.
# With dracut's systemd module the unit itself runs in the initramfs (it orders itself
# before sysinit.target); without it, hooks start and stop the daemon.
# Install: copy 90entropyd/ to /usr/lib/dracut/modules.d/, then "dracut -f" (or add
# add_dracutmodules+=" entropyd " to a file in /etc/dracut.conf.d/).
# shellcheck disable=SC2154 # initdir, moddir, systemdsystemunitdir: set by dracut

# Where make install (prefix /usr or /usr/local) or a package put PROGRAM; dracut's PATH
# has no /usr/local.
find_prog() {
	local dir
	for dir in /usr/sbin /usr/bin /usr/local/sbin /usr/local/bin /sbin /bin; do
		[[ -x $dir/$1 ]] && echo "$dir/$1" && return 0
	done
	return 1
}

check() {
	find_prog entropyd > /dev/null || return 1
	# Only when asked for (add_dracutmodules), or when entropyd is installed and enabled.
	return 255
}

depends() {
	return 0
}

install() {
	local entropyd conf
	entropyd=$(find_prog entropyd) || return 1
	inst_binary "$entropyd" /usr/sbin/entropyd
	# The configuration in effect, wherever it was installed (else the built-in defaults).
	conf=$("$entropyd" -p 2> /dev/null | sed -n 's/^# entropyd configuration in effect.*; from //p')
	if [[ $conf == /* ]] && "$entropyd" -n -f "$conf" > /dev/null 2>&1; then
		inst_simple "$conf" /etc/entropyd.conf
	fi
	# Input devices get their /dev/input/event* nodes from evdev: without it a passphrase
	# typed at the prompt is not seen.
	instmods evdev
	# The kernel's tick rate (CONFIG_HZ, which entropyd reads from /boot/config-RELEASE when
	# there is no /proc/config.gz, and otherwise assumes to be 1000): the initramfs has no
	# /boot, so the line comes along.
	if grep -q '^CONFIG_HZ=' "/boot/config-$kernel" 2> /dev/null; then
		mkdir -p "$initdir/boot"
		grep '^CONFIG_HZ=' "/boot/config-$kernel" > "$initdir/boot/config-$kernel"
	fi
	if grep -q '^entropyd:' /etc/group; then
		grep '^entropyd:' /etc/group | cut -d: -f1-3 | sed 's/$/:/' >> "$initdir/etc/group"
	fi
	# The collector's user: it leaves uid 0 in the initramfs too.
	if grep -q '^entropyd:' /etc/passwd; then
		grep '^entropyd:' /etc/passwd | cut -d: -f1,3,4 |
			awk -F: '{ print $1 ":x:" $2 ":" $3 "::/nonexistent:/usr/sbin/nologin" }' \
				>> "$initdir/etc/passwd"
	fi

	if dracut_module_included "systemd"; then
		local unit dir ctl
		for dir in /etc/systemd/system /usr/local/lib/systemd/system "$systemdsystemunitdir" \
			/usr/lib/systemd/system /lib/systemd/system; do
			unit=$dir/entropyd.service
			[[ -f $unit ]] && break
		done
		if [[ -f $unit ]]; then
			ctl=$(find_prog entropyctl) && inst_binary "$ctl" /usr/bin/entropyctl
			# The unit names the programs where the host has them, and the configuration
			# at its installed path: use the initramfs's instead, and stop before the switch
			# to the real root.
			sed -e "s|^ExecStart=.*|ExecStart=/usr/sbin/entropyd --foreground -f /etc/entropyd.conf|" \
				-e "s|^ExecReload=.*|ExecReload=/usr/bin/entropyctl reload|" \
				-e "/^RequiresMountsFor=/d" \
				-e "/^\[Unit\]/a Conflicts=initrd-switch-root.target\nBefore=initrd-switch-root.target" \
				"$unit" > "$initdir$systemdsystemunitdir/entropyd.service"
			[[ -f $initdir/etc/entropyd.conf ]] ||
				sed -i 's| -f /etc/entropyd.conf||' "$initdir$systemdsystemunitdir/entropyd.service"
			"${SYSTEMCTL:-systemctl}" -q --root "$initdir" enable entropyd.service
			return 0
		fi
	fi
	inst_hook pre-trigger 90 "$moddir/entropyd-start.sh"
	inst_hook pre-pivot 90 "$moddir/entropyd-stop.sh"
}
