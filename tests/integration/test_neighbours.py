"""A user who takes all the memory they can hurts nobody else: two users,
each at a console of their own, on a manager whose sessions may use
SESSION_MAX_MIB each (`session_memory_max`, `session_memory_high`). In A's
session, typed into A's foot:

- `slim-hog buffer 8192 4096`: 128 MiB, inside the limit: shown (its
  frame callback), nothing killed;
- `slim-hog buffer 16384 16384`: a 1 GiB wl_shm buffer, every page written.
  A's session cgroup meets its limit (v1 memory.failcnt, v2 memory.events
  max) and its OOM killer kills the hog (its exit status; a refusal with a
  protocol error would do too);
- `slim-hog clients 500`: 500 connections, each a small mapped toplevel,
  held open, then killed;
- `slim-hog clients 2000`: the compositor, which grows with its clients,
  is the largest process when A's session meets its limit: the kernel kills
  it, and A's console is shown a greeter again.

After each: the manager, B's compositor, B's foot and (but after the last)
A's compositor still run (the same pids); the machine's OOM kills
(/proc/vmstat) are all A's session's; keys typed at B's console reach B's
foot and B's console shows the change (what grim takes of B's compositor).
After 500 clients keys typed at A's console reach A's shell and change A's
picture.
"""
import os
import select
import shutil
import signal
import time

from slimsessiond import ManagerSession
from slimtest import TestSkip, images_equal, log, run, scaled, unique_name

# run-unique names (slimrun.py): the users, A's PAM service and the greeter user
USER_A = SERVICE = unique_name('nb')
USER_B = unique_name('nb-b')
GREETER_USER = unique_name('nb-gr')
SIZE = (1024, 768)
SESSION_HIGH_MIB = 256
SESSION_MAX_MIB = 384
CLIENTS = 500
MANY_CLIENTS = 2000


def memory_cgroup(pid):
    """The directory of the process's cgroup in the memory hierarchy (v1),
    or in the unified one (v2)."""
    with open('/proc/%d/cgroup' % pid) as f:
        lines = [l.strip().split(':', 2) for l in f]
    for _, controllers, path in lines:
        if 'memory' in controllers.split(','):
            return '/sys/fs/cgroup/memory' + path
    for _, controllers, path in lines:
        if controllers == '':
            return '/sys/fs/cgroup' + path
    return None


def require_memory_cgroups():
    if os.path.exists('/sys/fs/cgroup/memory/memory.limit_in_bytes'):
        return
    try:
        with open('/sys/fs/cgroup/cgroup.controllers') as f:
            if 'memory' in f.read().split():
                return
    except OSError:
        pass
    raise TestSkip('no memory controller (cgroup v1 or v2) at /sys/fs/cgroup')


def read_keyed(path):
    """A file of 'key value' lines as {key: int}."""
    with open(path) as f:
        return {k: int(v) for k, v in (l.split() for l in f if len(l.split()) == 2)}


def read_int(path):
    with open(path) as f:
        return int(f.read().split()[0])


class SessionMemory:
    """What A's session cgroup says of its memory (v1 or v2)."""

    def __init__(self, s, compositor):
        # the compositor is in its class's cgroup, a child of the session's
        self.dir = os.path.dirname(memory_cgroup(compositor))
        self.v1 = os.path.exists(os.path.join(self.dir, 'memory.limit_in_bytes'))
        limit = read_int(self.path('memory.limit_in_bytes' if self.v1 else 'memory.max'))
        if limit != SESSION_MAX_MIB << 20:
            s.fail('%s has a limit of %d bytes, not session_memory_max\'s %d MiB' % (
                self.dir, limit, SESSION_MAX_MIB))

    def path(self, name):
        return os.path.join(self.dir, name)

    def oom_kills_v1(self):
        """{class cgroup: OOM kills}: v1 counts a kill in the victim's own
        cgroup only, not in its parents'."""
        kills = {}
        for d, _, _ in os.walk(self.dir):
            n = read_keyed(os.path.join(d, 'memory.oom_control')).get('oom_kill', 0)
            if n:
                kills[os.path.relpath(d, self.dir)] = n
        return kills

    def counters(self):
        """{'limit hits', 'oom kills', 'peak bytes' (v1 only)}"""
        if self.v1:
            return {'limit hits': read_int(self.path('memory.failcnt')),
                    'oom kills': sum(self.oom_kills_v1().values()),
                    'peak bytes': read_int(self.path('memory.max_usage_in_bytes'))}
        events = read_keyed(self.path('memory.events'))
        return {'limit hits': events.get('max', 0), 'oom kills': events.get('oom_kill', 0)}


def machine_oom_kills():
    return read_keyed('/proc/vmstat').get('oom_kill', 0)


def rss_mib(pid):
    try:
        with open('/proc/%d/status' % pid) as f:
            return next(int(l.split()[1]) for l in f if l.startswith('VmRSS:')) >> 10
    except (OSError, StopIteration):
        return None


def alive(pid):
    """The process runs (a zombie does not)."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except OSError:
        return False


_unread = [b'']  # what the FIFO gave past the last line read


def read_line(s, fd, prefixes, timeout, pids=()):
    """The next line from the FIFO starting with one of prefixes; None once
    one of the processes pids is gone with no such line."""
    deadline = time.monotonic() + scaled(timeout)
    while True:
        while b'\n' in _unread[0]:
            line, _unread[0] = _unread[0].split(b'\n', 1)
            line = line.decode(errors='replace')
            log('A\'s shell: %s' % line)
            if line.startswith(prefixes):
                return line
        if not all(alive(pid) for pid in pids):
            return None
        left = deadline - time.monotonic()
        if left <= 0:
            s.fail('the FIFO got no line starting %s within %gs' % (prefixes, scaled(timeout)))
        if select.select([fd], [], [], min(left, 0.2))[0]:
            _unread[0] += os.read(fd, 4096)


class Desk:
    """A user logged in at a console of their own."""

    def __init__(self, s, console, pw, row):
        self.s, self.console, self.pw = s, console, pw
        self.sid, self.compositor = row[1], int(row[3])
        self.runtime = '/run/user/%d' % pw.pw_uid
        self.display = s.compositor_display(pw.pw_name, 'session-%s' % self.sid)

    def answers(self, text):
        """Keys typed at the console reach the session's focused client
        and the console shows what the compositor renders, changed."""
        self.s.settled(console=self.console, quiet=0.5)
        before = self.s.assert_shows(self.console, self.runtime, self.display)
        self.console.type_text(text)
        for _ in range(30):
            self.s.settled(console=self.console, quiet=0.3)
            after = self.s.assert_shows(self.console, self.runtime, self.display)
            if images_equal(before, after) is not None:
                log('%s answers: "%s" changed its picture' % (self.pw.pw_name, text.strip()))
                return
        self.s.fail('"%s" typed at %s changed nothing on %s\'s screen' % (
            text.strip(), self.console.id, self.pw.pw_name))


def test():
    require_memory_cgroups()
    config = ['session_memory_high = %d' % SESSION_HIGH_MIB,
              'session_memory_max = %d' % SESSION_MAX_MIB]
    with ManagerSession('neighbours', USER_A, SERVICE, GREETER_USER,
                        extra_config=config) as s:
        pw_b = s.add_user(USER_B)
        with s.fifo(owner=s.pw) as (fifo, fd):
            flow(s, pw_b, fifo, fd)


def hog_script(s, fifo):
    """A script for A to type the name of (the console types few signs):
    slim-hog with its arguments, its pid and its lines and then its exit
    status into the FIFO."""
    # a copy A may run (the build tree need not be readable by others)
    hog = os.path.join(s.tmp, 'slim-hog')
    shutil.copy(os.environ['SLIM_HOG'], hog)
    os.chmod(hog, 0o755)
    path = os.path.join(s.tmp, 'hog')
    with open(path, 'w') as f:
        f.write('#!/bin/sh\n%s "$@" >%s 2>&1 &\necho "pid $!" >%s\nwait $!\n'
                'echo "exit $?" >%s\n' % (hog, fifo, fifo, fifo))
    os.chmod(path, 0o755)
    return path


def flow(s, pw_b, fifo, fd):
    hog = hog_script(s, fifo)
    s.start_manager()
    a = s.approved_console('desk-nb-a', SIZE)
    b = s.approved_console('desk-nb-b', SIZE)
    desk_a = Desk(s, a, s.pw, s.log_in(a))
    desk_b = Desk(s, b, pw_b, s.log_in(b, USER_B))
    memory = SessionMemory(s, desk_a.compositor)
    log('A\'s session cgroup %s: limit %d MiB' % (memory.dir, SESSION_MAX_MIB))

    # what must outlive A's hogs: the manager, A's compositor, B's and B's foot
    keep = {s.manager.pid: 'the manager', desk_a.compositor: 'A\'s compositor',
            desk_b.compositor: 'B\'s compositor'}
    for pid, (pidfd, name) in s.processes_of(pw_b.pw_uid).items():
        os.close(pidfd)
        if name == 'foot':
            keep[pid] = 'B\'s foot'
    if 'B\'s foot' not in keep.values():
        s.fail('B runs no foot: %s' % keep)
    log('to outlive the hogs: %s' % ', '.join('%s (%d)' % (n, p) for p, n in keep.items()))

    def run_hog(args, want, keep=keep, timeout=120):
        """slim-hog ARGS typed at A's console, until a line starting with
        one of want or its end; (its line or exit status, A's session's
        counters before and after), the neighbours (keep) checked unhurt."""
        before, ooms = memory.counters(), machine_oom_kills()
        a.type_text('%s %s\n' % (hog, args))
        pid = int(read_line(s, fd, ('pid',), 15).split()[1])
        line = read_line(s, fd, want + ('exit', 'protocol error'), timeout,
                         pids=(pid, desk_a.compositor))
        if line is None:  # the hog ended: how, its script says, if its shell is there
            line = read_line(s, fd, ('exit',), 15, pids=(desk_a.compositor,)) or 'gone'
        log('slim-hog %s: %s (its RSS %s MiB; A\'s compositor %s MiB, B\'s %s MiB)' % (
            args, line, rss_mib(pid), rss_mib(desk_a.compositor), rss_mib(desk_b.compositor)))
        if alive(pid):
            pidfd = os.pidfd_open(pid)
            os.kill(pid, signal.SIGKILL)
            select.select([pidfd], [], [], scaled(10))
            os.close(pidfd)
        after = memory.counters()
        gone = ['%s (%d)' % (n, p) for p, n in keep.items() if not alive(p)]
        if gone:
            s.fail('after slim-hog %s, gone: %s' % (args, ', '.join(gone)))
        machine = machine_oom_kills() - ooms
        session = after['oom kills'] - before['oom kills']
        log('A\'s session: %s; OOM kills on the machine %d, in A\'s session %d%s' % (
            after, machine, session,
            ' (by class: %s)' % memory.oom_kills_v1() if memory.v1 and session else ''))
        if machine > session:
            s.fail('after slim-hog %s, %d OOM kill(s) outside A\'s session' % (
                args, machine - session))
        desk_b.answers('echo %s\n' % args.replace(' ', '-'))
        return line, before, after

    # a large buffer that fits in A's limit: shown, and nobody killed
    line, before, after = run_hog('buffer 8192 4096', ('shown',))
    if line != 'shown' or after['oom kills'] != before['oom kills']:
        s.fail('a 128 MiB buffer in a %d MiB session: "%s" (%s)' % (
            SESSION_MAX_MIB, line, after))

    # 1 GiB: A's session meets its limit, and the hog is the one killed
    line, before, after = run_hog('buffer 16384 16384', ('committed', 'shown'))
    if after['limit hits'] <= before['limit hits']:
        s.fail('A\'s session never met its limit (%s)' % after)
    if line == 'exit 137':
        if after['oom kills'] <= before['oom kills']:
            s.fail('the hog was killed, but not by its session\'s OOM killer (%s)' % after)
    elif not line.startswith('protocol error'):
        s.fail('the 1 GiB buffer hog: "%s", neither killed nor refused' % line)

    # 500 clients at once, held, then killed
    run_hog('clients %d' % CLIENTS, ('clients',))

    # A's session still answers its console
    desk_a.answers('echo answers >%s\n' % fifo)
    read_line(s, fd, ('answers',), 15)

    # clients until A's compositor, which grows with them, is the largest
    # process of a session at its limit: the kernel kills it, A's session
    # ends and A's console is shown a greeter again; B is not touched
    others = {pid: name for pid, name in keep.items() if pid != desk_a.compositor}
    line, before, after = run_hog('clients %d' % MANY_CLIENTS, ('clients',), keep=others,
                                  timeout=240)
    if alive(desk_a.compositor):
        s.fail('A\'s compositor outlived %d clients in %d MiB (%s, %s)' % (
            MANY_CLIENTS, SESSION_MAX_MIB, line, after))
    if after['oom kills'] <= before['oom kills']:
        s.fail('A\'s compositor ended, but not by its session\'s OOM killer (%s)' % after)
    s.wait_console_state(a.id, 'greeter', timeout=30)
    log('A\'s compositor killed at its session\'s limit; %s shows a greeter again' % a.id)


if __name__ == '__main__':
    run(test)
