"""X11 programs through Xwayland, started only when the first one connects.

- Before any X11 client the compositor runs no Xwayland.
- xterm: a command typed through the console's keys runs in its shell (it
  writes into a FIFO the test reads); the console equals grim.
- The window dragged with Alt+button: X11 is told where it went (xwininfo's
  absolute position moves by the drag), and the console equals grim.
- xterm has slimland's title bar (its Motif hints leave decorations to the
  window manager): the pixels above its content are the bar's and its close
  button's; Motif hints saying "no decorations" (set by xprop) take it away.
- `xterm -maximized` asks for the whole screen (a configure request of its
  size): it gets the screen less its title bar.
- foot asking for 3000x2000 is told a size that fits the 800x600 screen: its
  title bar (slimland's, through xdg-decoration) and close button show.
- Clipboard both ways: xclip's CLIPBOARD reaches wl-paste, wl-copy's reaches
  xclip, first with an X11 window focused, then with foot (a Wayland
  window) focused, CLIPBOARD and PRIMARY.
- A click on the title bar's close button closes xterm: its process ends.
"""
import os
import re
import subprocess

from slimtest import (BACKGROUND, BTN_LEFT, KEY_LEFTALT, Session, fraction_not, log,
                      read_fifo, require_programs, run)

W, H = 800, 600
BAR_H = 24
BAR = (0x3f, 0x4f, 0x66)
CLOSE = (0xbf, 0x4d, 0x40)


def xwininfo(s, title):
    r = s.run_client(['xwininfo', '-name', title])
    text = r.stdout.decode()
    got = {k: int(v) for k, v in re.findall(r'(Absolute upper-left [XY]|Width|Height):\s+(-?\d+)',
                                            text)}
    if len(got) != 4:
        s.fail('xwininfo -name %s: %s %s' % (title, text, r.stderr.decode()))
    return got


def titlebar_colours(s, got):
    """The console's pixels in the title bar's left padding and in its close
    button's corner, for the window xwininfo said `got`."""
    img = s.console_image()
    x, y, w = got['Absolute upper-left X'], got['Absolute upper-left Y'], got['Width']
    return img.getpixel((x + 2, y - 2)), img.getpixel((x + w - BAR_H + 5, y - BAR_H + 5))


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

        # slimland's title bar above it
        before = xwininfo(s, 'slimx')
        colours = titlebar_colours(s, before)
        if colours != (BAR, CLOSE):
            s.fail('above xterm %s: %s, not the title bar %s and its button %s' % (
                before, colours, BAR, CLOSE))

        # Alt+drag moves it; X11 learns where it is
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

        # Motif hints: flags MWM_HINTS_DECORATIONS, decorations none
        s.run_client(['xprop', '-name', 'slimx', '-f', '_MOTIF_WM_HINTS', '32c', '-set',
                      '_MOTIF_WM_HINTS', '2, 0, 0, 0, 0'])
        s.wait_screen(lambda img: titlebar_colours(s, after) == (BACKGROUND, BACKGROUND),
                      'no title bar above xterm once its Motif hints say so')

        # maximized on request: the screen less the title bar
        maxterm = s.start_client(['xterm', '-maximized', '-title', 'slimmax'])
        s.wait_screen(lambda img: fraction_not(img, BACKGROUND) == 1.0, 'the maximized xterm')
        got = xwininfo(s, 'slimmax')
        if (got['Width'], got['Height'], got['Absolute upper-left X'],
                got['Absolute upper-left Y']) != (W, H - BAR_H, 0, BAR_H):
            s.fail('xterm -maximized got %s, not the %dx%d screen below its title bar' % (
                got, W, H))
        s.settled()
        s.assert_screens_equal()

        # the clipboard, X11 to Wayland: wl-paste --watch prints each new selection
        watch = s.start_client(['wl-paste', '-n', '--watch', 'sh', '-c', 'cat; echo'],
                               lines=True)
        s.run_client(['sh', '-c', 'printf from-x11 | xclip -selection clipboard -i -loops 1'])
        watch.wait_line('from-x11', timeout=10)
        watch.stop()  # xclip -loops 1 serves one reader: the next watcher's
        # and Wayland to X11
        # (wl-copy's server stays behind, serving: its output goes nowhere)
        s.run_client(['sh', '-c', 'wl-copy from-wayland >/dev/null 2>&1'])
        r = s.run_client(['xclip', '-selection', 'clipboard', '-o'], timeout=10)
        if r.stdout.decode() != 'from-wayland':
            s.fail('xclip -o got %r, not what wl-copy set' % r.stdout)

        # the close button closes it
        s.console.motion(W - BAR_H / 2, BAR_H / 2)
        s.console.click()
        status = maxterm.wait_exit(10)
        if status is None:
            s.fail('xterm runs on after a click on its close button')
        log('xterm closed from its title bar (status %s)' % status)

        # a Wayland window larger than the screen is told to fit
        s.start_client(['foot', '--window-size-pixels=3000x2000'])
        s.wait_screen(lambda img: (img.getpixel((2, 2)), img.getpixel((W - BAR_H + 5, 5))) ==
                      (BAR, CLOSE), 'foot fitted to the screen, its title bar at the top')

        # with a Wayland window focused, both ways, both selections
        for sel, primary in (('clipboard', []), ('primary', ['--primary'])):
            s.run_client(['sh', '-c', 'wl-copy %s wl-%s >/dev/null 2>&1' % (' '.join(primary),
                                                                             sel)])
            r = s.run_client(['xclip', '-selection', sel, '-o'], timeout=10)
            if r.stdout.decode() != 'wl-' + sel:
                s.fail('with foot focused, xclip -o -selection %s got %r (%s), not what '
                       'wl-copy set' % (sel, r.stdout, r.stderr.decode(errors='replace')))
            watch = s.start_client(['wl-paste', '-n'] + primary +
                                   ['--watch', 'sh', '-c', 'cat; echo'], lines=True)
            s.run_client(['sh', '-c', 'printf x11-%s | xclip -selection %s -i -loops 1' % (
                sel, sel)])
            watch.wait_line('x11-' + sel, timeout=10)
            watch.stop()
            log('%s: both ways with foot focused' % sel)


run(test)
