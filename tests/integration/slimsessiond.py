"""
The session manager for real, for the end-to-end tests of
protocol/session-manager.md: slimland-sessiond as root with a config and a
run directory of the test's own, a user made for the test (useradd -m,
chpasswd), a PAM service of pam_unix alone (/etc/pam.d/NAME, the config's
`pam_service`), a greeter user of the test's own with a block of greeter
uids of the run's own (`greeter_uids`, slimrun.claim_uids: each greeter
runs as one of them), and slimland-console --manager consoles driven with
--control.

    with ManagerSession('flow') as s:
        s.start_manager()
        a = s.start_managed_console('desk-a', (1024, 768))
        s.wait_console_state('desk-a', 'greeter')

The users' and the PAM service's names come from slimtest.unique_name, and
so does the manager's cgroup slice (`cgroup_slice`, the user's name and
.slice): two runs of a test at once keep apart, and what a killed run left
is swept by the next (slimrun.py). Everything installed is removed at the
end, failure or not: the processes of both users and of the greeter uids
(found by their uid, ended by PID), the greeters' user records (which the
manager leaves for the greeters it leaves running), the users and their
homes, the PAM file, the runtime directories and the cgroup slice the
manager made. The manager passes its
sanitizer options on to its compositors (sanitizer builds), so the leak
suppressions of lsan.supp hold there too, and a sanitizer report in a
compositor's log fails the test.
"""
import os
import pwd
import shutil
import signal
import subprocess
import threading
import time

from slimrun import (cgroup_roots, claim_uids, passwd_tool, pids_of_uids, reap_orphans,
                     release_uids, remove_cgroup_tree, remove_userdb_records, signal_and_wait,
                     wait_pidfds)
from slimtest import (BACKGROUND, LSAN_SUPPRESSIONS, Console, Process, Session, TestSkip,
                      _sanitizer_report, fraction_not, free_udp_port, images_equal, log,
                      require_programs, scaled, wait_until, xwayland_started, _rgb)

# the evdev code of F1: the greeter's first choice (F2 the next...)
KEY_F1 = 59

PASSWORD = 'Flow-pass.42'


def _run(argv, check=True):
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if check and r.returncode != 0:
        raise RuntimeError('%s: exit status %d: %s' % (' '.join(argv), r.returncode,
                                                       r.stdout.decode(errors='replace')))
    return r.returncode


def _pids_of_user(uid):
    return pids_of_uids({uid})


_pids_of = pids_of_uids


class ManagerSession(Session):
    """A Session without a compositor of its own: the manager starts them."""

    def __init__(self, name, user, service, greeter_user, pam_hooks=False, enroll='approve',
                 host=None, startup='foot', extra_config=(), greeter_uid_count=None):
        """host: a slimnet.Host the manager (and so its compositors) runs in,
        listening on its address; consoles go there too.
        pam_hooks: authentication waits at a gate while the test holds it
        (hold_pam, release_pam; pam_exec) and the PAM service records, in
        the session phase, which process
        opened and closed the session (pam_exec runs in the process calling
        pam_open_session: its child's $PPID), in self.pam_hook_log.
        extra_config: more lines of slimland.conf ('key = value'), after
        the test's own.
        greeter_uid_count: how many uids greeter_uids has (the first of
        the run's block; default: the whole block).
        Sessions with users, services and names of their own may run at
        once (one per host: each manager listens on its host's address)."""
        super().__init__(name, console=False, compositor=False)
        self.extra_config = list(extra_config)
        self.pam_hooks = pam_hooks
        self.enroll = enroll
        self.startup = startup
        self.host = host
        self.manager_host = host.addr if host else '127.0.0.1'
        self.user = user
        self.service = service
        self.greeter_user = greeter_user
        self.pam_path = '/etc/pam.d/' + service
        self.cgroup_slice = user + '.slice'
        self.greeter = os.environ.get('SLIMLAND_GREETER', '')
        self.sessiond = os.environ.get('SLIMLAND_SESSIOND', '')
        self.slimlandctl = os.environ.get('SLIMLANDCTL', '')
        self.manager = None
        self.n_managers = 0
        self.made = []  # what to undo, in reverse order
        self.uids = set()
        self.greeter_uid_count = greeter_uid_count
        self.greeter_uids = set()  # greeter_uids, every uid of it

    # -- set-up
    def __enter__(self):
        if os.geteuid() != 0:
            raise TestSkip('needs root (useradd, PAM, starting compositors as users)')
        for var, path in (('SLIMLAND_GREETER', self.greeter),
                          ('SLIMLAND_SESSIOND', self.sessiond), ('SLIMLANDCTL', self.slimlandctl)):
            if not path or not os.access(path, os.X_OK):
                raise TestSkip('%s is not set to a program (%r)' % (var, path))
        require_programs('useradd', 'userdel', 'chpasswd', 'foot', 'grim')
        super().__enter__()
        try:
            self._install()
        except BaseException as e:
            self.__exit__(type(e), e, e.__traceback__)
            raise
        return self

    def _install(self):
        # the users read the greeter socket, the FIFO, their logs under here
        os.chmod(self.tmp, 0o755)
        self.run_dir = os.path.join(self.tmp, 'sessiond')
        os.mkdir(self.run_dir, 0o755)
        # what the compositors' sanitizers read, readable by the users
        self.lsan_suppressions = os.path.join(self.tmp, 'lsan.supp')
        shutil.copyfile(LSAN_SUPPRESSIONS, self.lsan_suppressions)
        os.chmod(self.lsan_suppressions, 0o644)
        auth_hook = session_hook = ''
        if self.pam_hooks:
            self.pam_hook_log = os.path.join(self.tmp, 'pam-hook.log')
            hook = os.path.join(self.tmp, 'pam-hook')
            with open(hook, 'w') as f:
                f.write('#!/bin/sh\necho "$PAM_TYPE $PPID" >>%s\n' % self.pam_hook_log)
            os.chmod(hook, 0o755)
            # a FIFO while the test holds the gate: authentication waits on it
            self.pam_gate = os.path.join(self.tmp, 'pam-gate')
            gate_hook = os.path.join(self.tmp, 'pam-gate-hook')
            with open(gate_hook, 'w') as f:
                f.write('#!/bin/sh\n[ -p "$1" ] && timeout 60 sh -c \'read _ < "$1"\' sh "$1"\n'
                        'exit 0\n')
            os.chmod(gate_hook, 0o755)
            auth_hook = 'auth required pam_exec.so %s %s\n' % (gate_hook, self.pam_gate)
            session_hook = 'session required pam_exec.so %s\n' % hook
        with open(self.pam_path, 'w') as f:
            f.write('# slimland integration test %s: removed when it ends\n'
                    '%sauth required pam_unix.so\naccount required pam_unix.so\n'
                    '%ssession required pam_unix.so\npassword required pam_unix.so\n'
                    % (self.name, auth_hook, session_hook))
        self.made.append(('file', self.pam_path))
        status, out = passwd_tool(['useradd', '-r', '-M', '-d', '/nonexistent',
                                   '-s', '/usr/sbin/nologin', self.greeter_user])
        if status != 0:
            raise RuntimeError('useradd %s: %s' % (self.greeter_user, out))
        self.made.append(('user', self.greeter_user))
        self.pw = self._make_user(self.user)
        self.greeter_pw = pwd.getpwnam(self.greeter_user)
        self.uids = {self.pw.pw_uid, self.greeter_pw.pw_uid}
        for uid in self.uids:
            self._runtime_dir_made(uid)
        first, last = claim_uids()
        self.made.append(('uids', first))
        last = first + self.greeter_uid_count - 1 if self.greeter_uid_count else last
        self.greeter_uids = set(range(first, last + 1))
        self.uids |= self.greeter_uids
        self.port = free_udp_port()
        self.config_path = os.path.join(self.tmp, 'slimland.conf')
        with open(self.config_path, 'w') as f:
            f.write('listen = %s:%d\n' % (self.manager_host, self.port))
            f.write('startup = %s\n' % self.startup)
            f.write('greeter = %s\n' % self.greeter)
            f.write('greeter_user = %s\n' % self.greeter_user)
            f.write('greeter_uids = %d-%d\n' % (first, last))
            f.write('pam_service = %s\n' % self.service)
            f.write('slimland = %s\n' % self.slimland)
            # the host key, the card key, the enrolled consoles: the test's own
            f.write('key_dir = %s\n' % os.path.join(self.tmp, 'keys'))
            f.write('enroll = %s\n' % self.enroll)
            f.write('cgroup_slice = %s\n' % self.cgroup_slice)
            for line in self.extra_config:
                f.write(line + '\n')
        log('user %s (uid %d), greeter user %s (uid %d, greeters %d-%d), PAM service %s, '
            'manager on %s:%d' % (self.user, self.pw.pw_uid, self.greeter_user,
                                  self.greeter_pw.pw_uid, first, last, self.service,
                                  self.manager_host, self.port))

    def _make_user(self, user):
        """A user with a home and PASSWORD, removed at the end; its pwd entry."""
        status, out = passwd_tool(['useradd', '-m', '-s', '/bin/sh', user])
        if status != 0:
            raise RuntimeError('useradd %s: %s' % (user, out))
        self.made.append(('user', user))
        p = subprocess.run(['chpasswd'], input=('%s:%s\n' % (user, PASSWORD)).encode(),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if p.returncode != 0:
            raise RuntimeError('chpasswd: %s' % p.stdout.decode(errors='replace'))
        return pwd.getpwnam(user)

    def _runtime_dir_made(self, uid):
        d = '/run/user/%d' % uid
        if not os.path.exists(d):
            self.made.append(('runtime', d))

    def add_user(self, user):
        """Another user who may log in (with the first one's password), a
        run-unique name; removed at the end with the rest. Its pwd entry."""
        pw = self._make_user(user)
        self.uids.add(pw.pw_uid)
        self._runtime_dir_made(pw.pw_uid)
        return pw

    def hold_pam(self):
        """From now on a login's authentication waits (pam_hooks) until release_pam."""
        os.mkfifo(self.pam_gate, 0o600)

    def release_pam(self, timeout=10):
        """Lets the authentication that waits at the gate go on; fails
        unless one comes to wait there within the timeout."""
        opened = []
        # opening a FIFO to write returns once its reader, the hook, has it open
        t = threading.Thread(target=lambda: opened.append(os.open(self.pam_gate, os.O_WRONLY)),
                             daemon=True)
        t.start()
        t.join(scaled(timeout))
        if not opened:
            self.fail('no authentication came to wait at the PAM gate')
        os.write(opened[0], b'go\n')
        os.close(opened[0])
        os.unlink(self.pam_gate)

    def _kill_uids(self, uids):
        """Ends every process of these (test-made) users, by PID."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            pids = _pids_of(uids)
            if not pids:
                return
            signal_and_wait(pids, sig, 3.0)
            reap_orphans()

    def __exit__(self, exc_type, exc, tb):
        problems = []
        try:
            for console in self.consoles:
                if console.alive():
                    console.quit()
            if self.manager is not None:
                self.stop_manager()
            # the manager leaves sessions running when it stops: end them here
            self._kill_uids(self.uids)
            remove_userdb_records(self.greeter_uids)
            reports = self._copy_session_logs()
            if self.manager is not None:
                reports += ['%s: %s' % (self.manager.name, l)
                            for l in _sanitizer_report(self.manager.stderr.lines)]
            if reports:
                problems.append('sanitizer reports in the compositors\' logs:\n'
                                + '\n'.join(reports[:40]))
        except BaseException as e:  # cleaning up goes on whatever happened
            problems.append('cleaning up: %r' % e)
        for kind, what in reversed(self.made):
            try:
                if kind == 'file' and os.path.exists(what):
                    os.unlink(what)
                elif kind == 'user':
                    status, out = passwd_tool(['userdel', '-r', what])
                    # (userdel -r says the mail spool of a -M user is missing)
                    if status not in (0, 12):
                        problems.append('userdel %s: %s' % (what, out))
                elif kind == 'runtime' and os.path.isdir(what):
                    subprocess.run(['rm', '-rf', '--one-file-system', what])
                elif kind == 'uids':
                    release_uids(what)
            except OSError as e:
                problems.append('removing %s: %s' % (what, e))
        # the manager's slice (src/cgroup: SLICE/user-UID.slice/session-N and its classes)
        for root in cgroup_roots():
            top = os.path.join(root, self.cgroup_slice)
            if os.path.isdir(top):
                problems += ['cgroup ' + p for p in remove_cgroup_tree(top)]
        if problems:
            log('cleanup problems: ' + '; '.join(problems))
        super().__exit__(exc_type, exc, tb)
        if problems and exc_type is None:
            self.fail('cleanup: ' + '; '.join(problems))
        return False

    def _copy_session_logs(self):
        """The compositors' logs (RUN_DIR/log/USER/*.log) next to the test's;
        the sanitizer reports in them."""
        base = os.path.join(getattr(self, 'run_dir', ''), 'log')
        reports = []
        if not os.path.isdir(base):
            return reports
        for user in os.listdir(base):
            for name in os.listdir(os.path.join(base, user)):
                copy = '%s-%s' % (user, name)
                try:
                    with open(os.path.join(base, user, name), 'rb') as src, \
                            open(os.path.join(self.outdir, copy), 'wb') as dst:
                        data = src.read()
                        dst.write(data)
                except OSError:
                    continue
                lines = data.decode(errors='replace').splitlines()
                reports += ['%s: %s' % (copy, l) for l in _sanitizer_report(lines)]
        return reports

    # -- the manager
    def start_manager(self):
        argv = [self.sessiond, '--config', self.config_path, '--run-dir', self.run_dir, '-v']
        if self.host:
            argv = self.host.argv(argv)
        self.manager = Process('sessiond-%d' % self.n_managers, argv,
                               self.compositor_env(self.lsan_suppressions), self.outdir)
        self.n_managers += 1
        _, line = self.manager.stderr.wait(lambda l: 'slimland-sessiond: running' in l
                                           or 'ERROR' in l, 0, time.monotonic() + scaled(10))
        if line is None or 'running' not in line:
            self.fail('slimland-sessiond did not start: %s' % line)
        log('slimland-sessiond (pid %d) running' % self.manager.pid)
        return self.manager

    def stop_manager(self, sig=signal.SIGTERM):
        # its own PID only: the compositors it started must live on
        if self.manager.alive():
            self.manager.proc.send_signal(sig)
        status = self.manager.wait_exit(10)
        if status is None:
            self.manager.proc.kill()
        status = self.manager.finish()
        log('slimland-sessiond exited with status %s' % status)
        return status

    def manager_log_wait(self, text, start=0, timeout=15):
        """The index after the first manager log line containing text."""
        i, line = self.manager.stderr.wait(lambda l: text in l, start,
                                           time.monotonic() + scaled(timeout))
        if line is None:
            self.fail('the manager never logged "%s"' % text)
        return i + 1

    def ctl(self, *args, check=True):
        """slimlandctl's answer: (status, stdout lines, stderr)."""
        r = subprocess.run([self.slimlandctl, '--socket', os.path.join(self.run_dir, 'ctl.sock')]
                           + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=scaled(10))
        out = r.stdout.decode(errors='replace').splitlines()
        if check and r.returncode != 0:
            self.fail('slimlandctl %s: status %d: %s' % (' '.join(args), r.returncode,
                                                        r.stderr.decode(errors='replace')))
        return out

    def listing(self):
        """slimlandctl list as {('console'|'session', id): fields}."""
        table = {}
        for line in self.ctl('list'):
            f = line.split()
            if len(f) >= 2:
                table[(f[0], f[1])] = f
        return table

    def wait_ctl(self, predicate, what, timeout=20):
        """Polls slimlandctl list (nothing announces its changes) until
        predicate(listing) holds, with a bounded retry; returns the listing."""
        def listing():
            try:
                return self.listing()
            except subprocess.TimeoutExpired:
                return {}
        return wait_until(listing, scaled(timeout), lambda table: (
            'slimlandctl list to show %s; last:\n%s' % (
                what, '\n'.join(' '.join(v) for v in table.values()))),
            holds=predicate, fail=self.fail, pause=0.1)

    def wait_why(self, console_id, want, timeout=15):
        wait_until(lambda: self.ctl('why', console_id, check=False), scaled(timeout),
                   lambda out: 'slimlandctl why %s to say %r (it says %r)' % (
                       console_id, want, out),
                   holds=lambda out: out and out[0] == want, fail=self.fail, pause=0.1)

    def console_on(self, table, console_id):
        """(state, session id or None) of a console in a listing."""
        f = table.get(('console', console_id))
        if not f:
            return None, None
        return f[3], (f[4] if len(f) > 4 else None)

    def user_session(self, table, user=None):
        """The fields of the test user's (or that user's) session line, or None."""
        for key, f in table.items():
            if key[0] == 'session' and f[2] == (user or self.user):
                return f
        return None

    def wait_console_state(self, console_id, state, user_session=None, timeout=20, user=None):
        """Until the console is in `state` (greeter, session): with a
        greeter, the console's session must be a greeter session that is
        attached; with a session, the user's (or that user's) session,
        attached to it."""
        def ok(table):
            st, sid = self.console_on(table, console_id)
            if st != state or sid is None:
                return False
            sess = table.get(('session', sid))
            if not sess:
                return False
            if state == 'greeter':
                return sess[2] == self.greeter_user and sess[-1] == console_id
            return (sess[2] == (user or self.user) and sess[5] == 'attached'
                    and sess[-1] == console_id and (user_session is None or sid == user_session))
        return self.wait_ctl(ok, 'console %s on the %s' % (console_id, state), timeout)

    # -- consoles
    def approved_console(self, console_id, size, env=None, extra_args=(), host=None):
        """A new console, approved by the administrator, settled on its greeter's
        form (what it types then reaches the form); host: a slimnet.Host it runs in."""
        console = self.start_managed_console(console_id, size, env=env, extra_args=extra_args,
                                             host=host)
        console.wait_for('manager refused pending', 15)
        self.ctl('approve', console.id)
        console.wait_for('attached', 20)
        self.wait_console_state(console.id, 'greeter', timeout=30)
        # the compositor's screen comes before the greeter's window does
        self.wait_screen(lambda img: fraction_not(img, BACKGROUND) > 0.5, 'the greeter window',
                         timeout=30, console=console)
        self.settled(console=console, quiet=0.5)
        return console

    def log_in(self, console, user=None):
        """The user (or another one, add_user) logs in at the console's
        greeter; the session's row (list)."""
        user = user or self.user
        mark = self.manager.stderr.mark()
        console.type_text(user + '\n' + PASSWORD + '\n')
        self.manager_log_wait('%s logged in' % user, mark)
        table = self.wait_console_state(console.id, 'session', timeout=30, user=user)
        return self.user_session(table, user)

    def choose(self, console, n):
        """The person at the console's greeter picks the nth (from 0) button of
        the choice it offers (its function key: F1 the first)."""
        console.tap(KEY_F1 + n)

    def why(self, console_id):
        """`slimlandctl why`: (reason, message, [labels]) of the console's greeter."""
        lines = self.ctl('why', console_id, check=False) or ['']
        message = next((l[8:] for l in lines[1:] if l.startswith('message ')), '')
        labels = next((l[7:].split('|') for l in lines[1:] if l.startswith('choice ')), [])
        return lines[0], message, labels

    def start_managed_console(self, console_id, size, card_reader='stdin', env=None, name=None,
                              host=None, extra_args=()):
        """A console of the manager's; host: a slimnet.Host it runs in."""
        endpoint = ['--manager', '%s:%d' % (self.manager_host, self.port),
                    '--card-reader=' + card_reader]
        console = Console(self, None, size, console_id, name or 'console-' + console_id,
                          endpoint=endpoint, env=env, host=host, extra_args=extra_args)
        self.consoles.append(console)
        return console

    def greeter_pid(self, console_id):
        """The PID of the compositor of the greeter the console shows (waited for)."""
        table = self.wait_console_state(console_id, 'greeter')
        _, sid = self.console_on(table, console_id)
        return int(table[('session', sid)][3])

    def greeter_uid(self, console_id):
        """The uid of the greeter the console shows (one of greeter_uids)."""
        pid = self.greeter_pid(console_id)
        with open('/proc/%d/status' % pid) as f:
            uid = int([l for l in f if l.startswith('Uid:')][0].split()[1])
        if uid not in self.greeter_uids:
            self.fail('%s\'s greeter (%d) runs as uid %d, none of greeter_uids' % (
                console_id, pid, uid))
        return uid

    def greeter_runtime(self, console_id):
        """The runtime directory of the greeter the console shows: RUN_DIR/greeter-UID."""
        return os.path.join(self.run_dir, 'greeter-%d' % self.greeter_uid(console_id))

    # -- the users' processes
    def processes_of(self, uids):
        """{pid: (pidfd, name)} of every process of the user (a uid, or a
        set of them) now, for wait_gone."""
        procs = {}
        for pid in _pids_of({uids} if isinstance(uids, int) else set(uids)):
            try:
                fd = os.pidfd_open(pid)
            except OSError:
                continue  # gone already
            try:
                with open('/proc/%d/comm' % pid) as f:
                    name = f.read().strip()
            except OSError:
                name = '?'
            procs[pid] = (fd, name)
        return procs

    def wait_gone(self, procs, what, timeout=15):
        """Every process of procs (processes_of) ends, each pidfd telling when;
        closes them."""
        try:
            left = wait_pidfds({fd: (pid, name) for pid, (fd, name) in procs.items()},
                               scaled(timeout))
        finally:
            for fd, _ in procs.values():
                os.close(fd)
        if left:
            self.fail('%s: still running: %s' % (what, ', '.join(
                '%s (%d)' % (name, pid) for pid, name in sorted(left.values()))))

    # -- the compositors' logs and screens
    def compositor_log(self, user, log_name):
        """A compositor's log lines (RUN_DIR/log/USER/LOG_NAME.log)."""
        path = os.path.join(self.run_dir, 'log', user, log_name + '.log')
        try:
            with open(path, errors='replace') as f:
                return f.read().splitlines()
        except OSError:
            return []

    def compositor_display(self, user, log_name):
        """A compositor's WAYLAND_DISPLAY, from its log (the latest one there)."""
        display = None
        for line in self.compositor_log(user, log_name):
            if 'WAYLAND_DISPLAY=' in line:
                display = line.split('WAYLAND_DISPLAY=', 1)[1].strip()
        if display is None:
            self.fail('no WAYLAND_DISPLAY in %s/%s.log' % (user, log_name))
        return display

    def assert_no_xwayland(self, user, log_name):
        """The compositor never started Xwayland: no X11 program ran in it."""
        started = xwayland_started(self.compositor_log(user, log_name))
        if started:
            self.fail('%s/%s started Xwayland with no X11 program: %s' % (user, log_name,
                                                                         started[0]))

    def grim_of(self, runtime_dir, display):
        path = self.shot_path('grim')
        env = self._env()
        env.update({'XDG_RUNTIME_DIR': runtime_dir, 'WAYLAND_DISPLAY': display})
        r = subprocess.run(['grim', path], env=env, capture_output=True, timeout=scaled(15))
        if r.returncode != 0:
            self.fail('grim on %s/%s failed: %s' % (runtime_dir, display,
                                                     r.stderr.decode(errors='replace')))
        return _rgb(path)

    def assert_shows(self, console, runtime_dir, display, attempts=30):
        """The console shows what that compositor renders, byte for byte."""
        why = None
        for attempt in range(attempts):
            g = self.grim_of(runtime_dir, display)
            mark = console.mark()
            c = self.console_image(console)
            why = images_equal(g, c)
            if why is None:
                log('%s shows %s/%s (%dx%d) after %d attempt(s)' % (
                    console.name, runtime_dir, display, g.size[0], g.size[1], attempt + 1))
                return g
            console.next_frame(scaled(0.5), start=mark)
        gpath = os.path.join(self.outdir, 'unequal-grim.png')
        cpath = os.path.join(self.outdir, 'unequal-%s.png' % console.name)
        g.save(gpath)
        c.save(cpath)
        self.fail('%s does not show %s/%s: %s (%s, %s)' % (console.name, runtime_dir, display,
                                                          why, gpath, cpath))


