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
	# The control socket's group, and the collector's user (collector.user, entropyd by
	# default) with its group: entropyd never runs its collector as root, and does not start
	# without that user.
	local cuser cgid g
	cuser=$("$entropyd" -p 2> /dev/null | sed -n 's/^  user = "\([^"]*\)";.*/\1/p')
	: "${cuser:=entropyd}"
	cgid=$(grep "^$cuser:" /etc/passwd | cut -d: -f4)
	mkdir -p "$initdir/etc"
	awk -F: -v g="$cgid" '$1 == "entropyd" || $3 == g { print $1 }' /etc/group |
		while IFS= read -r g; do
			grep -qs "^$g:" "$initdir/etc/group" ||
				grep "^$g:" /etc/group | cut -d: -f1-3 | sed 's/$/:/' >> "$initdir/etc/group"
		done
	if grep -q "^$cuser:" /etc/passwd; then
		grep "^$cuser:" /etc/passwd | cut -d: -f1,3,4 |
			awk -F: '{ print $1 ":x:" $2 ":" $3 "::/nonexistent:/usr/sbin/nologin" }' \
				>> "$initdir/etc/passwd"
	else
		dwarn "entropyd: no user $cuser (collector.user): entropyd will not start in the initramfs"
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
			# --initramfs: it leaves what it did in /run/initramfs (writable to it here)
			# for the service's instance after the switch.
			sed -e "s|^ExecStart=.*|ExecStart=/usr/sbin/entropyd --foreground --initramfs -f /etc/entropyd.conf|" \
				-e "s|^ExecReload=.*|ExecReload=/usr/bin/entropyctl reload|" \
				-e "/^RequiresMountsFor=/d" \
				-e "/^ProtectSystem=/a ReadWritePaths=-/run/initramfs" \
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
