"""The cgroup policy end to end, on this machine's real cgroups (v1 here,
v2 where the kernel has it): slimland-sessiond builds the session's classes
and hands them to the user; the user's compositor classes its clients as the
focus moves through the console's own input.

- after a login: the compositor in `compositor`, foot and its shell in
  `interactive` (foot has the focus);
- a second foot, started from the first one's shell, takes the focus: it is
  interactive, the first foot and its shell background; a process its shell
  starts afterwards is interactive with it (the kernel's rule: a child starts
  in its parent's cgroup);
- a click on the first foot through the console: it and its shell come back
  to interactive, the second foot and its child go to background;
- the card taken off (the session detached): every client hidden and the
  user's slice idle; the card back: as before;
- slimlandctl classes lists the same processes, with each class's CPU.
"""
import os
import time

from slimsessiond import ManagerSession
from slimtest import BTN_LEFT, TestSkip, log, read_fifo, run, scaled, unique_name

# run-unique names (slimrun.py): a user, its PAM service and the greeter user
USER = SERVICE = unique_name('cg')
GREETER_USER = unique_name('cg-gr')
CARD = '04c0ffee445566'
SIZE = (1024, 768)


def cgroup_class(pid):
    """The last part of the process's cgroup in the cpu hierarchy."""
    try:
        with open('/proc/%d/cgroup' % pid) as f:
            lines = [l.strip().split(':', 2) for l in f]
    except OSError:
        return None
    for _, controllers, path in lines:
        if 'cpu' in controllers.split(',') or (controllers == '' and len(lines) == 1):
            return path.rsplit('/', 1)[-1]
    return None


def wait_classes(s, want, what, timeout=10):
    """Polls /proc (a move announces itself nowhere) until every pid in
    want {pid: class} is in that class."""
    deadline = time.monotonic() + scaled(timeout)
    while True:
        got = {pid: cgroup_class(pid) for pid in want}
        if got == want:
            log('%s: %s' % (what, ', '.join('%d %s' % kv for kv in sorted(got.items()))))
            return
        if time.monotonic() > deadline:
            s.fail('%s: want %s, got %s' % (what, want, got))
        time.sleep(0.05)


def ask(s, console, fd, fifo, command):
    """Types `command` into the focused shell, which writes "p PID..." lines to
    the FIFO; the pids."""
    console.type_text('%s >%s\n' % (command, fifo))
    line = read_fifo(s, fd, b'\n', 15).decode()
    return [int(w) for w in line.split()[1:]]


def user_slice_idle(s):
    for root in ('/sys/fs/cgroup', '/sys/fs/cgroup/cpu'):
        path = os.path.join(root, s.cgroup_slice, 'user-%d.slice' % s.pw.pw_uid, 'cpu.idle')
        if os.path.exists(path):
            with open(path) as f:
                return f.read().strip() == '1'
    return None


def require_cgroups():
    """A cgroup hierarchy root may write to, as the manager needs; a machine
    without one runs sessions unprioritised, which is not this test."""
    for root in ('/sys/fs/cgroup/cpu', '/sys/fs/cgroup'):
        if os.path.exists(os.path.join(root, 'cpu.shares' if root.endswith('cpu') else
                                       'cgroup.controllers')):
            probe = os.path.join(root, unique_name('probe'))
            try:
                os.mkdir(probe)
                os.rmdir(probe)
                return
            except OSError as e:
                raise TestSkip('cannot make cgroups in %s: %s' % (root, e))
    raise TestSkip('no cgroup v1 cpu or v2 hierarchy at /sys/fs/cgroup')


def test():
    require_cgroups()
    with ManagerSession('cgroups', USER, SERVICE, GREETER_USER) as s:
        with s.fifo(owner=s.pw) as (fifo, fd):
            flow(s, fd, fifo)


def flow(s, fd, fifo):
    s.start_manager()
    a = s.approved_console('desk-cg', SIZE)
    a.cmd('card insert ' + CARD)
    s.wait_why(a.id, 'unknown card')
    s.settled(console=a, quiet=0.5)
    row = s.log_in(a)
    compositor = int(row[3])
    sid = row[1]

    # the first foot, with the focus, and its shell
    s.settled(console=a, quiet=0.5)
    foot1, shell1 = ask(s, a, fd, fifo, 'echo p $PPID $$')
    wait_classes(s, {compositor: 'compositor', foot1: 'interactive', shell1: 'interactive'},
                 'after the login')

    # a second foot, started from the first one's shell, takes the focus;
    # a subshell's child, so that it is no descendant of the first
    foot2, = ask(s, a, fd, fifo, '(foot & echo p $!)')
    wait_classes(s, {foot2: 'interactive', foot1: 'background', shell1: 'background',
                     compositor: 'compositor'}, 'the second foot focused')
    s.settled(console=a, quiet=0.5)
    # its shell, and what the shell starts now, follow it
    _, shell2 = ask(s, a, fd, fifo, 'echo p $PPID $$')
    sleeper, = ask(s, a, fd, fifo, 'sleep 600 & echo p $!')
    wait_classes(s, {shell2: 'interactive', sleeper: 'interactive'},
                 'the focused shell and its child')

    # a click on the first foot (at 32,32; the second is at 64,64)
    a.motion(40, 40)
    a.click(BTN_LEFT)
    wait_classes(s, {foot1: 'interactive', shell1: 'interactive', foot2: 'background',
                     shell2: 'background', sleeper: 'background'},
                 'the first foot clicked')

    lines = s.ctl('classes')
    log('slimlandctl classes:\n  ' + '\n  '.join(lines))
    listed = {}
    for line in lines:
        f = line.split()
        if f[0] == 'class' and f[1] == sid:
            for entry in f[4:]:
                listed[int(entry.split(':')[0])] = f[2]
    for pid, cls in ((compositor, 'compositor'), (foot1, 'interactive'),
                     (foot2, 'background'), (sleeper, 'background')):
        if listed.get(pid) != cls:
            s.fail('slimlandctl classes puts %d in %s, not %s' % (pid, listed.get(pid), cls))

    # the card off: the session detached, its clients hidden, the user idle
    a.cmd('card remove')
    s.wait_ctl(lambda t: (s.user_session(t) or [''] * 6)[5] == 'detached',
               'the session detached')
    wait_classes(s, {foot1: 'hidden', foot2: 'hidden', sleeper: 'hidden',
                     compositor: 'compositor'}, 'detached')
    if user_slice_idle(s) is False:
        s.fail('the user\'s slice is not idle with its session detached')
    # and back
    a.cmd('card insert ' + CARD)
    s.wait_console_state(a.id, 'session', user_session=sid, timeout=30)
    wait_classes(s, {foot1: 'interactive', shell1: 'interactive', foot2: 'background',
                     sleeper: 'background'}, 'attached again')
    if user_slice_idle(s) is True:
        s.fail('the user\'s slice stays idle with its session on a console')


if __name__ == '__main__':
    run(test)
