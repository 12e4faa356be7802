#!/bin/sh
# /init of the cgroup VM test: Debian's kernel with cgroup v2 and the cpu,
# io and memory controllers (this host has v1), mounted where systemd would
# mount it; then the cgroup unit test, as root, and its status on the
# serial console.
/bin/busybox --install -s /bin
export PATH=/bin:/usr/bin:/sbin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
mount -t cgroup2 cgroup2 /sys/fs/cgroup
echo "vm: cgroup controllers: $(cat /sys/fs/cgroup/cgroup.controllers)"
test-cgroup 2>&1
echo "vm: test-cgroup exited with status $?"
poweroff -f
