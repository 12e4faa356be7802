#!/bin/sh
# /init of the VM test's initramfs: a console machine in a few lines. It
# brings up the devices (virtio-gpu for KMS, virtio keyboard and tablet,
# virtio-net), runs udev so that libinput knows what each input device is,
# times the DRM present path once, then runs slimland-console against the
# test's compositor on the host (10.0.2.2 is the host's loopback under
# QEMU's user networking). Everything it says goes to the serial console,
# which the test reads line by line.
/bin/busybox --install -s /bin
export PATH=/bin:/usr/bin:/sbin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp

port=
seat=
run=
arg=
for word in $(cat /proc/cmdline); do
	case "$word" in
	slim.port=*) port=${word#slim.port=} ;;
	slim.seat=*) seat=${word#slim.seat=} ;;
	slim.run=*) run=${word#slim.run=} ;;
	slim.arg=*) arg=${word#slim.arg=} ;;
	esac
done

# slim.run=PROGRAM [slim.arg=ARG] (test_vm_cgroup.py, bench_memory.py):
# that program alone, as root, on the kernel's cgroup v2 with its
# controllers (this host has v1) and a zram swap device twice the memory
if [ -n "$run" ]; then
	mount -t cgroup2 cgroup2 /sys/fs/cgroup
	echo "vm: cgroup controllers: $(cat /sys/fs/cgroup/cgroup.controllers)"
	if modprobe zram; then
		mem=$(sed -n 's/^MemTotal: *\([0-9]*\) kB/\1/p' /proc/meminfo)
		echo "$((mem * 2))K" > /sys/block/zram0/disksize
		mkswap /dev/zram0 >/dev/null && swapon /dev/zram0 && echo "vm: zram swap on"
	fi
	"$run" $arg 2>&1
	echo "vm: $run exited with status $?"
	poweroff -f
fi

for module in virtio_pci virtio_net virtio_input evdev virtio-gpu bochs; do
	modprobe "$module" || echo "vm: modprobe $module failed"
done

ip link set lo up
ip link set eth0 up
ip addr add 10.0.2.15/24 dev eth0
ip route add default via 10.0.2.2

# What a desk console would have: udev tags the input devices
# (ID_INPUT_KEYBOARD, ID_INPUT_MOUSE...) that libinput goes by.
/lib/systemd/systemd-udevd --daemon
udevadm trigger --action=add
udevadm settle --timeout=30
echo "vm: devices:" /dev/dri/* /dev/input/event*

# slim.seat=seatd: the seat through seatd, as a system service would run
# it; otherwise libseat's built-in backend (the console is root here).
if [ "$seat" = seatd ]; then
	mkfifo /run/seatd-ready
	seatd -n 3 3>/run/seatd-ready &
	read -r _ < /run/seatd-ready
	export LIBSEAT_BACKEND=seatd
	echo "vm: seatd running"
fi

echo "vm: bench"
slimland-console --bench-present 2>&1
echo "vm: bench done ($?)"

echo "vm: console"
slimland-console --server "10.0.2.2:$port" --output drm --input libinput \
	--card-reader=none --pairing-key /etc/slimland-pairing.key -v 2>&1
echo "vm: console exited with status $?"
poweroff -f
