"""slimland-greeter against a stand-in for slimland-sessiond's greeter socket
(protocol/session-manager.md §3): it keeps retrying while the socket is
missing, saying so once in its log, says hello with the console's id, starts with the user name focused
(Enter goes on to the password), submits on Enter with the password in hex,
and can log in again after an error. It finds the session's bus, as a
session's programs do: Xwayland never starts."""
import os
import socket
import time

from slimtest import (BACKGROUND, Session, fraction_not, require_programs, run, scaled,
                      xwayland_started)

GREETER = os.environ.get('SLIMLAND_GREETER', '')


def read_line(conn, buf, what, timeout=15):
    deadline = time.monotonic() + scaled(timeout)
    while b'\n' not in buf[0]:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError('the greeter did not send %s' % what)
        conn.settimeout(left)
        data = conn.recv(4096)
        if not data:
            raise AssertionError('the greeter closed the socket before %s' % what)
        buf[0] += data
    line, buf[0] = buf[0].split(b'\n', 1)
    return line.decode()


def greeter_says(greeter, text, start=0, timeout=15):
    """The index after the greeter's first stderr line from `start` on that contains text."""
    i, line = greeter.stderr.wait(lambda l: text in l, start, time.monotonic() + scaled(timeout))
    if line is None:
        raise AssertionError('the greeter never said "%s"; it said:\n%s' % (
            text, '\n'.join(greeter.stderr.tail(10))))
    return i + 1


def test():
    require_programs(GREETER)
    with Session('greeter', size=(1024, 768)) as s:
        path = os.path.join(s.tmp, 'greeter.sock')
        greeter = s.start_client([GREETER], env={'SLIMLAND_GREETER_SOCKET': path,
                                                 'SLIMLAND_CONSOLE': 'c0ffee'})
        s.wait_screen(lambda img: fraction_not(img, BACKGROUND) > 0.5, 'the greeter window',
                      timeout=30)
        # No manager yet: the greeter says so in its log, and retries on its own.
        said = greeter_says(greeter, 'waiting for the session manager at ' + path)
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(path)
        server.listen(1)
        server.settimeout(scaled(10))
        conn, _ = server.accept()
        buf = [b'']
        assert read_line(conn, buf, 'hello') == 'hello c0ffee'
        greeter_says(greeter, 'connected to the session manager', said)
        waits = [l for l in greeter.stderr.since(0) if 'waiting for the session manager' in l]
        assert len(waits) == 1, 'said more than once in one outage: %s' % waits
        conn.sendall(b'message Unknown card: log in to use it\n')

        s.settled()
        s.type_text('alice\nsecret pw\n')
        line = read_line(conn, buf, 'login')
        assert line == 'login alice ' + 'secret pw'.encode().hex(), line
        conn.sendall(b'error Wrong user name or password\n')

        # After an error the password is focused again, and empty.
        s.settled()
        s.type_text('right\n')
        line = read_line(conn, buf, 'the second login')
        assert line == 'login alice ' + 'right'.encode().hex(), line
        conn.sendall(b'ok\n')
        s.settled()
        conn.close()
        server.close()
        started = xwayland_started(s.compositor.stderr.since(0))
        if started:
            s.fail('the greeter\'s session started Xwayland: %s' % started[0])


run(test)
