"""foot, a real terminal: a command typed through the console's keys runs in
its shell, and the console shows what the compositor renders, byte for byte."""
import os
import select
import time

from slimtest import (BACKGROUND, KEYMAP_US, Session, fraction_not, log, require_programs,
                      run, scaled)


def read_fifo(s, fd, want, timeout):
    data = b''
    deadline = time.monotonic() + scaled(timeout)
    while want not in data:
        left = deadline - time.monotonic()
        if left <= 0:
            s.fail('the shell wrote %r into the FIFO, not %r, within %gs' % (
                data, want, scaled(timeout)))
        readable, _, _ = select.select([fd], [], [], left)
        if readable:
            chunk = os.read(fd, 4096)
            data += chunk
            if not chunk:  # the writer closed: wait for another one
                time.sleep(0.01)
    return data


def test():
    require_programs('foot')
    with Session('foot') as s:
        fifo = os.path.join(s.home, 'fifo')
        os.mkfifo(fifo)
        # O_NONBLOCK: the open does not wait for the writer; select() does
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        try:
            s.start_client(['foot'], env={'SHELL': '/bin/sh', 'PS1': '$ ', 'HOME': s.home})
            s.wait_screen(lambda img: fraction_not(img, BACKGROUND) > 0.3, 'the foot window')
            s.settled()
            # the shell runs in HOME, but say where the FIFO is in full if the keys allow
            target = fifo if all(c in KEYMAP_US for c in fifo) else 'fifo'
            s.type_text('echo slim-ok > %s\n' % target)
            data = read_fifo(s, fd, b'slim-ok\n', 10)
            log('the FIFO got %r' % data)
        finally:
            os.close(fd)
        s.settled()
        img = s.assert_screens_equal()
        # New windows go to (32, 32): the top-left corner of foot's frame (its
        # title bar, drawn by foot itself) is there, not further down or right.
        inside, outside = img.getpixel((34, 34)), img.getpixel((30, 30))
        if inside == BACKGROUND or outside != BACKGROUND:
            s.fail('foot\'s window is not placed at (32, 32): pixel (34, 34) is %s, '
                   '(30, 30) is %s, the background is %s' % (inside, outside, BACKGROUND))


run(test)
