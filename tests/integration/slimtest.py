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
import math
import os
import shutil
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback

import slimrun

try:
    from PIL import Image, ImageChops
except ImportError:  # a missing dependency is a failure, not a skip
    Image = ImageChops = None
from slimproc import *  # noqa: F401,F403 (tests import it all from here)
from slimproc import _LineLog, _T0, _join_options, _sanitizer_report  # noqa: F401


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



def psnr_luma(a, b):
    """PSNR in dB of the luma (ITU-R 601, as PIL's 'L') of two images of one
    size, as video quality is measured: 4:2:0's halved chroma costs CSCS
    and H.264 alike on saturated colour, and is no loss of a codec's."""
    hist = ImageChops.difference(a.convert('L'), b.convert('L')).histogram()
    mse = sum(count * i ** 2 for i, count in enumerate(hist)) / (a.size[0] * a.size[1])
    return float('inf') if mse == 0 else 10 * math.log10(255 ** 2 / mse)

# Console arguments for a console that decodes no compressed video: video
# comes to it as CSCS (the tests of that path).
NO_CODEC = ('--video-codec', 'none')

class Session:
    """One slimland session: private runtime dir, a compositor, a console."""

    def __init__(self, name, size=(800, 600), console_id='console-a', console=True,
                 console_size=None, managed=False, compositor=True, transport='dtls', port=None,
                 listen_host='127.0.0.1', compositor_prefix=(), console_prefix=(),
                 audio=False, console_args=(), compositor_args=()):
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
        --no-audio: the tests that do not listen do not pay for it).
        console_args: more arguments for every console (['--video-codec',
        'none']: video comes as CSCS).
        compositor_args: more arguments for the compositor."""
        self.name = name
        self.transport_args = ['--transport', transport]
        self.listen_host = listen_host
        self.compositor_prefix = tuple(compositor_prefix)
        self.console_prefix = tuple(console_prefix)
        self.console_args = tuple(console_args)
        self.compositor_args = tuple(compositor_args)
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
                          extra_args=self.console_args + tuple(extra_args), env=env)
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

    def grim(self, path=None, output=None):
        """A screenshot through the compositor's screencopy (of one output,
        if given); returns the path."""
        path = path or self.shot_path('grim')
        result = self.run_client(['grim'] + (['-o', output] if output else []) + [path],
                                 timeout=15)
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

    def wait_video(self, predicate, what, timeout=15, console=None):
        """Waits, frame by frame, until predicate(console video stats) holds."""
        console = console or self.console
        return wait_until(console.video_stats, scaled(timeout),
                          lambda v: '%s (video: %s)' % (what, v), holds=predicate,
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

    def assert_screens_equal(self, attempts=30, console=None, head=None):
        """The console shows what the compositor renders, byte for byte (RGB):
        all of it, or one head (its output's name). grim's screenshot first,
        then the console's; while they differ, waits for the console's next
        frame (at most a short while) and retries."""
        console = console or self.console
        why = None
        for attempt in range(attempts):
            g = _rgb(self.grim(output=head))
            mark = console.mark()
            c = _rgb(console.head_screenshot(head, self.shot_path('console-' + head))) \
                if head else self.console_image(console)
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
