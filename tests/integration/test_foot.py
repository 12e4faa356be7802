"""foot, a real terminal: a command typed through the console's keys runs in
its shell, and the console shows what the compositor renders, byte for byte."""
import os

from slimtest import (BACKGROUND, KEYMAP_US, Session, fraction_not, log, read_fifo,
                      require_programs, run)


def test():
    require_programs('foot')
    with Session('foot') as s:
        with s.fifo(os.path.join(s.home, 'fifo')) as (fifo, fd):
            s.start_client(['foot'], env={'SHELL': '/bin/sh', 'PS1': '$ ', 'HOME': s.home})
            s.wait_screen(lambda img: fraction_not(img, BACKGROUND) > 0.3, 'the foot window')
            s.settled()
            # the shell runs in HOME, but say where the FIFO is in full if the keys allow
            target = fifo if all(c in KEYMAP_US for c in fifo) else 'fifo'
            s.type_text('echo slim-ok > %s\n' % target)
            data = read_fifo(s, fd, b'slim-ok\n', 10)
            log('the FIFO got %r' % data)
        s.settled()
        img = s.assert_screens_equal()
        # New windows go to (32, 32): the top-left corner of foot's frame (its
        # title bar, drawn by foot itself) is there, not further down or right.
        inside, outside = img.getpixel((34, 34)), img.getpixel((30, 30))
        if inside == BACKGROUND or outside != BACKGROUND:
            s.fail('foot\'s window is not placed at (32, 32): pixel (34, 34) is %s, '
                   '(30, 30) is %s, the background is %s' % (inside, outside, BACKGROUND))


run(test)
