#!/bin/sh
# In the VM (init.sh's slim.run=, test_vm_cgroup.py): the compositor's
# cgroup policy on cgroup v2 with the focus moved by the console's own
# input. A session's classes made as the manager makes them, slimland in
# its compositor class running two slim-echo windows (neither the other's
# descendant: a client's children go with it), slimland-console
# (headless, --control) attached; the second window, mapped last, has the
# focus; a click through the console on the first takes it there. Says
# "vm: focus: ..." lines for the test to read.
ip link set lo up
# wlroots' shm buffers (shm_open)
mkdir -p /dev/shm
mount -t tmpfs tmpfs /dev/shm
cg=/sys/fs/cgroup
s=slimland.slice/user-0.slice/session-1
mkdir -p $cg/$s/compositor $cg/$s/interactive $cg/$s/background $cg/$s/hidden
for d in "" slimland.slice slimland.slice/user-0.slice $s; do
	echo +cpu > $cg/$d/cgroup.subtree_control
done

class_of() {
	sed -n 's|^0::/.*/||p' /proc/$1/cgroup
}

# wait_for SECONDS COMMAND...: until the command succeeds, a tenth of a
# second apart (for what has no event: a process's cgroup)
wait_for() {
	n=$(($1 * 10))
	shift
	while [ $n -gt 0 ]; do
		"$@" && return 0
		sleep 0.1
		n=$((n - 1))
	done
	return 1
}

export XDG_RUNTIME_DIR=/run/user-0
mkdir -p -m 700 $XDG_RUNTIME_DIR
(echo 0 > $cg/$s/compositor/cgroup.procs
 exec slimland --transport clear --listen 127.0.0.1:5555 --size 640x480 -v \
	-s '(slim-echo &); (slim-echo &)') > /tmp/slimland.log 2>&1 &
mkfifo /tmp/control /tmp/events
slimland-console --server 127.0.0.1:5555 --transport clear --output headless \
	--size 640x480 --control < /tmp/control > /tmp/events 2>/tmp/console.err &
exec 3> /tmp/control
# the console's events: read up to "attached", then kept in a file
exec 4< /tmp/events
while read -r event <&4; do
	echo "$event" >> /tmp/console.out
	case "$event" in attached*) break ;; esac
done
cat <&4 >> /tmp/console.out &

two_windows() {
	# both mapped (each says "ready" once its window is on the screen): a
	# client's process is classed before its window maps
	[ "$(grep -c '^ready' /tmp/slimland.log)" -eq 2 ] || return 1
	set -- $(pidof slim-echo)
	[ $# -eq 2 ] || return 1
	a=$1 b=$2
	ca=$(class_of $a) cb=$(class_of $b)
	# the one mapped last has the focus
	if [ "$ca" = background ] && [ "$cb" = interactive ]; then first=$a second=$b; return 0; fi
	if [ "$cb" = background ] && [ "$ca" = interactive ]; then first=$b second=$a; return 0; fi
	return 1
}
clicked() {
	[ "$(class_of $first)" = interactive ] && [ "$(class_of $second)" = background ]
}

# cgroup moves announce themselves nowhere: /proc is read until they are done
if ! grep -q '^attached' /tmp/console.out || ! wait_for 60 two_windows; then
	echo "vm: focus: FAIL: no console attached, or no two windows classed"
	cat /tmp/slimland.log /tmp/console.out /tmp/console.err
	exit 1
fi
echo "vm: focus: mapped: first $first $(class_of $first), second $second $(class_of $second)"
echo "vm: focus: compositor $(class_of $(pidof slimland))"
# the first window is at 32,32, the second at 64,64
echo "motion 40 40" >&3
echo "button 272 1" >&3
echo "button 272 0" >&3
if ! wait_for 20 clicked; then
	echo "vm: focus: FAIL: after the click: first $(class_of $first), second $(class_of $second)"
	cat /tmp/slimland.log
	exit 1
fi
echo "vm: focus: clicked: first $first $(class_of $first), second $second $(class_of $second)"
grep 'cgroups:' /tmp/slimland.log | sed 's/^/vm: focus: log: /'
exit 0
