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
  4. the real console starts again while ClientHellos come from its own
     address (any port) to the manager and to its greeter, 1,000 and then
     20,000 a second: it is back on its greeter within ATTACH_BOUND
     seconds, as without a flood, and the manager keeps it and its greeter;
  5. KNOCKERS consoles with keys made up on the spot hold control
     associations open (slim-knock: a HELLO a second, a new handshake a
     second after one is pushed out), more than the manager's room for keys
     not enrolled: they push each other out, never the real console, whose
     greeter answers its keys meanwhile;
  6. a second console's greeter runs as another uid (greeter_uids); a
     process of that uid (what its greeter could run) cannot enter the
     first greeter's runtime directory, reach its control socket, nor
     signal any of its processes (EPERM), and the manager's greeter socket
     answers its `hello` for the first console with "No such console"; a
     process of the greeter user in /etc/passwd, whose uid no greeter has,
     is closed at once there; a process of the first greeter's own uid at
     its control socket is closed at once, never said hello, and the
     greeter and the manager's hold on it go on;
  7. the second console quits: nothing of its greeter's uid runs any more,
     its runtime directory is gone, and the uid is free: with two uids in
     greeter_uids, a third console's greeter gets it;
  8. an approved console says HELLO at 8192x8192: refused as too large, no
     greeter started for it (one at that size took 806 MB), no place in the
     table, the manager grown by less than 4 MB.
"""
import json
import os
import signal
import subprocess
import time

from slimnet import Lan, client_hellos
from slimsessiond import ManagerSession, _pids_of
from slimtest import KEY_A, log, rss_kb, run, scaled, unique_name

# run-unique names (slimrun.py): a user, its PAM service and the greeter user
USER = SERVICE = unique_name('atk')
GREETER_USER = unique_name('atk-gr')
SIZE = (800, 600)
FLOOD = 20000
# greeter_uids: two, the first console's greeter's and one more
GREETER_UIDS = 2
# consoles with made-up keys from the attacker's own address: with the
# impostor, within the manager's 8 handshakes at a time from one address
# (more wait their turn, which is the bound at work, and slow)
IMPOSTORS = 6
# ClientHellos a second from the console's address while it comes back
FLOOD_RATES = (1000, 20000)
# a console is back on its greeter in a fraction of a second; a flood used to keep it out
# for as long as it lasted, and the manager forgot it after 30 s
ATTACH_BOUND = 3.0
KNOCKERS = 1100
# the manager's room for connections of keys not enrolled (src/sessiond/front/consoles.c)
UNENROLLED_ROOM = 256


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

# what another greeter's process tries against a greeter: its runtime
# directory, its control socket, its processes, and the manager's greeter
# socket in its name; prints what each gave (ok, or the errno's name)
INTRUDER = """
import errno, json, os, socket, sys
runtime, greeter_socket, console, timeout = sys.argv[1:5]
pids = sys.argv[5:]
out = {'kill': {}}
def tried(what, fn):
    try:
        out[what] = fn() or 'ok'
    except OSError as e:
        out[what] = errno.errorcode.get(e.errno, str(e.errno))
def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(float(timeout))
    s.connect(path)
    return s
def hello():
    s = connect(greeter_socket)
    s.sendall(('hello %s\\n' % console).encode())
    return repr(s.recv(4096))
tried('list', lambda: os.listdir(runtime) and None)
tried('control', lambda: connect(os.path.join(runtime, 'slimland-control')) and None)
for pid in pids:
    try:
        os.kill(int(pid), 0)
        out['kill'][pid] = 'ok'
    except OSError as e:
        out['kill'][pid] = errno.errorcode.get(e.errno, str(e.errno))
tried('hello', hello)
print(json.dumps(out))
"""


def greeter_pids(s):
    """Greeter compositors running now (slimland processes of greeter_uids)."""
    pids = []
    for pid in _pids_of(s.greeter_uids):
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


def back_seconds(s, console):
    """Seconds from the console's first handshake with the manager to its
    attach to the greeter it is sent to."""
    console.wait_for('manager connecting', 15)
    start = console.last_at
    console.wait_for('attached', 15)
    return console.last_at - start


def test():
    with Lan('attack_manager') as lan:
        srv, desk = lan.host('srv', 1), lan.host('desk', 2)
        atk = lan.host('atk', 3, spoof=True)
        srv.run('ip', 'route', 'add', '10.78.0.0/16', 'via', atk.addr)
        srv.count_udp('to_flood', 'output', 'ip daddr 10.78.0.0/16')
        with ManagerSession('attack_manager', USER, SERVICE, GREETER_USER, host=srv,
                            greeter_uid_count=GREETER_UIDS) as s:
            attack(s, lan, srv, desk, atk)


def attack(s, lan, srv, desk, atk):
    s.start_manager()
    # the real console's first handshake, recorded: the attacker's ClientHello
    hello_sniffer = lan.sniff(desk, s.port, 4, 20)
    a = s.start_managed_console('desk', SIZE, host=desk)
    a.wait_for('manager refused pending', 20)
    hello_sniffer.until(lambda d: d['dst'] == srv.addr, scaled(10))
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
    sniffer.until(lambda d: d['dst'] == srv.addr, scaled(10))
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
    s.assert_shows(a, s.greeter_runtime(a.id),
                   s.compositor_display(GREETER_USER, 'greeter-' + a.id))
    for k in knockers:
        k.quit()

    # 4. the real console comes back while its own address floods the manager and its greeter
    greeter = [l for l in a.stdout.since(0) if l.startswith('redirect ')][-1].split()[1]
    hellos = [dict(d, src=desk.addr, sport=None) for d in client_hellos(handshake)]
    hellos += [dict(d, dport=int(greeter.rsplit(':', 1)[1])) for d in hellos]
    for rate in (0,) + FLOOD_RATES:
        # killed, not quit: a console that quits says goodbye, and its greeter ends with it
        a.stop(signal.SIGKILL)
        flood = atk.flood(hellos, rate, 60) if rate else None
        try:
            a = s.start_managed_console('desk', SIZE, host=desk)
            seconds = back_seconds(s, a)
        finally:
            figures = flood.stop() if flood else None
        redirect = [l for l in a.stdout.since(0) if l.startswith('redirect ')]
        if not redirect or any(l != 'redirect ' + greeter for l in redirect):
            s.fail('the console was not sent back to its greeter %s: %s' % (greeter, redirect))
        if figures is None:
            log('the console was back on its greeter in %.3f s without a flood' % seconds)
            continue
        packets, _, flood_seconds = figures
        log('the console was back on its greeter in %.3f s while its address sent %d '
            'ClientHellos a second to the manager and the greeter (%d in %.1f s)' % (
                seconds, packets / flood_seconds, packets, flood_seconds))
        if seconds > ATTACH_BOUND:
            s.fail('the console took %.1f s to come back in a flood of %d ClientHellos a '
                   'second from its address' % (seconds, rate))
    a.wait_for('frame ', 10)
    answers_keys(s, a)
    if greeters(s) != 1:
        s.fail('%d greeters run after the floods, not the real console\'s alone' % greeters(s))

    # 5. more keys not enrolled than the manager has room for, holding associations open
    mark = a.mark()
    rss_before = rss_kb(s.manager.pid)
    knock = subprocess.Popen(atk.argv([os.environ['SLIM_KNOCK'], '%s:%d' % (srv.addr, s.port),
                                       str(KNOCKERS), '120']),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        started = time.monotonic()
        line = knock.stdout.readline().decode()
        if not line.startswith('knocked '):
            s.fail('slim-knock: %r %s' % (line, knock.stderr.read().decode()))
        log('%d keys not enrolled held a connection each within %.1f s' % (
            KNOCKERS, time.monotonic() - started))
        answers_keys(s, a)
    finally:
        knock.terminate()
        out, err = knock.communicate(timeout=20)
    rss_after = rss_kb(s.manager.pid)
    figures = out.decode().strip()
    log('slim-knock: %s; manager RSS %d -> %d kB' % (figures, rss_before, rss_after))
    lost = [l for l in a.stdout.since(mark) if l.startswith(('manager connecting', 'connecting'))]
    if lost:
        s.fail('the real console lost its association with the manager or its greeter: %s'
               % lost)
    answers_keys(s, a)
    knocked = dict(f.split('=') for f in figures.split()[1:])
    # each key pushes out another once the room is full; a few closes may be on the way
    if int(knocked['closed']) == 0 or int(knocked['open']) > UNENROLLED_ROOM + 8:
        s.fail('the manager did not hold the keys not enrolled to %d connections: %s' % (
            UNENROLLED_ROOM, figures))

    # 6. a second console's greeter, as a uid of its own
    b = s.approved_console('desk-b', SIZE, host=desk)
    uid_b = greeter_intruders(s, a, b)
    control_intruder(s, a)
    uid_returned(s, b, uid_b, desk)
    huge_screen(s, desk)


def run_as(s, uid, script, *args):
    """A Python script run as uid, with the greeters' group and none other: its output."""
    r = subprocess.run(['/usr/bin/python3', '-c', script] + [str(a) for a in args],
                       user=uid, group=s.greeter_pw.pw_gid, extra_groups=[],
                       capture_output=True, timeout=scaled(15))
    if r.returncode != 0:
        s.fail('as uid %d: status %d: %s' % (uid, r.returncode,
                                              r.stderr.decode(errors='replace')))
    return r.stdout.decode().strip()


def greeter_intruders(s, a, b):
    """6. another greeter's uid, and the greeter user's, against a's greeter."""
    uid_a, uid_b = s.greeter_uid(a.id), s.greeter_uid(b.id)
    if uid_a == uid_b:
        s.fail('two consoles\' greeters run as one uid, %d' % uid_a)
    runtime = s.greeter_runtime(a.id)
    procs = s.processes_of(uid_a)
    for fd, _ in procs.values():
        os.close(fd)
    if len(procs) < 3:  # the compositor, its session bus, the form
        s.fail('a\'s greeter has %d processes: %s' % (len(procs), procs))
    greeter_socket = os.path.join(s.run_dir, 'greeter.sock')
    # the greeter user's connection is closed at once: before or after its hello came
    closed = ("b''", 'ECONNRESET', 'EPIPE')
    for who, uid, hello in (('b\'s greeter', uid_b, (repr(b'error No such console\n'),)),
                            ('the greeter user', s.greeter_pw.pw_uid, closed)):
        mark = s.manager.stderr.mark()
        said = json.loads(run_as(s, uid, INTRUDER, runtime, greeter_socket, a.id, scaled(5),
                                 *sorted(procs)))
        log('%s (uid %d) against %s: %s' % (who, uid, runtime, said))
        if said['list'] != 'EACCES' or said['control'] != 'EACCES':
            s.fail('%s entered %s: %s' % (who, runtime, said))
        signalled = {pid: e for pid, e in said['kill'].items() if e != 'EPERM'}
        if signalled or len(said['kill']) != len(procs):
            s.fail('%s could signal a\'s greeter: %s' % (who, said['kill']))
        if said['hello'] not in hello:
            s.fail('the greeter socket answered %s\'s hello %s with %s, not %s' % (
                who, a.id, said['hello'], hello))
        if hello == closed:
            s.manager_log_wait('of uid %d: no greeter\'s' % uid, mark)
    answers_keys(s, a)
    return uid_b


def control_intruder(s, a):
    """6. a process of a's greeter's own uid at its control socket."""
    pids = greeter_pids(s)
    mark = s.manager.stderr.mark()
    uid = s.greeter_uid(a.id)
    path = os.path.join(s.greeter_runtime(a.id), 'slimland-control')
    said = run_as(s, uid, PROBE, path, scaled(5))
    log('greeter uid %d at %s: %s' % (uid, path, said))
    if said != "b''":
        s.fail('the greeter\'s control socket answered its own uid: %r' % said)
    answers_keys(s, a)
    if greeter_pids(s) != pids:
        s.fail('the greeters changed: %s, then %s' % (pids, greeter_pids(s)))
    closed = [l for l in s.manager.stderr.since(mark) if 'control socket closed' in l]
    if closed:
        s.fail('the manager lost a control socket: %s' % closed)
    refused = [l for l in s.compositor_log(GREETER_USER, 'greeter-' + a.id)
               if 'control: refused a connection from uid %d' % uid in l]
    if not refused:
        s.fail('the greeter\'s log does not say it refused the intruder')
    log('greeter: %s' % refused[-1].strip())


def uid_returned(s, b, uid_b, desk):
    """7. b quits: its greeter's uid is left with nothing running, and free."""
    procs = s.processes_of(uid_b)
    runtime = os.path.join(s.run_dir, 'greeter-%d' % uid_b)
    mark = s.manager.stderr.mark()
    b.quit()
    s.wait_gone(procs, 'b\'s greeter after b quit')
    s.manager_log_wait('greeter uid %d: nothing of it runs; free' % uid_b, mark)
    left = _pids_of({uid_b})
    if left or os.path.exists(runtime):
        s.fail('after b\'s greeter: processes of uid %d %s, %s %s' % (
            uid_b, left, runtime, 'still there' if os.path.exists(runtime) else 'gone'))
    c = s.approved_console('desk-c', SIZE, host=desk)
    if s.greeter_uid(c.id) != uid_b:
        s.fail('the third console\'s greeter runs as %d, not the free uid %d' % (
            s.greeter_uid(c.id), uid_b))
    log('uid %d: b\'s greeter, gone with all of its processes, then c\'s' % uid_b)
    mark = s.manager.stderr.mark()
    c.quit()
    s.manager_log_wait('greeter uid %d: nothing of it runs; free' % uid_b, mark)


def huge_screen(s, desk):
    """8. an approved console at 8192x8192."""
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
