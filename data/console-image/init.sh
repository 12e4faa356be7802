#!/bin/sh
# /init of the console image: a machine whose only program is
# slimland-console, on the display (DRM) with the keyboards and mice
# (libinput), the card readers (pcscd) and the sound card (ALSA).
#
# The kernel command line says where the session manager is:
#   slimland.manager=HOST[:PORT][,HOST[:PORT]...]  (else the DHCP server's
#                             word: see udhcpc.script)
#   slimland.server-key=sha256:HEX  the manager's key (else the first met is pinned)
#   slimland.keyboard=LAYOUT[:VARIANT][,OPTIONS]    the keymap
#   slimland.state=LABEL      the partition where the console keeps its
#                             key (the stick's SLIMSTATE); without one the
#                             key lives in memory, and the console must be
#                             enrolled again after every boot
#   slimland.debug            the console's debug messages
# Everything said goes to the kernel's console (console=ttyS0 for a serial one).
/bin/busybox --install -s /bin
export PATH=/bin:/usr/bin:/sbin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
# the kernel's own requests for modules (a codec, a checksum) go to busybox
echo /bin/modprobe >/proc/sys/kernel/modprobe

manager=
state=
set --
for word in $(cat /proc/cmdline); do
	case "$word" in
	slimland.manager=*) manager=${word#*=} ;;
	slimland.server-key=*) set -- "$@" --server-key "${word#*=}" ;;
	slimland.keyboard=*) set -- "$@" --keyboard "${word#*=}" ;;
	slimland.state=*) state=${word#*=} ;;
	slimland.debug) set -- "$@" -v ;;
	esac
done

# udev loads the drivers of the hardware it finds (80-drivers.rules) and
# tags the input devices (ID_INPUT_KEYBOARD...) that libinput goes by
/lib/systemd/systemd-udevd --daemon
udevadm trigger --action=add --type=subsystems
udevadm trigger --action=add --type=devices
udevadm settle --timeout=30
# what a modalias does not bring: the keyboards' event devices, the key's file system
for module in evdev crc32c_generic ext4; do
	modprobe "$module" 2>/dev/null
done
echo "console-image: devices:" /dev/dri/* /dev/input/event* /dev/snd/pcm* 2>/dev/null

# The key: on the stick's state partition, which a USB disk shows a
# moment after udev settles
keys=/var/lib/slimland-console
if [ -n "$state" ]; then
	dev=
	for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		dev=$(findfs "LABEL=$state" 2>/dev/null) && break
		sleep 0.5
	done
	# sync: a console is switched off at the wall, and its key and pins are
	# written once (a new key's name, a pin's line: neither is fsync'd)
	if [ -n "$dev" ] && mount -t ext4 -o sync,nodev,nosuid,noexec "$dev" "$keys"; then
		echo "console-image: the console's key is on $dev ($state)"
	else
		echo "console-image: no partition $state: the console's key lives in memory"
	fi
else
	echo "console-image: no slimland.state=: the console's key lives in memory"
fi

# The network: DHCP on every interface, asking until a lease comes (a
# cable plugged in later); the first lease may name the manager. The
# console does not wait for it: it tries its manager until it is reached.
ip link set lo up
for path in /sys/class/net/*; do
	iface=${path##*/}
	[ "$iface" = lo ] && continue
	udhcpc -f -i "$iface" -s /usr/lib/udhcpc.script -O 224 -T 2 -A 5 >/dev/null 2>&1 &
done

# Card readers: pcscd with the drivers the image has (USB CCID readers)
pcscd

if [ -z "$manager" ]; then
	echo "console-image: no slimland.manager=: waiting for DHCP to name one"
	while [ ! -s /run/slimland-dhcp-manager ]; do
		sleep 1
	done
	manager=$(cat /run/slimland-dhcp-manager)
fi

# The console says on its screen what goes wrong and keeps trying; should
# it still stop, it starts again
while true; do
	echo "console-image: slimland-console --manager $manager"
	slimland-console --manager "$manager" --output drm --input libinput \
		--card-reader=pcsc --audio alsa --state-dir "$keys" "$@" 2>&1
	echo "console-image: slimland-console exited with status $?"
	sleep 2
	# a lease since: the network's word
	[ -s /run/slimland-dhcp-manager ] && ! grep -q "slimland.manager=" /proc/cmdline &&
		manager=$(cat /run/slimland-dhcp-manager)
done
