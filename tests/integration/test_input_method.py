"""Input methods: text-input-v3 clients relayed to an input-method-v2 one.

foot (text-input-v3) runs `cat` into a FIFO; slim-im is the input method:
- one that commits at once, before it was ever activated, and again on its
  activation before the done that completes it, changes nothing (its text
  never reaches foot);
- one that composes on activation (a preedit, then the text) types
  "日本語 テスト" into foot: the FIFO gets exactly those UTF-8 bytes;
- a second input method while one serves the seat is told `unavailable`;
- one killed mid-composition (a preedit, no commit) leaves foot working:
  the console's keys reach it, and its preedit is gone;
- its candidate window shows right under foot's text cursor, and goes
  with the method;
- the keyboard focus moving to another window deactivates the method, and
  a commit while no text input is active changes nothing;
- a method that grabs the keyboard gets the console's keys, with the
  keymap, and the focused window does not; released, the window does;
- the focus back on foot activates a method again, and what it commits is
  typed there.
"""
import os
import signal

from PIL import ImageChops, Image

from slimtest import (BACKGROUND, KEY_A, KEY_ENTER, Session, log, read_fifo, require_programs,
                      run)

TEXT = '日本語 テスト\n'
KEY_B = 48
# slim-im --popup's candidate window (POPUP_W, POPUP_H, POPUP_RGB in im.c)
POPUP_SIZE = (64, 32)
POPUP_RGB = (0xff, 0x00, 0xff)


def box_of(img, rgb):
    """The bounding box (left, top, right, bottom) of the pixels of colour rgb, or None."""
    mask = ImageChops.difference(img, Image.new('RGB', img.size, rgb)).convert('L')
    return mask.point(lambda v: 255 if v == 0 else 0).getbbox()


def check_popup(s, im):
    """A candidate window under foot's text cursor, gone with its method;
    nothing composed at that cursor (the preedit of a method that died is
    gone)."""
    popup = s.start_client([im, '--popup', 'unused'], wait_line='ready', lines=True)
    x, y, w, h = (int(v) for v in popup.wait_line('rectangle').split()[1:])
    log('the candidate window was told the cursor is at %d,%d %dx%d from its corner'
        % (x, y, w, h))
    img = s.wait_screen(lambda img: box_of(img, POPUP_RGB) is not None, 'the candidate window')
    left, top, right, bottom = box_of(img, POPUP_RGB)
    if (right - left, bottom - top) != POPUP_SIZE:
        s.fail('the candidate window shows as %dx%d, not %dx%d'
               % ((right - left, bottom - top) + POPUP_SIZE))
    # right under the cursor: foot's is near the top of a big window, with room below
    if w <= 0 or h <= 0 or (x, y) != (0, -h):
        s.fail('the candidate window is not right under a text cursor: told %d,%d %dx%d'
               % (x, y, w, h))
    # and that cursor is in foot's window, where the text goes
    cursor = img.crop((left + x, top + y, left + x + w, top + y + h))
    if cursor.getcolors(w * h) == [(w * h, BACKGROUND)]:
        s.fail('the text cursor the candidate window was told of is on the desktop, at %d,%d'
               % (left + x, top + y))
    # past the cursor's cell (foot may tell a 1-pixel bar and draw a block; a
    # cell is narrower than tall, two for a wide character), the line is blank
    # once foot has drawn what it was told (the popup may show in a frame
    # before foot's own redraw)
    after = (left + x + h, top + y, left + x + h + 100, top + y + h)

    def blank_after(img):
        return len(img.crop(after).getcolors(100 * h)) == 1
    if not blank_after(img):
        s.wait_screen(blank_after, 'nothing composed at the text cursor, inside %s' % (after,),
                      timeout=5)
    popup.stop()
    s.wait_screen(lambda img: box_of(img, POPUP_RGB) is None, 'the candidate window gone')


def test():
    require_programs('foot')
    im = os.environ.get('SLIM_IM', '')
    with Session('input_method') as s:
        with s.fifo() as (path, fd):
            s.start_typist(path)

            # commits before it knew anything: ignored
            early = s.start_client([im, '--commit-now', 'early\n'], wait_line='ready',
                                   lines=True)
            early.wait_line('activate')
            early.stop()

            # composes, then commits: foot types it
            first = s.start_client([im, TEXT], wait_line='ready', lines=True)
            first.wait_line('committed')
            got = read_fifo(s, fd, TEXT.encode(), 10, forbidden=b'early')
            log('the FIFO got %r' % got.decode())
            if got != TEXT.encode():
                s.fail('foot wrote %r, not %r' % (got, TEXT.encode()))

            # one method a seat
            second = s.start_client([im, 'second\n'], wait_line='ready', lines=True)
            second.wait_line('unavailable')
            second.stop()

            # killed with its preedit showing: foot carries on with the keys
            first.stop()
            dying = s.start_client([im, '--preedit-only', 'never\n'], wait_line='ready',
                                   lines=True)
            dying.wait_line('preedit')
            dying.stop(signal.SIGKILL)
            s.console.tap(KEY_A)
            s.console.tap(KEY_ENTER)
            got = read_fifo(s, fd, b'a\n', 10, forbidden=b'never')
            if got != b'a\n':
                s.fail('after the method died foot wrote %r, not "a\\n"' % got)

            check_popup(s, im)

            # the focus leaves foot: the method is deactivated
            third = s.start_client([im, 'third\n'], wait_line='ready', lines=True)
            third.wait_line('committed')
            read_fifo(s, fd, b'third\n', 10)
            echo = s.start_client([s.slim_echo, '--print-keys'], wait_line='ready')
            third.wait_line('deactivate')
            third.stop()

            # no text input is active (slim-echo has none): a commit changes nothing
            stray = s.start_client([im, '--commit-now', 'stray\n'], wait_line='ready',
                                   lines=True)
            stray.stop()

            # a keyboard grab takes the console's keys, and the focused window does
            # not get them; released, the window does
            grab = s.start_client([im, '--grab', 'unused\n'], wait_line='ready', lines=True)
            grab.wait_line('keymap')
            s.console.tap(KEY_A)
            grab.wait_line('key %d 1' % KEY_A)
            grab.wait_line('key %d 0' % KEY_A)
            grab.stop()
            s.console.tap(KEY_B)
            echo.wait_line('key %d pressed' % KEY_B)
            seen = echo.stdout.tail(100)
            if any(line.startswith('key %d ' % KEY_A) for line in seen):
                s.fail('slim-echo got a key the input method grabbed: %s' % seen)
            s.settled()
            s.assert_screens_equal()

            # the focus back on foot (slim-echo gone): a method is activated again
            # and types there, and the stray commit never did
            echo.stop()
            last = s.start_client([im, 'last\n'], wait_line='ready', lines=True)
            last.wait_line('committed')
            read_fifo(s, fd, b'last\n', 10, forbidden=b'stray')
            last.stop()


run(test)
