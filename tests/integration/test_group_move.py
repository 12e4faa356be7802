"""Server groups: consoles that go from one server's manager to another's
(session-manager.md §9, MOVE), with the real components: a three-member
etcd cluster and three slimland-sessiond servers A, B and C in network
namespaces of their own, the consoles in a fourth (slimgroup.py), one
card.key shared by the three (group_address set, enroll = open):

1. the three servers register; console W (--manager A,B) shows A's
   greeter;
2. console X (--manager A): an unknown card K, then a login at A's
   greeter: session S on A, bound to K; the registry has cards/HASH
   naming A and S, and C's view the session A/S at X;
3. console Y (--manager C) shows C's greeter; K on Y: C moves Y to A
   (its log says so, and forgets Y), A shows S on Y (pixel for pixel)
   and sends X to its greeter (the session moved to another console);
   the time from the tap to S's first frame on Y is printed;
4. console Z (--manager A) says HELLO to A, which runs S while B and C
   run nothing: A moves Z to B (the roomiest, first by name), whose
   greeter Z shows; A's table has no Z, B's has it;
5. every process of A killed at once (a power cut): Y comes back to a
   greeter of C's (its list), W (--manager A,B) to one of B's, and A
   leaves B's and C's views; the times from the kill are printed, and
   bounded: a console misses A's heartbeat (one a second) and asks
   after 1.3 s, which the dead port refuses, or hears nothing and goes
   2.5 s after A's last word, then the next manager starts a greeter;
6. with A's lease expired, K tapped again at Y is no unknown card: its
   record outlives A's lease, and C's greeter says the session is on A,
   which cannot be reached (no MOVE), offering to wait or to start a new
   session; the person starts one: a login there binds the card to the new
   session on C, and the registry says so.

Placement is made deterministic: servers on one host read the same
memory and load, but at different moments, and a record rounds memory
to 16 MiB (8 hundredths of a session at 200 MiB a user) and load to
0.05, so that two idle servers' rooms differ by a few hundredths now and
then and the tie between B and C would go either way. Here memory
counts for little (ram_per_user = 1 TiB), the CPUs for nothing
(cpu_weight = 0), and a session costs ten sessions' room
(existing_users_weight = 1000): the room is the number of sessions.

Root only (network namespaces, users, PAM); skipped without etcd.
"""
import contextlib
import json
import time

from slimgroup import (PREFIX, complete, kill_namespace, start_group, start_registered,
                       stop_cleanly, view, wait_views)
from slimtest import (BACKGROUND, Console, TestFailure, fraction_not, log, run, scaled,
                      wait_until)

NAME = 'group_move'
TTL = 3
SIZE = (800, 600)
CARD = '04a1b2c3d4e5f6'
# how long after its manager's last word a console goes to the next one (console/manager.c)
SILENT_S = 2.5
WEIGHTS = ['ram_per_user = 1048576', 'cpu_weight = 0', 'existing_users_weight = 1000']



def log_in_with_card(s, console, name):
    """The card, unknown, at the console of server s, then a login there: the
    session's id, once the console shows it."""
    console.cmd('card insert ' + CARD)
    s.wait_why(console.id, 'unknown card')
    sid = s.log_in(console)[1]
    log('%s logged in at %s: session %s/%s' % (s.user, name, s.server, sid))
    assert_session(s, console, sid)
    return sid

def address(s):
    return '%s:%d' % (s.manager_host, s.port)


def start_console(s, console_id, managers, host):
    """A console with a stdin card reader, in `host`, given the managers
    (ManagerSessions) in this order; it belongs to s (its logs, its end)."""
    endpoint = ['--manager', ','.join(address(m) for m in managers), '--card-reader=stdin']
    console = Console(s, None, SIZE, console_id, 'console-' + console_id, endpoint=endpoint,
                      host=host)
    s.consoles.append(console)
    log('console %s (%s) is %s, --manager %s' % (console_id, console.name, console.id,
                                                   ','.join(m.server for m in managers)))
    return console


def assert_greeter(s, console, timeout=30):
    """The console is on s's greeter, and shows what its compositor renders."""
    s.wait_console_state(console.id, 'greeter', timeout=timeout)
    s.wait_screen(lambda img: fraction_not(img, BACKGROUND) > 0.5, 'the greeter window',
                  timeout=30, console=console)
    s.settled(console=console, quiet=0.5)
    display = s.compositor_display(s.greeter_user, 'greeter-' + console.id)
    s.assert_shows(console, s.greeter_runtime(console.id), display)


def assert_session(s, console, sid):
    """The console shows s's session sid, what its compositor renders."""
    s.wait_console_state(console.id, 'session', user_session=sid)
    s.wait_screen(lambda img: fraction_not(img, BACKGROUND) > 0.3, 'foot', console=console)
    s.settled(console=console, quiet=0.5)
    display = s.compositor_display(s.user, 'session-%s' % sid)
    s.assert_shows(console, '/run/user/%d' % s.pw.pw_uid, display)


def first_frame_after(console, start, redirect, t0, timeout):
    """Seconds from t0 (time.monotonic) to the first frame the console
    applied after its line `redirect ...` starting with `redirect`, from
    line `start` on; None if there was none in time."""
    deadline = time.monotonic() + scaled(timeout)
    i, line = console.stdout.wait(lambda l: l.startswith('redirect ' + redirect), start,
                                  deadline)
    if line is None:
        return None
    _, frame = console.stdout.wait(lambda l: l.startswith('frame '), i + 1, deadline)
    if frame is None:
        return None
    # the console's clock is CLOCK_MONOTONIC, as Python's
    return int(frame.split()[2]) / 1e6 - t0


def log_since(s, mark, text):
    return [l for l in s.manager.stderr.since(mark) if text in l]


def not_in_table(s, console):
    table = s.listing()
    if ('console', console.id) in table:
        raise TestFailure('%s still has console %s: %s' % (s.server, console.console_id,
                                                           table[('console', console.id)]))


def failover(watched, starts, alive, killed_at):
    """Polls, from a power cut at killed_at (time.monotonic), until each
    console of watched ({name: (console, server it goes to)}) shows a frame
    of that server (its greeter) and the others' views lost the dead
    server: when each console heard the dead manager refuse, when it went
    to the next, and the seconds each took (printed)."""
    deadline = time.monotonic() + scaled(SILENT_S + TTL + 30)
    seen, took = {}, {}
    views_done = None
    while True:
        now = time.monotonic()
        for k, (console, s) in watched.items():
            lines = console.stdout.since(starts[k])
            for l in lines:
                if l.startswith('manager connecting '):
                    seen.setdefault((k, l), now - killed_at)
            if k not in took:
                redirected = [i for i, l in enumerate(lines)
                              if l.startswith('redirect %s:' % s.manager_host)]
                frames = [l for l in lines[redirected[0] + 1:]
                          if l.startswith('frame ')] if redirected else []
                if frames:
                    # the console's clock is CLOCK_MONOTONIC, as Python's
                    took[k] = int(frames[0].split()[2]) / 1e6 - killed_at
        if views_done is None and all(complete(view(s), alive, {}, n) for n, s in alive.items()):
            views_done = now - killed_at
        if len(took) == len(watched) and views_done is not None:
            break
        if now > deadline:
            raise TestFailure('after the power cut, not within %gs: %s' % (
                deadline - killed_at, '; '.join(
                    '%s: %s' % (k, ', '.join(l for l in console.stdout.since(starts[k])
                                             if not l.startswith('frame ')))
                    for k, (console, _) in watched.items() if k not in took)
                + ('' if views_done is not None else '; the views still have A')))
        time.sleep(0.02)
    for (k, line), t in sorted(seen.items(), key=lambda i: i[1]):
        log('  %.2fs after the power cut %s: %s' % (t, k, line))
    for k, (console, s) in watched.items():
        log('%s shows %s\'s greeter %.2fs after the power cut' % (k, s.server, took[k]))
    log('A gone from B\'s and C\'s views %.2fs after the power cut (lease TTL %ds)'
        % (views_done, TTL))
    return took


def test():
    with contextlib.ExitStack() as stack:
        g = start_group(stack, NAME, 'gmv', TTL, enroll='open', share_card_key=True,
                        group_address=True, extra_config=WEIGHTS)
        moves(g)


def moves(g):
    servers, desk, etcd = g.servers, g.desk, g.etcd
    a, b, c = servers['A'], servers['B'], servers['C']

    # 1. three servers, registered; W on A's greeter
    start_registered(servers)
    keys = {n: s.ctl('key')[0] for n, s in servers.items()}
    log('host keys: %s' % ', '.join('%s %s' % (n, k[:20]) for n, k in keys.items()))
    w = start_console(a, 'desk-w', [a, b], desk)
    assert_greeter(a, w)

    # 2. X at A: an unknown card, a login: S on A, bound to the card
    x = start_console(a, 'desk-x', [a], desk)
    assert_greeter(a, x)
    sid = log_in_with_card(a, x, 'X')
    wait_views(servers, lambda n, v: complete(v, servers, {'A/' + sid: (a.user, x.id)}, n),
               'S in every view')
    cards = {k: json.loads(v) for k, v in (etcd.wait_prefix(
        PREFIX + 'cards/', bool) or {}).items()}
    if len(cards) != 1 or list(cards.values())[0] != {'v': 1, 'server': 'A',
                                                       'session': int(sid)}:
        raise TestFailure('the registry\'s cards: %s' % cards)
    log('the registry: %s = %s' % list(cards.items())[0])
    log('C\'s view:\n' + view(c).text())

    # 3. K at Y, a console of C's: C moves Y to A, which shows S there
    y = start_console(c, 'desk-y', [c], desk)
    assert_greeter(c, y)
    mark_y = y.mark()
    marks = {n: s.manager.stderr.mark() for n, s in servers.items()}
    session_port = a.user_session(a.listing())[4]
    t0 = time.monotonic()
    y.cmd('card insert ' + CARD)
    took = first_frame_after(y, mark_y, '%s:%s' % (a.manager_host, session_port), t0, 20)
    if took is None:
        raise TestFailure('Y never showed S\'s frames; its events:\n' + '\n'.join(
            l for l in y.stdout.since(mark_y) if not l.startswith('frame ')))
    log('K at Y: S\'s first frame on Y %.1f ms after the tap' % (took * 1000))
    moved = log_since(c, marks['C'], 'console %s: card for a session of another server: '
                      'moved to server A' % y.id)
    if len(moved) != 1:
        raise TestFailure('C said %d times it moved Y to A: %s' % (
            len(moved), '\n'.join(c.manager.stderr.since(marks['C']))))
    assert_session(a, y, sid)
    not_in_table(c, y)
    # the card took the session from X, which goes to A's greeter
    a.wait_console_state(x.id, 'greeter')
    a.wait_why(x.id, 'the session moved to another console')
    assert_greeter(a, x)
    said = [l for l in y.stdout.since(mark_y) if l.startswith(('manager ', 'redirect '))]
    log('Y on the way: %s' % '; '.join(said))
    # X's card leaves its reader (the card is Y's now): nothing changes
    x.cmd('card remove')
    wait_views(servers, lambda n, v: complete(v, servers, {'A/' + sid: (a.user, y.id)}, n),
               'S at Y in every view')
    for n in ('A', 'B'):
        if log_since(servers[n], marks[n], ': moved to server'):
            raise TestFailure('%s moved a console: %s' % (n, log_since(servers[n], marks[n],
                                                                         ': moved to server')))

    # 4. placement: Z says HELLO to A, which runs a session; B and C none
    mark_a = a.manager.stderr.mark()
    z = start_console(a, 'desk-z', [a], desk)
    a.manager_log_wait('console %s: a login goes where there is room: moved to server B'
                       % z.id, mark_a)
    assert_greeter(b, z)
    not_in_table(a, z)
    log('Z on the way: %s' % '; '.join(l for l in z.stdout.since(0)
                                       if l.startswith(('manager ', 'redirect '))))

    # 5. A loses power: Y back to C's greeter, W to B's
    marks = {n: s.manager.stderr.mark() for n, s in servers.items()}
    alive = {k: v for k, v in servers.items() if k != 'A'}
    watched = {'Y': (y, c), 'W': (w, b)}
    starts = {k: console.mark() for k, (console, _) in watched.items()}
    # A's address stays on the LAN and its ports refuse (ICMP port
    # unreachable: ECONNREFUSED), but the kernel sends a host at most one
    # such error a second after a burst of 6, which the consoles' retries
    # towards A's dead ports use up: without the limit, every console
    # hears of it at its next PING, not only from its manager's silence
    a.host.run('sysctl', '-q', '-w', 'net.ipv4.icmp_ratelimit=0')
    killed_at = time.monotonic()
    n = kill_namespace(a.host.ns)
    log('killed the %d processes of A in %.3fs' % (n, time.monotonic() - killed_at))
    took = failover(watched, starts, alive, killed_at)
    bound = SILENT_S + scaled(3)
    for k, (console, s) in watched.items():
        if took[k] > bound:
            raise TestFailure('%s showed %s\'s greeter %.2fs after the power cut: more than '
                              '%.1fs' % (k, s.server, took[k], bound))
    assert_greeter(c, y)
    assert_greeter(b, w)
    for k, (console, _) in watched.items():
        log('%s on the way: %s' % (k, '; '.join(
            l for l in console.stdout.since(starts[k]) if l.startswith(('manager ', 'redirect ')))))

    # 6. A gone: K at Y says where its session is; a new session at C takes the card over
    mark_c = c.manager.stderr.mark()
    y.cmd('card remove')
    y.cmd('card insert ' + CARD)
    c.wait_why(y.id, 'session server unreachable')
    reason, message, labels = c.why(y.id)
    if message != 'Your session is on A, which cannot be reached from here now.' or \
            labels != ['Wait for A', 'Start a new session here']:
        raise TestFailure('C\'s greeter at Y says %r, offering %r' % (message, labels))
    log('C\'s greeter at Y: %r, offering %r' % (message, labels))
    c.choose(y, 1)
    wait_until(lambda: c.why(y.id)[1].startswith('Log in to start'), scaled(10),
               lambda _: 'the greeter to ask for a login (it says %r)' % (c.why(y.id),))
    sid_c = c.log_in(y)[1]
    assert_session(c, y, sid_c)
    if log_since(c, mark_c, 'moved to server'):
        raise TestFailure('C moved Y for a card of a server that is gone: %s'
                          % log_since(c, mark_c, 'moved to server'))
    wait_views(alive, lambda n, v: complete(v, alive, {'C/' + sid_c: (c.user, y.id)}, n),
               'the new session in B\'s and C\'s views')
    want = {list(cards)[0]: {'v': 1, 'server': 'C', 'session': int(sid_c)}}
    def parsed(kvs):
        return {k: json.loads(v) for k, v in kvs.items()}
    if etcd.wait_prefix(PREFIX + 'cards/', lambda kvs: parsed(kvs) == want) is None:
        raise TestFailure('the registry\'s cards: %s, not %s' % (
            parsed(etcd.get_prefix(PREFIX + 'cards/')), want))
    log('the registry: the card opens C/%s now' % sid_c)

    # B and C stop cleanly (sanitizer builds: nothing leaked, nothing wrong)
    stop_cleanly(alive)


run(test)
