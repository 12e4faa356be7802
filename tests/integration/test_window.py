"""slimland-console --output window on an X server (Xvfb): the window shows
the "connecting" screen while there is no server, then exactly the
console's picture (compared with the console's own screenshot, pixel for
pixel: the window is the console's size, so nothing is scaled), then the
"connecting" screen again when the server goes away, and the new server's
picture when it comes back, without a restart. Then a console of two heads
(--size 400x300,320x240): a window for each, of its head's size, each
showing exactly its head's rectangle of the console's screen.

Needs Xvfb (skipped without it), xwininfo (x11-utils) and Pillow built
with XCB (Debian's python3-pil), which grabs the X screen."""
import os
import random
import select
import shutil
import subprocess
import time

from slimtest import (Console, Process, Session, TestFailure, TestSkip, log, run, scaled)

try:
    from PIL import Image, ImageChops, ImageGrab
except ImportError:
    Image = ImageChops = ImageGrab = None

SIZE = (800, 600)
SCREEN = '1280x800x24'
# console/core/status-screen.h: SLIM_STATUS_BACKGROUND
STATUS_BACKGROUND = (0x1d, 0x23, 0x2b)
# The drawn pointer is parked in the bottom right corner, and this much of
# the corner is left out of the comparison (the console's screenshot has
# no pointer in it; SLIM_CURSOR_MAX would be 256, theme cursors are 64 at most).
CURSOR_BOX = 64


class Xvfb:
    """An X server on a display number of its own, far above the ones the
    sessions' Xwayland servers take (0 up, the first free): a test running
    beside other sessions must never share a display with one of them."""

    def __init__(self, outdir):
        if not shutil.which('Xvfb'):
            raise TestSkip('Xvfb is not installed (apt-get install xvfb)')
        self.log = open(os.path.join(outdir, 'xvfb.log'), 'wb')
        rng = random.Random()
        for _ in range(8):
            number = rng.randrange(200, 1000)
            if self._start(number):
                self.display = ':%d' % number
                log('Xvfb (pid %d) on display %s' % (self.proc.pid, self.display))
                return
        self.log.close()
        raise TestFailure('Xvfb did not start on any display tried (see %s)' % self.log.name)

    def _start(self, number):
        """Xvfb on :number; true once it accepts connections (it writes the
        number to -displayfd then), false when that display is taken."""
        r, w = os.pipe()
        self.proc = subprocess.Popen(
            ['Xvfb', ':%d' % number, '-displayfd', str(w), '-screen', '0', SCREEN,
             '-nolisten', 'tcp'],
            pass_fds=[w], stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        os.close(w)
        said = b''
        deadline = time.monotonic() + scaled(15)
        while not said.endswith(b'\n'):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([r], [], [], left)[0]:
                break
            chunk = os.read(r, 16)
            if not chunk:
                break
            said += chunk
        os.close(r)
        if said.strip() == str(number).encode():
            return True
        self._end()
        return False

    def _end(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def grab(self):
        return ImageGrab.grab(xdisplay=self.display).convert('RGB')

    def stop(self):
        self._end()
        self.log.close()


class WindowConsole(Console):
    """Console's commands and events, with the picture in a window on `display`."""

    def __init__(self, session, port, display, suppressions, heads=(SIZE,)):
        self.session = session
        self.size = (sum(w for w, _ in heads), max(h for _, h in heads))
        self.console_id = 'console-window'
        self.pos = 0
        self.title = 'slimland-console: 127.0.0.1:%d' % port
        argv = [session.slimland_console, '--server', '127.0.0.1:%d' % port,
                '--output', 'window', '--size', ','.join('%dx%d' % h for h in heads),
                '--state-dir', session.console_state_dir(self.console_id), '--control']
        env = session.console_env()
        env['DISPLAY'] = display
        # X11 only: the session's own wayland-0 is in the runtime directory too,
        # and SDL would take it if the X server were slow to answer
        env['SDL_VIDEODRIVER'] = 'x11'
        # libdbus (SDL opens it) keeps a buffer LeakSanitizer reports at exit
        if suppressions and os.path.exists(suppressions):
            env['LSAN_OPTIONS'] = ':'.join(filter(None, [env.get('LSAN_OPTIONS'),
                                                        'suppressions=' + suppressions]))
        Process.__init__(self, 'console-window', argv, env, session.outdir, stdout_lines=True)


def window_geometry(display, title):
    """(x, y, width, height) of the window on the X screen, from xwininfo."""
    out = subprocess.run(['xwininfo', '-display', display, '-name', title],
                         capture_output=True, text=True, timeout=scaled(10))
    if out.returncode != 0:
        raise TestFailure('xwininfo: no window "%s": %s' % (title, out.stderr.strip()))
    fields = {}
    for line in out.stdout.splitlines():
        key, _, value = line.strip().partition(':')
        fields[key] = value.strip()
    try:
        return (int(fields['Absolute upper-left X']), int(fields['Absolute upper-left Y']),
                int(fields['Width']), int(fields['Height']))
    except (KeyError, ValueError):
        raise TestFailure('xwininfo said:\n' + out.stdout)


def window_image(xvfb, geometry):
    x, y, w, h = geometry
    return xvfb.grab().crop((x, y, x + w, y + h))


def without_corner(img):
    img = img.copy()
    w, h = img.size
    img.paste((0, 0, 0), (w - CURSOR_BOX, h - CURSOR_BOX, w, h))
    return img


def shows_status_screen(img):
    """The status screen: its background at the corners, text in the middle."""
    w, h = img.size
    corners = [img.getpixel(p) for p in ((0, 0), (w - 1, 0), (0, h - 1), (w - 1, h - 1))]
    middle = img.crop((0, h // 2 - 40, w, h // 2 + 40))
    colours = middle.getcolors(maxcolors=1 << 16) or []
    return all(c == STATUS_BACKGROUND for c in corners) and len(colours) >= 2


def wait_status_screen(s, console, xvfb, geometry, what):
    """Polls the X screen (presenting and grabbing are two X clients, in
    no set order) until the status screen is there, a few seconds at most."""
    deadline = time.monotonic() + scaled(10)
    while True:
        img = window_image(xvfb, geometry)
        if shows_status_screen(img):
            log('the window shows the status screen (%s)' % what)
            return img
        if time.monotonic() > deadline:
            path = os.path.join(s.outdir, 'no-status-screen.png')
            img.save(path)
            s.fail('the window does not show the status screen (%s): %s' % (what, path))
        console.next_frame(0.1)


def assert_window_shows_console(s, console, xvfb, geometry):
    """The window's pixels are the console's, but for the pointer's corner.
    While they differ, waits for the console's next frame (or a short while:
    a pointer move or a swap still on its way shows no frame) and retries."""
    why = None
    for attempt in range(30):
        mark = console.mark()
        shot = s.console_image(console)
        win = window_image(xvfb, geometry)
        diff = ImageChops.difference(without_corner(shot), without_corner(win)).getbbox()
        if diff is None:
            log('window equals the console\'s screenshot (%dx%d) after %d attempt(s)' % (
                shot.size + (attempt + 1,)))
            return shot
        why = 'differing pixels inside %s' % (diff,)
        console.next_frame(scaled(0.5), start=mark)
    shot.save(os.path.join(s.outdir, 'unequal-console.png'))
    win.save(os.path.join(s.outdir, 'unequal-window.png'))
    ImageChops.difference(shot, win).save(os.path.join(s.outdir, 'unequal-diff.png'))
    s.fail('the window does not show the console\'s picture: %s (images in %s)' % (
        why, s.outdir))


def attach_and_compare(s, console, xvfb, geometry, mark):
    console.wait_for('attached', 20, start=mark)
    s.start_client([s.slim_echo], wait_line='ready')
    s.settled(console=console)
    # the pointer to the corner left out of the comparison
    console.motion(SIZE[0] - 1, SIZE[1] - 1)
    img = assert_window_shows_console(s, console, xvfb, geometry)
    if img.getpixel((SIZE[0] // 2, SIZE[1] // 2)) == STATUS_BACKGROUND and \
            shows_status_screen(img):
        s.fail('the console still shows the status screen after attaching')
    return img


def two_heads(s, xvfb, suppressions):
    """A console of two heads side by side: two windows, each its head's
    size and its part of the console's screen."""
    heads = ((400, 300), (320, 240))
    mark = s.compositor.stderr.mark()
    console = WindowConsole(s, s.port, xvfb.display, suppressions, heads)
    s.consoles.append(console)
    console.wait_for('attached', 20)
    _, line = s.compositor.stderr.wait(lambda l: 'attached, 720x300 in 2 heads' in l, mark,
                                       time.monotonic() + scaled(10))
    if line is None:
        s.fail('the compositor did not hear of two heads')
    geometries = [window_geometry(xvfb.display, console.title + ' (CONSOLE-%d)' % (i + 1))
                  for i in range(2)]
    for geometry, size in zip(geometries, heads):
        if geometry[2:] != size:
            s.fail('a head\'s window is %dx%d, not %dx%d' % (geometry[2:] + size))
    s.settled(console=console)
    # the pointer to the first head's corner left out of the comparison
    console.motion(heads[0][0] - 1, heads[0][1] - 1)
    boxes = ((0, 0, 400, 300), (400, 0, 720, 240))
    for attempt in range(30):
        mark = console.mark()
        shot = s.console_image(console)
        diffs = [ImageChops.difference(without_corner(shot.crop(box)),
                                       without_corner(window_image(xvfb, g))).getbbox()
                 for box, g in zip(boxes, geometries)]
        if diffs == [None, None]:
            break
        console.next_frame(scaled(0.5), start=mark)
    else:
        s.fail('the heads\' windows do not show their parts of the console: %s' % (diffs,))
    if shot.crop((0, 0, 320, 240)) == shot.crop(boxes[1]):
        s.fail('both heads show the same: the comparison tells nothing')
    log('two heads: each window shows its part of the console\'s screen (%d attempt(s))' % (
        attempt + 1))
    status = console.quit()
    if status != 0:
        s.fail('the two-head window console exited with status %s' % status)


def test():
    if Image is None:
        raise TestFailure('Pillow is missing: apt-get install python3-pil')
    if not shutil.which('Xvfb'):
        raise TestSkip('Xvfb is not installed (apt-get install xvfb)')
    if not shutil.which('xwininfo'):
        raise TestFailure('xwininfo is missing: apt-get install x11-utils')
    suppressions = os.environ.get('SLIMTEST_LSAN_SUPPRESSIONS')
    with Session('window', size=SIZE, console=False) as s:
        xvfb = Xvfb(s.outdir)
        try:
            # No server yet: the session's compositor goes, its port stays.
            s.stop_compositor()
            console = WindowConsole(s, s.port, xvfb.display, suppressions)
            s.consoles.append(console)
            console.wait_for('connecting', 15)
            geometry = window_geometry(xvfb.display, console.title)
            log('window at %s' % (geometry,))
            if geometry[2:] != SIZE:
                s.fail('the window is %dx%d, not the console\'s %dx%d' % (geometry[2:] + SIZE))
            wait_status_screen(s, console, xvfb, geometry, 'no server yet')

            mark = console.mark()
            s.start_compositor()
            attach_and_compare(s, console, xvfb, geometry, mark)

            # The server goes: the console says so, and waits for it.
            for client in s.clients:
                client.stop()
            s.clients = []
            mark = console.mark()
            s.stop_compositor()
            console.wait_for('connecting', 15, start=mark)
            wait_status_screen(s, console, xvfb, geometry, 'server gone')

            # ... and comes back: repainted, no restart.
            mark = console.mark()
            s.start_compositor()
            attach_and_compare(s, console, xvfb, geometry, mark)
            status = console.quit()
            if status != 0:
                s.fail('the window console exited with status %s' % status)
            two_heads(s, xvfb, suppressions)
        finally:
            xvfb.stop()


run(test)
