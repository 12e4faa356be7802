"""A second console (another id) is refused as busy; the first one keeps
working, and the compositor's log says it refused. Once the first one
quits (its goodbye, a DTLS close_notify), a third console is shown the
session at once, never told busy. Once that one has gone for 5 s, the
session frees its model of the console's screen and the buffers its
screen is rendered into (it says so); a fourth console is shown the
session exact, rendered into a buffer made anew."""
import time

from slimtest import KEY_A, Session, log, run, scaled


def rss_kb(pid):
    with open('/proc/%d/status' % pid) as f:
        return next(int(l.split()[1]) for l in f if l.startswith('VmRSS:'))


def test():
    with Session('second_console') as s:
        s.start_client([s.slim_echo], wait_line='ready')
        s.settled()
        log_mark = s.compositor.stderr.mark()
        second = s.start_console(console_id='console-b', wait_attached=False)
        line = second.wait_for('refused ', 15)
        if not line.startswith('refused busy '):
            s.fail('the second console was told "%s", not "refused busy ..."' % line)
        log('second console: %s' % line)
        if any(l.startswith('attached') for l in second.stdout.since(0)):
            s.fail('the second console says it is attached')
        # the first console still drives the session: a key paints a cell
        mark = s.console.mark()
        s.tap(KEY_A)
        if s.console.next_frame(10, start=mark) is None:
            s.fail('the first console got no frame after a key')
        s.assert_screens_equal()
        refusals = [l for l in s.compositor.log_since(log_mark) if 'refused' in l]
        if not any(second.id in l for l in refusals):
            s.fail('the compositor\'s log does not say it refused console-b (%s)' % second.id)
        log('compositor: %s' % refusals[0])
        second.quit()

        # the first console quits: its goodbye frees the session at once
        log_mark = s.compositor.stderr.mark()
        first = s.console
        first.quit()
        _, line = s.compositor.stderr.wait(lambda l: 'said goodbye' in l and first.id in l,
                                           log_mark, time.monotonic() + scaled(10))
        if line is None:
            s.fail('the compositor did not hear console-a say goodbye')
        log('compositor: %s' % line.strip())
        third = s.start_console(console_id='console-c', wait_attached=False)
        line = third.wait_for(('attached', 'refused '), 15)
        if not line.startswith('attached'):
            s.fail('a console after the first one quit was told "%s"' % line)
        third.wait_for('frame ', 10)
        s.console = third
        s.assert_screens_equal()
        log('console-c shown the session at once')

        # detached a while, the session frees its model of the last console's
        # screen; the next console is shown it exact all the same
        log_mark = s.compositor.stderr.mark()
        third.quit()
        _, line = s.compositor.stderr.wait(lambda l: 'model of its screen freed' in l,
                                           log_mark, time.monotonic() + scaled(15))
        if line is None:
            s.fail('the detached session kept its model of the console\'s screen')
        log('compositor: %s (RSS %d kB)' % (line.strip(), rss_kb(s.compositor.pid)))
        _, line = s.compositor.stderr.wait(lambda l: 'their buffers freed' in l,
                                           log_mark, time.monotonic() + scaled(5))
        if line is None:
            s.fail('the detached session kept the buffers its screen is rendered into')
        log('compositor: %s' % line.strip())
        # (what they weigh is bench-capacity's to say: a sanitizer build keeps
        # freed memory a while)
        log_mark = s.compositor.stderr.mark()
        fourth = s.start_console(console_id='console-d')
        s.console = fourth
        s.assert_screens_equal()
        # wlroots says when it makes a buffer for the output (debug): a new one
        _, line = s.compositor.stderr.wait(lambda l: 'Allocating new swapchain buffer' in l,
                                           log_mark, time.monotonic() + scaled(5))
        if line is None:
            s.fail('console-d was shown the session from the buffers said freed')
        log('console-d shown the session exact after the model was freed (RSS %d kB)' %
            rss_kb(s.compositor.pid))


run(test)
