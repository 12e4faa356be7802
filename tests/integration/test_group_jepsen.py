"""Server groups under a randomized nemesis, in the manner of Jepsen
(session-manager.md §9), with the real components: a three-member etcd
cluster, three slimland-sessiond servers A, B and C and three consoles
(--manager in three orders) in network namespaces (slimgroup.py),
group_ttl 3 s, one card.key shared by the three.

For a bounded time (--duration S or SLIMTEST_JEPSEN_DURATION, default
45 s as CI runs it, 300 s and more by hand) a nemesis, random from a
seed (printed; --seed N or SLIMTEST_JEPSEN_SEED replays it), every 1-4 s
cuts a link (both ways,
silent drops on the LAN's bridge) between two of the servers, the etcd
members and the consoles' namespace, heals one or all, SIGKILLs a
server's manager (its compositors live on) and starts it again a few
seconds later, or SIGKILLs an etcd member and starts it again. At most
one server at a time is down or cut from the consoles: a console always
has a manager to go to. Meanwhile scripted users tap three cards at the
consoles, log in through the greeters (choosing what the greeter offers:
a new session, or to start it anyway) and log out (`slimlandctl end`).

Every operation (start and end on CLOCK_MONOTONIC, outcome), every
nemesis event and every manager's `group: ` log line make the history;
then everything is healed and started again, and the checker asks:

(a) for each card, the intervals in which servers open its session
    without asking (`group: card HASH16 bound here ... at T` to `... not
    bound here (REASON) at T`, or the manager's death) never overlap
    between servers; an overlap is reported with whether etcd had a
    majority then (it must not happen either way);
(b) every tap is answered within ANSWER_S: the console shows a session,
    or `slimlandctl why` gives one of the reasons of §9 (or `unknown
    card`);
(c) after the heal, every session that runs is one a manager lists, and
    each is listed for its card (`card HASH16 session ID
    bound|unconfirmed|elsewhere`): reachable by its card, or in the
    card's `several sessions` chooser.

It prints the history's length and what it checked, and writes the
history to OUTDIR/group_jepsen/history.json.

Root only (network namespaces, users, PAM); skipped without etcd.
"""
import argparse
import contextlib
import json
import os
import random
import threading
import time

from slimgroup import (SERVERS, binding_intervals, binding_overlaps, card_lines, choose,
                       group_console, kill_manager, manager_lines, start_group,
                       start_registered, wait_views, why)
from slimnet import Partitions
from slimrun import pids_of_uids
from slimsessiond import PASSWORD
from slimtest import TestFailure, log, run, scaled, wait_until

NAME = 'group_jepsen'
TTL = 3
CARDS = ['04ee0000000001', '04ee0000000002', '04ee0000000003']
# a tap's answer: a console whose server went silent fails over within 5 s,
# may be moved once to the card's server, and a greeter takes a few seconds
ANSWER_S = 20
ANSWERS = ('unknown card', 'session server unreachable', 'registry unreachable',
           'card logged in elsewhere', 'unconfirmed login', 'several sessions',
           'the card\'s session needs the password',
           # a tap as its session is being ended (a logout just before)
           'session ended')


def options():
    p = argparse.ArgumentParser()
    p.add_argument('--duration', type=float,
                   default=float(os.environ.get('SLIMTEST_JEPSEN_DURATION', '45')))
    p.add_argument('--seed', type=int, default=int(os.environ.get(
        'SLIMTEST_JEPSEN_SEED', str(random.SystemRandom().randrange(1 << 32)))))
    return p.parse_args()


class History:
    """What happened, in order: dicts with 'kind' (op, nemesis, log),
    'start' and 'end' (time.monotonic()), and what each kind says."""

    def __init__(self):
        self.lock = threading.Lock()
        self.events = []

    def add(self, kind, start, end=None, **fields):
        e = dict(kind=kind, start=start, end=start if end is None else end, **fields)
        with self.lock:
            self.events.append(e)
        return e

    def dump(self, path):
        with self.lock:
            events = sorted(self.events, key=lambda e: e['start'])
        with open(path, 'w') as f:
            json.dump(events, f, indent=1)


class World:
    """The group, its links and what the nemesis did to them."""

    def __init__(self, g, net, consoles, history, rng):
        self.g, self.net, self.consoles, self.h, self.rng = g, net, consoles, history, rng
        self.nodes = dict({n: s.host for n, s in g.servers.items()}, desk=g.desk)
        self.nodes.update({'etcd%d' % i: m for i, m in enumerate(g.members)})
        names = sorted(self.nodes)
        self.links = [(x, y) for i, x in enumerate(names) for y in names[i + 1:]]
        self.cuts = set()
        self.down = {}        # server: when it starts again
        self.members_down = {}  # member index: when it starts again
        self.holders = {}  # console: the card in its reader
        self.lock = threading.Lock()  # a manager replaced while a user asks it

    def unavailable(self):
        """Servers the consoles cannot use now: down, or cut from the desk."""
        return set(self.down) | {x if y == 'desk' else y for x, y in self.cuts
                                 if 'desk' in (x, y)}

    def majority(self):
        """Whether some two etcd members run and reach each other."""
        up = [i for i in range(len(self.g.members)) if i not in self.members_down]
        return any(('etcd%d' % i, 'etcd%d' % j) not in self.cuts
                   for k, i in enumerate(up) for j in up[k + 1:])


def nemesis(w, until, stop, errors):
    try:
        while not stop.is_set() and time.monotonic() < until:
            stop.wait(w.rng.uniform(1, 4))
            now = time.monotonic()
            for n, when in list(w.down.items()):
                if now >= when:
                    start = time.monotonic()
                    with w.lock:
                        w.g.servers[n].start_manager()
                        del w.down[n]
                    w.h.add('nemesis', start, time.monotonic(), f='start-manager', server=n)
            for i, when in list(w.members_down.items()):
                if now >= when:
                    w.g.etcd.start_member(i)
                    del w.members_down[i]
                    w.h.add('nemesis', now, f='start-member', member=i,
                            majority=w.majority())
            if stop.is_set():
                break
            act(w, w.rng.choices(['cut', 'heal', 'heal-all', 'kill-manager', 'kill-member'],
                                 [5, 3, 1, 1.5, 1.5])[0])
    except BaseException as e:  # the main thread fails the test with it
        errors.append(e)


def act(w, f):
    now = time.monotonic()
    if f == 'cut':
        x, y = w.rng.choice(w.links)
        server = x if y == 'desk' else (y if x == 'desk' else None)
        if (x, y) in w.cuts or (server and w.unavailable() - {server}):
            return
        w.net.cut(w.nodes[x], w.nodes[y])
        w.cuts.add((x, y))
        w.h.add('nemesis', now, f='cut', link=[x, y], majority=w.majority())
    elif f == 'heal' and w.cuts:
        x, y = w.rng.choice(sorted(w.cuts))
        w.net.heal(w.nodes[x], w.nodes[y])
        w.cuts.discard((x, y))
        w.h.add('nemesis', now, f='heal', link=[x, y], majority=w.majority())
    elif f == 'heal-all':
        w.net.heal()
        w.cuts = set()
        w.h.add('nemesis', now, f='heal-all', majority=w.majority())
    elif f == 'kill-manager' and not w.unavailable():
        n = w.rng.choice(SERVERS)
        with w.lock:
            dead = kill_manager(w.g.servers[n])
        w.down[n] = dead + w.rng.uniform(1, 6)
        w.h.add('nemesis', now, dead, f='kill-manager', server=n)
    elif f == 'kill-member':
        up = [i for i in range(len(w.g.members)) if i not in w.members_down]
        if len(up) > 1:
            i = w.rng.choice(up)
            w.g.etcd.stop_member(i)
            w.members_down[i] = time.monotonic() + w.rng.uniform(2, 8)
            w.h.add('nemesis', now, f='kill-member', member=i, majority=w.majority())


# -- the users

def ask(w, n, f, *args):
    """f(server, *args), or None when its manager is down or does not answer."""
    s = w.g.servers[n]
    with w.lock:
        if s.manager is None:
            return None
    try:
        return f(s, *args)
    except Exception:  # a manager killed under our feet, an answer too late
        return None


def server_of(w, console):
    """The server whose manager the console talks to now (its last
    `manager connecting ADDR` line), or None."""
    lines = [l for l in console.stdout.since(0) if l.startswith('manager connecting ')]
    if not lines:
        return None
    addr = lines[-1].split()[2]
    return next((n for n, s in w.g.servers.items()
                 if addr == '%s:%d' % (s.manager_host, s.port)), None)


def answer(w, console):
    """What the console shows now: ('session', 'S/ID'), ('why', S, reason,
    message, choice) with a reason of ANSWERS, or None."""
    n = server_of(w, console)
    if n is None:
        return None
    table = ask(w, n, lambda s: s.listing())
    if not table:
        return None
    s = w.g.servers[n]
    st, sid = s.console_on(table, console.id)
    # a user's session, whoever's: a login may have typed another server's user there
    if st == 'session' and sid:
        return ('session', '%s/%s' % (n, sid))
    if st == 'greeter':
        reason, message, choice = ask(w, n, why, console.id) or ('', '', [])
        if reason in ANSWERS:
            return ('why', n, reason, message, choice)
    return None


def wait_answer(w, console, timeout):
    deadline = time.monotonic() + scaled(timeout)
    while time.monotonic() < deadline:
        a = answer(w, console)
        if a:
            return a
        time.sleep(0.1)
    return None


def tap(w, card, console):
    """The card leaves the reader it is in (it is one card), and the
    console's reader is emptied; then the card goes into it."""
    start = time.monotonic()
    for c, held in list(w.holders.items()):
        if held == card or c is console:
            c.cmd('card remove')
            del w.holders[c]
            if c is console:
                # what it showed for the card before is no answer to this tap
                wait_until(lambda: answer(w, console), scaled(3), None,
                           holds=lambda a: not a or a[0] != 'session')
    console.cmd('card insert ' + card)
    w.holders[console] = card
    a = wait_answer(w, console, ANSWER_S)
    w.h.add('op', start, time.monotonic(), f='tap', card=card, console=console.console_id,
            outcome=list(a) if a else None)
    return a


def log_in(w, console, last):
    """At a greeter that asks for a login (unknown card) or offers a new
    session here: the user logs in with the greeter's server's user."""
    start = time.monotonic()
    outcome = 'no form'
    if last and last[0] == 'why':
        n, reason, choice = last[1], last[2], last[4]
        s = w.g.servers[n]
        if 'Start a new session here' in choice:
            if not try_choose(s, console, choice.index('Start a new session here')):
                w.h.add('op', start, time.monotonic(), f='login', console=console.console_id,
                        outcome='choice not taken')
                return
            # the login form: the greeter offers no choice any more
            if wait_until(lambda: ask(w, n, why, console.id), scaled(5), None,
                          holds=lambda a: a is not None and not a[2]) is not None:
                reason = 'unknown card'
        if reason == 'unknown card':
            console.type_text(s.user + '\n' + PASSWORD + '\n')
            a = wait_answer_change(w, console, last, ANSWER_S)
            if a and a[0] == 'why' and a[2] == 'unconfirmed login':
                pick = w.rng.choice(a[4]) if a[4] else None
                if pick:
                    taken = try_choose(w.g.servers[a[1]], console, a[4].index(pick))
                    a = list(a) + [('chose ' if taken else 'could not choose ') + pick]
            outcome = list(a) if a else None
    w.h.add('op', start, time.monotonic(), f='login', console=console.console_id,
            outcome=outcome)


def try_choose(s, console, n):
    """choose(), under the nemesis: False if the greeter did not take it."""
    try:
        choose(s, console, n)
        return True
    except (TestFailure, OSError):
        return False


def wait_answer_change(w, console, last, timeout):
    deadline = time.monotonic() + scaled(timeout)
    while time.monotonic() < deadline:
        a = answer(w, console)
        if a and tuple(a) != tuple(last):
            return a
        time.sleep(0.1)
    return None


def log_out(w):
    start = time.monotonic()
    n = w.rng.choice(SERVERS)
    sessions = ask(w, n, lambda s: [f[1] for k, f in s.listing().items()
                                    if k[0] == 'session' and f[2] == s.user]) or []
    if not sessions:
        return
    sid = w.rng.choice(sessions)
    ok = ask(w, n, lambda s: s.ctl('end', sid, check=False)) is not None
    w.h.add('op', start, time.monotonic(), f='logout', session='%s/%s' % (n, sid),
            outcome='sent' if ok else None)


def users(w, until):
    last = {}
    while time.monotonic() < until:
        console = w.rng.choice(w.consoles)
        f = w.rng.choices(['tap', 'login', 'logout'], [5, 3, 1])[0]
        if f == 'tap':
            last[console] = tap(w, w.rng.choice(CARDS), console)
        elif f == 'login':
            log_in(w, console, last.get(console))
            last.pop(console, None)
        else:
            log_out(w)


# -- the checker

def majority_between(history, t0, t1):
    """Whether etcd had a majority all along [t0, t1], by the nemesis events."""
    ev = [e for e in history.events if e['kind'] == 'nemesis' and 'majority' in e]
    before = [e['majority'] for e in ev if e['start'] <= t0]
    inside = [e['majority'] for e in ev if t0 < e['start'] < t1]
    return (before[-1] if before else True) and all(inside)


def check(w, history):
    failures, checked = [], {}
    # (a) one binding per card
    intervals = binding_intervals(w.g.servers, time.monotonic())
    checked['(a) binding intervals'] = sum(len(v) for v in intervals.values())
    for h, x, y in binding_overlaps(intervals):
        t0, t1 = max(x[2], y[2]), min(x[3], y[3])
        failures.append('(a) card %s bound on %s/%s and %s/%s at once, %.3f-%.3f (etcd %s)'
                        % (h, x[0], x[1], y[0], y[1], t0, t1, 'had a majority'
                           if majority_between(history, t0, t1) else 'lost its majority'))
    # (b) every tap answered
    taps = [e for e in history.events if e['kind'] == 'op' and e['f'] == 'tap']
    checked['(b) taps'] = len(taps)
    for e in taps:
        if not e['outcome']:
            failures.append('(b) no answer within %ds to %s at %s (%.3f)' % (
                ANSWER_S, e['card'], e['console'], e['start']))
    # (c) every session reachable by its card or listed for its user
    sessions = 0
    for n, s in w.g.servers.items():
        mine = ask(w, n, lambda s: [f[1] for k, f in s.listing().items()
                                    if k[0] == 'session' and f[2] == s.user]) or []
        cards = {c[1] for c in (ask(w, n, card_lines) or [])}
        for sid in mine:
            sessions += 1
            if sid not in cards:
                failures.append('(c) %s/%s runs with no card line for it' % (n, sid))
        # a compositor of the user's that the manager does not list is orphaned
        pids = pids_of_uids({s.pw.pw_uid})
        compositors = [p for p in pids if comm(p) == 'slimland']
        if len(compositors) > len(mine):
            failures.append('(c) %s runs %d compositors for %s, lists %d sessions' % (
                n, len(compositors), s.user, len(mine)))
        history.add('final', time.monotonic(), server=n, sessions=mine,
                    cards=sorted(cards), compositors=len(compositors))
    checked['(c) sessions'] = sessions
    return failures, checked


def comm(pid):
    try:
        with open('/proc/%d/comm' % pid) as f:
            return f.read().strip()
    except OSError:
        return ''


def heal_all(w):
    w.net.heal()
    w.cuts = set()
    for n in list(w.down):
        w.g.servers[n].start_manager()
        del w.down[n]
    for i in list(w.members_down):
        w.g.etcd.start_member(i)
        del w.members_down[i]
    w.h.add('nemesis', time.monotonic(), f='heal-everything', majority=True)
    w.g.etcd.wait_healthy(30)
    wait_views(w.g.servers, lambda n, v: v.reachable and v.registered
               and set(v.servers) == set(SERVERS), 'every server registered after the heal',
               timeout=60)


def record_logs(w, history):
    for n, s in w.g.servers.items():
        for proc, i, line in manager_lines(s):
            if 'group: ' in line:
                history.add('log', proc.stderr.time_of(i), server=n, line=line)


def test():
    opts = options()
    log('group_jepsen: seed %d, %.0f s (replay: --seed %d)' % (opts.seed, opts.duration,
                                                                 opts.seed))
    rng = random.Random(opts.seed)
    with contextlib.ExitStack() as stack:
        g = start_group(stack, NAME, 'gjp', TTL, enroll='open', share_card_key=True,
                        group_address=True)
        net = stack.enter_context(Partitions(g.desk.lan))
        start_registered(g.servers)
        a, b, c = (g.servers[n] for n in SERVERS)
        consoles = [group_console(a, 'desk-x', [a, b, c], g.desk),
                    group_console(a, 'desk-y', [b, c, a], g.desk),
                    group_console(a, 'desk-z', [c, a, b], g.desk)]
        for console in consoles:
            console.wait_for('attached', 30)
        history = History()
        w = World(g, net, consoles, history, rng)
        path = os.path.join(g.outdir, 'history.json')
        failures = []
        try:
            start = time.monotonic()
            until = start + opts.duration
            stop, errors = threading.Event(), []
            t = threading.Thread(target=nemesis, args=(w, until, stop, errors), daemon=True)
            t.start()
            try:
                users(w, until)
            finally:
                stop.set()
                t.join(60)
            if errors:
                raise errors[0]
            heal_all(w)
            # after the heal, each card once more: answered too
            for card in CARDS:
                tap(w, card, w.rng.choice(consoles))
            record_logs(w, history)
            failures, checked = check(w, history)
        finally:
            history.dump(path)
        kinds = {}
        for e in history.events:
            kinds[e['kind']] = kinds.get(e['kind'], 0) + 1
        log('history: %d events (%s), in %s' % (len(history.events), ', '.join(
            '%d %s' % (v, k) for k, v in sorted(kinds.items())), path))
        log('invariants checked: %s' % ', '.join('%s: %d' % kv for kv in checked.items()))
        if failures:
            raise TestFailure('seed %d: %d invariant(s) broken (history in %s):\n%s' % (
                opts.seed, len(failures), path, '\n'.join(failures[:30])))
        log('seed %d: every invariant held' % opts.seed)


run(test)
