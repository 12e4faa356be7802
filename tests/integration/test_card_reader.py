"""Card taps through the real PC/SC stack: pcscd with vsmartcard's vpcd
driver, an emulated card (card_emulator.py), slimland-console
--card-reader=pcsc, and slimland, whose log shows the CARD commands.

- a card that answers GET DATA gives kind 1, its UID, on insertion and on
  removal, and the same token when it comes back;
- a card that refuses GET DATA (6A 81) gives kind 2, SHA-256 of its ATR;
- taps while no server listens are told to the next one that does;
- pcscd going away counts as a removal, leaves the console running, and
  the console finds pcscd again when it comes back.

pcscd runs privately (slimpcsc.py).
"""
import hashlib
import os
import shutil
import signal
import time

from card_emulator import ATR, GET_DATA_UID, Card
from slimpcsc import VPCD_DRIVER, Pcscd, find_pcscd, free_tcp_port_pair
from slimtest import (Console, Process, Session, TestFailure, TestSkip, log, run,
                      scaled)

UID = bytes.fromhex('04a1b2c3d4e5f6')
CONSOLE_ID = 'card-desk'


class CardConsole(Console):
    """slimland-console --control --card-reader=pcsc on a private pcscd."""

    def __init__(self, session, pcsc_socket):
        argv = [session.slimland_console, '--server', '127.0.0.1:%d' % session.port,
                '--output', 'headless', '--size', '%dx%d' % session.size,
                '--state-dir', session.console_state_dir(CONSOLE_ID), '--control',
                '--card-reader=pcsc']
        env = session.console_env()
        env['PCSCLITE_CSOCK_NAME'] = pcsc_socket
        self.session = session
        self.size = session.size
        self.console_id = CONSOLE_ID
        self.pos = 0
        Process.__init__(self, 'console-0', argv, env, session.outdir, stdout_lines=True)

    def wait_stderr(self, text, start, timeout=10):
        i, line = self.stderr.wait(lambda l: text in l, start, time.monotonic() + scaled(timeout))
        if line is None:
            self.session.fail('%s: no "%s" on stderr within %gs' % (self.name, text,
                                                                   scaled(timeout)))
        return i + 1


class Log:
    """Waits for the compositor's CARD log lines, in order."""

    def __init__(self, session, pos=None):
        self.session = session
        self.pos = session.compositor.stderr.mark() if pos is None else pos

    def expect(self, event, kind, token, timeout=15):
        # the token itself never reaches a log: its hash's first 4 bytes do
        want = 'link: card %s on console %s: kind %d, token hash %s' % (
            event, self.session.console_key_id(CONSOLE_ID), kind,
            hashlib.sha256(token).digest()[:4].hex())
        stderr = self.session.compositor.stderr
        i, line = stderr.wait(lambda l: 'link: card ' in l, self.pos,
                              time.monotonic() + scaled(timeout))
        if line is None:
            self.session.fail('slimland logged no card event within %gs (wanted "%s")' % (
                scaled(timeout), want))
        self.pos = i + 1
        if not line.endswith(want):
            self.session.fail('slimland logged "%s", wanted "%s"' % (line, want))
        log('slimland: ' + want)


def test():
    pcscd = find_pcscd()
    if pcscd is None or not os.path.exists(VPCD_DRIVER):
        raise TestSkip('pcscd or vsmartcard-vpcd is not installed')
    if not shutil.which('unshare'):
        raise TestFailure('unshare (util-linux) is missing')
    with Session('card_reader', console=False) as s:
        port = free_tcp_port_pair()
        daemons = [Pcscd(s, pcscd, port, 0)]
        cards = []
        try:
            log('pcscd (pid %d), socket %s, vpcd on port %d' % (
                daemons[0].pid, daemons[0].socket, port))
            console = CardConsole(s, daemons[0].socket)
            s.consoles.append(console)
            console.wait_for('attached', 15)
            err_pos = console.wait_stderr('card reader 0: Virtual PCD', 0)
            events = Log(s)

            # A card with a UID: inserted, removed, and the same token again.
            card = Card(port, uid=UID)
            cards.append(card)
            for _ in range(2):
                card.insert()
                events.expect('inserted', 1, UID)
                card.remove()
                events.expect('removed', 1, UID)
            if GET_DATA_UID not in card.apdus:
                s.fail('the card never saw GET DATA: %r' % card.apdus)

            # A card without one: SHA-256 of its ATR, checked here.
            atr_hash = hashlib.sha256(ATR).digest()
            plain = Card(port, uid=None)
            cards.append(plain)
            plain.insert()
            events.expect('inserted', 2, atr_hash)
            plain.remove()
            events.expect('removed', 2, atr_hash)

            # Taps while no server listens are told once one does, the latest only:
            # the card taken off and put back again arrives as one insertion.
            card.insert()
            events.expect('inserted', 1, UID)
            s.stop_compositor()
            console.wait_for('connecting', 15)
            # (vpcd looks for its card every 0.4 s: a swap in between goes unseen)
            mark = console.stderr.mark()
            card.remove()
            mark = console.wait_stderr('card removed on reader 0', mark)
            card.insert()
            err_pos = console.wait_stderr('card inserted on reader 0', mark)
            s.start_compositor(port=s.port)
            events = Log(s, 0)
            console.wait_for('attached', 15)
            events.expect('inserted', 1, UID)
            card.remove()
            events.expect('removed', 1, UID)

            # pcscd goes away under an inserted card: a removal, and the console lives on.
            card.insert()
            events.expect('inserted', 1, UID)
            daemons[0].stop(signal.SIGKILL)
            card.remove()
            events.expect('removed', 1, UID)
            err_pos = console.wait_stderr('PC/SC service (pcscd) lost', err_pos)
            if not console.alive():
                s.fail('the console died with pcscd')
            daemons.append(Pcscd(s, pcscd, port, 1))
            console.wait_stderr('PC/SC service (pcscd) found', err_pos, timeout=15)
            card.insert()
            events.expect('inserted', 1, UID)
            card.remove()
            events.expect('removed', 1, UID)
            console.sync()  # still answering its driver
        finally:
            for c in cards:
                c.remove()
            for d in daemons:
                d.stop()


run(test)
