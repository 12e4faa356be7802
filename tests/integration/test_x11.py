"""X11 programs through Xwayland, started only when the first one connects.

- Before any X11 client the compositor runs no Xwayland.
- xterm: a command typed through the console's keys runs in its shell (it
  writes into a FIFO the test reads); the console equals grim.
- The window dragged with Alt+button: X11 is told where it went (xwininfo's
  absolute position moves by the drag), and the console equals grim.
- `xterm -maximized` asks the window manager for the whole screen, and gets it.
- Clipboard both ways: xclip's CLIPBOARD reaches wl-paste, wl-copy's reaches
  xclip.
"""
import os
import re
import subprocess

from slimtest import (BACKGROUND, BTN_LEFT, KEY_LEFTALT, Session, fraction_not, log,
                      read_fifo, require_programs, run)

W, H = 800, 600


def xwininfo(s, title):
    r = s.run_client(['xwininfo', '-name', title])
    text = r.stdout.decode()
    got = {k: int(v) for k, v in re.findall(r'(Absolute upper-left [XY]|Width|Height):\s+(-?\d+)',
                                            text)}
    if len(got) != 4:
        s.fail('xwininfo -name %s: %s %s' % (title, text, r.stderr.decode()))
    return got


def xwayland_running(s):
    """An Xwayland for this session's DISPLAY (wlroots double-forks it: it is
    nobody's child we could ask for)."""
    r = subprocess.run(['pgrep', '-f', '^Xwayland %s( |$)' % s.compositor.x11_display],
                       capture_output=True)
    return r.returncode == 0


def test():
    require_programs('Xwayland', 'xterm', 'xwininfo', 'xclip', 'wl-copy', 'wl-paste')
    with Session('x11', size=(W, H)) as s:
        if not s.compositor.x11_display:
            s.fail('the compositor offers no DISPLAY')
        if xwayland_running(s):
            s.fail('Xwayland runs before any X11 client asked for it')

        with s.fifo(os.path.join(s.home, 'fifo')) as (_, fd):
            s.start_client(['xterm', '-title', 'slimx', '-geometry', '60x10', '-e', 'sh'],
                           env={'SHELL': '/bin/sh', 'PS1': '$ '})
            s.wait_screen(lambda img: fraction_not(img, BACKGROUND) > 0.05, 'the xterm window')
            s.settled()
            s.type_text('echo slim-x11 > fifo\n')
            log('the FIFO got %r' % read_fifo(s, fd, b'slim-x11\n', 10))
        if not xwayland_running(s):
            s.fail('no Xwayland child of the compositor while xterm runs')
        s.settled()
        s.assert_screens_equal()

        # Alt+drag moves it; X11 learns where it is
        before = xwininfo(s, 'slimx')
        x0, y0 = before['Absolute upper-left X'] + 20, before['Absolute upper-left Y'] + 20
        s.console.motion(x0, y0)
        s.console.key(KEY_LEFTALT, True)
        s.console.button(BTN_LEFT, True)
        for step in range(1, 11):
            s.console.motion(x0 + 10 * step, y0 + 5 * step)
        s.console.button(BTN_LEFT, False)
        s.console.key(KEY_LEFTALT, False)
        s.settled()
        after = xwininfo(s, 'slimx')
        log('xterm moved from %s to %s' % (before, after))
        if (after['Absolute upper-left X'] - before['Absolute upper-left X'],
                after['Absolute upper-left Y'] - before['Absolute upper-left Y']) != (100, 50):
            s.fail('X11 thinks the window moved from %s to %s, not by (100, 50)' % (
                before, after))
        s.assert_screens_equal()

        # maximized on request
        s.start_client(['xterm', '-maximized', '-title', 'slimmax'])
        s.wait_screen(lambda img: fraction_not(img, BACKGROUND) == 1.0, 'the maximized xterm')
        got = xwininfo(s, 'slimmax')
        if (got['Width'], got['Height'], got['Absolute upper-left X'],
                got['Absolute upper-left Y']) != (W, H, 0, 0):
            s.fail('xterm -maximized got %s, not the %dx%d screen' % (got, W, H))
        s.settled()
        s.assert_screens_equal()

        # the clipboard, X11 to Wayland: wl-paste --watch prints each new selection
        watch = s.start_client(['wl-paste', '-n', '--watch', 'sh', '-c', 'cat; echo'],
                               lines=True)
        s.run_client(['sh', '-c', 'printf from-x11 | xclip -selection clipboard -i -loops 1'])
        watch.wait_line('from-x11', timeout=10)
        # and Wayland to X11
        # (wl-copy's server stays behind, serving: its output goes nowhere)
        s.run_client(['sh', '-c', 'wl-copy from-wayland >/dev/null 2>&1'])
        r = s.run_client(['xclip', '-selection', 'clipboard', '-o'], timeout=10)
        if r.stdout.decode() != 'from-wayland':
            s.fail('xclip -o got %r, not what wl-copy set' % r.stdout)


run(test)
