"""Clients that misuse the protocols slimland advertises get the error the
spec prescribes (or are ended), and nothing else changes: foot, running
`cat` into a FIFO the whole time, still types what the console sends, and
the console equals grim at the end.

slim-misuse, one case a run:
- a layer surface of size 0x0 with no anchors: zwlr_layer_surface_v1
  invalid_size;
- two pointer locks on one surface: zwp_pointer_constraints_v1
  already_constrained;
- a pointer lock on a surface without the pointer: no error, and the lock
  stays inactive (no `locked` event);
- a pointer lock on a surface the client destroyed: wl_display
  invalid_method, libwayland's "invalid arguments" for a request naming
  an object that is gone (before slimland or wlroots sees it);
- a window whose surface is destroyed under its active pointer lock, the
  lock object after it: no error, the pointer free again;
- a virtual key before any keymap: zwp_virtual_keyboard_v1 no_keymap;
- a virtual keyboard keymap that does not parse, one said to be 1 MiB in
  a file of 4096 bytes with no NUL (xkbcommon would read on past the file:
  SIGBUS), and one
  with no terminating NUL (xkbcommon would read past the mapping): the
  client is ended (no_memory, wlroots' answer to a keymap it cannot take),
  the last two refused before wlroots maps them, with one log line.
Then an X11 client renames its window 40,000 times as fast as X11 lets it:
the compositor keeps up, its memory stays bounded, and it still serves; a
task bar (foreign-toplevel-management) gets the last title, but only a few
of the others: titles are sent at most ten times a second.
"""
import os
import time

from slimtest import (BACKGROUND, KEY_A, KEY_ENTER, Session, fraction_not, log, read_fifo,
                      require_programs, run, scaled)

NO_MEMORY = 'error wl_display 2'  # wl_display.error no_memory
CASES = [
    ('layer-zero', 'error zwlr_layer_surface_v1 1'),
    ('lock-twice', 'error zwp_pointer_constraints_v1 1'),
    ('lock-unfocused', 'ok'),
    ('lock-dead-surface', 'error wl_display 1'),  # invalid_method
    ('key-no-keymap', 'error zwp_virtual_keyboard_v1 0'),
    ('keymap-garbage', NO_MEMORY),
    ('keymap-overlong', NO_MEMORY),
    ('keymap-unterminated', NO_MEMORY),
]
RENAMES = 40000
# More than this over the flood would be memory the flood made us keep.
MAX_GROWTH_KB = 32 * 1024
# Titles a task bar may see over the flood: at ten a second, this many take
# the flood 40 s (it takes one); sent as they came, it got thousands.
MAX_TITLES = 400


def rss_kb(pid):
    with open('/proc/%d/status' % pid) as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1])
    return 0


def sanitized(pid):
    """Whether the process runs with AddressSanitizer: its freed memory waits
    in a quarantine (256 MiB) before reuse, so its RSS says nothing of what
    it keeps; LeakSanitizer at its exit checks that instead."""
    with open('/proc/%d/maps' % pid) as f:
        return any('libasan' in line for line in f)


def typed(s, fd, what):
    s.console.tap(KEY_A)
    s.console.tap(KEY_ENTER)
    got = read_fifo(s, fd, b'a\n', 10)
    if got != b'a\n':
        s.fail('after %s foot wrote %r, not "a\\n"' % (what, got))


def test():
    require_programs('foot')
    misuse = os.environ.get('SLIM_MISUSE', '')
    flood = os.environ.get('SLIM_X11_FLOOD', '')
    with Session('bad_protocols') as s:
        with s.fifo() as (path, fd):
            s.start_typist(path)
            for case, want in CASES:
                mark = s.compositor.stderr.mark()
                r = s.run_client([misuse, case])
                said = r.stdout.decode().strip()
                log('%s: %s' % (case, said))
                if r.returncode != 0 or said != want:
                    s.fail('%s: the client saw %r (status %d), not %r: %s' % (
                        case, said, r.returncode, want, r.stderr.decode()[-300:]))
                typed(s, fd, case)
                if case in ('keymap-overlong', 'keymap-unterminated'):
                    # its stderr is read as it comes: wait for the line, then count
                    s.compositor.stderr.wait(lambda l: 'keymap' in l and 'refused' in l, mark,
                                             time.monotonic() + scaled(5))
                    refused = [l for l in s.compositor.stderr.since(mark)
                               if 'keymap' in l and 'refused' in l]
                    if len(refused) != 1:
                        s.fail('%s: the compositor said %d refusals' % (case, len(refused)))

            # the lock is active once the pointer is over the window
            window = s.start_client([misuse, 'lock-window'], wait_line='ready')
            s.console.motion(250, 250)
            _, said = window.stdout.wait(lambda l: l != 'ready', 0,
                                         time.monotonic() + scaled(10))
            if said != 'locked' or window.wait_exit() != 0:
                s.fail('lock-window: the client saw %r (status %s), not "locked"' % (
                    said, window.wait_exit(0)))
            log('lock-window: %s' % said)
            typed(s, fd, 'lock-window')

            before = rss_kb(s.compositor.pid)
            final = 'flood %d' % (RENAMES - 1)
            bar = s.start_client([misuse, 'titles', final], wait_line='ready')
            x11 = s.start_client([flood, str(RENAMES)], wait_line='flooded', timeout=120)
            titles = int(bar.wait_line('titles', timeout=30).split()[1])
            log('the task bar got %d titles over %d renames' % (titles, RENAMES))
            if titles > MAX_TITLES:
                s.fail('the task bar got %d titles over %d renames' % (titles, RENAMES))
            s.wait_screen(lambda img: fraction_not(img, BACKGROUND) > 0.3, 'still a picture')
            x11.stop()
            growth = rss_kb(s.compositor.pid) - before
            asan = sanitized(s.compositor.pid)
            log('the compositor grew by %d KiB over %d renames%s' % (
                growth, RENAMES, ' (AddressSanitizer: not held to a bound)' if asan else ''))
            if growth > MAX_GROWTH_KB and not asan:
                s.fail('the compositor grew by %d KiB over the flood' % growth)
            # foot has the keyboard again once the X11 window is gone
            s.settled()
            typed(s, fd, 'the X11 flood')
            s.assert_screens_equal()


run(test)
