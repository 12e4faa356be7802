"""Logging in by card, and moving the session by card, with the real PC/SC
stack behind console A: pcscd with vsmartcard's vpcd driver (slimpcsc.py),
an emulated card (card_emulator.py), slimland-console --card-reader=pcsc,
and slimland-sessiond as root with PAM and a user made for the test
(slimsessiond.py).

The card on A's reader is unknown: A's greeter says so, and the login typed
on A binds it to the new session. The same token tapped on B (a stdin
reader) moves the session to B, at B's size, and A goes back to the greeter.
"""
import os
import shutil

from card_emulator import Card
from slimpcsc import VPCD_DRIVER, Pcscd, find_pcscd, free_tcp_port_pair
from slimsessiond import PASSWORD, ManagerSession
from slimtest import (BACKGROUND, TestFailure, TestSkip, fraction_not, log, read_fifo, run,
                      scaled, unique_name)

# run-unique names (slimrun.py): a user, its PAM service and the greeter user
USER = SERVICE = unique_name('pcsc')
GREETER_USER = unique_name('pcsc-gr')
UID = bytes.fromhex('04a1b2c3d4e5f7')
SIZE_A = (1024, 768)
SIZE_B = (1280, 800)


def test():
    pcscd = find_pcscd()
    if pcscd is None or not os.path.exists(VPCD_DRIVER):
        raise TestSkip('pcscd or vsmartcard-vpcd is not installed')
    if not shutil.which('unshare'):
        raise TestFailure('unshare (util-linux) is missing')
    with ManagerSession('sessiond_pcsc', USER, SERVICE, GREETER_USER, enroll='open') as s:
        port = free_tcp_port_pair()
        daemon = Pcscd(s, pcscd, port, 0)
        card = Card(port, uid=UID)
        fifo = os.path.join(s.tmp, 'f')
        os.mkfifo(fifo, 0o600)
        os.chown(fifo, s.pw.pw_uid, s.pw.pw_gid)
        fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
        try:
            flow(s, daemon, card, fifo, fd)
        finally:
            os.close(fd)
            card.remove()
            daemon.stop()


def shows(s, console, state, sid=None):
    """The console is on the greeter (or the session), showing what that
    compositor renders, at the console's size."""
    s.wait_console_state(console.id, state, user_session=sid, timeout=30)
    s.wait_screen(lambda img: fraction_not(img, BACKGROUND) > 0.3, state, timeout=30,
                  console=console)
    s.settled(console=console, quiet=0.5)
    if state == 'greeter':
        runtime = s.greeter_runtime(console.id)
        display = s.compositor_display(GREETER_USER, 'greeter-' + console.id)
    else:
        runtime = '/run/user/%d' % s.pw.pw_uid
        display = s.compositor_display(USER, 'session-' + sid)
    img = s.assert_shows(console, runtime, display)
    if img.size != console.size:
        s.fail('%s shows %s, not %s' % (console.name, img.size, console.size))


def flow(s, daemon, card, fifo, fd):
    s.start_manager()
    a = s.start_managed_console('desk-a', SIZE_A, card_reader='pcsc',
                                env={'PCSCLITE_CSOCK_NAME': daemon.socket})
    b = s.start_managed_console('desk-b', SIZE_B)
    for c in (a, b):
        c.wait_for('attached', 20)
    shows(s, a, 'greeter')
    shows(s, b, 'greeter')

    # the card on A's reader: unknown, the greeter says so
    log_pos = s.manager.stderr.mark()
    mark = a.mark()
    card.insert()
    s.wait_why(a.id, 'unknown card')
    if a.next_frame(scaled(10), start=mark) is None:
        s.fail('the greeter on A did not change for the unknown card')

    # the login typed on A: the session starts, with the card bound to it
    s.settled(console=a, quiet=0.5)
    mark = a.mark()
    a.type_text(USER + '\n' + PASSWORD + '\n')
    s.manager_log_wait('%s logged in' % USER, log_pos)
    a.wait_for('redirect 127.0.0.1:', 15, start=mark)
    a.wait_for('attached', 20, start=mark)
    table = s.wait_console_state(a.id, 'session', timeout=30)
    sid = s.user_session(table)[1]
    shows(s, a, 'session', sid)
    a.type_text('echo pcsc-a >%s\n' % fifo)
    read_fifo(s, fd, b'pcsc-a\n', 15)

    # the same card tapped on B: the session moves there
    mark_a, mark_b = a.mark(), b.mark()
    log_pos = s.manager.stderr.mark()
    b.cmd('card insert ' + UID.hex())
    b.wait_for('redirect 127.0.0.1:', 15, start=mark_b)
    b.wait_for('attached', 20, start=mark_b)
    s.manager_log_wait('console %s: attached to session %s (%dx%d)' % ((b.id, sid) + SIZE_B),
                       log_pos)
    a.wait_for('attached', 20, start=mark_a)
    shows(s, b, 'session', sid)
    shows(s, a, 'greeter')
    b.type_text('echo pcsc-b >%s\n' % fifo)
    log('the FIFO got %r' % read_fifo(s, fd, b'pcsc-b\n', 15))


run(test)
