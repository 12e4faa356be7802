#!/bin/sh
# After `meson install` onto the running system (no DESTDIR): the greeter's
# user, /var/lib/slimland and /etc/slimland/slimland.conf (from the example,
# only if there is none), and systemd told of the new unit. Into a DESTDIR
# (a package, an image) nothing runs: its first boot does the same.
# $1: the sysusers.d file, $2: the tmpfiles.d file
[ -n "$DESTDIR" ] && exit 0
[ -d /run/systemd/system ] || {
	echo "slimland: systemd is not running; run systemd-sysusers $1 and systemd-tmpfiles --create $2 on the server" >&2
	exit 0
}
systemd-sysusers "$1" && systemd-tmpfiles --create "$2" && systemctl daemon-reload
