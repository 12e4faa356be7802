"""
Names of a test run's own, and the sweep of what dead runs left behind.

What a test makes in the machine's shared namespaces (Unix users and
groups, /etc/pam.d files, cgroup slices, network namespaces, directories
in /tmp) is named after its run: a tag claimed when the test starts, "st"
and five letters or digits, unique among the runs alive on the machine:

    USER = unique_name('flow')          # 'st3k9az-flow'

A run holds a lock (flock) on RUNS_DIR/TAG.lock for as long as its process
lives; the kernel lets go of it however the process ends, `kill -9`
included. Every run, as it starts, sweeps the tags whose lock nobody holds
any more: it kills the processes that carry the tag in their environment
(SLIMTEST_RUN, inherited by everything a test starts) and the processes
of the tag's users and of its greeter uids, and removes the users, groups,
PAM files, cgroups, network namespaces and /tmp directories named after
it. A live run's names are never touched: its lock is held.

Uids that belong to no user (a manager's greeter_uids: each greeter runs
as one of its own) are had in blocks, each claimed by a file of its own,
RUNS_DIR/uids-FIRST, holding the run's tag:

    first, last = claim_uids()          # 80000, 80031: nobody else's At a normal exit a run sweeps
its own tag too, which finds nothing when the test cleaned up after
itself (what it finds is logged), and drops its lock file.

Anything named TAG, TAG-... or TAG.... is the run's: keep that form (and
useradd's limit of 32 characters, the kernel's 15 for interfaces).
The C tests take their tag the same way (tests/run-tag.c); their
leftovers are swept by the next Python test.
"""
import atexit
import fcntl
import grp
import os
import pwd
import random
import select
import signal
import subprocess
import sys
import tempfile
import time

ENV = 'SLIMTEST_RUN'
# greeter uids: blocks of UID_BLOCK in [UIDS_FIRST, UIDS_LAST], none of a user
# nor of slimland-sessiond's default greeter_uids (70000-70999), nor /etc/subuid's
# (100000 and up)
UIDS_FIRST = 80000
UIDS_LAST = 99999
UID_BLOCK = 32
# where the manager puts its greeters' user records (src/sessiond/worker/userdb.h)
USERDB = '/run/userdb'
_ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz'
_CGROUP_FS = '/sys/fs/cgroup'


def runs_dir():
    """Where the runs' lock files live: /var/lib/slimtest for root (it
    outlives a reboot, as /etc/passwd does), a directory in /tmp otherwise;
    $SLIMTEST_RUNS_DIR overrides both."""
    if os.environ.get('SLIMTEST_RUNS_DIR'):
        return os.environ['SLIMTEST_RUNS_DIR']
    if os.geteuid() == 0:
        return '/var/lib/slimtest'
    return os.path.join(tempfile.gettempdir(), 'slimtest-runs-%d' % os.geteuid())


_tag = None


def tag():
    """This process's run tag (claimed on first use, stale runs swept first)."""
    if _tag is None:
        _claim()
    return _tag


def unique_name(label='', limit=32):
    """'TAG-label' (or 'TAG'): a name no other run on this machine uses
    while this one lives; limit: the longest the name may be."""
    name = tag() + ('-' + label if label else '')
    if len(name) > limit:
        raise ValueError('%r is longer than %d characters' % (name, limit))
    return name


def _log(msg):
    print('[slimrun] %s' % msg, file=sys.stderr, flush=True)


def _claim():
    global _tag
    d = runs_dir()
    os.makedirs(d, mode=0o755 if os.geteuid() == 0 else 0o700, exist_ok=True)
    sweep_stale()
    info = ('pid %d, started %s: %s\n' % (os.getpid(), time.strftime('%Y-%m-%d %H:%M:%S'),
                                          ' '.join(sys.argv))).encode()
    rng = random.SystemRandom()
    while True:
        t = 'st' + ''.join(rng.choice(_ALPHABET) for _ in range(5))
        # locked before the name appears: a visible TAG.lock is always held or stale
        new = os.path.join(d, '.%s.new' % t)
        try:
            fd = os.open(new, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
        except FileExistsError:
            continue
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, info)
        try:
            os.link(new, os.path.join(d, t + '.lock'))
        except (FileExistsError, FileNotFoundError):  # taken, or swept away meanwhile
            os.close(fd)
            continue
        finally:
            try:
                os.unlink(new)
            except FileNotFoundError:
                pass
        break
    _tag = t
    # the fd stays open (and locked) until the process ends; children do not inherit it
    atexit.register(_release, fd)
    os.environ[ENV] = t


def _release(fd):
    """At a normal exit: what the run left is swept (and said), the lock dropped."""
    if sweep(_tag, 'this run at its exit'):
        _log('run %s left the above behind' % _tag)
    try:
        os.unlink(os.path.join(runs_dir(), _tag + '.lock'))
    except FileNotFoundError:
        pass
    os.close(fd)


def sweep_stale():
    """Sweeps every run whose lock nobody holds; returns their tags."""
    d = runs_dir()
    swept = []
    try:
        entries = os.listdir(d)
    except FileNotFoundError:
        return swept
    for entry in sorted(entries):
        if entry.endswith('.lock'):
            t = entry[:-len('.lock')]
        elif entry.endswith('.new'):
            t = None  # a claim that died half-way
        else:
            continue
        path = os.path.join(d, entry)
        try:
            fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
        except FileNotFoundError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # its run is alive (or another sweep has it)
            try:
                same = os.stat(path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if not same:
                continue  # swept and replaced meanwhile
            if t:
                with open(path, errors='replace') as f:
                    about = f.read().strip()
                sweep(t, 'run %s, whose runner is gone (%s)' % (t, about))
                swept.append(t)
            os.unlink(path)
        finally:
            os.close(fd)
    # blocks whose run has no lock file at all (claimed after the lock, so orphans)
    for path, (t, _, _) in _uid_blocks().items():
        if t and not os.path.exists(os.path.join(d, t + '.lock')):
            sweep(t, 'run %s, gone without its lock file' % t)
    return swept


def claim_uids():
    """(first, last): a block of UID_BLOCK uids that belong to no user and
    that no other run has, until release_uids (or this run's sweep)."""
    t = tag()  # claimed first: a block's run always has its lock file
    d = runs_dir()
    blocks = (UIDS_LAST - UIDS_FIRST + 1) // UID_BLOCK
    start = random.SystemRandom().randrange(blocks)
    for i in range(blocks):
        first = UIDS_FIRST + (start + i) % blocks * UID_BLOCK
        last = first + UID_BLOCK - 1
        if any(_user_of(uid) for uid in range(first, last + 1)):
            continue
        try:
            fd = os.open(os.path.join(d, 'uids-%d' % first),
                         os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
        except FileExistsError:
            continue
        os.write(fd, ('%s %d %d\n' % (t, first, last)).encode())
        os.close(fd)
        return first, last
    raise RuntimeError('no block of %d free uids in %d-%d' % (UID_BLOCK, UIDS_FIRST, UIDS_LAST))


def release_uids(first):
    """The block is no longer this run's (nothing of its uids runs)."""
    try:
        os.unlink(os.path.join(runs_dir(), 'uids-%d' % first))
    except FileNotFoundError:
        pass


def remove_userdb_records(uids):
    """The user records of these uids in USERDB (a greeter's, UID.user and
    the NAME.user it links to); the names removed."""
    removed = []
    for uid in uids:
        link = os.path.join(USERDB, '%d.user' % uid)
        try:
            target = os.readlink(link)
        except OSError:
            continue
        if '/' not in target:
            try:
                os.unlink(os.path.join(USERDB, target))
            except FileNotFoundError:
                pass
        os.unlink(link)
        removed.append(target[:-len('.user')])
    return removed


def _user_of(uid):
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return None


def _uid_blocks():
    """{path: (tag, first, last)} of the claimed blocks."""
    d = runs_dir()
    blocks = {}
    try:
        names = os.listdir(d)
    except FileNotFoundError:
        return blocks
    for name in names:
        if name.startswith('uids-'):
            path = os.path.join(d, name)
            try:
                with open(path) as f:
                    t, first, last = f.read().split()
                blocks[path] = (t, int(first), int(last))
            except (OSError, ValueError):
                blocks[path] = (None, 0, -1)  # being written, or damaged: its tag's
    return blocks


def _ours(name, t):
    return name == t or name.startswith(t + '-') or name.startswith(t + '.')


def reap_orphans():
    """Reaps the children that have ended (the orphans of what a test
    started become this process's: it is their subreaper)."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


def wait_pidfds(fds, timeout):
    """Waits until the process of each pidfd of fds (a dict, keyed by
    pidfd) has ended, each pidfd telling when, for at most `timeout`
    seconds; what is left of fds."""
    left = dict(fds)
    poller = select.poll()
    for fd in left:
        poller.register(fd, select.POLLIN)
    deadline = time.monotonic() + timeout
    while left:
        ms = (deadline - time.monotonic()) * 1000
        if ms <= 0:
            break
        for fd, _ in poller.poll(max(1, ms)):
            poller.unregister(fd)
            del left[fd]
    return left


def signal_and_wait(pids, sig, timeout):
    """Sends sig to each of pids through a pidfd (so that no process that
    took a pid over meanwhile gets it) and waits, at most `timeout`
    seconds, until they have ended; the pids still running."""
    fds = {}
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except OSError:
            continue  # gone already
        fds[fd] = pid
        try:
            signal.pidfd_send_signal(fd, sig)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        return sorted(wait_pidfds(fds, timeout).values())
    finally:
        for fd in fds:
            os.close(fd)


def kill_all(pids_fn, what, timeout=5):
    """SIGKILL to the processes pids_fn() finds, and to those it finds
    after them, until it finds none or `timeout` seconds have passed:
    (the pids killed, the pids still there, which are logged)."""
    deadline = time.monotonic() + timeout
    killed = set()
    while True:
        pids = [p for p in pids_fn() if p != os.getpid()]
        if not pids:
            return killed, []
        left = deadline - time.monotonic()
        if left <= 0:
            _log('processes of %s still there: %s' % (what, pids))
            return killed, pids
        killed.update(pids)
        signal_and_wait(pids, signal.SIGKILL, left)
        reap_orphans()


def _procs():
    for name in os.listdir('/proc'):
        if name.isdigit():
            yield int(name)


def pids_tagged(t):
    """Processes whose environment carries SLIMTEST_RUN=t."""
    want = ('%s=%s' % (ENV, t)).encode()
    found = []
    for pid in _procs():
        try:
            with open('/proc/%d/environ' % pid, 'rb') as f:
                if want in f.read().split(b'\0'):
                    found.append(pid)
        except OSError:
            pass
    return found


def pids_of_uids(uids):
    """The processes of these users that run (a zombie has ended: only its
    parent's wait is missing, which for an orphan is this test's)."""
    found = []
    for pid in _procs():
        try:
            with open('/proc/%d/status' % pid) as f:
                for line in f:
                    if line.startswith('State:') and line.split()[1] == 'Z':
                        break
                    if line.startswith('Uid:'):
                        if int(line.split()[1]) in uids:
                            found.append(pid)
                        break
        except (OSError, ValueError):
            pass
    return found


def passwd_tool(argv):
    """useradd/userdel/groupdel, retried while another one holds /etc/passwd's lock."""
    for _ in range(50):
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        out = r.stdout.decode(errors='replace')
        if r.returncode == 0 or 'lock' not in out:
            return r.returncode, out
        time.sleep(0.1)
    return r.returncode, out


def cgroup_roots():
    """The cgroup hierarchies' roots: v2's, and each v1 one mounted below it."""
    roots = []
    if os.path.exists(os.path.join(_CGROUP_FS, 'cgroup.procs')):
        roots.append(_CGROUP_FS)
    try:
        for name in sorted(os.listdir(_CGROUP_FS)):
            path = os.path.join(_CGROUP_FS, name)
            if not os.path.islink(path) and os.path.exists(os.path.join(path, 'cgroup.procs')):
                roots.append(path)
    except OSError:
        pass
    return roots


def remove_cgroup_tree(top):
    """Removes a cgroup and everything below it, ending the processes in
    them; the directories it could not remove."""
    left = []
    for dirpath, _, _ in sorted(os.walk(top), key=lambda w: len(w[0]), reverse=True):
        def procs(p=dirpath):
            try:
                with open(os.path.join(p, 'cgroup.procs')) as f:
                    return [int(x) for x in f.read().split()]
            except OSError:
                return []
        kill_all(procs, dirpath)
        try:
            os.rmdir(dirpath)
        except FileNotFoundError:
            pass
        except OSError as e:
            left.append('%s: %s' % (dirpath, e))
    return left


def _netns_list():
    try:
        r = subprocess.run(['ip', 'netns', 'list'], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL)
    except FileNotFoundError:
        return []
    return [line.split()[0] for line in r.stdout.decode().splitlines() if line.strip()]


def netns_pids(ns):
    r = subprocess.run(['ip', 'netns', 'pids', ns], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL)
    return [int(p) for p in r.stdout.split()]


def sweep(t, why):
    """Removes everything named after run t; a list of what it found."""
    found = []

    def say(what):
        if not found:
            _log('sweeping %s' % why)
        found.append(what)
        _log('  %s' % what)

    # what the run started (its manager, consoles, pcscd, ...): none starts more after this
    if pids_tagged(t):
        say('processes %s' % pids_tagged(t))
        kill_all(lambda: pids_tagged(t), 'run ' + t)
    for ns in _netns_list():
        if _ours(ns, t):
            say('network namespace %s' % ns)
            kill_all(lambda n=ns: netns_pids(n), 'namespace ' + ns)
            subprocess.run(['ip', 'netns', 'del', ns], stderr=subprocess.DEVNULL)
    for path, (owner, first, last) in _uid_blocks().items():
        if owner == t:
            uids = set(range(first, last + 1))
            if pids_of_uids(uids):
                say('processes of greeter uids %d-%d' % (first, last))
                kill_all(lambda u=uids: pids_of_uids(u), 'uids %d-%d' % (first, last))
            for name in remove_userdb_records(uids):
                say('user record %s' % name)
            os.unlink(path)
    try:
        records = os.listdir(USERDB)
    except FileNotFoundError:
        records = []
    for name in records:  # named after the run, whatever their uid
        path = os.path.join(USERDB, name)
        target = os.readlink(path) if os.path.islink(path) else name
        if name.endswith('.user') and _ours(target[:-len('.user')], t):
            if not os.path.islink(path):
                say('user record %s' % name[:-len('.user')])
            os.unlink(path)
    users = [p for p in pwd.getpwall() if _ours(p.pw_name, t)]
    if users:
        uids = {p.pw_uid for p in users}
        kill_all(lambda: pids_of_uids(uids), 'users %s' % sorted(uids))
    for p in users:
        say('user %s (uid %d)' % (p.pw_name, p.pw_uid))
        # the runtime directories the manager made (src/sessiond/worker/spawn.c)
        for runtime in ('/run/user/%d' % p.pw_uid, '/run/slimland/user-%d' % p.pw_uid):
            if os.path.isdir(runtime):
                subprocess.run(['rm', '-rf', '--one-file-system', runtime])
        status, out = passwd_tool(['userdel', '-r', p.pw_name])
        if status not in (0, 12):  # 12: a -M user has no mail spool to remove
            _log('userdel %s: %s' % (p.pw_name, out.strip()))
    for g in grp.getgrall():
        if _ours(g.gr_name, t):
            say('group %s' % g.gr_name)
            passwd_tool(['groupdel', g.gr_name])
    if os.path.isdir('/etc/pam.d'):
        for name in os.listdir('/etc/pam.d'):
            if _ours(name, t):
                say('PAM service %s' % name)
                os.unlink(os.path.join('/etc/pam.d', name))
    for root in cgroup_roots():
        for name in os.listdir(root):
            path = os.path.join(root, name)
            if _ours(name, t) and os.path.isdir(path):
                say('cgroup %s' % path)
                for problem in remove_cgroup_tree(path):
                    _log('  cannot remove cgroup %s' % problem)
    tmp = tempfile.gettempdir()
    # mounts in its directories (the install test's overlay), the deepest first
    with open('/proc/self/mounts') as f:
        points = [line.split()[1] for line in f]
    for point in sorted(points, reverse=True):
        rel = os.path.relpath(point, tmp)
        if not rel.startswith('..') and _ours(rel.split('/')[0], t):
            say('mount %s' % point)
            subprocess.run(['umount', '-l', point])
    # what systemd-nspawn leaves of a container without machined (the install test)
    propagate = '/run/systemd/nspawn/propagate'
    for name in os.listdir(propagate) if os.path.isdir(propagate) else []:
        if _ours(name, t):
            subprocess.run(['rm', '-rf', '--one-file-system', os.path.join(propagate, name)])
    for name in os.listdir(tmp):
        path = os.path.join(tmp, name)
        if _ours(name, t) and os.path.isdir(path) and not os.path.islink(path):
            say('directory %s' % path)
            subprocess.run(['rm', '-rf', '--one-file-system', path])
    return found


def mkdtemp(label):
    """A directory in /tmp named after the run (swept with it)."""
    return tempfile.mkdtemp(prefix=unique_name(label) + '-')


if __name__ == '__main__':
    # `slimrun.py sweep`: what dead runs left, swept now
    if sys.argv[1:] != ['sweep']:
        sys.exit('usage: slimrun.py sweep')
    print('swept: %s' % (' '.join(sweep_stale()) or 'nothing'))
