"""Server groups on etcd (session-manager.md §9), with the real components:
a three-member etcd cluster (slimetcd.py) and three slimland-sessiond
servers, A, B and C, each in a network namespace of its own on one LAN
(slimnet.py), the consoles in a fourth (slimgroup.py sets it up):

    A 10.77.0.1, B 10.77.0.2, C 10.77.0.3      the servers (group_ttl = 5)
    desk 10.77.0.4                             the consoles, and etcdctl
    etcd0 10.77.0.11 .. etcd2 10.77.0.13       the cluster

1. every server's `slimlandctl group` lists all three, its own as (this);
2. a user logs in at a console of A's and another at one of B's: each
   session shows up in the others' views as `session B/N user U console ID`;
3. `slimlandctl drain B` on A: C's view says B drains and sends the next
   login elsewhere; with A and C drained too, nowhere; undrained, B again,
   and once all are undrained no view says drain;
4. every process of A (its manager, its greeters, its user's compositor)
   killed at once, as by a power cut: A's record and its session leave B's
   and C's views within TTL + 3 s (measured), B's session stays in them,
   and B's console still shows it;
5. one etcd member killed (the one the servers talk to, their watches on
   it, leader or not): nothing changes: the views stay complete for a
   lease's length and more, and a drain and an undrain through C reach
   B's view;
6. a second member killed: B and C say once that etcd is unreachable, and
   slimlandctl group says so (a drain is refused), while B's console still
   shows its session; both members started again, B and C say etcd
   answers and their views are complete again (A still absent), with no
   slimland process restarted, and a drain through B works;
7. B alone cut off from etcd (nftables) for longer than its lease: C
   forgets B and its session within TTL + 3 s while B's console goes on;
   back, B says once that etcd was unreachable, that it answers, that its
   lease expired, registers again, and every view has B and its session;
8. B and C stop on SIGTERM with status 0 (sanitizer builds: no report).

Measured times are printed (`after N s`).

Root only (network namespaces, users, PAM); skipped without etcd.
"""
import contextlib
import time

from slimgroup import (SERVERS, assert_session_shown, complete, ctl_answer, ctl_ok, drains,
                       hold_views, kill_namespace, start_group, start_registered, stop_cleanly,
                       view, wait_views)
from slimtest import TestFailure, log, run, scaled

NAME = 'group'
# The servers' lease: 5 s, slimland.conf's default. At 3 s, losing the etcd
# member a server talks to could lapse its lease before its client had
# gone to another member (2.7 s once on a loaded machine).
TTL = 5
SIZE = (800, 600)


def test():
    with contextlib.ExitStack() as stack:
        g = start_group(stack, NAME, 'grp', TTL)
        group(g.etcd, g.servers, g.desk)


def group(etcd, servers, desk):
    a, b, c = (servers[n] for n in SERVERS)
    # 1. every server in every view
    start_registered(servers)

    # 2. a user's session on A, another on B, in every view
    consoles = {}
    sessions = {}
    for s in (a, b):
        console = s.approved_console('desk-' + s.server.lower(), SIZE, host=desk)
        row = s.log_in(console)
        consoles[s.server] = console
        sessions['%s/%s' % (s.server, row[1])] = (s.user, console.id)
        log('%s logged in at %s: session %s/%s' % (s.user, console.id, s.server, row[1]))
    sid_b = [k for k in sessions if k.startswith('B/')][0].split('/')[1]
    compositor_b = int(b.user_session(b.listing())[3])
    wait_views(servers, lambda n, v: complete(v, servers, sessions, n),
               'both sessions in every view')
    log('C\'s view:\n' + view(c).text())

    # the consoles approved at A and at B are approved at C too: the registry keeps them
    want = {consoles['A'].id, consoles['B'].id}
    approved_at = time.monotonic()
    deadline = approved_at + scaled(10)
    while True:
        approved = {f[1] for f in (line.split() for line in c.ctl('consoles'))
                    if len(f) > 2 and f[0] == 'console' and f[2] == 'approved'}
        if want <= approved:
            break
        if time.monotonic() > deadline:
            raise TestFailure('C never approved the consoles A and B approved: %r' % approved)
        time.sleep(0.05)
    log('the consoles approved at A and B are approved at C (seen %.2fs after)' % (
        time.monotonic() - approved_at))

    # 3. drain B through A: C's view says so, and places logins elsewhere
    ctl_ok(a, 'drain', 'B')
    wait_views({'C': c}, lambda n, v: drains(v, 'B') and v.next in ('A', 'C'),
               'B drains in C\'s view, the next login goes to A or C')
    ctl_ok(a, 'drain', 'A')
    ctl_ok(a, 'drain', 'C')
    wait_views({'C': c}, lambda n, v: all(r['drain'] for r in v.servers.values())
               and v.next == 'nowhere', 'every server drains in C\'s view: no next login')
    ctl_ok(a, 'undrain', 'B')
    wait_views({'C': c}, lambda n, v: drains(v, 'B') is False and v.next == 'B',
               'B undrained in C\'s view, the only one where a login may go')
    ctl_ok(a, 'undrain', 'A')
    ctl_ok(a, 'undrain', 'C')
    wait_views(servers, lambda n, v: complete(v, servers, sessions, n)
               and not any(r['drain'] for r in v.servers.values()) and v.next in SERVERS,
               'no server drains in any view')

    # 4. A loses power: its manager and its compositors, all at once
    killed_at = time.monotonic()
    n = kill_namespace(a.host.ns)
    log('killed the %d processes of A in %.3fs' % (n, time.monotonic() - killed_at))
    alive = {k: v for k, v in servers.items() if k != 'A'}
    left = {k: v for k, v in sessions.items() if not k.startswith('A/')}
    took = wait_views(alive, lambda n, v: complete(v, alive, left, n),
                      'A and its session gone from B\'s and C\'s views', timeout=TTL + 30,
                      start=killed_at)
    gone = max(took.values())
    log('A left the group\'s views %.2fs after the power cut (lease TTL %ds)' % (gone, TTL))
    if gone > TTL + scaled(3):
        raise TestFailure('A left the views %.2fs after the power cut: more than TTL + 3s'
                          % gone)
    log('B\'s view:\n' + view(b).text())
    assert_session_shown(b, consoles['B'], sid_b)

    # 5. one etcd member lost: nothing changes
    marks = {k: s.manager.stderr.mark() for k, s in alive.items()}
    still = lambda n, v: complete(v, alive, left, n)
    first, second = members_to_stop(etcd, alive)
    etcd.stop_member(first)
    stopped_at = time.monotonic()
    ctl_ok(c, 'drain', 'B')
    wait_views(alive, lambda n, v: drains(v, 'B'), 'a drain through C, with 2 of 3 '
               'members', start=stopped_at, invariant=still)
    ctl_ok(c, 'undrain', 'B')
    wait_views(alive, lambda n, v: drains(v, 'B') is False, 'an undrain through C, with 2 '
               'of 3 members', start=stopped_at, invariant=still)
    # a lease's length and more: keepalives and the watch with a member less
    hold_views(alive, still, 'views with 2 of 3 members', stopped_at + TTL + 2)
    for k, s in alive.items():
        said = [l for l in s.manager.stderr.since(marks[k]) if 'group: etcd unreachable' in l]
        if said:
            raise TestFailure('%s said etcd is unreachable with 2 of 3 members: %s' % (k, said))

    # 6. a second member lost: no quorum, etcd unreachable
    marks = {k: s.manager.stderr.mark() for k, s in alive.items()}
    etcd.stop_member(second)
    stopped_at = time.monotonic()
    for k, s in alive.items():
        s.manager_log_wait('group: etcd unreachable (', marks[k], timeout=20)
        log('%s said etcd is unreachable %.2fs after the second member stopped' % (
            k, time.monotonic() - stopped_at))
    wait_views(alive, lambda n, v: v.ok and not v.reachable, 'slimlandctl group says '
               'unreachable', start=stopped_at)
    status, _, err = ctl_answer(b, 'drain', 'C')
    if status == 0 or 'etcd unreachable' not in err:
        raise TestFailure('drain without quorum: status %d, %r' % (status, err))
    log('drain without quorum: %s' % err)
    assert_session_shown(b, consoles['B'], sid_b)

    # both members back: the views come back, with no slimland process restarted
    etcd.start_member(first)
    etcd.start_member(second)
    started_at = time.monotonic()
    for k, s in alive.items():
        s.manager_log_wait('group: etcd at ', marks[k], timeout=30)
        log('%s said etcd answers %.2fs after the members started again' % (
            k, time.monotonic() - started_at))
    etcd.wait_healthy(30)
    wait_views(alive, still, 'B and C complete again, A still absent', start=started_at)
    for k, s in alive.items():
        lines = [l for l in s.manager.stderr.since(marks[k]) if 'group: ' in l]
        answered = [i for i, l in enumerate(lines) if 'group: etcd at ' in l][0]
        said = [l for l in lines[:answered] if 'group: etcd unreachable' in l]
        if len(said) != 1:
            raise TestFailure('%s said etcd is unreachable %d times in one outage: %s' % (
                k, len(said), said))
        # while the cluster settles, a request may still fail, and the
        # lease with it (the requests' timeout is not the lease's)
        log('%s after the outage: %s' % (k, '; '.join(l.split('] ', 1)[-1][:80]
                                                       for l in lines[answered:])))
        if s.n_managers != 1 or not s.manager.alive():
            raise TestFailure('%s\'s manager is not the one started at first' % k)
    if int(b.user_session(b.listing())[3]) != compositor_b:
        raise TestFailure('B\'s session has another compositor')
    assert_session_shown(b, consoles['B'], sid_b)
    ctl_ok(b, 'drain', 'C')
    wait_views(alive, lambda n, v: drains(v, 'C') and v.next == 'B',
               'a drain through B after the outage', invariant=still)
    ctl_ok(b, 'undrain', 'C')
    wait_views(alive, lambda n, v: drains(v, 'C') is False, 'an undrain through B after '
               'the outage', invariant=still)

    # 7. B cut off from etcd for longer than its lease, etcd itself well:
    # the others forget B; back, B registers again with its session
    marks = {k: s.manager.stderr.mark() for k, s in alive.items()}
    b.host.nft('add chain inet slimtest etcdcut { type filter hook output priority 0; }\n'
               'add rule inet slimtest etcdcut tcp dport 2379 drop\n')
    cut_at = time.monotonic()
    took = wait_views({'C': c}, lambda n, v: complete(v, {'C': c}, {}, n),
                      'B and its session gone from C\'s view', timeout=TTL + 30, start=cut_at)
    if took['C'] > TTL + scaled(3):
        raise TestFailure('B left C\'s view %.2fs after it was cut off' % took['C'])
    b.manager_log_wait('group: etcd unreachable (', marks['B'], timeout=20)
    log('B said etcd is unreachable by %.2fs after it was cut off' % (
        time.monotonic() - cut_at))
    assert_session_shown(b, consoles['B'], sid_b)
    b.host.nft('flush chain inet slimtest etcdcut\n')
    healed_at = time.monotonic()
    b.manager_log_wait('registering again', marks['B'], timeout=20)
    b.manager_log_wait('group: B registered under', marks['B'], timeout=20)
    log('B registered again %.2fs after it could reach etcd' % (time.monotonic() - healed_at))
    wait_views(alive, still, 'B and its session back in every view', start=healed_at)
    # once unreachable, once answering, and registered anew
    said = [l for l in b.manager.stderr.since(marks['B']) if 'group: ' in l]
    expected = ['group: etcd unreachable (', 'group: etcd at ', 'expired; registering again',
                'group: B registered under']
    if len(said) != len(expected) or not all(e in l for e, l in zip(expected, said)):
        raise TestFailure('B, cut off and back, said:\n' + '\n'.join(said))

    # 8. B and C stop cleanly (sanitizer builds: nothing leaked, nothing wrong)
    stop_cleanly(alive)


def members_to_stop(etcd, servers):
    """The etcd members to stop, in turn: first the one the servers talk
    to (their watches are there), leader or not; then another."""
    leader = etcd.leader()
    urls = [view(s).endpoint for s in servers.values()]
    talked = [m.i for m in etcd.members if m.client_url in urls]
    first = talked[0] if talked else leader
    second = [i for i in etcd.running() if i != first][0]
    log('the servers talk to %s; member %s leads; stopping member %d, then %d' % (
        ', '.join(urls), leader, first, second))
    return first, second


run(test)
