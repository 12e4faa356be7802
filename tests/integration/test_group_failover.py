"""Server groups: a console cut from its session's server finds another
manager within 5 s, says so on its screen within 2 s, and is not sent
back (session-manager.md §1 heartbeat, §9), with the real components: a
three-member etcd cluster and servers A, B and C in network namespaces of
their own, the console in a fourth (slimgroup.py), one card.key shared by
the three (group_address set, enroll = open):

1. the three servers register; console V (--manager A,B, a stdin card
   reader) shows A's greeter; its card K, unknown, then a login there:
   session S on A, bound to K, in every server's view;
2. V idle for 30 s with S shown: the UDP payload it sends A (both
   associations) is counted (nftables) and printed per 5 s, and must stay
   within 100 bytes per 5 s; then 10 s more with 5% of the datagrams lost
   each way: V goes nowhere (a lost heartbeat costs a probe, no more);
3. V is cut from A in both directions (slimnet.Partitions: silent drops
   between the desk's namespace and A only; A keeps etcd and B): V's
   control output says within 2 s that A's manager does not answer and
   that it tries B, and its screen says so over S's last frame (the
   status screen), V shows B's greeter (B's slimlandctl list has it on a
   greeter) within 5 s of the cut (both times printed), B's `why` says
   `session server unreachable` for the card still on V's reader, and B
   moves V nowhere, not at that tap nor at the next one while cut;
4. the cut heals; once the mark V's HELLO gave B has expired (15 s), a tap
   at V moves it to A (one MOVE), where it shows S again.

Placement is made deterministic as in test_group_move.py (the room is the
number of sessions), so that V stays on A's greeter at its start.

Root only (network namespaces, users, PAM); skipped without etcd.
"""
import contextlib
import os
import time

from PIL import Image

from slimgroup import complete, start_group, start_registered, stop_cleanly, wait_views
from slimnet import UDP_IP_HEADERS, Partitions
from slimtest import BACKGROUND, Console, TestFailure, fraction_not, log, run, scaled

NAME = 'group_failover'
TTL = 3
SIZE = (800, 600)
CARD = '04f0a1b2c3d4e5'
WEIGHTS = ['ram_per_user = 1048576', 'cpu_weight = 0', 'existing_users_weight = 1000']
# what the console promises (console/manager.c) and the upstream budget of an idle console
SAY_S = 2
FAILOVER_S = 5
UNREACHED_S = 15
IDLE_S = 30
IDLE_BUDGET = 100  # bytes of UDP payload per 5 s
LOSS_S = 10
LOSS_PERCENT = 5
STATUS_BACKGROUND = (0x1d, 0x23, 0x2b)  # console/core/status-screen.h
MOVED = ': moved to server'


def address(s):
    return '%s:%d' % (s.manager_host, s.port)


def log_since(s, mark, text):
    return [l for l in s.manager.stderr.since(mark) if text in l]


def assert_greeter(s, console):
    """The console is on s's greeter, and shows what its compositor renders."""
    s.wait_console_state(console.id, 'greeter', timeout=30)
    s.wait_screen(lambda img: fraction_not(img, BACKGROUND) > 0.5, 'the greeter window',
                  timeout=30, console=console)
    s.settled(console=console, quiet=0.5)
    display = s.compositor_display(s.greeter_user, 'greeter-' + console.id)
    s.assert_shows(console, s.greeter_runtime(console.id), display)


def assert_session(s, console, sid):
    """The console shows s's session sid, what its compositor renders."""
    s.wait_console_state(console.id, 'session', user_session=sid, timeout=30)
    s.wait_screen(lambda img: fraction_not(img, BACKGROUND) > 0.3, 'foot', console=console)
    s.settled(console=console, quiet=0.5)
    display = s.compositor_display(s.user, 'session-%s' % sid)
    s.assert_shows(console, '/run/user/%d' % s.pw.pw_uid, display)


def moves(servers, marks):
    """Every MOVE the servers' logs said since marks ({name: mark})."""
    return [(n, l) for n, s in servers.items() for l in log_since(s, marks[n], MOVED)]


def shows_status_screen(img):
    """The status screen: its background at the corners, text in the middle."""
    w, h = img.size
    corners = [img.getpixel(p) for p in ((0, 0), (w - 1, 0), (0, h - 1), (w - 1, h - 1))]
    middle = img.crop((0, h // 2 - 40, w, h // 2 + 40))
    colours = middle.getcolors(maxcolors=1 << 16) or []
    return all(c[:3] == STATUS_BACKGROUND for c in corners) and len(colours) >= 2


def tap(console):
    console.cmd('card remove')
    console.cmd('card insert ' + CARD)


def test():
    with contextlib.ExitStack() as stack:
        g = start_group(stack, NAME, 'gfo', TTL, enroll='open', share_card_key=True,
                        group_address=True, extra_config=WEIGHTS)
        failover(g, stack.enter_context(Partitions(g.desk.lan)))


def failover(g, net):
    servers, desk = g.servers, g.desk
    a, b = servers['A'], servers['B']

    # 1. V on A's greeter, a login with its card: S on A, bound to K
    start_registered(servers)
    endpoint = ['--manager', '%s,%s' % (address(a), address(b)), '--card-reader=stdin']
    v = Console(a, None, SIZE, 'desk-v', 'console-v', endpoint=endpoint, host=desk)
    a.consoles.append(v)
    log('console V is %s, --manager A,B' % v.id)
    assert_greeter(a, v)
    v.cmd('card insert ' + CARD)
    a.wait_why(v.id, 'unknown card')
    sid = a.log_in(v)[1]
    assert_session(a, v, sid)
    wait_views(servers, lambda n, view: complete(view, servers, {'A/' + sid: (a.user, v.id)}, n),
               'S at V in every view')

    # 2. idle, S shown: what V sends A, both associations
    desk.count_udp('idle_up', 'output', 'ip daddr %s' % a.host.addr)
    desk.count_udp('idle_down', 'input', 'ip saddr %s' % a.host.addr)
    up0, down0 = desk.counter('idle_up'), desk.counter('idle_down')
    t0 = time.monotonic()
    time.sleep(IDLE_S)  # a measurement over a fixed time: nothing to wait for
    took = time.monotonic() - t0
    up1, down1 = desk.counter('idle_up'), desk.counter('idle_down')
    up = up1[1] - up0[1] - UDP_IP_HEADERS * (up1[0] - up0[0])
    down = down1[1] - down0[1] - UDP_IP_HEADERS * (down1[0] - down0[0])
    per5 = up * 5 / took
    log('idle %.1fs with S shown: V sent A %d datagrams, %d bytes of UDP payload (%.1f per 5 s), '
        'and got %d datagrams, %d bytes' % (took, up1[0] - up0[0], up, per5,
                                            down1[0] - down0[0], down))
    if per5 > IDLE_BUDGET:
        raise TestFailure('an idle console sent %.1f bytes per 5 s: over %d' % (per5, IDLE_BUDGET))
    # lost datagrams, each way: V stays (a measurement over a fixed time, as above)
    mark_v = v.mark()
    desk.lose(LOSS_PERCENT)
    a.host.lose(LOSS_PERCENT)
    time.sleep(LOSS_S)
    lost = desk.dropped(), a.host.dropped()
    desk.lose(0)
    a.host.lose(0)
    went = [l for l in v.stdout.since(mark_v) if l.startswith(('manager ', 'redirect '))]
    log('%ds with %d%% loss each way: %d datagrams lost at V, %d at A; V said: %s' % (
        LOSS_S, LOSS_PERCENT, lost[0], lost[1], '; '.join(went) or 'nothing'))
    if went:
        raise TestFailure('%d%% loss moved V: %s' % (LOSS_PERCENT, '; '.join(went)))

    # 3. V cut from A: B's greeter within 5 s, said within 2 s, no MOVE back
    marks = {n: s.manager.stderr.mark() for n, s in servers.items()}
    mark_v = v.mark()
    cut_at = time.monotonic()
    net.cut(desk, a.host)
    log('V cut from A (%s)' % a.host.addr)
    i, silent = v.stdout.wait(lambda l: l.startswith('manager silent '), mark_v,
                              time.monotonic() + scaled(10))
    if silent is None:
        raise TestFailure('V never said A is silent: %s' % '; '.join(
            l for l in v.stdout.since(mark_v) if not l.startswith('frame ')))
    said = v.stdout.time_of(i) - cut_at
    want = 'manager silent %s (trying %s)' % (address(a), address(b))
    if silent != want:
        raise TestFailure('V said "%s", not "%s"' % (silent, want))
    # S's frozen picture is gone: the screen says why (or already where V goes)
    img = Image.open(v.screenshot(os.path.join(g.outdir, 'silent.png')))
    if not shows_status_screen(img):
        raise TestFailure('V does not show the status screen once A is silent: %s'
                          % os.path.join(g.outdir, 'silent.png'))
    i, line = v.stdout.wait(lambda l: l.startswith('redirect %s:' % b.manager_host), mark_v,
                            time.monotonic() + scaled(20))
    frame = None
    if line is not None:
        _, frame = v.stdout.wait(lambda l: l.startswith('frame '), i + 1,
                                 time.monotonic() + scaled(20))
    if frame is None:
        raise TestFailure('V never showed a frame of B\'s: %s' % '; '.join(
            l for l in v.stdout.since(mark_v) if not l.startswith('frame ')))
    # the console's clock is CLOCK_MONOTONIC, as Python's
    shown = int(frame.split()[2]) / 1e6 - cut_at
    b.wait_console_state(v.id, 'greeter', timeout=20)
    listed = time.monotonic() - cut_at
    log('after the cut: V said A is silent after %.2fs, showed B\'s first frame after %.2fs, '
        'B listed V on a greeter after %.2fs at the latest' % (said, shown, listed))
    log('V on the way: %s' % '; '.join(l for l in v.stdout.since(mark_v)
                                       if l.startswith(('manager ', 'redirect '))))
    if said > scaled(SAY_S + 0.3):
        raise TestFailure('V said A is silent %.2fs after the cut: more than %gs' % (said, SAY_S))
    if shown > scaled(FAILOVER_S):
        raise TestFailure('V showed B\'s greeter %.2fs after the cut: more than %gs'
                          % (shown, FAILOVER_S))
    # the card on V's reader, told to B: its session is on A, which V cannot reach
    b.wait_why(v.id, 'session server unreachable')
    b.manager_log_wait('console %s: card for a session of server A, which it cannot reach: '
                       'not moved' % v.id, marks['B'])
    assert_greeter(b, v)
    # another tap while cut: the same answer, no MOVE
    mark_b = b.manager.stderr.mark()
    tap(v)
    b.manager_log_wait('which it cannot reach: not moved', mark_b)
    b.wait_why(v.id, 'session server unreachable')
    if moves(servers, marks):
        raise TestFailure('a MOVE while V is cut from A: %s' % moves(servers, marks))
    log('two taps at B while cut: no MOVE, why "session server unreachable"')

    # 4. healed: once B's mark expired a tap moves V to A, which shows S
    net.heal(desk)
    healed_at = time.monotonic()
    log('V healed')
    marks = {n: s.manager.stderr.mark() for n, s in servers.items()}
    tapped = 0
    moved = []
    deadline = cut_at + scaled(UNREACHED_S + 30)
    while not moved:
        if time.monotonic() > deadline:
            raise TestFailure('no tap moved V to A in %gs after the heal'
                              % (time.monotonic() - healed_at))
        mark_b = b.manager.stderr.mark()
        tap(v)
        tapped += 1
        # each tap is answered in B's log: not moved, or moved
        b.manager_log_wait('console %s: card for a session of ' % v.id, mark_b)
        moved = log_since(b, mark_b, MOVED)
        if not moved:
            time.sleep(1)  # the mark expires with time: a tap a second until then
    since_cut = time.monotonic() - cut_at
    log('tap %d after the heal, %.1fs after the cut, moved V: %s' % (tapped, since_cut, moved[0]))
    if since_cut < UNREACHED_S:
        raise TestFailure('V was moved to A %.1fs after the cut: before its mark expired'
                          % since_cut)
    assert_session(a, v, sid)
    all_moves = moves(servers, marks)
    if len(all_moves) != 1:
        raise TestFailure('%d MOVEs for the tap that went to A: %s' % (len(all_moves), all_moves))

    stop_cleanly(servers)


run(test)
