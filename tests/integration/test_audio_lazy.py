"""The session's sound server starts when a client first asks for sound and
ends after a while with no client (slimland --audio-sleep):
- a session with a console that has played nothing runs no pipewire,
  wireplumber or pipewire-pulse: the compositor holds their sockets;
- a PipeWire client's tone (pw-cat) reaches the console (its frequency, as
  in test_audio_console.py): its connection started the daemons. How long
  from pw-cat's start to the console's first loud sample is printed (a
  figure, not a bar: bench-audio's row "first sound" is where it is held);
- with --audio-sleep 2, once pw-cat has gone, the daemons end and the log
  says so; the sockets stay;
- a PulseAudio client (paplay) starts them again, and its tone is heard.
"""
import os
import subprocess
import time

from slimtest import Session, log, require_programs, run, scaled
import soundcheck
from soundcheck import console_with_sound

DAEMONS = ('pipewire', 'wireplumber', 'pipewire-pulse')


def daemons(pid):
    out = subprocess.run(['ps', '-o', 'comm=', '--ppid', str(pid)], capture_output=True,
                         text=True).stdout
    return sorted(n.strip() for n in out.splitlines() if n.strip() in DAEMONS)


def first_loud_time(path, start, timeout):
    """time.monotonic() when the console's recording past byte `start` first
    holds a loud sample (polled every 2 ms), or None."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.exists(path) and soundcheck.first_loud(
                soundcheck.read_raw(path, start)) is not None:
            return time.monotonic()
        time.sleep(0.002)
    return None


def play(s, argv, out, hz, what):
    start = soundcheck.file_size(out)
    t0 = time.monotonic()
    client = subprocess.Popen(argv, env=s.client_env(), stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)
    heard_at = first_loud_time(out, start, scaled(10))
    err = client.communicate(timeout=scaled(15))[1]
    if client.returncode != 0:
        s.fail('%s: %s' % (argv[0], err.decode()[-300:]))
    if heard_at is None:
        s.fail('the console played nothing of %s: %s' % (what, soundcheck.describe(out, start)))
    log('%s: first sound at the console %.0f ms after the client started' % (
        what, (heard_at - t0) * 1000))
    heard = soundcheck.wait_sound(out, start, 0.5, scaled(5))
    soundcheck.check_tone(s, heard, hz, 0.5, what)


def test():
    require_programs('pipewire', 'wireplumber', 'pipewire-pulse', 'dbus-daemon', 'pw-cat',
                     'paplay', 'sox')
    with Session('audio_lazy', audio=True, console=False,
                 compositor_args=['--audio-sleep', '2']) as s:
        console, out = console_with_sound(s, 'desk-a', 660)
        s.settled(console=console)
        if daemons(s.compositor.pid):
            s.fail('a session that played nothing runs %s' % daemons(s.compositor.pid))
        log('before any sound: no daemon')

        tone = os.path.join(s.tmp, 'tone.wav')
        soundcheck.make_tone(tone, 440, 1.0)
        mark = s.compositor.stderr.mark()
        play(s, ['pw-cat', '--playback', tone], out, 440, 'pw-cat')
        if daemons(s.compositor.pid) != sorted(DAEMONS):
            s.fail('after pw-cat the compositor\'s children are %s' %
                   daemons(s.compositor.pid))

        # no client: they end, and say so
        _, line = s.compositor.stderr.wait(lambda l: 'audio: PipeWire stopped' in l, mark,
                                           time.monotonic() + scaled(15))
        if line is None:
            s.fail('the daemons did not end with no client')
        for _ in range(100):
            if not daemons(s.compositor.pid):
                break
            time.sleep(0.05)
        else:
            s.fail('still running after "%s": %s' % (line, daemons(s.compositor.pid)))
        log('after 2 s with no client: no daemon')

        # a PulseAudio client wakes them again
        tone = os.path.join(s.tmp, 'tone880.wav')
        soundcheck.make_tone(tone, 880, 1.0)
        play(s, ['paplay', tone], out, 880, 'paplay')


if __name__ == '__main__':
    run(test)
