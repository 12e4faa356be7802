"""
The processes an integration test drives and the words it drives them
with: the compositor and the console (the console through its --control
protocol), a line log read on a thread of its own, the key codes and the
keymap the console types with, one wait (wait_until) and the timeouts,
scaled for sanitizer builds. slimtest.Session starts them; tests import
all of it from slimtest.
"""
import os
import shutil
import signal
import socket
import subprocess
import threading
import time

import slimrun


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
            '--size', '%dx%d' % size] + session.transport_args + list(session.compositor_args) + \
            list(extra_args)
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

    def video_stats(self):
        """The console's compressed video figures (a console that decodes it):
        numbers as int or float, the decoder's kind as text."""
        line = self.request('stats', 'video codec=')
        out = {}
        for k, v in (w.split('=', 1) for w in line.split()[1:]):
            try:
                out[k] = int(v)
            except ValueError:
                try:
                    out[k] = float(v)
                except ValueError:
                    out[k] = v
        return out

    def sync(self):
        return int(self.request('sync', 'sync ').split()[1])

    def screenshot(self, path):
        self.request('screenshot ' + path, 'screenshot ')
        return path

    def head_screenshot(self, head, path):
        """What one head (by name or number) shows."""
        self.request('head-screenshot %s %s' % (head, path), 'screenshot ')
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
