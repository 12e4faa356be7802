"""An idle session sends nothing: once the screen has settled, no datagram
and no byte reaches the console."""
import time

from slimtest import Session, log, run

WINDOW_S = 2.0


def test():
    with Session('idle') as s:
        s.start_client([s.slim_echo], wait_line='ready')
        s.settled()
        before = s.stats()
        time.sleep(WINDOW_S)  # the measurement window itself
        after = s.stats()
        log('over %gs: %d datagrams, %d bytes' % (
            WINDOW_S, after['datagrams'] - before['datagrams'], after['bytes'] - before['bytes']))
        if after['datagrams'] != before['datagrams'] or after['bytes'] != before['bytes']:
            s.fail('an idle session sent %d datagram(s), %d byte(s) in %gs' % (
                after['datagrams'] - before['datagrams'], after['bytes'] - before['bytes'],
                WINDOW_S))


run(test)
