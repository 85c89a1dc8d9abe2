#!/bin/sh
# dracut pre-trigger hook (initramfs without systemd): start entropyd; it watches for input
# devices and disks as udev brings them up. Stopped by entropyd-stop.sh before the pivot;
# what it did is left in /run/initramfs/entropyd-boot.json for the service's instance.
[ -x /usr/sbin/entropyd ] || return 0
modprobe -q evdev || :
mkdir -p /run/initramfs
if [ -f /etc/entropyd.conf ]; then
	/usr/sbin/entropyd --foreground --initramfs -f /etc/entropyd.conf > /run/initramfs/entropyd.log 2>&1 &
else
	/usr/sbin/entropyd --foreground --initramfs > /run/initramfs/entropyd.log 2>&1 &
fi
echo $! > /run/initramfs/entropyd.pid
echo "entropyd: started in the initramfs (pid $!)" > /dev/kmsg 2> /dev/null
