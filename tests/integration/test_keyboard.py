"""The console's keyboard, through one session and one foot that never
restarts: each console in turn says its keymap (--keyboard) and the
session types with it. A `de` console types z for the Y key; the same
session then shown on a `us` console types y; `fr` (AZERTY) types a for
the Q key, `us:dvorak` f for the Y key; `us+de` with grp:alt_shift_toggle
switches to the second layout on Alt+Shift; the user's own
~/.config/slimland/keyboard wins over the console's, and a bad one is
said once and passed over; a keymap that does not compile (`xx`) types us
and is said in one log line, however often its console comes."""
import os
import time

from slimtest import (KEY_ENTER, KEY_LEFTALT, KEY_LEFTSHIFT, Session, log, read_fifo,
                      require_programs, run, scaled)

KEY_Q = 16
KEY_Y = 21


def test():
    require_programs('foot')
    with Session('keyboard', console=False) as s:
        state = {'n': 0}

        def attach(spec):
            """The console before quits (its goodbye frees the session) and a
            console with --keyboard `spec` shows the session."""
            if s.console is not None:
                mark = s.compositor.stderr.mark()
                old = s.console
                old.quit()
                _, line = s.compositor.stderr.wait(
                    lambda l: 'said goodbye' in l and old.id in l, mark,
                    time.monotonic() + scaled(10))
                if line is None:
                    s.fail('the compositor did not hear %s say goodbye' % old.id)
            state['n'] += 1
            s.console = s.start_console(console_id='console-kb-%d' % state['n'],
                                        extra_args=['--keyboard', spec])
            log('console %s with --keyboard %s' % (s.console.id, spec))

        def types(fd, keys, want, what):
            """Taps `keys` (evdev codes; a tuple: held together), then Enter;
            foot's cat writes the line to the FIFO."""
            for key in keys:
                if isinstance(key, tuple):
                    for k in key:
                        s.console.key(k, True)
                    for k in reversed(key):
                        s.console.key(k, False)
                else:
                    s.console.tap(key)
            s.console.tap(KEY_ENTER)
            got = read_fifo(s, fd, b'\n', 10)
            if got != want + b'\n':
                s.fail('%s typed %r, not %r' % (what, got, want + b'\n'))
            log('%s typed %r' % (what, got))

        with s.fifo() as (fifo, fd):
            attach('de')
            s.start_typist(fifo)
            types(fd, [KEY_Y], b'z', 'a de console\'s Y key')
            attach('us')
            types(fd, [KEY_Y], b'y', 'a us console\'s Y key')
            attach('fr')
            types(fd, [KEY_Q], b'a', 'an fr console\'s Q key')
            attach('us:dvorak')
            types(fd, [KEY_Y], b'f', 'a us:dvorak console\'s Y key')
            attach('us+de,grp:alt_shift_toggle')
            types(fd, [KEY_Y, (KEY_LEFTALT, KEY_LEFTSHIFT), KEY_Y], b'yz',
                  'us+de: Y, Alt+Shift, Y')

            # the user's own choice wins over the console's
            user_file = os.path.join(s.config_home, 'slimland', 'keyboard')
            os.makedirs(os.path.dirname(user_file))
            with open(user_file, 'w') as f:
                f.write('# mine\nfr\n')
            attach('de')
            types(fd, [KEY_Q, KEY_Y], b'ay', 'the user\'s fr over a de console')
            # a bad one is said once, and the console's keyboard types
            with open(user_file, 'w') as f:
                f.write('fr\nde\n')
            mark = s.compositor.stderr.mark()
            attach('de')
            types(fd, [KEY_Y], b'z', 'a de console, the user\'s file bad')
            attach('de')
            bad = [l for l in s.compositor.log_since(mark) if user_file in l]
            if len(bad) != 1 or 'line 2' not in bad[0]:
                s.fail('the bad user file was said %d times, not once with its line: %r'
                       % (len(bad), bad))
            log('compositor: %s' % bad[0].strip())
            os.unlink(user_file)

            # a keymap that does not compile types us, said once
            mark = s.compositor.stderr.mark()
            attach('xx')
            types(fd, [KEY_Y], b'y', 'an xx console (us)')
            attach('de')
            types(fd, [KEY_Y], b'z', 'a de console after xx')
            attach('xx')
            types(fd, [KEY_Y], b'y', 'the xx console again')
            said = [l for l in s.compositor.log_since(mark) if 'does not compile' in l]
            if len(said) != 1 or 'keyboard xx' not in said[0] or 'types us' not in said[0]:
                s.fail('the keymap xx was said %d times, not once: %r' % (len(said), said))
            log('compositor: %s' % said[0].strip())


run(test)
