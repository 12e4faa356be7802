"""Hostile input: (a) 200 garbage UDP datagrams at the compositor's port,
(b) garbage on its Wayland socket. The compositor stays alive, logs little
(rate limited), and the console and a real client keep working."""
import os
import random
import socket
import struct
import time

from slimtest import KEY_A, Session, log, run, scaled

MAGIC = 0x4D494C53
UPSTREAM = 1
VERSION = 2
HELLO, INPUT, ACK, NACK, CARD, HELD = 0x81, 0x82, 0x83, 0x84, 0x85, 0x87
FILL = 0x01
DATAGRAMS = 200
MAX_LOG_LINES = 20


def header(count, assoc=0x12345678, seq=1, magic=MAGIC, version=VERSION, flags=UPSTREAM):
    return struct.pack('<IBBHIIQ', magic, version, flags, count, assoc, seq, 0)


def command(ctype, body, flags=0, length=None):
    return struct.pack('<BBH', ctype, flags, len(body) if length is None else length) + body


def hello_body(width=800, height=600, mtu=1400, caps=0xF, console_id=b'intruder'):
    return struct.pack('<HHHHI32s', VERSION, width, height, mtu, caps, console_id)


def handmade(console_assoc):
    """Datagrams that follow slim-protocol.md closely enough to get past the
    first checks, each breaking one rule."""
    ev = struct.pack('<BBHiiiI', 1, 0, 30, 1, 0, 0, 0)  # KEY_A down
    first = struct.pack('<I', 1)  # its input number
    return [
        b'',                                                    # empty
        header(1)[:23],                                         # short header
        header(1, magic=0x12345678) + command(HELLO, hello_body()),   # bad magic
        header(1, version=1) + command(HELLO, hello_body()),    # the old version
        header(1, version=3) + command(HELLO, hello_body()),    # a newer one
        header(1, flags=0) + command(HELLO, hello_body()),      # downstream flag
        header(1) + command(HELLO, hello_body()[:43]),          # HELLO too short
        header(1) + command(HELLO, hello_body(width=0)),        # HELLO width 0
        header(1) + command(HELLO, hello_body(width=9000)),     # HELLO too wide
        header(1) + command(HELLO, hello_body(mtu=10)),         # HELLO tiny MTU
        header(1) + command(HELLO, hello_body(), length=4000),  # len past the end
        header(2) + command(HELLO, hello_body()),               # count says 2
        header(1) + command(HELLO, hello_body()) + b'\0\0',     # trailing bytes
        header(1) + command(FILL, bytes(12)),                   # downstream command
        header(1) + command(CARD, bytes(8)),                    # CARD of the wrong length
        header(1) + command(0x7F, b''),                         # unknown type
        header(1) + command(INPUT, bytes(7)),                   # INPUT not 4 + 20*n
        header(1) + command(INPUT, ev),                         # INPUT without its number
        header(1) + command(INPUT, first),                      # INPUT without events
        header(1) + command(HELD, struct.pack('<IHH', 1, 65, 0) + bytes(130)),  # 65 codes
        header(1) + command(HELD, struct.pack('<IHH', 1, 2, 0) + bytes(2)),     # a code short
        header(1) + command(ACK, bytes(31)),                    # ACK too short
        header(1) + command(NACK, struct.pack('<HH', 65, 0) + bytes(8 * 65)),  # 65 ranges
        header(1) + command(NACK, struct.pack('<HHII', 1, 0, 9, 3)),           # first > last
        header(1) + command(NACK, struct.pack('<HH', 1, 0)),   # count 1, no range
        # the real console's association from another address: refused, never applied
        header(1, assoc=console_assoc, seq=7) + command(INPUT, first + ev),
        header(1, assoc=console_assoc, seq=8) + command(HELD, struct.pack('<IHH', 1, 1, 0) +
                                                       struct.pack('<H', 30)),
        header(1, assoc=console_assoc, seq=9) + command(ACK, bytes(32)),
        # a valid HELLO from another console id: refused busy
        header(1, assoc=0xBADC0DE) + command(HELLO, hello_body(console_id=b'intruder')),
        header(1, assoc=0xBADC0DE) + command(HELLO, hello_body(width=8192, height=8192)),
    ]


def udp_flood(s, rng):
    assoc = s.console.association()
    made = handmade(assoc)
    datagrams = list(made)
    while len(datagrams) < DATAGRAMS:
        kind = rng.randrange(3)
        if kind == 0:    # random bytes
            datagrams.append(rng.randbytes(rng.randrange(1, 1500)))
        elif kind == 1:  # a truncated valid-looking datagram
            d = rng.choice(made[6:])
            datagrams.append(d[:rng.randrange(len(d) + 1)])
        else:            # a valid-looking header, then random commands
            body = rng.randbytes(rng.randrange(0, 200))
            datagrams.append(header(rng.randrange(0, 4), assoc=rng.choice([assoc, 1, 0])) + body)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        for d in datagrams:
            sock.sendto(d, ('127.0.0.1', s.port))
    log('sent %d garbage datagrams' % len(datagrams))


def wayland_socket(s):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(os.path.join(s.runtime_dir, s.compositor.display))
    return sock


def disconnected(sock, timeout):
    """Whether the compositor closes the connection within timeout seconds."""
    sock.settimeout(timeout)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if not sock.recv(4096):
                return True
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False
    return False


def wayland_garbage(s, rng):
    # messages: object id, (size << 16 | opcode), arguments
    def msg(obj, opcode, args=b'', size=None):
        return struct.pack('<II', obj, ((8 + len(args) if size is None else size) << 16) | opcode) + args

    cases = {
        'a message to an object that does not exist': msg(999, 0),
        'an opcode wl_display does not have': msg(1, 77),
        'a size smaller than a header': msg(1, 1, size=4),
        'get_registry without its new_id': msg(1, 1),
        'a bind with a string running past the message':
            msg(1, 1, struct.pack('<I', 2)) +
            msg(2, 0, struct.pack('<II', 1, 1000) + b'wl_compositor\0\0\0'),
        'new_id 0': msg(1, 0, struct.pack('<I', 0)),
    }
    for what, data in cases.items():
        sock = wayland_socket(s)
        sock.sendall(data)
        if not disconnected(sock, scaled(5)):
            s.fail('the compositor did not disconnect a client that sent %s' % what)
        sock.close()
    # random bytes: some are taken for a message still coming, so no disconnect is required
    for _ in range(5):
        sock = wayland_socket(s)
        try:
            sock.sendall(rng.randbytes(rng.randrange(1, 8192)))
        except (BrokenPipeError, ConnectionResetError):
            pass
        sock.close()
    log('hostile Wayland clients done')
    # one that stalls in the middle of a message, open while a real client works
    staller = wayland_socket(s)
    staller.sendall(msg(1, 1, struct.pack('<I', 2))[:6])
    return staller


def check_alive(s, what):
    if not s.compositor.alive():
        s.fail('slimland died after %s (status %s)' % (what, s.compositor.proc.poll()))


def test():
    seed = int(os.environ.get('SLIMTEST_SEED', str(int(time.time()))))
    rng = random.Random(seed)
    log('random seed %d (SLIMTEST_SEED=%d repeats it)' % (seed, seed))
    with Session('bad_input') as s:
        s.start_client([s.slim_echo], wait_line='ready')
        s.settled()
        # (a) garbage datagrams
        log_mark = s.compositor.stderr.mark()
        udp_flood(s, rng)
        mark = s.console.mark()
        s.tap(KEY_A)
        if s.console.next_frame(scaled(10), start=mark) is None:
            s.fail('no frame after a key, after the garbage datagrams')
        check_alive(s, 'the garbage datagrams')
        s.settled()
        s.assert_screens_equal()
        lines = s.compositor.log_since(log_mark)
        log('the compositor logged %d line(s) for them' % len(lines))
        if len(lines) >= MAX_LOG_LINES:
            s.fail('the compositor logged %d lines for %d datagrams (rate limit?):\n%s' % (
                len(lines), DATAGRAMS, '\n'.join(lines[:40])))
        if not any('secure:' in l for l in lines):
            s.fail('the compositor logged nothing about the garbage datagrams')
        # (b) hostile Wayland clients
        staller = wayland_garbage(s, rng)
        check_alive(s, 'the hostile Wayland clients')
        mark = s.console.mark()
        s.start_client([s.slim_echo], wait_line='ready')
        s.tap(KEY_A)
        if s.console.next_frame(scaled(10), start=mark) is None:
            s.fail('no frame from a real client after the hostile ones')
        s.settled()
        img = s.assert_screens_equal()
        if img.getpixel((64 + 128, 64 + 128)) != (255, 255, 255):
            s.fail('the second slim-echo is not on the screen')
        staller.close()
        check_alive(s, 'everything')


run(test)
