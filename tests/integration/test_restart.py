"""The compositor restarts on the same port: the console attaches to the new
one by itself, and shows the new session's clients."""
import signal

from slimtest import Session, log, run


def test():
    with Session('restart') as s:
        s.start_client([s.slim_echo], wait_line='ready')
        s.settled()
        status = s.stop_compositor(signal.SIGTERM)
        if status != 0:
            s.fail('slimland exited with status %s on SIGTERM' % status)
        mark = s.console.mark()
        s.start_compositor()  # same port and runtime directory
        line = s.console.wait_for('attached', 20, start=mark)
        log('console: %s' % line)
        s.start_client([s.slim_echo], wait_line='ready')
        s.settled()
        img = s.assert_screens_equal()
        if img.getpixel((32 + 128, 32 + 128)) != (255, 255, 255):
            s.fail('the new session\'s window is not on the screen')


run(test)
