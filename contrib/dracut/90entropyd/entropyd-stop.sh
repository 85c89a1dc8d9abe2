#!/bin/sh
# dracut pre-pivot hook (initramfs without systemd): stop entropyd before the switch to the
# real root, where entropyd.service takes over. SIGTERM makes it hand over what is pending.
[ -f /run/initramfs/entropyd.pid ] || return 0
pid=$(cat /run/initramfs/entropyd.pid)
rm -f /run/initramfs/entropyd.pid
kill -TERM "$pid" 2> /dev/null || return 0
i=0
while kill -0 "$pid" 2> /dev/null && [ "$i" -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
how="exited on SIGTERM"
kill -KILL "$pid" 2> /dev/null && how="killed after 5 s"
echo "entropyd: stopped the initramfs's entropyd (pid $pid): $how" > /dev/kmsg 2> /dev/null
