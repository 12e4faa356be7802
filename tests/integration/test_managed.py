"""slimland --managed with a session manager played here: a UDP socket
answering the consoles' control associations with REDIRECT, and a client
of the compositor's control socket saying which token to expect.

A console is attached only with the token the compositor was told to
expect; a wrong token, or no token at all, is refused. A console whose
screen changed size starts a new association with the token it attached
with, and the session follows its size. Migrating the
session to a console of another size moves the picture there and leaves
the first console without frames. A manager that restarted (REFUSE
UNKNOWN on the control association) gets a new HELLO, and the picture
goes on without a new display HELLO.

The manager played here speaks no DTLS: the compositor and the consoles
run with --transport clear, and the keys the protocol hands out are
zeros. The real session manager's encrypted path is sessiond_flow's."""
import os
import queue
import socket
import stat
import struct
import threading
import time

from slimtest import KEY_A, Session, TestFailure, log, run, scaled

MAGIC = 0x4d494c53
VERSION = 2
DGRAM = struct.Struct('<IBBHIIQ')  # magic, version, flags, count, assoc, seq, time_us
CMD = struct.Struct('<BBH')        # type, flags, len
CMD_REFUSE, CMD_REDIRECT, CMD_HELLO, CMD_CARD, CMD_PING = 0x09, 0x0a, 0x81, 0x85, 0x86
REFUSE_UNKNOWN = 2
UPSTREAM = 1

T1 = bytes(range(0x10, 0x20))
T2 = bytes(range(0x20, 0x30))
WRONG = bytes(16)
KEY = bytes(32)  # the per-attach key: unused in clear
CLEAR = ['--transport', 'clear']


def hexid(console_id):
    return console_id.encode().hex()


class Hello:
    def __init__(self, addr, assoc, console_id, width, height, token):
        self.addr, self.assoc, self.console_id = addr, assoc, console_id
        self.width, self.height, self.token = width, height, token


class FakeManager:
    """The session manager's UDP side: HELLOs in, REDIRECT and REFUSE out,
    and every PING answered at once with an empty datagram, as the real
    one does (a console whose manager falls silent looks for another)."""

    def __init__(self, session):
        self.session = session
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(('127.0.0.1', 0))
        self.port = self.sock.getsockname()[1]
        self.inbox = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def close(self):
        self.sock.close()

    def _read(self):
        """Answers PINGs; everything else of one command goes to the inbox."""
        while True:
            try:
                data, addr = self.sock.recvfrom(65536)
            except OSError:
                return  # closed
            if len(data) < DGRAM.size + CMD.size:
                continue
            magic, version, flags, count, assoc, _, _ = DGRAM.unpack_from(data)
            if magic != MAGIC or version != VERSION or not flags & UPSTREAM or count != 1:
                continue
            ctype, _, length = CMD.unpack_from(data, DGRAM.size)
            if ctype == CMD_PING:
                self.sock.sendto(DGRAM.pack(MAGIC, VERSION, 0, 0, assoc, 0,
                                            int(time.monotonic() * 1e6)), addr)
                continue
            self.inbox.put((data, addr, assoc, ctype, data[DGRAM.size + CMD.size:][:length]))

    def _recv(self, deadline, what):
        """The next upstream datagram holding one command (no PING), before
        the deadline: (datagram, address, association, type, body)."""
        left = deadline - time.monotonic()
        try:
            return self.inbox.get(timeout=max(left, 0.001))
        except queue.Empty:
            self.session.fail('the manager got no %s' % what)

    def recv_hello(self, console_id, not_assoc=None, timeout=10):
        """The next HELLO from console_id (PINGs and CARDs are skipped), in
        an association other than not_assoc."""
        deadline = time.monotonic() + scaled(timeout)
        while True:
            _, addr, assoc, ctype, body = self._recv(deadline, 'HELLO from %s' % console_id)
            if ctype != CMD_HELLO or assoc == not_assoc:
                continue
            _, width, height, _, _ = struct.unpack_from('<HHHHI', body)
            cid = body[12:44].rstrip(b'\0').decode()
            if cid == console_id:
                return Hello(addr, assoc, cid, width, height, body[44:] or None)

    def recv_cards(self, hello, n, timeout=10):
        """The next n CARD datagrams of hello's association, whole."""
        deadline = time.monotonic() + scaled(timeout)
        cards = []
        while len(cards) < n:
            data, _, assoc, ctype, _ = self._recv(
                deadline, '%d CARD datagrams (%d came)' % (n, len(cards)))
            if assoc == hello.assoc and ctype == CMD_CARD:
                cards.append(data)
        return cards

    def send(self, hello, ctype, body):
        """One command alone in a datagram of the console's association, seq 0."""
        data = DGRAM.pack(MAGIC, VERSION, 0, 1, hello.assoc, 0, int(time.monotonic() * 1e6))
        self.sock.sendto(data + CMD.pack(ctype, 0, len(body)) + body, hello.addr)

    def redirect(self, hello, port, token):
        self.send(hello, CMD_REDIRECT, struct.pack('<BBH16s16s32s', 4, 0, port,
                                                   socket.inet_aton('127.0.0.1'), token, KEY))

    def refuse_unknown(self, hello):
        self.send(hello, CMD_REFUSE, struct.pack('<HH', REFUSE_UNKNOWN, 0))


class ControlClient:
    """The manager's end of the compositor's control socket."""

    def __init__(self, session):
        self.session = session
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(session.control_path())
        self.buf = b''
        self.actives = 0  # `active` lines: input at the console, said any time
        self.links = []   # `link` lines: the pacer's reports, said at ACKs

    def close(self):
        self.sock.close()

    def send(self, line):
        self.sock.sendall(line.encode() + b'\n')

    def read_line(self, timeout=10):
        """The next line but `active` (counted), `link` (kept) and what is said
        with `link` (`traffic`, `keys`); None at the end."""
        line = self._read_line(timeout)
        while line == 'active' or (line or '').startswith(('link ', 'traffic ', 'keys ')):
            if line == 'active':
                self.actives += 1
            elif line.startswith('link '):
                self.links.append(line.split())
            line = self._read_line(timeout)
        return line

    def _read_line(self, timeout):
        deadline = time.monotonic() + scaled(timeout)
        while b'\n' not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                self.session.fail('no line on the control socket within %gs' % scaled(timeout))
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(4096)
            except socket.timeout:
                continue
            except ConnectionResetError:
                data = b''  # closed with our bytes unread: the end all the same
            if not data:
                return None
            self.buf += data
        line, self.buf = self.buf.split(b'\n', 1)
        return line.decode()

    def expect(self, want):
        line = self.read_line()
        if line != want:
            self.session.fail('control socket said %r, not %r' % (line, want))
        log('control: %s' % line)

    def sync(self):
        """ping/pong: everything sent before was handled, everything said before was read."""
        self.send('ping')
        self.expect('pong')


def test():
    with Session('managed', size=(640, 480), console=False, managed=True,
                 transport='clear') as s:
        st = os.stat(s.control_path())
        if not stat.S_ISSOCK(st.st_mode) or stat.S_IMODE(st.st_mode) != 0o600:
            s.fail('the control socket is not a socket of mode 0600 (%o)' % st.st_mode)
        ctl = ControlClient(s)
        words = (ctl.read_line() or '').split()
        if len(words) != 3 or words[0] != 'hello' or int(words[2]) != s.compositor.pid:
            s.fail('the control socket said %r, not "hello PORT %d"' % (words, s.compositor.pid))
        port = int(words[1])
        if port == 0:
            s.fail('the compositor reports port 0')
        log('managed compositor on UDP port %d' % port)
        s.start_client([s.slim_echo], wait_line='ready')
        mgr = FakeManager(s)
        manager = ['--manager', '127.0.0.1:%d' % mgr.port]
        server = '127.0.0.1:%d' % port

        # straight at the compositor, no token: refused
        direct = s.start_console(console_id='console-d', wait_attached=False,
                                 endpoint=['--server', server])
        line = direct.wait_for('refused ', 15)
        if line != 'refused busy this session is not yours to show':
            s.fail('a console without a token was told %r' % line)
        direct.quit()

        # through the manager: nothing until the REDIRECT
        a = s.start_console(console_id='console-a', wait_attached=False, endpoint=manager)
        a.wait_for('manager connecting 127.0.0.1:%d' % mgr.port)
        ha = mgr.recv_hello(a.id)
        if ha.token is not None or (ha.width, ha.height) != (640, 480):
            s.fail('the control HELLO carries a token or the wrong size')
        # a token the compositor was not told about
        mgr.redirect(ha, port, WRONG)
        a.wait_for('manager attached %d' % ha.assoc)
        a.wait_for('redirect ' + server)
        a.wait_for('connecting ' + server)
        line = a.wait_for('refused ', 15)
        if line != 'refused busy this session is not yours to show':
            s.fail('a console with a wrong token was told %r' % line)
        if any(l.startswith('attached') for l in a.stdout.since(0)):
            s.fail('console-a attached with a wrong token')

        # the expected token
        ctl.send('expect %s %s %s' % (T1.hex(), hexid(a.id), KEY.hex()))
        ctl.sync()
        mgr.redirect(ha, port, T1)
        a.wait_for('redirect ' + server)
        a.wait_for('connecting ' + server)
        a.wait_for('attached', 15)
        a.wait_for('frame ')
        ctl.expect('attached %s 640x480' % hexid(a.id))
        # the manager repeats its REDIRECT until it hears "attached": ignored
        mark = a.mark()
        mgr.redirect(ha, port, T1)
        a.sync()  # the datagram was queued before the command: handled first
        if any(l.startswith(('redirect', 'connecting')) for l in a.stdout.since(mark)):
            s.fail('a repeated REDIRECT started a new display association')
        s.assert_screens_equal(console=a)
        mark = a.mark()
        a.tap(KEY_A)
        if a.next_frame(scaled(10), start=mark) is None:
            s.fail('console-a got no frame for a key')
        ctl.sync()
        if ctl.actives != 1:
            s.fail('a key at the console was said %d times as "active", not once' % ctl.actives)
        # the pacer's view of the link, at the first ACK: a round trip, nothing held back
        link = [f for f in ctl.links if f[1] == hexid(a.id)]
        if not link or len(link[0]) != 8 or not 0 < int(link[0][5]) <= int(link[0][4]):
            s.fail('no link report for console-a, or a wrong one: %s' % ctl.links)

        # a client inhibiting idle (a video) is told, so that reauth = idle:N waits
        inhibit = s.start_client([os.environ['SLIM_PROTOCOLS'], 'inhibit'], wait_line='ready')
        ctl.expect('inhibit 1')
        inhibit.stop()
        ctl.expect('inhibit 0')

        # its screen changes size (a monitor with another mode): a new
        # association, admitted by the token console-a attached with
        mark = a.mark()
        a.cmd('resize 720 400')
        a.wait_for('connecting ' + server, start=mark)
        a.wait_for('attached', 15)
        ctl.expect('attached %s 720x400' % hexid(a.id))
        a.size = (720, 400)
        g = s.assert_screens_equal(console=a)
        if g.size != (720, 400):
            s.fail('grim says %s after the console resized, not 720x400' % (g.size,))
        log('console-a resized to 720x400: the session followed')
        # that token admits console-a alone: another console presenting it is refused
        x = s.start_console(console_id='console-x', wait_attached=False, endpoint=manager)
        mgr.redirect(mgr.recv_hello(x.id), port, T1)
        line = x.wait_for('refused ', 15)
        if line != 'refused busy this session is not yours to show':
            s.fail('another console presenting console-a\'s token was told %r' % line)
        x.quit()

        # a card tap reaches the manager three times, the same datagram (its
        # seq too): a tap survives the loss of two copies, and the manager
        # takes the others for repeats
        c = s.start_console(console_id='console-c', wait_attached=False,
                            endpoint=manager + ['--card-reader', 'stdin'])
        hc = mgr.recv_hello(c.id)
        c.cmd('card insert 04a1b2c3')
        mgr.redirect(hc, port, WRONG)  # answers the HELLO: the kept card goes now
        for event in ('insert', 'remove'):
            if event == 'remove':
                c.cmd('card remove')
            copies = mgr.recv_cards(hc, 3)
            if any(copy != copies[0] for copy in copies):
                s.fail('the copies of a CARD %s differ: %s' % (event, [x.hex() for x in copies]))
        log('each CARD reached the manager three times, the same datagram')
        c.quit()
        # the token was used once: a second HELLO with it is refused
        hello_used = s.compositor.stderr.mark()

        # migrate to console-b, 800x600
        b = s.start_console(size=(800, 600), console_id='console-b', wait_attached=False,
                            endpoint=manager)
        hb = mgr.recv_hello(b.id)
        ctl.send('expect %s %s %s' % (T2.hex(), hexid(b.id), KEY.hex()))
        ctl.sync()
        mgr.redirect(hb, port, T2)
        b.wait_for('attached', 15)
        b.wait_for('frame ')
        ctl.expect('detached %s' % hexid(a.id))
        ctl.expect('attached %s 800x600' % hexid(b.id))
        g = s.assert_screens_equal(console=b)
        if g.size != (800, 600):
            s.fail('grim says %s after the move, not 800x600' % (g.size,))
        mark_a, mark_b = a.mark(), b.mark()
        b.tap(KEY_A)
        if b.next_frame(scaled(10), start=mark_b) is None:
            s.fail('console-b got no frame for a key')
        s.settled(console=b)
        if a.frames_since(mark_a):
            s.fail('console-a still gets frames: %s' % a.frames_since(mark_a)[:3])
        # console-a, forgotten by the compositor, says HELLO with its used token
        a.wait_for('refused unknown', 15, start=mark_a)
        a.wait_for('refused busy', 15, start=mark_a)
        # The log line travels through a pipe: wait for it, do not just look.
        _, line = s.compositor.stderr.wait(lambda l: 'token not expected (or used)' in l,
                                           hello_used, time.monotonic() + scaled(10))
        if line is None:
            s.fail('the compositor does not log the used token it refused')

        # the manager restarted: REFUSE UNKNOWN on console-b's control association
        mark_b = b.mark()
        mgr.refuse_unknown(hb)
        hb2 = mgr.recv_hello(b.id, not_assoc=hb.assoc)
        log('console-b said HELLO again to the manager: association %d' % hb2.assoc)
        # the manager reloaded its state: the same endpoint and token
        mgr.redirect(hb2, port, T2)
        b.wait_for('manager attached %d' % hb2.assoc, start=mark_b)
        b.sync()
        touched = [l for l in b.stdout.since(mark_b)
                   if l.startswith(('redirect', 'connecting', 'attached', 'refused'))]
        if touched:
            s.fail('the display association was touched: %s' % touched)
        mark = b.mark()
        b.tap(KEY_A)
        if b.next_frame(scaled(10), start=mark) is None:
            s.fail('console-b got no frame for a key after the manager restarted')
        ctl.sync()  # no "attached" (nor anything else) came before the pong
        s.assert_screens_equal(console=b)

        # detach, bad lines, and a line too long
        ctl.send('detach')
        ctl.expect('detached %s' % hexid(b.id))
        ctl.send('expect nonsense')
        ctl.send('bogus')
        ctl.sync()
        ctl.sock.sendall(b'x' * 2000)
        if ctl.read_line() is not None:
            s.fail('a line of 2000 bytes did not close the connection')
        ctl.close()
        ctl = ControlClient(s)
        ctl.expect('hello %d %d' % (port, s.compositor.pid))
        ctl.close()
        mgr.close()
        path = s.control_path()
        s.stop_compositor()
        if os.path.exists(path):
            raise TestFailure('the control socket is still there after the compositor exited')


run(test)
