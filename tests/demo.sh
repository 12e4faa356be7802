#!/bin/sh
# The quick-start demo: a slimland session running a real client (foot, with
# a few commands in it) and a console attached to it over DTLS on loopback
# (with the session's pairing key, which both find in the runtime directory):
# in a window when there is a desktop to open one on, else headless, with
# its picture written to slimland-demo.png.
#
#   tests/demo.sh [BUILD_DIR]
set -eu
build=${1:-build}
port=${SLIMLAND_DEMO_PORT:-5555}
runtime=$(mktemp -d)
# the session's sockets go in a directory of its own; a window console
# still needs the desktop's (a Wayland desktop's socket is in it)
user_runtime=${XDG_RUNTIME_DIR-}
export XDG_RUNTIME_DIR="$runtime"
trap 'kill "$compositor" 2>/dev/null; rm -rf "$runtime"' EXIT

"$build/src/compositor/slimland" --listen "127.0.0.1:$port" \
	-s "foot sh -c 'echo Hello from slimland; uname -sr; seq 1 5; exec sh'" \
	2>"$runtime/slimland.log" &
compositor=$!
# The compositor says where it listens once it is up.
until grep -q WAYLAND_DISPLAY "$runtime/slimland.log"; do
	kill -0 "$compositor" || { cat "$runtime/slimland.log"; exit 1; }
	sleep 0.1
done

console="$build/console/slimland-console"
# A desktop, and a console built with SDL2 (else it refuses --output window
# before it gets to --help): the session in a window.
if [ -n "${DISPLAY-}${WAYLAND_DISPLAY-}" ] &&
		"$console" --output window --help >/dev/null 2>&1; then
	echo "the session is in the console's window; close it to end the demo"
	XDG_RUNTIME_DIR="$user_runtime" "$console" --server "127.0.0.1:$port" --output window \
		--pairing-key "$runtime/slimland-pairing.key" --state-dir "$runtime/console" \
		--size 1280x720
	exit 0
fi

# A console with no display of its own: headless, asked for a screenshot once
# the picture has had time to arrive. No sound: the only sound server here
# is the session's own, and playing the session into it would echo.
{ sleep 3; echo "screenshot $PWD/slimland-demo.png"; sleep 1; echo stats; echo quit; } |
	"$console" --server "127.0.0.1:$port" --output headless --audio none \
		--state-dir "$runtime/console" --size 1280x720 --control | grep -v '^frame'
echo "the console's screen: $PWD/slimland-demo.png"
