"""An attacker on the LAN against the session manager (issue: session
takeover, exhaustion), on the kernel's real network path (slimnet.py):

    srv 10.77.0.1   slimland-sessiond (DTLS, enroll = approve) and the
                    compositors it starts
    desk 10.77.0.2  a real console, enrolled by the administrator
    atk 10.77.0.3   the attacker: consoles of its own, raw sockets, and
                    replies to 10.78.0.0/16 routed to it

  1. impostor consoles (keys of their own) get nothing: no greeter, no
     place in the table, only "waiting for an administrator"; a card they
     tap moves nothing;
  2. the real console's control association, recorded on the wire (its
     HELLO, PINGs and a card tap), played again from the attacker's address
     and from the console's own: nothing changes, and the console goes on;
  3. 20,000 ClientHellos from spoofed sources, while six consoles with keys
     made up on the spot knock from the attacker's own address: no greeter
     starts, the manager answers no more bytes than it got, its memory grows
     by less than 4 MB, and the real console's greeter answers its keys all
     along;
  4. a process of the greeter user outside the greeter (what another
     console's greeter could run) connects to the greeter's control socket:
     it is closed at once, never said hello, and the greeter and the
     manager's hold on it go on;
  5. an approved console says HELLO at 8192x8192: refused as too large, no
     greeter started for it (one at that size took 806 MB), no place in the
     table, the manager grown by less than 4 MB.
"""
import os
import subprocess
import time

from slimnet import Lan
from slimsessiond import ManagerSession, _pids_of
from slimtest import KEY_A, log, rss_kb, run, scaled, unique_name

# run-unique names (slimrun.py): a user, its PAM service and the greeter user
USER = SERVICE = unique_name('atk')
GREETER_USER = unique_name('atk-gr')
SIZE = (800, 600)
FLOOD = 20000
# consoles with made-up keys from the attacker's own address: with the
# impostor, within the manager's 8 handshakes at a time from one address
# (more wait their turn, which is the bound at work, and slow)
IMPOSTORS = 6


# what the intruder runs: connects, and prints what the socket says before it closes
PROBE = """
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.settimeout(float(sys.argv[2]))
try:
    print(repr(s.recv(4096)))
except socket.timeout:
    print('timeout')
"""


def greeter_pids(s):
    """Greeter compositors running now (the greeter user's slimland processes)."""
    pids = []
    for pid in _pids_of({s.greeter_pw.pw_uid}):
        try:
            with open('/proc/%d/comm' % pid) as f:
                if f.read().strip() == 'slimland':
                    pids.append(pid)
        except OSError:
            pass
    return sorted(pids)


def greeters(s):
    return len(greeter_pids(s))


def answers_keys(s, console):
    """The console's greeter draws something for a key typed into its form."""
    mark = console.mark()
    console.tap(KEY_A)
    if console.next_frame(scaled(10), start=mark) is None:
        s.fail('%s\'s greeter drew nothing for a key' % console.name)


def test():
    with Lan('attack_manager') as lan:
        srv, desk = lan.host('srv', 1), lan.host('desk', 2)
        atk = lan.host('atk', 3, spoof=True)
        srv.run('ip', 'route', 'add', '10.78.0.0/16', 'via', atk.addr)
        srv.count_udp('to_flood', 'output', 'ip daddr 10.78.0.0/16')
        with ManagerSession('attack_manager', USER, SERVICE, GREETER_USER, host=srv) as s:
            attack(s, lan, srv, desk, atk)


def attack(s, lan, srv, desk, atk):
    s.start_manager()
    # the real console's first handshake, recorded: the attacker's ClientHello
    hello_sniffer = lan.sniff(desk, s.port, 4, 20)
    a = s.start_managed_console('desk', SIZE, host=desk)
    a.wait_for('manager refused pending', 20)
    handshake = [d for d in hello_sniffer.stop() if d['dst'] == srv.addr]
    s.ctl('approve', a.id)
    a.wait_for('attached', 30)
    s.wait_console_state(a.id, 'greeter', timeout=30)
    a.wait_for('frame ', 10)
    s.settled(console=a, quiet=0.5)
    log('the real console %s is on its greeter' % a.id)

    # 1. impostors: a key of their own each, and a card tap
    impostor = s.start_managed_console('impostor', SIZE, host=atk, name='impostor')
    impostor.wait_for('manager refused pending', 20)
    impostor.cmd('card insert 04c0ffee112233')
    table = {f[1]: f for f in (l.split() for l in s.ctl('consoles'))}
    if table.get(impostor.id, [None] * 3)[2] != 'pending':
        s.fail('the impostor is not waiting for the administrator: %s' % table)
    if ('console', impostor.id) in s.listing() or greeters(s) != 1:
        s.fail('the impostor got a place in the table or a greeter: %s' % s.listing())
    if any(l.startswith(('redirect', 'attached')) for l in impostor.stdout.since(0)):
        s.fail('the impostor was sent somewhere')
    log('impostor %s: waiting, no greeter' % impostor.id)

    # 2. the real console's control association, recorded and played again
    sniffer = lan.sniff(desk, s.port, 100, 30)
    a.cmd('card insert 04deadbeef0000')
    s.wait_why(a.id, 'unknown card')
    a.cmd('card remove')
    a.sync()
    time.sleep(1.2)  # a PING or two in the recording
    upstream = [d for d in sniffer.stop() if d['dst'] == srv.addr]
    if not upstream:
        s.fail('the sniffer saw none of the console\'s datagrams')
    before = s.listing()
    replays = [dict(d, repeat=3) for d in upstream] + \
        [dict(d, src=atk.addr, sport=41000, repeat=3) for d in upstream]
    packets, _ = atk.spoof(replays)
    answers_keys(s, a)
    s.wait_why(a.id, 'unknown card')
    after = s.listing()
    if before != after:
        s.fail('replayed datagrams changed the table:\n%s\n%s' % (before, after))
    log('%d recorded datagrams played again: nothing changed' % packets)

    # 3. a flood of ClientHellos from spoofed sources, and consoles with made-up keys
    rss_before = rss_kb(s.manager.pid)
    knockers = [s.start_managed_console('knocker-%d' % i, SIZE, host=atk,
                                        name='knocker-%d' % i) for i in range(IMPOSTORS)]
    hello = handshake[0]
    flood = [dict(hello, src='10.78.%d.%d' % (i >> 8 & 255, i & 255), sport=1024 + i % 50000)
             for i in range(FLOOD)]
    half = len(flood) // 2
    _, first_bytes = atk.spoof(flood[:half])
    answers_keys(s, a)  # during the flood
    _, second_bytes = atk.spoof(flood[half:])
    answers_keys(s, a)
    for k in knockers:
        k.wait_for('manager refused pending', 20)
    answered_bytes = srv.payload_bytes('to_flood')
    rss_after = rss_kb(s.manager.pid)
    log('flood: %d ClientHellos, %d bytes; answered with %d bytes; %d consoles with new keys '
        'waiting; manager RSS %d -> %d kB' % (FLOOD, first_bytes + second_bytes,
                                               answered_bytes, len(knockers), rss_before,
                                               rss_after))
    if answered_bytes > first_bytes + second_bytes:
        s.fail('the flood got %d bytes back for %d' % (answered_bytes, first_bytes + second_bytes))
    if greeters(s) != 1:
        s.fail('%d greeters run: the flood or the knockers started some' % greeters(s))
    if rss_after - rss_before > 4096:
        s.fail('the manager grew by %d kB' % (rss_after - rss_before))
    pending = [l for l in s.ctl('consoles') if ' pending ' in l]
    if len(pending) != IMPOSTORS + 1:
        s.fail('%d consoles wait, not %d: %s' % (len(pending), IMPOSTORS + 1, pending))
    s.assert_shows(a, os.path.join(s.run_dir, 'greeter-' + a.id),
                   s.compositor_display(GREETER_USER, 'greeter-' + a.id))
    control_intruder(s, a)
    huge_screen(s, desk)


def control_intruder(s, a):
    """4. the greeter user's process at the greeter's control socket."""
    pids = greeter_pids(s)
    mark = s.manager.stderr.mark()
    path = os.path.join(s.run_dir, 'greeter-' + a.id, 'slimland-control')
    gw = s.greeter_pw
    r = subprocess.run(['/usr/bin/python3', '-c', PROBE, path, str(scaled(5))],
                       user=gw.pw_uid, group=gw.pw_gid, extra_groups=[],
                       capture_output=True, timeout=scaled(15))
    said = r.stdout.decode().strip()
    log('the greeter user at %s: %s %s' % (path, said, r.stderr.decode().strip()))
    if r.returncode != 0 or said != "b''":
        s.fail('the greeter\'s control socket answered the greeter user: %r (%s)' % (
            said, r.stderr.decode(errors='replace')))
    answers_keys(s, a)
    if greeter_pids(s) != pids:
        s.fail('the greeters changed: %s, then %s' % (pids, greeter_pids(s)))
    closed = [l for l in s.manager.stderr.since(mark) if 'control socket closed' in l]
    if closed:
        s.fail('the manager lost a control socket: %s' % closed)
    refused = [l for l in s.compositor_log(GREETER_USER, 'greeter-' + a.id)
               if 'control: refused a connection from uid %d' % gw.pw_uid in l]
    if not refused:
        s.fail('the greeter\'s log does not say it refused the intruder')
    log('greeter: %s' % refused[-1].strip())


def huge_screen(s, desk):
    """5. an approved console at 8192x8192."""
    rss_before = rss_kb(s.manager.pid)
    big = s.start_managed_console('big', (8192, 8192), host=desk, name='big')
    big.wait_for('manager refused pending', 30)
    s.ctl('approve', big.id)
    line = big.wait_for('manager refused too-large ', 30)
    rss_after = rss_kb(s.manager.pid)
    log('8192x8192: %s; manager RSS %d -> %d kB' % (line, rss_before, rss_after))
    if greeters(s) != 1 or ('console', big.id) in s.listing():
        s.fail('a console at 8192x8192 got a greeter or a place in the table: %s' % s.listing())
    if rss_after - rss_before > 4096:
        s.fail('the manager grew by %d kB for a console at 8192x8192' % (rss_after - rss_before))
    big.quit()


run(test)
