"""A hostile client (slim-hostile: moves and resizes from a toplevel never
mapped, orphan popups, popup chains torn down from the middle, configure
floods, acks of serials never sent, buffers destroyed in use, random
request orders from a seed, integers at their extremes) plays for a
bounded time: the compositor survives (under ASan and UBSan in CI), a
well-behaved client (slim-echo) started after it answers keys through the
console, and the console still equals grim byte for byte.

Before that, each integer argument slim-hostile sends goes alone at
INT32_MIN, -1, 0, 1 and INT32_MAX (an unsigned one at 0, 1, 2^31 - 1, 2^31
and UINT32_MAX): each case ends in the protocol error its spec prescribes
or in none, and every size and place sent back is on the screen.

(slim-echo is not there during the rounds: thousands of windows mapped and
gone a second move the keyboard focus to and from it each time, and
libwayland disconnects a client whose events pile up unread faster than a
loaded machine lets it read them. That a client can cost another its
connection this way is noted, not fixed.)"""
import os

from slimtest import KEY_A, Session, log, run, scaled

SECONDS = 6


def test():
    hostile = os.environ.get('SLIM_HOSTILE', '')
    with Session('hostile') as s:
        r = s.run_client([hostile, 'extremes', '%dx%d' % s.size], timeout=120)
        out = r.stdout.decode().splitlines()
        log(out[-1] if out else 'extremes: (nothing)')
        wrong = [l for l in out if 'WRONG' in l]
        if r.returncode != 0 or wrong or not out or not out[-1].startswith('extremes'):
            s.fail('slim-hostile extremes ended with %s:\n%s%s' % (
                r.returncode, '\n'.join(wrong), r.stderr.decode()[-400:]))
        if not s.compositor.alive():
            s.fail('the compositor died under slim-hostile extremes')
        for seed in (1, 2, 3):
            r = s.run_client([hostile, str(seed), str(SECONDS / 3)], timeout=SECONDS * 4)
            out = r.stdout.decode().splitlines()
            log('seed %d: %s; %s' % (seed, out[-1] if out else '(nothing)',
                                     ', '.join(sorted(set(l.split(': ', 1)[-1]
                                                          for l in out[:-1])))))
            if r.returncode != 0 or not out or not out[-1].startswith('done'):
                s.fail('slim-hostile %d ended with %s: %s' % (seed, r.returncode,
                                                              r.stderr.decode()[-400:]))
            if not s.compositor.alive():
                s.fail('the compositor died under slim-hostile %d' % seed)
        # the pointer moves (a grab left behind by a destroyed window would be used now)
        for x, y in ((10, 10), (200, 150), (400, 300)):
            s.console.motion(x, y)
        # and a well-behaved client works
        echo = s.start_client([s.slim_echo, '--print-keys'], wait_line='ready')
        s.tap(KEY_A)
        echo.wait_line('key 30 pressed', timeout=scaled(5))
        s.settled()
        s.assert_screens_equal()


run(test)
