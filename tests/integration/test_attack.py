"""An attacker on the LAN against a standalone session (issue: session
takeover, input injection, reflection, exhaustion), on the kernel's real
network path: namespaces on a bridge (slimnet.py), the attacker sending
with raw sockets from any source address and sniffing the console's port
as a switch's mirror port would (rawnet.py).

    srv 10.77.0.1   slimland --listen 10.77.0.1:PORT (DTLS, pairing key)
    desk 10.77.0.2  the real console
    atk 10.77.0.3   the attacker; replies to 10.78.0.0/16 are routed to it
    vic 10.77.0.4   a victim whose address the attacker borrows

Each attack is tried and must fail, with numbers:
  1. input recorded on the wire and played again from the console's own
     address, byte for byte, then altered, then in clear: the client (foot,
     with cat writing every character it gets to a FIFO) gets exactly what
     was typed at the console;
  2. an impostor console with a wrong pairing key, and one with none: never
     attached, never a datagram of the session;
  3. reflection: ClientHellos, records and a cleartext HELLO sourced from
     the victim's address: the victim gets no more bytes than were sent in
     its name, and never a picture;
  4. a flood of 20,000 ClientHellos from spoofed sources: the session keeps
     answering its console's keys meanwhile, the server sends no more than
     it got, and keeps no state for them (its memory grows by < 2 MB);
  5. ClientHellos at 1,000 and 20,000 a second from the console's own
     address (any port) while it starts again: it attaches within
     ATTACH_BOUND seconds each time, as without a flood.
  6. the console quits, and a console holding the pairing key says HELLO at
     8192x8192 to the free session: refused as too large, the screen stays
     as it was and the compositor grows by < 32 MB (it took 806 MB once); the
     next console of a sane size is shown the session.
"""
import os
import select
import time

from slimnet import Lan, client_hellos
from slimtest import Session, log, require_programs, rss_kb, run, scaled

PORT = 5590
FLOOD = 20000
# ClientHellos a second from the console's address while it attaches
FLOOD_RATES = (1000, 20000)
# a console attaches in a fraction of a second; a flood used to keep it out for as long as
# it lasted
ATTACH_BOUND = 3.0


def read_fifo(s, fd, want, timeout):
    """What the FIFO has once it ends with `want` (fails on a timeout)."""
    data = b''
    deadline = time.monotonic() + scaled(timeout)
    while not data.endswith(want):
        left = deadline - time.monotonic()
        if left <= 0:
            s.fail('the client got %r, waiting for %r' % (data, want))
        if select.select([fd], [], [], left)[0]:
            chunk = os.read(fd, 4096)
            data += chunk
            if not chunk:
                time.sleep(0.01)
    return data


def drain(fd):
    data = b''
    while select.select([fd], [], [], 0)[0]:
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        data += chunk
    return data


def steady_rss_kb(s, pid):
    """The process's RSS once it held still for a second: in a sanitizer
    build the compositor's grows for a few seconds after the attacks before
    (freed memory waits in a quarantine), flood or not."""
    deadline = time.monotonic() + scaled(20)
    last, since = rss_kb(pid), time.monotonic()
    while time.monotonic() - since < 1.0:
        if time.monotonic() > deadline:
            s.fail('the compositor\'s memory did not hold still: %d kB' % last)
        time.sleep(0.1)
        now = rss_kb(pid)
        if now != last:
            last, since = now, time.monotonic()
    return last


def attach_seconds(s, console):
    """Seconds from the console's first handshake to its attach."""
    console.wait_for('connecting ', 15)
    start = console.last_at
    console.wait_for('attached', 15)
    return console.last_at - start


def test():
    require_programs('foot')
    with Lan('attack') as lan, Session('attack', console=False, compositor=False) as s:
        srv, desk = lan.host('srv', 1), lan.host('desk', 2)
        atk, vic = lan.host('atk', 3, spoof=True), lan.host('vic', 4)
        srv.run('ip', 'route', 'add', '10.78.0.0/16', 'via', atk.addr)
        srv.count_udp('to_victim', 'output', 'ip daddr %s' % vic.addr)
        srv.count_udp('to_flood', 'output', 'ip daddr 10.78.0.0/16')
        vic.count_udp('at_victim', 'input', 'ip saddr %s' % srv.addr)

        s.listen_host = srv.addr
        s.compositor_prefix = tuple(srv.argv([]))
        s.start_compositor(port=PORT)
        server = '%s:%d' % (srv.addr, PORT)
        # the console's first handshake, recorded: the attacker's ClientHello
        hello_sniffer = lan.sniff(desk, PORT, 4, 20)
        console = s.start_console(endpoint=['--server', server], host=desk)
        s.console = console
        hello_sniffer.until(lambda d: d['dst'] == srv.addr, scaled(10))
        handshake = [d for d in hello_sniffer.stop() if d['dst'] == srv.addr]

        fifo = os.path.join(s.home, 'fifo')
        os.mkfifo(fifo)
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        try:
            s.start_client(['foot', 'sh', '-c', 'stty raw -echo; exec cat > %s' % fifo])
            s.settled()

            # 1. input recorded and played again, altered, in clear
            sniffer = lan.sniff(desk, PORT, 1000, 60)
            s.type_text('ab')
            read_fifo(s, fd, b'ab', 10)
            s.console.sync()
            sniffer.until(lambda d: d['dst'] == srv.addr, scaled(10))
            upstream = [d for d in sniffer.stop() if d['dst'] == srv.addr]
            if not upstream:
                s.fail('the sniffer saw none of the console\'s datagrams')
            replays = [dict(d, repeat=5) for d in upstream]
            altered = []
            for d in upstream:
                data = bytearray.fromhex(d['data'])
                data[-1] ^= 1           # the tag
                altered.append(dict(d, data=data.hex()))
                data[-1] ^= 1
                data[10] ^= 0x40        # the record's sequence number
                altered.append(dict(d, data=data.hex()))
            # a version 1 INPUT in clear, KEY_A down and up: what used to type
            clear = b'SLIM' + bytes([1, 1, 1, 0]) + bytes(16) + bytes([0x82, 0, 40, 0]) + \
                bytes([1, 0, 30, 0, 1, 0, 0, 0]) + bytes(12) + bytes([1, 0, 30, 0]) + bytes(16)
            forged = replays + altered + [dict(upstream[0], data=clear.hex(), repeat=3)]
            packets, _ = atk.spoof(forged)
            log('played %d of the console\'s datagrams again, altered or in clear' % packets)
            s.type_text('c')
            got = b'ab' + read_fifo(s, fd, b'c', 10)
            time.sleep(0.3)  # anything forged that got through would be here by now
            got += drain(fd)
            if got != b'abc':
                s.fail('the client got %r, not exactly the keys typed (b"abc")' % got)
            log('the client got exactly %r' % got)

            # 2. impostor consoles: a wrong pairing key, and none
            wrong = os.path.join(s.tmp, 'wrong.key')
            with open(os.open(wrong, os.O_WRONLY | os.O_CREAT, 0o600), 'w') as f:
                f.write('00' * 32 + '\n')
            impostors = [
                s.start_console(console_id='impostor-wrong-key', wait_attached=False,
                                endpoint=['--server', server], host=atk,
                                extra_args=['--pairing-key', wrong]),
                s.start_console(console_id='impostor-no-key', wait_attached=False,
                                endpoint=['--server', server], host=atk,
                                extra_args=['--pairing-key', os.path.join(s.tmp, 'none')]),
            ]
            for imp in impostors:
                imp.wait_for('connecting %s (' % server, 15)
            s.type_text('d')
            read_fifo(s, fd, b'd', 10)
            for imp in impostors:
                st = imp.stats()
                if st['datagrams'] or any(l.startswith('attached') for l in imp.stdout.since(0)):
                    s.fail('%s got datagrams of the session: %s' % (imp.console_id, st))
                log('%s: %s' % (imp.console_id, [l for l in imp.stdout.since(0)
                                                  if l.startswith('connecting')][-1]))
                imp.quit()

            # 3. reflection: the victim's address on ClientHellos, records, a v1 HELLO
            hello_v1 = b'SLIM' + bytes([1, 1, 1, 0]) + bytes(16) + bytes([0x81, 0, 44, 0]) + \
                bytes(44)
            in_its_name = [dict(d, src=vic.addr, sport=40000, repeat=20) for d in handshake] + \
                [dict(d, src=vic.addr, sport=40000, repeat=5) for d in upstream[:20]] + \
                [dict(upstream[0], src=vic.addr, sport=40000, data=hello_v1.hex(), repeat=20)]
            _, claimed = atk.spoof(in_its_name)
            s.type_text('e')
            read_fifo(s, fd, b'e', 10)
            sent = srv.payload_bytes('to_victim')
            arrived = vic.payload_bytes('at_victim')
            log('in the victim\'s name: %d bytes sent to the session; the session sent it %d, '
                '%d arrived' % (claimed, sent, arrived))
            if sent > claimed or arrived > claimed:
                s.fail('the session sent the victim %d bytes for %d sent in its name' % (
                    sent, claimed))

            # 4. a flood of ClientHellos from 20,000 spoofed sources
            rss_before = steady_rss_kb(s, s.compositor.pid)
            hello = handshake[0]
            flood = [dict(hello, src='10.78.%d.%d' % (i >> 8 & 255, i & 255), sport=1024 + i % 50000)
                     for i in range(FLOOD)]
            _, flood_bytes = atk.spoof(flood)
            s.type_text('f')
            read_fifo(s, fd, b'f', 10)
            rss_after = rss_kb(s.compositor.pid)
            answered = srv.payload_bytes('to_flood')
            log('flood: %d ClientHellos, %d bytes; answered with %d bytes; compositor '
                'RSS %d -> %d kB' % (FLOOD, flood_bytes, answered, rss_before, rss_after))
            if answered > flood_bytes:
                s.fail('the flood got %d bytes back for %d' % (answered, flood_bytes))
            if rss_after - rss_before > 2048:
                s.fail('the compositor grew by %d kB in the flood' % (rss_after - rss_before))
            s.type_text('g')
            if read_fifo(s, fd, b'g', 10) != b'g':
                s.fail('the session lost keys after the flood')

            # 5. the console starts again while its own address floods the server
            hellos = [dict(d, src=desk.addr, sport=None) for d in client_hellos(handshake)]
            for rate in (0,) + FLOOD_RATES:
                s.console.quit()
                flood = atk.flood(hellos, rate, 60) if rate else None
                try:
                    s.console = s.start_console(endpoint=['--server', server], host=desk,
                                                wait_attached=False)
                    seconds = attach_seconds(s, s.console)
                finally:
                    figures = flood.stop() if flood else None
                s.console.wait_for('frame ', 10)
                if figures is None:
                    log('the console attached in %.3f s without a flood' % seconds)
                    continue
                packets, _, flood_seconds = figures
                log('the console attached in %.3f s while its address sent %d ClientHellos '
                    'a second (%d in %.1f s)' % (seconds, packets / flood_seconds, packets,
                                               flood_seconds))
                if seconds > ATTACH_BOUND:
                    s.fail('the console took %.1f s to attach in a flood of %d ClientHellos a '
                           'second from its address' % (seconds, rate))
            s.type_text('h')
            read_fifo(s, fd, b'h', 10)
        finally:
            os.close(fd)

        # 6. the seat free, a console with the key at 8192x8192
        s.console.quit()
        s.grim_image()  # the screencopy's buffers, there before as after
        rss_before = rss_kb(s.compositor.pid)
        big = s.start_console(size=(8192, 8192), console_id='big-screen', wait_attached=False,
                              endpoint=['--server', server], host=atk)
        line = big.wait_for('refused ', 30)
        if not line.startswith('refused too-large '):
            s.fail('a console at 8192x8192 was told %r, not "refused too-large ..."' % line)
        screen = s.grim_image().size  # a frame rendered since: at the size it would have taken
        rss_after = rss_kb(s.compositor.pid)
        log('8192x8192: %s; the screen is %dx%d; compositor RSS %d -> %d kB' % (
            line, screen[0], screen[1], rss_before, rss_after))
        if screen != tuple(s.size):
            s.fail('the screen became %dx%d' % screen)
        # the ASan heap drifts by a few MB after the flood; one buffer of that screen is 256 MB
        if rss_after - rss_before > 32768:
            s.fail('the compositor grew by %d kB for a refused HELLO' % (rss_after - rss_before))
        big.quit()
        s.console = s.start_console(endpoint=['--server', server], host=desk)
        s.assert_screens_equal()


run(test)
