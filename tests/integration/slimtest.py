"""
Integration test harness: one slimland session (compositor, console, clients)
per test, in a private runtime directory, driven through the console's
--control protocol.

    with Session('name') as s:
        echo = s.start_client([s.slim_echo], wait_line='ready')
        s.tap(KEY_A)
        s.assert_screens_equal()

Every wait is on an event (a console line, a client line, a process exit)
with a bounded timeout; a timeout fails the test with the tails of the logs.
Each test writes its logs and, on failure, its screenshots under
$SLIMTEST_OUTDIR/NAME (default: ./integration-output/NAME).

Environment: SLIMLAND, SLIMLAND_CONSOLE, SLIM_ECHO (the programs under test),
SLIMTEST_TIMEOUT_SCALE (multiplies every timeout; sanitizer builds are slower).

Each test process is a run of its own (slimrun.py): whatever it makes in
the machine's shared namespaces is named with unique_name('label'), and
what a killed run left behind is swept when the next one starts.
"""
import contextlib
import os
import shutil
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback

import slimrun

try:
    from PIL import Image, ImageChops
except ImportError:  # a missing dependency is a failure, not a skip
    Image = ImageChops = None

SKIP = 77

BACKGROUND = (0x33, 0x40, 0x50)

# evdev codes (linux/input-event-codes.h)
KEY_ESC = 1
KEY_MINUS = 12
KEY_ENTER = 28
KEY_LEFTSHIFT = 42
KEY_DOT = 52
KEY_SLASH = 53
KEY_LEFTALT = 56
KEY_SPACE = 57
KEY_A = 30
BTN_LEFT = 272
BTN_RIGHT = 273

_LETTERS = {
    'q': 16, 'w': 17, 'e': 18, 'r': 19, 't': 20, 'y': 21, 'u': 22, 'i': 23, 'o': 24, 'p': 25,
    'a': 30, 's': 31, 'd': 32, 'f': 33, 'g': 34, 'h': 35, 'j': 36, 'k': 37, 'l': 38,
    'z': 44, 'x': 45, 'c': 46, 'v': 47, 'b': 48, 'n': 49, 'm': 50,
}
_DIGITS = {'1': 2, '2': 3, '3': 4, '4': 5, '5': 6, '6': 7, '7': 8, '8': 9, '9': 10, '0': 11}

# character -> (evdev code, shift), us layout
KEYMAP_US = {' ': (KEY_SPACE, False), '-': (KEY_MINUS, False), '.': (KEY_DOT, False),
             '/': (KEY_SLASH, False), '>': (KEY_DOT, True), '$': (5, True),
             '_': (KEY_MINUS, True), '!': (2, True), '&': (8, True), '(': (10, True),
             ')': (11, True), '\n': (KEY_ENTER, False)}
for _c, _k in _LETTERS.items():
    KEYMAP_US[_c] = (_k, False)
    KEYMAP_US[_c.upper()] = (_k, True)
for _c, _k in _DIGITS.items():
    KEYMAP_US[_c] = (_k, False)

TIMEOUT_SCALE = float(os.environ.get('SLIMTEST_TIMEOUT_SCALE', '1'))


def scaled(seconds):
    return seconds * TIMEOUT_SCALE


class TestFailure(Exception):
    pass


class TestSkip(Exception):
    pass


def log(msg):
    print('[%8.3f] %s' % (time.monotonic() - _T0, msg), flush=True)


_T0 = time.monotonic()


def _raise_failure(message):
    raise TestFailure(message)


def wait_until(ask, timeout, what, holds=None, fail=_raise_failure, pause=0.05):
    """The first answer of ask() that holds (holds(answer), by default
    anything but None and False), asked again until `timeout` seconds
    have passed. Between two asks: `pause` seconds, where nothing tells
    when to ask again (a listing, a file that grows), or pause(seconds
    left) where something does (Console.frame_pause). At the deadline it
    fails, through fail (a Session's adds the logs), saying what it
    waited for: `what`, or what(last answer); with what=None it returns
    None instead."""
    deadline = time.monotonic() + timeout
    while True:
        answer = ask()
        if holds(answer) if holds else answer is not None and answer is not False:
            return answer
        left = deadline - time.monotonic()
        if left <= 0:
            break
        if callable(pause):
            pause(left)
        else:
            time.sleep(min(pause, left))
    if what is None:
        return None
    return fail('waited %gs for %s' % (timeout, what(answer) if callable(what) else what))


def require_programs(*names):
    """Skips the test (exit 77) when a program it needs is not installed."""
    missing = [n for n in names if not (os.path.isabs(n) and os.access(n, os.X_OK))
               and not shutil.which(n)]
    if missing:
        raise TestSkip('missing program(s): ' + ', '.join(missing))


def rss_kb(pid):
    """A process's resident memory in kB."""
    with open('/proc/%d/status' % pid) as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1])
    raise RuntimeError('no VmRSS for process %d' % pid)


def free_udp_port():
    """A UDP port on loopback the kernel just handed out (free unless raced)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


class _LineLog:
    """Lines of a pipe, read by a thread, kept in a list and copied to a file."""

    def __init__(self, pipe, path, first_lines=()):
        self.lines = list(first_lines)
        self.times = [time.monotonic()] * len(self.lines)  # when each line was read
        self.cond = threading.Condition()
        self.closed = False
        self.file = open(path, 'a', encoding='utf-8', errors='replace')
        for line in self.lines:
            self.file.write(line + '\n')
        self.file.flush()
        self.thread = threading.Thread(target=self._run, args=(pipe,), daemon=True)
        self.thread.start()

    def _run(self, pipe):
        for raw in pipe:
            line = raw.decode('utf-8', 'replace').rstrip('\n')
            with self.cond:
                self.lines.append(line)
                self.times.append(time.monotonic())
                # a process's children may hold the pipe after finish()
                if not self.file.closed:
                    self.file.write(line + '\n')
                    self.file.flush()
                self.cond.notify_all()
        with self.cond:
            self.closed = True
            self.cond.notify_all()
        pipe.close()

    def mark(self):
        with self.cond:
            return len(self.lines)

    def since(self, mark):
        with self.cond:
            return list(self.lines[mark:])

    def time_of(self, i):
        """time.monotonic() when line i was read."""
        with self.cond:
            return self.times[i]

    def tail(self, n=40):
        with self.cond:
            return list(self.lines[-n:])

    def wait(self, match, start, deadline):
        """Index and line of the first line from `start` on for which match(line)
        is true, or (None, None) at the deadline or when the pipe closed."""
        with self.cond:
            i = start
            while True:
                while i < len(self.lines):
                    if match(self.lines[i]):
                        return i, self.lines[i]
                    i += 1
                left = deadline - time.monotonic()
                if self.closed or left <= 0:
                    return None, None
                self.cond.wait(left)

    def finish(self, timeout=5):
        self.thread.join(timeout)
        with self.cond:
            self.file.close()


class Process:
    """A child with its stderr (and stdout unless given a file) in logs."""

    def __init__(self, name, argv, env, outdir, stdout_lines=False, cwd=None):
        self.name = name
        self.argv = argv
        self.stdout_path = os.path.join(outdir, name + '.stdout.log')
        self.stderr_path = os.path.join(outdir, name + '.stderr.log')
        out = subprocess.PIPE if stdout_lines else open(self.stdout_path, 'ab')
        try:
            self.proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.PIPE,
                                         stdout=out, stderr=subprocess.PIPE,
                                         start_new_session=True)
        finally:
            if out is not subprocess.PIPE:
                out.close()
        self.stdout = _LineLog(self.proc.stdout, self.stdout_path) if stdout_lines else None
        self.stderr = _LineLog(self.proc.stderr, self.stderr_path)

    @property
    def pid(self):
        return self.proc.pid

    def alive(self):
        return self.proc.poll() is None

    def wait_line(self, text, timeout=10):
        """Waits for a stdout line starting with `text`."""
        _, line = self.stdout.wait(lambda l: l.startswith(text), 0,
                                   time.monotonic() + scaled(timeout))
        if line is None:
            raise TestFailure('%s: no "%s" line within %gs (exit status %s); stderr:\n%s' % (
                self.name, text, scaled(timeout), self.proc.poll(),
                '\n'.join(self.stderr.tail(20))))
        return line

    def wait_exit(self, timeout=10):
        """Waits for the child itself to exit; returns its status, None on timeout."""
        try:
            return self.proc.wait(scaled(timeout))
        except subprocess.TimeoutExpired:
            return None

    def send_signal(self, sig):
        if self.alive():
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                pass

    def stop(self, sig=signal.SIGTERM, timeout=5):
        """Ends the child's process group; returns the child's exit status."""
        if self.alive():
            self.send_signal(signal.SIGCONT)
            self.send_signal(sig)
            try:
                self.proc.wait(scaled(timeout))
            except subprocess.TimeoutExpired:
                self.send_signal(signal.SIGKILL)
                self.proc.wait()
        else:
            # what it left behind in its group (a forked server, a shell)
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        return self.finish()

    def finish(self):
        status = self.proc.wait()
        if self.proc.stdin:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
        self.stderr.finish()
        if self.stdout:
            self.stdout.finish()
        return status


LSAN_SUPPRESSIONS = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'lsan.supp')


def _join_options(current, extra):
    """Sanitizer options: `extra` added to what the environment already says."""
    return extra if not current else current + ':' + extra


def _become_subreaper():
    """Orphans of the session (a forked wl-copy, a terminal's shell) become
    our children, to be reaped here rather than left as zombies."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


_become_subreaper()
# The run's tag, claimed before any child starts: they all carry it (SLIMTEST_RUN).
slimrun.tag()
unique_name = slimrun.unique_name


def xwayland_started(lines):
    """The lines of a compositor's log saying that it started Xwayland (which it
    does only for an X11 program: a GTK program finding no session bus is one,
    as it starts a bus through X11 where dbus-x11 is installed)."""
    return [l for l in lines if 'Starting Xwayland' in l or 'xwayland: ready' in l]


def _sanitizer_report(lines):
    return [l for l in lines if 'runtime error:' in l or 'AddressSanitizer' in l
            or 'LeakSanitizer' in l or 'UndefinedBehaviorSanitizer' in l]


class Compositor(Process):
    def __init__(self, session, port, size, extra_args=()):
        argv = list(session.compositor_prefix) + [
            session.slimland, '--listen', '%s:%d' % (session.listen_host, port),
            '--size', '%dx%d' % size] + session.transport_args + list(extra_args)
        if not session.audio:
            argv.append('--no-audio')
        self.port = port
        self.display = None
        super().__init__('slimland-%d' % session.n_compositors, argv, session.compositor_env(),
                         session.outdir)
        session.n_compositors += 1
        _, line = self.stderr.wait(lambda l: 'WAYLAND_DISPLAY=' in l, 0,
                                   time.monotonic() + scaled(15))
        if line is None:
            status = self.stop(signal.SIGKILL)
            raise TestFailure('slimland did not start (exit status %s):\n%s' % (
                status, '\n'.join(self.stderr.tail(30))))
        self.display = line.split('WAYLAND_DISPLAY=', 1)[1].strip()
        x11 = [l for l in self.stderr.since(0) if 'X11 programs use DISPLAY=' in l]
        self.x11_display = x11[0].split('DISPLAY=', 1)[1].strip() if x11 else None
        # its session bus, which its own children find in their environment (none:
        # an address that names none, as theirs says then)
        bus = [l for l in self.stderr.since(0) if 'DBUS_SESSION_BUS_ADDRESS=' in l]
        self.bus_address = (bus[0].split('DBUS_SESSION_BUS_ADDRESS=', 1)[1].strip() if bus
                            else 'disabled:')

    def log_since(self, mark):
        return self.stderr.since(mark)


class Console(Process):
    """slimland-console --control: commands on stdin, events on stdout.

    Each console has a state directory of its own, named after `console_id`
    (the test's name for it), so its own key: `id` is the console's real id,
    derived from that key, as the servers know it."""

    def __init__(self, session, port, size, console_id, name, endpoint=None, env=None,
                 extra_args=(), host=None):
        """endpoint: the arguments that say where to go, instead of --server
        HOST:PORT, the session's listen_host (e.g. ['--manager',
        '127.0.0.1:5550']); env: more environment; host: a slimnet.Host to
        run in, instead of the session's console_prefix."""
        self.state_dir = session.console_state_dir(console_id)
        endpoint = endpoint or ['--server', '%s:%d' % (session.listen_host, port)]
        prefix = host.argv([]) if host else list(session.console_prefix)
        argv = prefix + [session.slimland_console] + endpoint + [
                '--output', 'headless', '--size', '%dx%d' % size,
                '--state-dir', self.state_dir, '--control'] + session.transport_args + \
            list(extra_args)
        if '--audio' not in extra_args:
            # the console's sound stays out of the session's own PipeWire,
            # which it would find in the shared runtime directory
            argv += ['--audio', 'none']
        self.session = session
        self.size = size
        self.console_id = console_id
        self.pos = 0  # lines before this one were consumed by wait_for
        console_env = session.console_env()
        console_env.update(env or {})
        super().__init__(name, argv, console_env, session.outdir, stdout_lines=True)
        # a huge screen (the attack tests' 8192x8192) takes seconds to set up under ASan
        self.id = self.wait_for('id ', 10 + size[0] * size[1] // 2000000).split()[1]

    # -- events
    def mark(self):
        return self.stdout.mark()

    def wait_for(self, prefix, timeout=10, start=None, allow_errors=False):
        """The first line starting with `prefix` from `start` (default: the
        first line not yet consumed); consumes up to it, and notes in
        last_at when it was read. Fails on timeout, and on an `error` line
        unless allow_errors."""
        start = self.pos if start is None else start

        def match(line):
            return line.startswith(prefix) or (not allow_errors and line.startswith('error'))

        i, line = self.stdout.wait(match, start, time.monotonic() + scaled(timeout))
        if line is None:
            self.session.fail('%s: no "%s" line within %gs' % (self.name, prefix,
                                                               scaled(timeout)))
        self.pos = max(self.pos, i + 1)
        self.last_at = self.stdout.time_of(i)
        if not line.startswith(prefix):
            self.session.fail('%s said "%s" while waiting for "%s"' % (self.name, line, prefix))
        return line

    def next_frame(self, timeout, start=None):
        """The first `frame` line from `start` on, or None after `timeout` seconds
        (not scaled: this is for short, optional waits)."""
        start = self.pos if start is None else start
        i, line = self.stdout.wait(lambda l: l.startswith('frame '), start,
                                   time.monotonic() + timeout)
        if line is not None:
            self.pos = max(self.pos, i + 1)
        return line

    def association(self):
        """The association of the console's latest `attached` line."""
        attached = [l for l in self.stdout.since(0) if l.startswith('attached ')]
        if not attached:
            self.session.fail('%s never attached' % self.name)
        return int(attached[-1].split()[1])

    def frame_pause(self, longest):
        """A pause for wait_until: until the console's next frame (at once
        if one came since the last ask began), at most `longest` seconds."""
        mark = self.mark()

        def pause(left):
            nonlocal mark
            self.next_frame(min(longest, left), start=mark)
            mark = self.mark()
        return pause

    def frames_since(self, mark):
        return [l for l in self.stdout.since(mark) if l.startswith('frame ')]

    # -- commands
    def cmd(self, line):
        if not self.alive():
            self.session.fail('%s exited (status %s) before "%s"' % (
                self.name, self.proc.poll(), line))
        try:
            self.proc.stdin.write((line + '\n').encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            self.session.fail('%s: stdin closed before "%s"' % (self.name, line))

    def request(self, line, reply_prefix, timeout=10):
        mark = self.mark()
        self.cmd(line)
        return self.wait_for(reply_prefix, timeout, start=mark)

    def stats(self):
        line = self.request('stats', 'stats ')
        return {k: int(v) for k, v in (w.split('=', 1) for w in line.split()[1:])}

    def audio_stats(self):
        """The console's sound figures (a console that plays sound)."""
        line = self.request('stats', 'audio datagrams=')
        return {k: int(v) for k, v in (w.split('=', 1) for w in line.split()[1:])}

    def sync(self):
        return int(self.request('sync', 'sync ').split()[1])

    def screenshot(self, path):
        self.request('screenshot ' + path, 'screenshot ')
        return path

    def key(self, code, down):
        self.cmd('key %d %d' % (code, 1 if down else 0))

    def tap(self, code):
        self.key(code, True)
        self.key(code, False)

    def type_text(self, text):
        for ch in text:
            if ch not in KEYMAP_US:
                raise ValueError('type_text: no key for %r' % ch)
            code, shift = KEYMAP_US[ch]
            if shift:
                self.key(KEY_LEFTSHIFT, True)
            self.tap(code)
            if shift:
                self.key(KEY_LEFTSHIFT, False)

    def motion(self, x, y):
        self.cmd('motion %g %g' % (x, y))

    def rmotion(self, dx, dy):
        self.cmd('rmotion %g %g' % (dx, dy))

    def button(self, code, down):
        self.cmd('button %d %d' % (code, 1 if down else 0))

    def click(self, code=BTN_LEFT):
        self.button(code, True)
        self.button(code, False)

    def axis(self, value):
        self.cmd('axis %g' % value)

    def quit(self, timeout=5):
        if self.alive():
            try:
                self.cmd('quit')
                self.proc.wait(scaled(timeout))
            except (TestFailure, subprocess.TimeoutExpired):
                pass
        return self.stop()


def _rgb(path):
    with Image.open(path) as im:
        return im.convert('RGB')


def images_equal(a, b):
    """None if equal, else a text saying how they differ."""
    if a.size != b.size:
        return 'sizes differ: %s vs %s' % (a.size, b.size)
    if a.tobytes() == b.tobytes():
        return None
    return 'differing pixels inside %s' % (ImageChops.difference(a, b).getbbox(),)


def fraction_not(img, rgb):
    """Fraction of the pixels of img that are not the colour rgb."""
    mask = ImageChops.difference(img, Image.new('RGB', img.size, rgb)).convert('L')
    same = mask.histogram()[0]
    return 1.0 - same / float(img.size[0] * img.size[1])


def read_fifo(s, fd, want, timeout, forbidden=None):
    """Reads the FIFO until `want` came; fails on `forbidden`."""
    data = b''
    deadline = time.monotonic() + scaled(timeout)
    while want not in data:
        left = deadline - time.monotonic()
        if left <= 0:
            s.fail('the FIFO got %r, not %r, within %gs' % (data, want, scaled(timeout)))
        readable, _, _ = select.select([fd], [], [], left)
        if readable:
            data += os.read(fd, 4096)
    if forbidden and forbidden in data:
        s.fail('the FIFO got %r: %r reached the session' % (data, forbidden))
    return data


class Session:
    """One slimland session: private runtime dir, a compositor, a console."""

    def __init__(self, name, size=(800, 600), console_id='console-a', console=True,
                 console_size=None, managed=False, compositor=True, transport='dtls', port=None,
                 listen_host='127.0.0.1', compositor_prefix=(), console_prefix=(),
                 audio=False):
        """size: the compositor's --size and, unless console_size says
        otherwise, the first console's. managed: slimland --managed on an
        ephemeral port (its control socket says which; see control_path).
        compositor=False: none is started (a session manager starts them);
        the session is then the directories, logs and consoles.
        transport: 'clear' runs the compositor and the consoles without
        DTLS (loopback only), for tests that play a peer themselves.
        port: the compositor's UDP port (default: a free one on loopback).
        listen_host: the address it listens on and consoles go to.
        compositor_prefix, console_prefix: argv put before the programs,
        e.g. ['ip', 'netns', 'exec', NAME] to run them in a network
        namespace (slimnet.py); Wayland clients run here either way.
        audio: the compositor starts the session's PipeWire (otherwise
        --no-audio: the tests that do not listen do not pay for it)."""
        self.name = name
        self.transport_args = ['--transport', transport]
        self.listen_host = listen_host
        self.compositor_prefix = tuple(compositor_prefix)
        self.console_prefix = tuple(console_prefix)
        self.fixed_port = port
        self.want_compositor = compositor
        self.audio = audio
        self.managed = managed
        self.size = size
        self.console_size = console_size or size
        self.console_id = console_id
        self.want_console = console
        self.slimland = os.environ.get('SLIMLAND', '')
        self.slimland_console = os.environ.get('SLIMLAND_CONSOLE', '')
        self.slim_echo = os.environ.get('SLIM_ECHO', '')
        base = os.environ.get('SLIMTEST_OUTDIR', os.path.join(os.getcwd(), 'integration-output'))
        self.outdir = os.path.join(base, name)
        self.n_compositors = 0
        self.n_shots = 0
        self.compositor = None
        self.console = None
        self.consoles = []
        self.clients = []
        self.tmp = None
        self.runtime_dir = None

    # -- set-up and tear-down
    def __enter__(self):
        for var, path in (('SLIMLAND', self.slimland), ('SLIMLAND_CONSOLE', self.slimland_console),
                          ('SLIM_ECHO', self.slim_echo)):
            if not path or not os.access(path, os.X_OK):
                raise TestSkip('%s is not set to a program (%r)' % (var, path))
        if Image is None:
            raise TestFailure('Pillow is missing: apt-get install python3-pil')
        require_programs('grim')
        shutil.rmtree(self.outdir, ignore_errors=True)
        os.makedirs(self.outdir)
        self.tmp = slimrun.mkdtemp('s')
        self.runtime_dir = os.path.join(self.tmp, 'run')
        os.mkdir(self.runtime_dir, 0o700)
        self.home = os.path.join(self.tmp, 'home')
        self.config_home = os.path.join(self.home, '.config')
        os.makedirs(os.path.join(self.config_home, 'gtk-3.0'))
        with open(os.path.join(self.config_home, 'gtk-3.0', 'settings.ini'), 'w') as f:
            f.write('[Settings]\ngtk-cursor-blink=false\ngtk-enable-animations=false\n')
        # GTK on Wayland reads these from GSettings, over settings.ini
        os.makedirs(os.path.join(self.config_home, 'glib-2.0', 'settings'))
        with open(os.path.join(self.config_home, 'glib-2.0', 'settings', 'keyfile'), 'w') as f:
            f.write('[org/gnome/desktop/interface]\ncursor-blink=false\n'
                    'enable-animations=false\n')
        log('session %s in %s, output in %s' % (self.name, self.tmp, self.outdir))
        try:
            self.port = self.fixed_port
            if self.want_compositor:
                self.start_compositor()
            if self.want_console:
                self.console = self.start_console(size=self.console_size)
        except BaseException:
            self.__exit__(*sys.exc_info())
            raise
        return self

    def __exit__(self, exc_type, exc, tb):
        problems = []
        for client in self.clients:
            client.stop(signal.SIGKILL)
        for console in self.consoles:
            if console.alive():
                status = console.quit()
                if status != 0:
                    problems.append('%s exited with status %s' % (console.name, status))
            else:
                console.finish()
        if self.compositor is not None:
            status = self.stop_compositor()
            if status != 0 and exc_type is None:
                problems.append('slimland exited with status %s on SIGTERM' % status)
        reports = []
        for p in [self.compositor] + self.consoles:
            if p is not None:
                reports += _sanitizer_report(p.stderr.lines)
        if reports:
            problems.append('sanitizer reports:\n' + '\n'.join(reports[:40]))
        slimrun.reap_orphans()
        shutil.rmtree(self.tmp, ignore_errors=True)
        if problems and exc_type is None:
            raise TestFailure('at the end of the session: ' + '; '.join(problems)
                              + self._logs_text())
        if problems:
            log('also, at the end of the session: ' + '; '.join(problems))
        return False

    def _env(self):
        env = dict(os.environ)
        for var in ('DISPLAY', 'WAYLAND_DISPLAY', 'WAYLAND_SOCKET', 'DBUS_SESSION_BUS_ADDRESS',
                    'ENV', 'XDG_SESSION_TYPE', 'XDG_CURRENT_DESKTOP', 'GTK_THEME',
                    'GTK_MODULES', 'LD_PRELOAD'):
            env.pop(var, None)
        env.update({
            'XDG_RUNTIME_DIR': self.runtime_dir,
            'XDG_CONFIG_HOME': self.config_home,
            'XDG_DATA_HOME': os.path.join(self.home, '.local', 'share'),
            'XDG_CACHE_HOME': os.path.join(self.home, '.cache'),
            'HOME': self.home,
            'NO_AT_BRIDGE': '1',
            'LC_ALL': 'C.UTF-8',
            'XKB_DEFAULT_LAYOUT': 'us',
            'XKB_DEFAULT_MODEL': 'pc105',
        })
        for var in ('XKB_DEFAULT_RULES', 'XKB_DEFAULT_VARIANT', 'XKB_DEFAULT_OPTIONS'):
            env.pop(var, None)
        return env

    def compositor_env(self, suppressions=LSAN_SUPPRESSIONS):
        env = self._env()
        # Sanitizer builds: leaks inside wlroots are suppressed by name, which
        # needs whole stacks through its frame-pointer-less code (a sanitizer
        # build of slimland unwinds allocations in full by default); ours
        # still count.
        env['LSAN_OPTIONS'] = _join_options(env.get('LSAN_OPTIONS'),
                                            'suppressions=' + suppressions)
        return env

    def console_env(self):
        return self._env()

    def client_env(self):
        env = self._env()
        # slim-echo (sanitized in sanitizer builds) does not free what it has
        # when the compositor goes away; that is no finding.
        env['ASAN_OPTIONS'] = _join_options(env.get('ASAN_OPTIONS'), 'detect_leaks=0')
        env.update({
            'WAYLAND_DISPLAY': self.compositor.display,
            # X11 programs reach the session's Xwayland (started on their first connection)
            'DISPLAY': self.compositor.x11_display or '',
            # without it a GTK program would start a bus through X11 (dbus-x11)
            'DBUS_SESSION_BUS_ADDRESS': self.compositor.bus_address,
            'GDK_BACKEND': 'wayland',
            'GSETTINGS_BACKEND': 'keyfile',
            'SHELL': '/bin/sh',
            'PS1': '$ ',
            'TERM': 'xterm-256color',
        })
        return env

    def start_compositor(self, port=None):
        """A compositor on `port` (default: the session's, or a free one)."""
        if self.managed:
            # the kernel picks the port; the control socket's hello says it
            self.compositor = Compositor(self, 0, self.size, ['--managed'])
            log('slimland --managed (pid %d), WAYLAND_DISPLAY=%s' % (
                self.compositor.pid, self.compositor.display))
            return self.compositor
        attempts = 1 if (port or self.port) else 5
        for attempt in range(attempts):
            use = port or self.port or free_udp_port()
            try:
                self.compositor = Compositor(self, use, self.size)
                self.port = use
                break
            except TestFailure:
                if attempt + 1 == attempts:
                    raise
                log('slimland did not start on port %d, trying another one' % use)
        log('slimland (pid %d) on %s:%d, WAYLAND_DISPLAY=%s' % (
            self.compositor.pid, self.listen_host, self.port, self.compositor.display))
        return self.compositor

    def stop_compositor(self, sig=signal.SIGTERM):
        status = self.compositor.stop(sig, timeout=10)
        log('slimland exited with status %s' % status)
        return status

    def console_state_dir(self, console_id):
        """The state directory (key, pinned servers) of the console the test
        calls `console_id`: the same one each time, so a console started
        again keeps its key and id."""
        return os.path.join(self.tmp, 'console-state', console_id)

    def console_key_id(self, console_id):
        """The id of that console, from its key (made now if need be)."""
        r = subprocess.run([self.slimland_console, '--state-dir',
                            self.console_state_dir(console_id), '--print-id'],
                           env=self.console_env(), capture_output=True, timeout=scaled(10))
        if r.returncode != 0:
            self.fail('slimland-console --print-id: %s' % r.stderr.decode(errors='replace'))
        return r.stdout.decode().strip()

    def control_path(self):
        """The managed compositor's control socket."""
        return os.path.join(self.runtime_dir, 'slimland-control')

    def start_console(self, size=None, console_id=None, wait_attached=True, endpoint=None,
                      host=None, extra_args=(), env=None):
        """A console; by default waits until it is attached and shows a frame.
        host: a slimnet.Host to run in; env: more environment."""
        console = Console(self, self.port, size or self.size, console_id or self.console_id,
                          'console-%d' % len(self.consoles), endpoint=endpoint, host=host,
                          extra_args=extra_args, env=env)
        self.consoles.append(console)
        if wait_attached:
            console.wait_for('attached', 15)
            console.wait_for('frame ', 10)
        return console

    def start_client(self, argv, wait_line=None, timeout=15, env=None, cwd=None, name=None,
                     lines=False):
        """A Wayland client of this session; with wait_line, waits for a line
        starting with it on the client's stdout (lines: keep its lines for
        wait_line later, without waiting now)."""
        require_programs(argv[0])
        name = name or 'client-%d-%s' % (len(self.clients), os.path.basename(argv[0]))
        client_env = self.client_env()
        client_env.update(env or {})
        client = Process(name, argv, client_env, self.outdir,
                         stdout_lines=lines or wait_line is not None, cwd=cwd or self.home)
        self.clients.append(client)
        if wait_line is not None:
            client.wait_line(wait_line, timeout)
        return client

    def run_client(self, argv, timeout=10, env=None, input_bytes=None):
        """Runs a client to its end; returns the CompletedProcess (output as bytes)."""
        require_programs(argv[0])
        client_env = self.client_env()
        client_env.update(env or {})
        try:
            return subprocess.run(argv, env=client_env, input=input_bytes, capture_output=True,
                                  timeout=scaled(timeout), cwd=self.home)
        except subprocess.TimeoutExpired:
            self.fail('%s did not finish within %gs' % (' '.join(argv), scaled(timeout)))

    # -- failures
    def _logs_text(self):
        out = []
        if self.compositor is not None:
            out.append('--- %s log (last lines) ---' % self.compositor.name)
            out += self.compositor.stderr.tail(40)
        for c in self.consoles:
            out.append('--- %s events (last lines) ---' % c.name)
            out += [l for l in c.stdout.tail(60) if not l.startswith('frame ')][-20:]
            out.append('--- %s stderr (last lines) ---' % c.name)
            out += c.stderr.tail(10)
        out.append('(all logs in %s)' % self.outdir)
        return '\n' + '\n'.join(out)

    def fail(self, msg):
        raise TestFailure(msg + self._logs_text())

    # -- shortcuts to the first console
    def cmd(self, line):
        self.console.cmd(line)

    def wait_for(self, prefix, timeout=10):
        return self.console.wait_for(prefix, timeout)

    def stats(self):
        return self.console.stats()

    def key(self, code, down):
        self.console.key(code, down)

    def tap(self, code):
        self.console.tap(code)

    def type_text(self, text):
        self.console.type_text(text)

    def motion(self, x, y):
        self.console.motion(x, y)

    def rmotion(self, dx, dy):
        self.console.rmotion(dx, dy)

    def button(self, code, down):
        self.console.button(code, down)

    def click(self, code=BTN_LEFT):
        self.console.click(code)

    # -- screens
    def shot_path(self, what):
        self.n_shots += 1
        return os.path.join(self.tmp, '%03d-%s.png' % (self.n_shots, what))

    def grim(self, path=None):
        """A screenshot through the compositor's screencopy; returns the path."""
        path = path or self.shot_path('grim')
        result = self.run_client(['grim', path], timeout=15)
        if result.returncode != 0:
            self.fail('grim failed (%d): %s' % (result.returncode,
                                                result.stderr.decode(errors='replace')))
        return path

    def console_image(self, console=None):
        console = console or self.console
        return _rgb(console.screenshot(self.shot_path('console')))

    def grim_image(self):
        return _rgb(self.grim())

    def settled(self, quiet=0.3, timeout=15, console=None):
        """Waits until no frame has arrived for `quiet` seconds."""
        console = console or self.console
        wait_until(lambda: console.next_frame(quiet), scaled(timeout), 'the screen to settle',
                   holds=lambda frame: frame is None, fail=self.fail, pause=0)

    @contextlib.contextmanager
    def fifo(self, path=None, owner=None):
        """A FIFO for a client's shell to write into: (path, fd). Opened for
        reading and writing, so that select() waits for data and never sees an
        end of file, whatever the writers do. path: where (default a new one
        under the session's directory); owner: a pwd entry whose user writes."""
        if path is None:
            d = tempfile.mkdtemp(dir=self.tmp)
            os.chmod(d, 0o755)
            path = os.path.join(d, 'f')
        os.mkfifo(path, 0o600)
        if owner is not None:
            os.chown(path, owner.pw_uid, owner.pw_gid)
        fd = os.open(path, os.O_RDWR | os.O_NONBLOCK)
        try:
            yield path, fd
        finally:
            os.close(fd)

    def start_typist(self, path):
        """foot running `cat` into `path` (a FIFO from fifo()): what the
        console types reaches it a line at a time. Waits for its window."""
        typist = self.start_client(['foot', '--', 'sh', '-c', 'exec cat > %s' % path])
        self.wait_screen(lambda img: fraction_not(img, BACKGROUND) > 0.3, 'the foot window')
        self.settled()
        return typist

    def wait_stats(self, predicate, what, timeout=15, console=None):
        """Waits, frame by frame, until predicate(console stats) holds; returns them."""
        console = console or self.console
        return wait_until(console.stats, scaled(timeout),
                          lambda st: '%s (stats: %s)' % (what, st), holds=predicate,
                          fail=self.fail, pause=console.frame_pause(scaled(0.5)))

    def wait_screen(self, predicate, what, timeout=15, console=None):
        """Waits, frame by frame, until predicate(console screenshot) holds;
        returns that image."""
        console = console or self.console

        def failed(img):
            path = os.path.join(self.outdir, 'wait-screen-console.png')
            img.save(path)
            return 'the console screen to show %s (last screen: %s)' % (what, path)
        return wait_until(lambda: self.console_image(console), scaled(timeout), failed,
                          holds=predicate, fail=self.fail, pause=console.frame_pause(1.0))

    def assert_frozen_equal(self, client):
        """A client that animates stopped (SIGSTOP) so that the screen can
        settle, assert_screens_equal, and the client going on again. Returns
        the picture."""
        client.send_signal(signal.SIGSTOP)
        log('%s stopped' % client.name)
        try:
            return self.assert_screens_equal()
        finally:
            client.send_signal(signal.SIGCONT)

    def assert_screens_equal(self, attempts=30, console=None):
        """The console shows what the compositor renders, byte for byte (RGB).
        grim's screenshot first, then the console's; while they differ,
        waits for the console's next frame (at most a short while) and retries."""
        console = console or self.console
        why = None
        for attempt in range(attempts):
            g = self.grim_image()
            mark = console.mark()
            c = self.console_image(console)
            why = images_equal(g, c)
            if why is None:
                log('screens equal (%dx%d) after %d attempt(s)' % (g.size + (attempt + 1,)))
                return g
            console.next_frame(scaled(0.5), start=mark)
        gpath = os.path.join(self.outdir, 'unequal-grim.png')
        cpath = os.path.join(self.outdir, 'unequal-console.png')
        g.save(gpath)
        c.save(cpath)
        if g.size == c.size:
            ImageChops.difference(g, c).save(os.path.join(self.outdir, 'unequal-diff.png'))
        self.fail('screens differ after %d attempts: %s\n  compositor (grim): %s\n'
                  '  console: %s' % (attempts, why, gpath, cpath))


def run(test):
    """Runs test() as a script's main: exit 0, 1 with the reason, or 77 (skip)."""
    try:
        test()
    except TestSkip as e:
        print('SKIP: %s' % e, flush=True)
        sys.exit(SKIP)
    except TestFailure as e:
        print('FAIL: %s' % e, flush=True)
        sys.exit(1)
    except AssertionError as e:
        traceback.print_exc()
        print('FAIL: %s' % (e or 'assertion'), flush=True)
        sys.exit(1)
    except Exception:
        traceback.print_exc()
        print('FAIL: unexpected error', flush=True)
        sys.exit(1)
    print('PASS (%.1fs)' % (time.monotonic() - _T0), flush=True)
    sys.exit(0)
