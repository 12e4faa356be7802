"""Server groups under partitions (session-manager.md §9), with the real
components: a three-member etcd cluster and three slimland-sessiond
servers A, B and C in network namespaces of their own, the consoles in a
fourth (slimgroup.py), one card.key shared by the three, group_ttl 3 s,
silent drops in both directions cut with nftables on the LAN's bridge
(slimnet.Partitions). No console is moved for room: every server's room
is the same (ram_per_user = 1 TiB, no weight for CPUs or sessions).

1. A cut from all three etcd members, still reachable by the consoles:
   card K, whose session S_A is on A, tapped at a console of B's once A
   left B's view: `why` says `session server unreachable`, its message
   names A (never `unknown card`), it offers to wait for A or to start
   a new session here; the user starts one and logs in: session S_B on
   B. Healed: A registers again, K tapped at a console of A's says
   `several sessions` and lists A/S_A and B/S_B; `slimlandctl list`
   says `card ... session S_A elsewhere` on A and `... S_B bound` on B;
   no session ended (the test ends both then).
3. Card K2, unknown, at a console of A's and one of B's, logged in at
   both at once (the passwords' Enter a few ms apart): exactly one
   session starts; the other greeter's `why` says `card logged in
   elsewhere`, naming the winner, and offers to go there; no second
   compositor.
4. Two of the three etcd members stopped (no majority) for 15 s: K2
   tapped again at its server's console opens its session (or asks,
   naming the registry, never another server); a new card K4 at the
   other server's console: `registry unreachable`; a login there:
   `unconfirmed login`, and no session until the user says to start
   it anyway. The members back: every server registered again, the
   time it took printed.

Throughout, the intervals in which a server opens a card's session
without asking (its log: `group: card HASH16 bound here to session ID at
T` ... `not bound here (REASON) at T`) never overlap between servers.

Root only (network namespaces, users, PAM); skipped without etcd.
"""
import contextlib
import time

from slimgroup import (BOUND, assert_no_overlap, card_lines, choose, group_console, start_group,
                       start_registered, stop_cleanly, user_sessions, wait_form, wait_views, why,
                       wait_why)
from slimnet import Partitions
from slimsessiond import PASSWORD
from slimtest import TestFailure, log, run, scaled, wait_until

NAME = 'group_partition'
TTL = 3
SIZE = (800, 600)
WEIGHTS = ['ram_per_user = 1048576', 'cpu_weight = 0', 'existing_users_weight = 0']
K = '04a1b2c3d4e5f1'
K2 = '04a1b2c3d4e5f2'
K4 = '04a1b2c3d4e5f4'
# how long etcd has no majority in scenario 4
OUTAGE_S = 15


def test():
    with contextlib.ExitStack() as stack:
        g = start_group(stack, NAME, 'gpt', TTL, enroll='open', share_card_key=True,
                        group_address=True, extra_config=WEIGHTS)
        net = stack.enter_context(Partitions(g.desk.lan))
        start_registered(g.servers)
        scenario_1(g, net)
        winner, sid, consoles = scenario_3(g)
        scenario_4(g, winner, sid, consoles)
        assert_no_overlap(g.servers, what='at the end')
        stop_cleanly(g.servers)


def log_in(s, console, expect_session=True):
    """The user types s's user name and password at the console's greeter
    form; with expect_session, the session's id once the console shows it."""
    mark = s.manager.stderr.mark()
    console.type_text(s.user + '\n' + PASSWORD + '\n')
    if not expect_session:
        return None
    s.manager_log_wait('%s logged in' % s.user, mark, timeout=20)
    table = s.wait_console_state(console.id, 'session', timeout=30)
    return s.user_session(table)[1]


def user_sessions_in(s, table):
    return [k[1] for k, f in table.items() if k[0] == 'session' and f[2] == s.user]


def card_at(console, card, previous=None):
    """The card leaves `previous` (a console whose reader has it), then goes
    into this one's reader."""
    if previous is not None:
        previous.cmd('card remove')
    console.cmd('card insert ' + card)


def scenario_1(g, net):
    a, b = g.servers['A'], g.servers['B']
    x = group_console(a, 'desk-x', [a], g.desk)
    y = group_console(b, 'desk-y', [b], g.desk)
    wait_form(a, x)
    wait_form(b, y)
    card_at(x, K)
    wait_why(a, x.id, 'unknown card')
    sid_a = log_in(a, x)
    log('1. K logged in at X: session A/%s' % sid_a)
    i = a.manager_log_wait(' bound here to session %s at ' % sid_a, timeout=10)
    h16 = BOUND.search(a.manager.stderr.since(i - 1)[0]).group(1)
    wait_views({'B': b}, lambda n, v: ('A/' + sid_a) in v.sessions, 'A/%s in B\'s view' % sid_a)

    # A cut from the three members; the consoles still reach it
    net.cut(a.host, g.members)
    cut_at = time.monotonic()
    log('1. A cut from etcd')
    wait_views({'B': b}, lambda n, v: v.reachable and 'A' not in v.servers,
                      'A gone from B\'s view', timeout=TTL + 30, start=cut_at)
    card_at(y, K, previous=x)
    tapped = time.monotonic()
    reason, message, choice = wait_why(b, y.id, 'session server unreachable',
                                       never=('unknown card',))
    log('1. K at Y, %.2fs after A left B\'s view: why %r, message %r, choice %r' % (
        time.monotonic() - tapped, reason, message, choice))
    if 'A' not in message.replace('.', ' ').replace(',', ' ').split():
        raise TestFailure('the message does not name A: %r' % message)
    if choice != ['Wait for A', 'Start a new session here']:
        raise TestFailure('the choice offered: %r' % choice)
    if a.ctl('list', check=False) and not user_sessions(a):
        raise TestFailure('A lost its session while cut from etcd')

    # the user starts a new session here
    choose(b, y, 1)
    wait_form(b, y)
    sid_b = log_in(b, y)
    log('1. a new session at Y: B/%s, %.2fs after A was cut' % (sid_b, time.monotonic() - cut_at))
    # the card is B's now: B says so
    b.manager_log_wait('group: card %s bound here to session %s at ' % (h16, sid_b), timeout=10)
    assert_no_overlap(g.servers, what='1. A cut')

    # healed: A back; K at X is a choice between both sessions
    mark = a.manager.stderr.mark()
    net.heal()
    healed_at = time.monotonic()
    a.manager_log_wait('group: A registered under', mark, timeout=30)
    wait_views(g.servers, lambda n, v: v.reachable and set(v.servers) == {'A', 'B', 'C'},
               '1. A back in every view', start=healed_at)
    card_at(x, K, previous=y)
    reason, message, choice = wait_why(a, x.id, 'several sessions')
    log('1. K at X after the heal: why %r, message %r, choice %r' % (reason, message, choice))
    if message != 'This card has 2 sessions: choose one.' or \
            sorted(choice) != sorted(['A/' + sid_a, 'B/' + sid_b]):
        raise TestFailure('several sessions: message %r, choice %r' % (message, choice))
    cards_a, cards_b = card_lines(a), card_lines(b)
    log('1. A lists %s; B lists %s' % (cards_a, cards_b))
    if not any(c[1:] == (sid_a, 'elsewhere') for c in cards_a):
        raise TestFailure('A does not list `card ... session %s elsewhere`: %s' % (sid_a, cards_a))
    if not any(c[1:] == (sid_b, 'bound') for c in cards_b):
        raise TestFailure('B does not list `card ... session %s bound`: %s' % (sid_b, cards_b))
    if user_sessions(a) != [sid_a] or user_sessions(b) != [sid_b]:
        raise TestFailure('a session ended: A has %s, B has %s' % (user_sessions(a),
                                                                   user_sessions(b)))
    x.cmd('card remove')
    assert_no_overlap(g.servers, what='1. healed')
    # the users end both sessions: each server's user logs in anew below
    for s, sid in ((a, sid_a), (b, sid_b)):
        s.ctl('end', sid)
        s.wait_ctl(lambda t, s=s: not user_sessions_in(s, t), '%s\'s session ended' % s.server)


def scenario_3(g):
    """The winner's name, its session and the consoles ({'A': P, 'B': Q})."""
    a, b = g.servers['A'], g.servers['B']
    p = group_console(a, 'desk-p', [a], g.desk)
    q = group_console(b, 'desk-q', [b], g.desk)
    wait_form(a, p)
    wait_form(b, q)
    before = {n: user_sessions(s) for n, s in g.servers.items()}
    # K2 in both readers at once: two cards of one number
    p.cmd('card insert ' + K2)
    q.cmd('card insert ' + K2)
    wait_why(a, p.id, 'unknown card')
    wait_why(b, q.id, 'unknown card')
    # everything but the last Enter, then both Enters back to back
    for s, console in ((a, p), (b, q)):
        console.type_text(s.user + '\n' + PASSWORD)
    for s, console in ((a, p), (b, q)):
        s.settled(console=console, quiet=0.5)
    marks = {n: s.manager.stderr.mark() for n, s in g.servers.items()}
    p.type_text('\n')
    q.type_text('\n')
    log('3. K2: both logins submitted')

    def answers():
        return {n: (s.console_on(s.listing(), c.id)[0], why(s, c.id))
                for n, s, c in (('A', a, p), ('B', b, q))}
    seen = wait_until(answers, scaled(30), lambda r: '3. one session and one '
                      '`card logged in elsewhere`; last: %s' % r,
                      holds=lambda r: sorted(v[0] for v in r.values()) == ['greeter', 'session']
                      and any(v[1][0] == 'card logged in elsewhere' for v in r.values()))
    winner = [n for n, v in seen.items() if v[0] == 'session'][0]
    loser = 'B' if winner == 'A' else 'A'
    reason, message, choice = seen[loser][1]
    log('3. %s won; %s\'s greeter: why %r, message %r, choice %r' % (
        winner, loser, reason, message, choice))
    if message != 'This card has just logged in on %s.' % winner or \
            choice != ['Go to %s' % winner]:
        raise TestFailure('the loser\'s greeter: message %r, choice %r' % (message, choice))
    # a second compositor would be a session more in a list
    after = {n: user_sessions(s) for n, s in g.servers.items()}
    new = {n: sorted(set(after[n]) - set(before[n])) for n in after}
    if len(new[winner]) != 1 or any(new[n] for n in new if n != winner):
        raise TestFailure('3. sessions started: %s' % new)
    for n, s in g.servers.items():
        started = log_since(s, marks[n], '%s logged in, session' % s.user)
        if n != winner and started:
            raise TestFailure('3. %s started a session: %s' % (n, started))
    log('3. one session: %s/%s' % (winner, new[winner][0]))
    assert_no_overlap(g.servers, what='3.')
    return winner, new[winner][0], {'A': p, 'B': q}


def log_since(s, mark, text):
    return [l for l in s.manager.stderr.since(mark) if text in l]


def scenario_4(g, winner, sid_w, consoles):
    loser = 'B' if winner == 'A' else 'A'
    w, l = g.servers[winner], g.servers[loser]
    cw, cl = consoles[winner], consoles[loser]
    # K2 leaves both readers: W's console back to its greeter
    cw.cmd('card remove')
    cl.cmd('card remove')
    w.wait_console_state(cw.id, 'greeter', timeout=20)
    marks = {n: s.manager.stderr.mark() for n, s in g.servers.items()}
    running = g.etcd.running()
    stopped = running[:2]
    for i in stopped:
        g.etcd.stop_member(i)
    lost_at = time.monotonic()
    for n, s in g.servers.items():
        s.manager_log_wait('group: etcd unreachable (', marks[n], timeout=20)
    log('4. every server says etcd is unreachable %.2fs after the majority was lost' % (
        time.monotonic() - lost_at))

    # K2 at its own server's console: its session, or a question naming the registry
    cw.cmd('card insert ' + K2)

    def opened():
        st, sid = w.console_on(w.listing(), cw.id)
        if st == 'session' and sid == sid_w:
            return 'session'
        answer = why(w, cw.id)
        return answer if answer[1] else None
    answer = wait_until(opened, scaled(15), '4. K2 at %s\'s console to open its session '
                        'or to ask' % winner)
    log('4. K2 at %s\'s console without a majority: %s' % (winner, answer))
    if answer != 'session' and ('registry' not in answer[1] or 'another server' in answer[1]):
        raise TestFailure('4. K2 at its server\'s console: %r' % (answer,))

    # a new card at the other server's console
    wait_form(l, cl)
    cl.cmd('card insert ' + K4)
    reason, message, choice = wait_why(l, cl.id, 'registry unreachable',
                                       never=('unknown card',))
    log('4. K4 at %s: why %r, message %r, choice %r' % (loser, reason, message, choice))
    if 'registry' not in message or choice != ['Wait', 'Start a new session here']:
        raise TestFailure('4. registry unreachable: message %r, choice %r' % (message, choice))
    choose(l, cl, 1)
    wait_form(l, cl)
    before = user_sessions(l)
    log_in(l, cl, expect_session=False)
    reason, message, choice = wait_why(l, cl.id, 'unconfirmed login')
    log('4. a login at %s: why %r, message %r, choice %r' % (loser, reason, message, choice))
    if choice != ['Start the session anyway', 'Cancel']:
        raise TestFailure('4. unconfirmed login: choice %r' % choice)
    # nothing starts while the user has not chosen
    held_until = time.monotonic() + scaled(3)
    while time.monotonic() < held_until:
        if user_sessions(l) != before:
            raise TestFailure('4. a session started before the user chose: %s' % (
                user_sessions(l)))
        time.sleep(0.2)
    mark = l.manager.stderr.mark()
    choose(l, cl, 0)
    l.manager_log_wait('%s logged in' % l.user, mark, timeout=20)
    l.wait_console_state(cl.id, 'session', timeout=30)
    log('4. started anyway: %s has sessions %s' % (loser, user_sessions(l)))

    # the members back after the outage
    left = lost_at + OUTAGE_S - time.monotonic()
    if left > 0:
        time.sleep(left)  # the outage's length, not a synchronisation
    for i in stopped:
        g.etcd.start_member(i)
    back_at = time.monotonic()
    took = wait_views(g.servers, lambda n, v: v.reachable and v.registered
                      and set(v.servers) == {'A', 'B', 'C'},
                      '4. every server registered again after the outage', start=back_at)
    log('4. recovery: every server registered %.2fs after the members started again '
        '(majority lost for %.1fs)' % (max(took.values()), back_at - lost_at))
    assert_no_overlap(g.servers, what='4.')


run(test)
