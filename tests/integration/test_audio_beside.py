"""A console beside its session, in its runtime directory, never plays
into the session's own PipeWire: it would send the session's sound back
to it as its microphone, and the session would hear itself forever.

- at once: the console starts the moment the session's PipeWire answers,
  before the compositor has made "Console speaker" there; alone, and with
  every core kept busy (start-up slower, the moment longer); twice each.
  The console tells from the mark the compositor puts beside PipeWire's
  socket before it starts it, and has no sound;
- after: a PipeWire that ran before the session (the user's own, which the
  compositor takes), which the console played into while it had no
  session: when "Console speaker" appears there, the console stops.

Each time, with the session idle: no stream of the console's is in the
session's PipeWire, and no AUDIO reaches the console and no MIC leaves it
(the console's figures). Started at once, the console has had neither at
all, and the compositor no MIC (it logs the microphone's packets when it
ends).
"""
import json
import os
import socket
import subprocess
import sys
import threading
import time

from slimtest import Session, free_udp_port, log, require_programs, run, scaled
import soundcheck

ROUNDS = 2
# with nothing playing, the figures over this long: a loop sends 100 packets a second each way
IDLE_S = 1.5


def answers(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
        return True
    except OSError:
        return False
    finally:
        s.close()


def console_nodes(s):
    """The console's streams in the session's PipeWire (by their app's name)."""
    r = s.run_client(['pw-dump'], timeout=10)
    if r.returncode != 0:
        s.fail('pw-dump: %s' % r.stderr.decode()[-300:])
    return [o['info']['props'].get('node.name') for o in json.loads(r.stdout)
            if o.get('type') == 'PipeWire:Interface:Node'
            and (o.get('info') or {}).get('props', {}).get('application.name')
            == 'slimland-console']


def flow(console, has_sound):
    """AUDIO datagrams the console got and MIC packets it sent so far."""
    return console.stats()['audio'], console.audio_stats()['mic'] if has_sound else 0


def check_idle(s, console, has_sound):
    """Nothing flows between the idle session and the console, either way."""
    soundcheck.wait_defaults(s)
    nodes = console_nodes(s)
    if nodes:
        s.fail('the console\'s streams are in the session\'s PipeWire: %s' % nodes)
    before = flow(console, has_sound)
    time.sleep(scaled(IDLE_S))
    after = flow(console, has_sound)
    log('AUDIO in, MIC out: %s, then %s' % (before, after))
    if after != before:
        s.fail('with nothing playing, AUDIO in and MIC out went from %s to %s' % (before, after))
    return after


def check_compositor_heard_nothing(s):
    """After the session: the compositor says what its microphone got, if anything."""
    heard = [l for l in s.compositor.stderr.lines if 'the microphone so far' in l]
    if heard:
        s.fail('MIC packets reached the compositor: %s' % heard[-1])


def at_once(loaded, n):
    port = free_udp_port()
    name = 'audio_beside_%s_%d' % ('loaded' if loaded else 'alone', n)
    with Session(name, audio=True, console=False, compositor=False, port=port) as s:
        socket_path = os.path.join(s.runtime_dir, 'pipewire-0')
        hogs = [subprocess.Popen([sys.executable, '-c', 'while True: pass'])
                for _ in range(os.cpu_count() if loaded else 0)]
        started = {}
        give_up = threading.Event()

        def start_console():
            # the moment the session's PipeWire answers
            while not answers(socket_path):
                if give_up.wait(0.001):
                    return
            started['console'] = s.start_console(console_id='beside', wait_attached=False,
                                                 extra_args=['--audio', 'auto'])

        try:
            racer = threading.Thread(target=start_console)
            racer.start()
            s.start_compositor()
            racer.join(scaled(20))
            give_up.set()
            racer.join()
            console = started.get('console')
            if console is None:
                s.fail('the session\'s PipeWire never answered at %s' % socket_path)
            _, line = console.stderr.wait(lambda l: 'audio: ' in l, 0,
                                          time.monotonic() + scaled(15))
        finally:
            give_up.set()
            for hog in hogs:
                hog.kill()
                hog.wait()
        # the console's connection started the session's PipeWire (test_audio_lazy.py)
        _, made = s.compositor.stderr.wait(lambda l: 'audio: sound goes to' in l, 0,
                                           time.monotonic() + scaled(15))
        log('%s: the console started as PipeWire answered; it says: %s' % (
            name, line and line.strip()))
        if made is None:
            s.fail('the compositor did not make its speaker and microphone')
        if line is None or 'session would hear itself' not in line:
            s.fail('a console started beside its session: %r' % line)
        console.wait_for('attached', 15)
        if check_idle(s, console, False) != (0, 0):
            s.fail('AUDIO reached a console that offers no sound')
    check_compositor_heard_nothing(s)


def start_sound_server(s):
    """PipeWire as a desktop runs it, in the session's runtime directory."""
    env = dict(s.console_env(), DBUS_SESSION_BUS_ADDRESS='unix:path=%s/bus' % s.runtime_dir)
    procs = []

    def start(argv):
        out = open(os.path.join(s.outdir, 'user-%s.log' % argv[0]), 'w')
        procs.append(subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT))
        out.close()

    def wait(ready, what):
        deadline = time.monotonic() + scaled(10)
        while not ready():
            if time.monotonic() > deadline:
                s.fail('the user\'s sound server: no %s' % what)
            time.sleep(0.05)

    start(['dbus-daemon', '--session', '--address=' + env['DBUS_SESSION_BUS_ADDRESS'],
           '--nofork', '--nopidfile'])
    wait(lambda: os.path.exists(os.path.join(s.runtime_dir, 'bus')), 'bus')
    start(['pipewire'])
    wait(lambda: answers(os.path.join(s.runtime_dir, 'pipewire-0')), 'pipewire')
    start(['wireplumber'])
    start(['pipewire-pulse'])
    return procs


def after():
    procs = []
    try:
        with Session('audio_beside_after', audio=True, console=False, compositor=False,
                     port=free_udp_port()) as s:
            procs += start_sound_server(s)
            console = s.start_console(console_id='first', wait_attached=False,
                                      extra_args=['--audio', 'pipewire'])
            _, line = console.stderr.wait(lambda l: 'audio: ' in l, 0,
                                          time.monotonic() + scaled(15))
            if line is None or 'plays on pipewire' not in line:
                s.fail('the console did not take the user\'s PipeWire: %r' % line)
            mark = console.stderr.mark()
            s.start_compositor()
            if not any('PipeWire runs already' in l for l in s.compositor.stderr.lines):
                s.fail('the compositor did not take the user\'s PipeWire')
            _, line = console.stderr.wait(lambda l: 'sound stops' in l, mark,
                                          time.monotonic() + scaled(10))
            if line is None:
                s.fail('the console played on into the session\'s PipeWire')
            log('the console, when the session came: %s' % line.strip())
            console.wait_for('attached', 15)
            check_idle(s, console, True)
    finally:
        for p in reversed(procs):
            p.terminate()
            p.wait(timeout=5)


def test():
    require_programs('pipewire', 'wireplumber', 'pipewire-pulse', 'dbus-daemon', 'pw-dump',
                     'pactl')
    for loaded in (False, True):
        for n in range(ROUNDS):
            at_once(loaded, n)
    after()


run(test)
