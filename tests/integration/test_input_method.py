"""Input methods: text-input-v3 clients relayed to an input-method-v2 one.

foot (text-input-v3) runs `cat` into a FIFO; slim-im is the input method:
- one that commits at once, before it was ever activated, changes nothing
  (its text never reaches foot);
- one that composes on activation (a preedit, then the text) types
  "日本語 テスト" into foot: the FIFO gets exactly those UTF-8 bytes;
- a second input method while one serves the seat is told `unavailable`;
- one killed mid-composition (a preedit, no commit) leaves foot working:
  the console's keys reach it;
- the keyboard focus moving to another window deactivates the method;
- a method that grabs the keyboard gets the console's keys, with the keymap.
"""
import os
import signal

from slimtest import KEY_A, KEY_ENTER, Session, log, read_fifo, require_programs, run

TEXT = '日本語 テスト\n'


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

            # the focus leaves foot: the method is deactivated
            third = s.start_client([im, 'third\n'], wait_line='ready', lines=True)
            third.wait_line('committed')
            read_fifo(s, fd, b'third\n', 10)
            s.start_client([s.slim_echo], wait_line='ready')
            third.wait_line('deactivate')
            third.stop()

            # a keyboard grab takes the console's keys
            grab = s.start_client([im, '--grab', 'unused\n'], wait_line='ready', lines=True)
            grab.wait_line('keymap')
            s.console.tap(KEY_A)
            grab.wait_line('key %d 1' % KEY_A)
            grab.wait_line('key %d 0' % KEY_A)
            s.settled()
            s.assert_screens_equal()


run(test)
