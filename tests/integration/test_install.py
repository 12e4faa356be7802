"""`meson install` onto a Debian server booted with systemd: what an
administrator does (data/ADMIN.md, Installing), and then a person's login.

A Debian bookworm tree (debootstrapped once by .ci/install-deps, with the
packages of install-tree.txt) is laid under an overlay of this run's own,
the build installed into it (`meson install --destdir`), a user made in
it, and the tree booted with systemd-nspawn in a network namespace of the
run (slimnet.py). Inside, as on a server: what `meson install` runs on a
live system (data/post-install.sh: systemd-sysusers, systemd-tmpfiles
--create, daemon-reload), `slimland-sessiond --check-config` of the
configuration that made, then `systemctl enable --now slimland-sessiond`. The unit must
run the installed manager with its cgroup tree delegated, the example
configuration must have become /etc/slimland/slimland.conf, and an
installation again must leave an edited one as it is.

A console on another host of the LAN (the build's slimland-console) asks
the manager in the container for a greeter; the administrator approves it
with the installed slimlandctl; the installed greeter's form takes the
user's name and password (PAM, the installed service); the installed
default session shows its panel on the console; "Log out" on the panel
brings the greeter back and ends every process of the user.

Everything is this run's: the overlay and its mount, the container
(its machine name), the namespaces. What a killed run left is swept by
the next (slimrun.py: its processes, namespaces, mounts and directories).
"""
import hashlib
import os
import subprocess
import time

from slimnet import Lan
from slimproc import Console, Process
from slimtest import (BACKGROUND, BTN_LEFT, Session, TestFailure, TestSkip, fraction_not, log,
                      require_programs, run, scaled, unique_name, wait_until)
import slimrun

HERE = os.path.dirname(os.path.abspath(__file__))
TREE_LIST = os.path.join(HERE, 'install-tree.txt')
TREE_CACHE = '/var/cache/slimland/install-tree'
POST_INSTALL = os.path.join(HERE, '..', '..', 'data', 'post-install.sh')
USER = unique_name('inst')
PASSWORD = 'Install-pass.42'
SIZE = (1024, 768)
PANEL_H = 28
PANEL = (0x1d, 0x25, 0x30)
SANE_PATH = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'


def cached_tree():
    """The debootstrapped tree of install-tree.txt, as .ci/install-deps made it."""
    with open(TREE_LIST, 'rb') as f:
        tree = os.path.join(TREE_CACHE, hashlib.sha256(f.read()).hexdigest()[:16])
    if not os.path.exists(os.path.join(tree, '.complete')):
        raise TestFailure('no Debian tree for the install test in %s: run .ci/install-deps '
                          '(it debootstraps the packages of %s)' % (tree, TREE_LIST))
    return tree


def sh(argv, what, input=None):
    r = subprocess.run(argv, input=input, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=scaled(120))
    if r.returncode != 0:
        raise TestFailure('%s: exit status %d: %s' % (what, r.returncode,
                                                      r.stdout.decode(errors='replace')))
    return r.stdout.decode(errors='replace')


class Container:
    """The tree under an overlay of the run's, booted with systemd-nspawn
    in the network namespace `netns`."""

    def __init__(self, session, tree, netns):
        self.session = session
        self.tree = tree
        self.netns = netns
        self.name = unique_name('install')
        self.dir = slimrun.mkdtemp('install')
        self.root = os.path.join(self.dir, 'root')
        self.nspawn = None
        self.leader = None
        self.mounted = False

    def __enter__(self):
        upper, work = os.path.join(self.dir, 'upper'), os.path.join(self.dir, 'work')
        for d in (upper, work, self.root):
            os.mkdir(d)
        sh(['mount', '-t', 'overlay', self.name, '-o', 'lowerdir=%s,upperdir=%s,workdir=%s' % (
            self.tree, upper, work), self.root], 'mount the overlay')
        self.mounted = True
        return self

    def chroot(self, *argv, input=None):
        return sh(['chroot', self.root, 'env', '-i', SANE_PATH] + list(argv),
                  'chroot ' + ' '.join(argv), input=input)

    def boot(self):
        argv = ['systemd-nspawn', '--quiet', '--boot', '--directory', self.root,
                '--machine', self.name, '--register=no', '--keep-unit', '--console=pipe',
                '--network-namespace-path=/run/netns/' + self.netns]
        self.nspawn = Process('nspawn', argv, dict(os.environ), self.session.outdir)
        self.leader = wait_until(self._find_leader, scaled(30), 'the container\'s systemd')
        # until its bus is up, systemctl cannot ask ("offline" while systemd's
        # socket is not there yet, early in the boot); then it waits for the boot
        state = wait_until(lambda: self.run('systemctl', 'is-system-running', '--wait',
                                            check=False).strip(), scaled(90),
                           'the container\'s systemd to answer', pause=0.1,
                           holds=lambda out: 'Failed to connect to bus' not in out and
                           out != 'offline')
        log('the container booted: %s' % state)
        if state not in ('running', 'degraded'):
            raise TestFailure('the container did not boot: %s' % state)

    def _find_leader(self):
        if not self.nspawn.alive():
            raise TestFailure('systemd-nspawn exited with status %s: %s' % (
                self.nspawn.proc.poll(), '\n'.join(self.nspawn.stderr.tail(20))))
        mine = os.readlink('/proc/self/ns/pid')
        todo = [self.nspawn.pid]
        while todo:
            pid = todo.pop()
            try:
                with open('/proc/%d/task/%d/children' % (pid, pid)) as f:
                    todo += [int(c) for c in f.read().split()]
                if os.readlink('/proc/%d/ns/pid' % pid) != mine:
                    with open('/proc/%d/comm' % pid) as f:
                        if f.read().strip() == 'systemd':
                            return pid
            except (FileNotFoundError, ProcessLookupError):
                continue
        return None

    def run(self, *argv, check=True, input=None):
        """argv inside the booted container, as root; its output."""
        full = ['nsenter', '-t', str(self.leader), '-m', '-u', '-i', '-n', '-p', '-C', '-r',
                '-w', '--', 'env', '-i', SANE_PATH] + list(argv)
        if check:
            return sh(full, ' '.join(argv), input=input)
        r = subprocess.run(full, input=input, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=scaled(120))
        return r.stdout.decode(errors='replace')

    def logs(self):
        """The container's journal and the manager's logs of its greeters and
        sessions (RUN_DIR/log), one text."""
        return self.run('sh', '-c', 'journalctl -o short-monotonic; '
                        'tail -n +1 /run/slimland/log/*/*.log', check=False)

    def __exit__(self, *exc):
        if self.nspawn is not None:
            if self.leader and self.nspawn.alive():
                with open(os.path.join(self.session.outdir, 'container.log'), 'w') as f:
                    f.write(self.logs())
                # poweroff; nspawn exits when the container has
                subprocess.run(['kill', '-RTMIN+4', str(self.leader)])
            if self.nspawn.wait_exit(30) is None:
                self.nspawn.proc.kill()
            self.nspawn.finish()
        if self.mounted:
            subprocess.run(['umount', self.root])
        subprocess.run(['rm', '-rf', '--one-file-system', self.dir])
        # what nspawn leaves without machined
        subprocess.run(['rm', '-rf', '/run/systemd/nspawn/propagate/' + self.name])
        return False


def meson_install(root):
    build = os.environ.get('SLIMLAND_BUILD_ROOT', '')
    sh(['meson', 'install', '-C', build, '--no-rebuild', '--quiet', '--destdir', root],
       'meson install')


def listing(c):
    """slimlandctl list as {('console'|'session', id): fields}."""
    return {(f[0], f[1]): f for f in (l.split() for l in c.run('slimlandctl', 'list').splitlines())
            if len(f) >= 2}


def console_state(c, console_id):
    f = listing(c).get(('console', console_id))
    return f[3] if f and len(f) > 3 else None


def test():
    if os.geteuid() != 0:
        raise TestSkip('needs root (mount, systemd-nspawn, network namespaces)')
    require_programs('systemd-nspawn', 'nsenter', 'chroot', 'meson', 'yambar', 'foot')
    if not os.path.isdir(os.environ.get('SLIMLAND_BUILD_ROOT', '')):
        raise TestSkip('SLIMLAND_BUILD_ROOT is not set to the build directory')
    tree = cached_tree()
    t0 = time.monotonic()
    with Lan('install') as lan, Session('install', console=False, compositor=False) as s:
        srv, desk = lan.host('srv', 1), lan.host('desk', 2)
        with Container(s, tree, srv.ns) as c:
            meson_install(c.root)
            c.chroot('useradd', '-m', '-s', '/bin/sh', USER)
            c.chroot('chpasswd', input=('%s:%s\n' % (USER, PASSWORD)).encode())
            c.boot()
            log('installed and booted in %.1fs' % (time.monotonic() - t0))

            # what `meson install` runs on a live system (with no DESTDIR), then
            # the administrator
            with open(POST_INSTALL, 'rb') as f:
                c.run('sh', '-s', '/usr/local/lib/sysusers.d/slimland.conf',
                      '/usr/local/lib/tmpfiles.d/slimland.conf', input=f.read())
            # (its greeter_user must exist: sysusers made it)
            c.run('slimland-sessiond', '--check-config')
            mode = c.run('stat', '-c', '%a %U', '/var/lib/slimland').strip()
            if mode != '700 root':
                s.fail('/var/lib/slimland is %s, not 700 root\'s' % mode)
            with open(os.path.join(c.root, 'etc/slimland/slimland.conf')) as f, \
                    open(os.path.join(c.root, 'usr/local/share/slimland/slimland.conf')) as g:
                if f.read() != g.read():
                    s.fail('/etc/slimland/slimland.conf is not the installed example')
            # the administrator's own setting survives an installation again
            with open(os.path.join(c.root, 'etc/slimland/slimland.conf'), 'a') as f:
                f.write('\n# this server\'s own\nconsole_timeout = 31\n')
            meson_install(c.root)
            c.run('systemd-tmpfiles', '--create')
            with open(os.path.join(c.root, 'etc/slimland/slimland.conf')) as f:
                if 'console_timeout = 31' not in f.read():
                    s.fail('installing again overwrote /etc/slimland/slimland.conf')
            c.run('systemctl', 'enable', '--now', 'slimland-sessiond')
            show = dict(l.split('=', 1) for l in c.run(
                'systemctl', 'show', 'slimland-sessiond', '-p', 'ActiveState', '-p', 'Delegate',
                '-p', 'ExecMainPID', '-p', 'UnitFileState').splitlines() if '=' in l)
            log('slimland-sessiond.service: %s' % show)
            if show.get('Delegate') != 'yes' or show.get('UnitFileState') != 'enabled':
                s.fail('the unit is not as installed: %s' % show)
            exe = c.run('readlink', '/proc/%s/exe' % show.get('ExecMainPID', '0')).strip()
            if exe != '/usr/local/sbin/slimland-sessiond':
                s.fail('the unit runs %r, not the installed manager' % exe)
            key = wait_until(lambda: c.run('journalctl', '-u', 'slimland-sessiond', '-o', 'cat',
                                           check=False),
                             scaled(30), 'the manager to say its host key',
                             holds=lambda out: 'host key sha256:' in out, pause=0.2)
            log('the manager runs: %s' % [l for l in key.splitlines() if 'host key' in l])

            # a console on the LAN; the administrator approves it
            a = Console(s, None, SIZE, 'inst-a', 'console-inst-a', host=desk,
                        endpoint=['--manager', srv.addr + ':5550', '--card-reader=stdin'])
            s.consoles.append(a)
            a.wait_for('manager refused pending', 30)
            c.run('slimlandctl', 'approve', a.id)
            a.wait_for('attached', 30)
            wait_until(lambda: console_state(c, a.id), scaled(60),
                       'the console on its greeter', holds=lambda st: st == 'greeter', pause=0.2)
            s.wait_screen(lambda img: fraction_not(img, BACKGROUND) > 0.5, 'the greeter window',
                          timeout=60, console=a)
            s.settled(console=a, quiet=0.5)
            log('the greeter shows at %.1fs' % (time.monotonic() - t0))

            # a login through the installed PAM service, into the default session
            a.type_text(USER + '\n' + PASSWORD + '\n')
            wait_until(lambda: console_state(c, a.id), scaled(60), 'the console on a session',
                       holds=lambda st: st == 'session', pause=0.2)

            def panel_and_terminal(img):
                row = [img.getpixel((x, PANEL_H // 2)) for x in range(0, SIZE[0], 2)]
                return (sum(1 for p in row if p != PANEL) > 20 and
                        fraction_not(img, BACKGROUND) > 0.3)
            s.wait_screen(panel_and_terminal, 'the panel and the terminal', console=a,
                          timeout=60)
            s.settled(console=a, quiet=0.5)
            uid = c.run('id', '-u', USER).strip()
            procs = c.run('pgrep', '-l', '-u', uid, check=False).split()
            if 'slimland' not in procs or 'foot' not in procs or 'yambar' not in procs:
                s.fail('the session runs no slimland, foot and yambar: %s' % procs)
            log('logged in at %.1fs: %s' % (time.monotonic() - t0, ' '.join(procs[1::2])))

            # "Log out" on the panel: the greeter again, nothing of the user runs
            a.motion(SIZE[0] - 20, PANEL_H // 2)
            a.click(BTN_LEFT)
            wait_until(lambda: console_state(c, a.id), scaled(60), 'the console on its greeter',
                       holds=lambda st: st == 'greeter', pause=0.2)
            wait_until(lambda: c.run('pgrep', '-u', uid, check=False).split(), scaled(30),
                       lambda left: 'the user\'s processes to end: %s' % left,
                       holds=lambda left: not left, pause=0.2)
            reports = [l for l in c.logs().splitlines()
                       if 'ERROR: AddressSanitizer' in l or 'runtime error:' in l]
            if reports:
                s.fail('sanitizer reports in the container (container.log): %s' % reports[:5])
            log('logged out at %.1fs: the greeter again, nothing of %s runs' % (
                time.monotonic() - t0, USER))


run(test)
