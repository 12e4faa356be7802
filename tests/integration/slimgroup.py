"""
What the tests of server groups (session-manager.md §9) share: a LAN of
network namespaces (slimnet.py) with a three-member etcd cluster
(slimetcd.py), three slimland-sessiond servers A, B and C, each in a
namespace of its own, and a fourth for the consoles and etcdctl:

    A 10.77.0.1, B 10.77.0.2, C 10.77.0.3      the servers
    desk 10.77.0.4                             the consoles, and etcdctl
    etcd0 10.77.0.11 .. etcd2 10.77.0.13       the cluster

    with contextlib.ExitStack() as stack:
        g = start_group(stack, 'group', 'grp', ttl=3)
        g.servers['A'].start_manager()

and what looks at it: `slimlandctl group` parsed (View), polled until
it says what it should (wait_views), a server's namespace emptied at once
(kill_namespace: a power cut).

Root only (network namespaces, users, PAM); skipped without etcd.
"""
import contextlib
import os
import re
import secrets
import shutil
import signal
import subprocess
import time

from slimetcd import EtcdCluster
from slimnet import Lan
from slimrun import kill_all, netns_pids
from slimsessiond import ManagerSession
from slimtest import (BACKGROUND, Console, TestFailure, fraction_not, log, require_programs,
                      scaled, unique_name, wait_until)

PREFIX = '/slimland-test/'
SERVERS = ('A', 'B', 'C')


class View:
    """One answer of `slimlandctl group`, parsed."""

    def __init__(self, lines):
        self.lines = lines
        head = lines[0].split() if lines else []
        # group PREFIX server NAME etcd URL reachable|unreachable[ (not registered)]
        self.ok = len(head) >= 7 and head[0] == 'group' and head[2] == 'server'
        self.prefix = head[1] if self.ok else None
        self.name = head[3] if self.ok else None
        self.endpoint = head[5] if self.ok else None
        self.reachable = self.ok and head[6] == 'reachable'
        self.registered = self.ok and '(not registered)' not in lines[0]
        self.read = self.ok and not (len(lines) > 1 and lines[1].startswith('registry not read'))
        self.servers = {}   # name: {'address', 'sessions', 'drain', 'this'}
        self.sessions = {}  # 'NAME/ID': (user, console)
        self.next = None
        for line in lines[1:]:
            f = line.split() or ['']
            if f[0] == 'server' and len(f) >= 14:
                self.servers[f[1]] = {'address': f[3], 'sessions': int(f[5]),
                                      'drain': 'drain' in f[14:], 'this': '(this)' in f[14:]}
            elif f[0] == 'session' and len(f) == 6:
                self.sessions[f[1]] = (f[3], f[5])
            elif line.startswith('next login '):
                self.next = f[2]

    def text(self):
        return '\n'.join('    ' + l for l in self.lines)


def drains(v, name):
    """Whether the view says server `name` drains; None if it lists no such server."""
    rec = v.servers.get(name)
    return None if rec is None else rec['drain']


def view(s):
    try:
        return View(s.ctl('group'))
    except subprocess.TimeoutExpired:
        return View([])


def complete(v, servers, sessions, owner):
    """v lists exactly these servers (name: ManagerSession) at their
    addresses, with their numbers of sessions, and exactly these sessions
    ({'NAME/ID': (user, console)}); `owner` is (this)."""
    if not (v.reachable and v.registered and v.read and set(v.servers) == set(servers)
            and v.sessions == sessions):
        return False
    for name, s in servers.items():
        rec = v.servers[name]
        n = sum(1 for key in sessions if key.startswith(name + '/'))
        if rec['address'] != '%s:%d' % (s.manager_host, s.port) or rec['sessions'] != n \
                or rec['this'] != (name == owner):
            return False
    return True


def wait_views(viewers, predicate, what, timeout=30, start=None, invariant=None):
    """Polls `slimlandctl group` on each of viewers ({name: session}) until
    predicate(name, view) holds for all; fails at once if a view breaks
    invariant(name, view). The seconds each took, from `start` (default:
    now; a time.monotonic())."""
    start = time.monotonic() if start is None else start
    took, last = {}, {}

    def look():
        for name, s in viewers.items():
            if name in took and invariant is None:
                continue
            v = view(s)
            if invariant is not None and not invariant(name, v):
                raise TestFailure('%s: %s\'s view broke off after %.2fs:\n%s' % (
                    what, name, time.monotonic() - start, v.text()))
            last[name] = v
            if name not in took and predicate(name, v):
                took[name] = time.monotonic() - start
        return len(took) == len(viewers)
    wait_until(look, scaled(timeout), lambda _: '%s; last views:\n%s' % (
        what, '\n'.join('  %s:\n%s' % (n, last[n].text()) for n in viewers if n not in took)))
    log('%s: %s' % (what, ', '.join('%s after %.2fs' % (n, took[n]) for n in viewers)))
    return took


def hold_views(viewers, invariant, what, until):
    """Polls the views until time.monotonic() reaches `until`: each must
    satisfy invariant(name, view) all along."""
    polls = 0
    while time.monotonic() < until:
        for name, s in viewers.items():
            v = view(s)
            if not invariant(name, v):
                raise TestFailure('%s: %s\'s view broke off:\n%s' % (what, name, v.text()))
            polls += 1
        time.sleep(0.05)
    log('%s: %d views, every one as it should be' % (what, polls))


def ctl_answer(s, *args):
    """slimlandctl ARGS on s: (exit status, stdout, stderr), stripped."""
    r = subprocess.run([s.slimlandctl, '--socket', os.path.join(s.run_dir, 'ctl.sock')]
                       + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=scaled(10))
    return (r.returncode, r.stdout.decode(errors='replace').strip(),
            r.stderr.decode(errors='replace').strip())


def ctl_ok(s, *args):
    """slimlandctl ARGS on s answers ok (status 0, nothing said)."""
    answer = ctl_answer(s, *args)
    if answer != (0, '', ''):
        raise TestFailure('slimlandctl %s on %s: %r' % (' '.join(args), s.server, answer))


def kill_namespace(ns, timeout=10):
    """SIGKILL to every process in a network namespace, until none is left;
    how many there were."""
    killed, left = kill_all(lambda: netns_pids(ns), ns, scaled(timeout))
    if left:
        raise TestFailure('processes left in %s: %s' % (ns, left))
    return len(killed)


@contextlib.contextmanager
def namespaces_emptied(lan):
    """At the end, whatever still runs in the LAN's namespaces is killed
    (what the sessions' own clean-up left: nothing, normally)."""
    try:
        yield
    finally:
        for ns in list(lan.namespaces):
            left = netns_pids(ns)
            if left:
                log('killing what is left in %s: %s' % (ns, left))
                try:
                    kill_namespace(ns)
                except TestFailure as e:
                    log(str(e))


def sanitizer_lines(s):
    return [l for l in s.manager.stderr.lines if 'runtime error:' in l or 'Sanitizer' in l]


def start_registered(servers):
    """Starts the managers of `servers` ({name: ManagerSession}) and waits
    until each has registered and sees all of them."""
    for s in servers.values():
        s.start_manager()
    for s in servers.values():
        s.manager_log_wait('group: %s registered under %s' % (s.server, PREFIX), timeout=20)
    wait_views(servers, lambda n, v: complete(v, servers, {}, n),
               'all three servers in every view')


def stop_cleanly(servers):
    """Each manager of `servers` exits 0 on SIGTERM, with no sanitizer report
    (nothing leaked, nothing wrong)."""
    for k, s in servers.items():
        status = s.stop_manager()
        reports = sanitizer_lines(s)
        s.manager = None  # stopped: not again at the end
        if status != 0 or reports:
            raise TestFailure('%s\'s manager exited with status %s: %s' % (
                k, status, '\n'.join(reports[:20])))


def assert_session_shown(s, console, sid):
    """The session is on the console, which shows what its compositor renders."""
    s.wait_console_state(console.id, 'session', user_session=sid)
    display = s.compositor_display(s.user, 'session-%s' % sid)
    s.assert_shows(console, '/run/user/%d' % s.pw.pw_uid, display)


class Group:
    """What start_group made: the etcd cluster, the servers ({name:
    ManagerSession}, each with .server its name and .host its slimnet.Host),
    the consoles' host (desk) and the test's output directory."""

    def __init__(self, etcd, members, servers, desk, outdir):
        self.etcd = etcd
        self.members = members
        self.servers = servers
        self.desk = desk
        self.outdir = outdir


def start_group(stack, name, tag, ttl, enroll='approve', share_card_key=False,
                group_address=False, extra_config=()):
    """The LAN, the etcd cluster and three servers (not started yet) in
    `stack` (a contextlib.ExitStack), all torn down with it. tag: in the
    users' and PAM services' names (unique_name('TAG-a'), ...); share_card_key:
    one card.key in every server's key_dir, as a group's servers must have;
    group_address: `group_address = ADDR:PORT` in each server's config;
    extra_config: more lines for every server's config."""
    require_programs('etcd', 'etcdctl')
    base = os.environ.get('SLIMTEST_OUTDIR', os.path.join(os.getcwd(), 'integration-output'))
    outdir = os.path.join(base, name)
    shutil.rmtree(outdir, ignore_errors=True)
    os.makedirs(outdir)
    lan = stack.enter_context(Lan(name))
    hosts = {n: lan.host('srv' + n, 1 + i) for i, n in enumerate(SERVERS)}
    desk = lan.host('desk', 4)
    stack.enter_context(namespaces_emptied(lan))
    members = [lan.host('etcd%d' % i, 11 + i) for i in range(3)]
    t = time.monotonic()
    etcd = stack.enter_context(EtcdCluster(name, os.path.join(outdir, 'etcd'), hosts=members,
                                           client_host=desk))
    log('etcd cluster healthy %.2fs after its start' % (time.monotonic() - t))
    card_key = secrets.token_hex(32) + '\n'
    servers = {}
    for n in SERVERS:
        low = n.lower()
        s = stack.enter_context(ManagerSession(
            '%s/%s' % (name, n), unique_name('%s-%s' % (tag, low)),
            unique_name('%s-%s' % (tag, low)), unique_name('%s-%s-gr' % (tag, low)),
            host=hosts[n], enroll=enroll, extra_config=[
                'etcd = ' + ','.join(etcd.endpoints),
                'group_prefix = ' + PREFIX,
                'server_name = ' + n,
                'group_ttl = %d' % ttl,
            ] + list(extra_config)))
        s.server = n
        if group_address:
            # where consoles reach it, whatever `listen` says (a wildcard, say)
            with open(s.config_path, 'a') as f:
                f.write('group_address = %s:%d\n' % (s.manager_host, s.port))
        if share_card_key:
            # the manager's key_dir (slimsessiond.py): made here, as it would be
            key_dir = os.path.join(s.tmp, 'keys')
            os.makedirs(key_dir, 0o700, exist_ok=True)
            fd = os.open(os.path.join(key_dir, 'card.key'), os.O_WRONLY | os.O_CREAT | os.O_EXCL,
                         0o600)
            with os.fdopen(fd, 'w') as f:
                f.write(card_key)
        servers[n] = s
    return Group(etcd, members, servers, desk, outdir)


# -- partitions: a manager killed and started again, what it says of cards

def kill_manager(s):
    """SIGKILL to s's manager alone (its compositors live on, as after a
    crash); the Process is kept in s.past_managers, with its log lines.
    The time.monotonic() by which it was dead."""
    s.stop_manager(signal.SIGKILL)
    s.past_managers = getattr(s, 'past_managers', []) + [(s.manager, time.monotonic())]
    s.manager = None
    return s.past_managers[-1][1]


def manager_lines(s):
    """Every line each manager of s said, oldest first, as (Process, index,
    line); the dead ones' too (kill_manager)."""
    out = []
    for proc, _ in getattr(s, 'past_managers', []):
        out += [(proc, i, l) for i, l in enumerate(proc.stderr.since(0))]
    if s.manager is not None:
        out += [(s.manager, i, l) for i, l in enumerate(s.manager.stderr.since(0))]
    return out


BOUND = re.compile(r'group: card ([0-9a-f]{16}) bound here to session (\d+) at (\d+\.\d+)')
NOT_BOUND = re.compile(r'group: card ([0-9a-f]{16}) not bound here \((.*)\) at (\d+\.\d+)')


def binding_intervals(servers, end):
    """From the managers' logs (session-manager.md §9: `group: card HASH16
    bound here to session ID at T` and `... not bound here (REASON) at T`,
    T CLOCK_MONOTONIC): {HASH16: [(server, session, start, end)]}, the
    intervals in which each server opened the card's session without
    asking. One ends at its `not bound` line, at its manager's death
    (kill_manager) or at `end` (a time.monotonic())."""
    out = {}
    for name, s in servers.items():
        managers = [(p, dead) for p, dead in getattr(s, 'past_managers', [])]
        if s.manager is not None:
            managers.append((s.manager, None))
        for proc, dead in managers:
            open_ = {}
            for line in proc.stderr.since(0):
                m = BOUND.search(line)
                if m:
                    h, sid, t = m.group(1), m.group(2), float(m.group(3))
                    if h in open_ and open_[h][0] != sid:
                        out.setdefault(h, []).append((name, open_[h][0], open_[h][1], t))
                        del open_[h]
                    open_.setdefault(h, (sid, t))
                    continue
                m = NOT_BOUND.search(line)
                if m and m.group(1) in open_:
                    h, t = m.group(1), float(m.group(3))
                    out.setdefault(h, []).append((name, open_[h][0], open_[h][1], t))
                    del open_[h]
            for h, (sid, t) in open_.items():
                out.setdefault(h, []).append((name, sid, t, dead if dead is not None else end))
    return out


def binding_overlaps(intervals):
    """The pairs of intervals (binding_intervals) of one card on two
    servers that overlap: [(HASH16, interval, interval)]."""
    out = []
    for h, spans in intervals.items():
        for i, x in enumerate(spans):
            for y in spans[i + 1:]:
                if x[0] != y[0] and max(x[2], y[2]) < min(x[3], y[3]):
                    out.append((h, x, y))
    return out


def assert_no_overlap(servers, end=None, what=''):
    """No card bound on two servers at once in the managers' logs so far;
    the intervals, printed."""
    intervals = binding_intervals(servers, end or time.monotonic())
    for h, spans in sorted(intervals.items()):
        log('%scard %s bound: %s' % (what and what + ': ', h, '; '.join(
            '%s/%s %.3f-%.3f' % span for span in spans)))
    bad = binding_overlaps(intervals)
    if bad:
        raise TestFailure('%scard bound on two servers at once: %s' % (
            what and what + ': ', '; '.join('%s: %s/%s %.3f-%.3f and %s/%s %.3f-%.3f'
                                            % ((h,) + x + y) for h, x, y in bad)))
    return intervals


# -- what a console's greeter says, what a server lists of cards

def why(s, console_id):
    """`slimlandctl why CONSOLE` on s: (reason, message, [choice labels]);
    ('', '', []) when s does not answer."""
    try:
        lines = s.ctl('why', console_id, check=False)
    except (subprocess.TimeoutExpired, OSError):
        return '', '', []
    reason = lines[0] if lines else ''
    message = next((l[len('message '):] for l in lines[1:] if l.startswith('message ')), '')
    choice = next((l[len('choice '):].split('|') for l in lines[1:]
                   if l.startswith('choice ')), [])
    return reason, message, choice


def wait_why(s, console_id, reasons, timeout=15, never=()):
    """Until `why` on s gives one of `reasons` (a str or a tuple): (reason,
    message, choice). Fails at once if it gives one of `never`."""
    reasons = (reasons,) if isinstance(reasons, str) else tuple(reasons)
    seen = []

    def ask():
        answer = why(s, console_id)
        if not seen or seen[-1] != answer:
            seen.append(answer)
        if answer[0] in never:
            raise TestFailure('%s: why %s says %r' % (s.server, console_id, answer))
        return answer
    return wait_until(ask, scaled(timeout), lambda a: 'why %s on %s to say %s; it said %s' % (
        console_id, s.server, ' or '.join(reasons), seen), holds=lambda a: a[0] in reasons)


def card_lines(s):
    """`card HASH16 session ID bound|unconfirmed|elsewhere` lines of s's
    `slimlandctl list`: [(hash16, session, state)]."""
    out = []
    for line in s.ctl('list', check=False):
        f = line.split()
        if len(f) == 5 and f[0] == 'card' and f[2] == 'session':
            out.append((f[1], f[3], f[4]))
    return out


def user_sessions(s):
    """The ids of the sessions of s's user in s's `slimlandctl list`."""
    return sorted(f[1] for k, f in s.listing().items() if k[0] == 'session' and f[2] == s.user)


def choose(s, console, n, timeout=10):
    """The user picks the n-th (0-based) choice s's greeter offers at the
    console (its function key, ManagerSession.choose), and the greeter
    takes it (its client says `chose N`): `why` offers that choice no more."""
    labels = why(s, console.id)[2]
    if not 0 <= n < len(labels):
        raise TestFailure('%s offers no choice %d at %s: %r' % (s.server, n, console.id, labels))
    s.choose(console, n)
    wait_until(lambda: why(s, console.id), scaled(timeout),
               lambda a: 'the greeter at %s to take choice %d (%s); why says %r' % (
                   console.id, n, labels[n], a), holds=lambda a: a[2] != labels)


def group_console(s, console_id, managers, host, size=(800, 600)):
    """A console with a stdin card reader in `host`, given the managers
    (ManagerSessions, in this order); it belongs to s (its logs, its end)."""
    endpoint = ['--manager', ','.join('%s:%d' % (m.manager_host, m.port) for m in managers),
                '--card-reader=stdin']
    console = Console(s, None, size, console_id, 'console-' + console_id, endpoint=endpoint,
                      host=host)
    s.consoles.append(console)
    log('console %s (%s) is %s, --manager %s' % (console_id, console.name, console.id,
                                                   ','.join(m.server for m in managers)))
    return console


def wait_form(s, console, timeout=30):
    """The console shows s's greeter, settled: what it types reaches the form."""
    s.wait_console_state(console.id, 'greeter', timeout=timeout)
    s.wait_screen(lambda img: fraction_not(img, BACKGROUND) > 0.5, 'the greeter window',
                  timeout=timeout, console=console)
    s.settled(console=console, quiet=0.5)
