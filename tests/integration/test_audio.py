"""Sound in the session, the session's half.

The compositor starts a PipeWire of the session's own (a session bus,
pipewire, wireplumber and pipewire-pulse, as its children) when a client
first asks for sound (test_audio_lazy.py), and puts the console's speaker
and microphone in it as the defaults:
- WirePlumber makes "Console speaker" the default sink and "Console
  microphone" the default source;
- with no console listening, clients still play at the sound server's pace
  and end without error: a PipeWire client (pw-cat), a PulseAudio one
  (paplay) and an ALSA one (aplay, through pipewire-alsa); the compositor
  hears the sound;
- recording from the default source (arecord) gives silence, not an error;
- a console run beside the session, in its runtime directory, refuses to
  play into the session's own PipeWire (it would echo);
- PipeWire killed: said once in the log; the pixels carry on (a client
  draws, the console equals grim);
- the daemons end with the compositor.
"""
import os
import subprocess
import time
import wave

from slimtest import KEY_A, Session, TestFailure, log, require_programs, run, scaled
import soundcheck
from soundcheck import MICROPHONE, SPEAKER


def children(pid):
    out = subprocess.run(['ps', '-o', 'pid=,comm=', '--ppid', str(pid)], capture_output=True,
                         text=True).stdout
    return {int(p): name for p, name in (line.split(None, 1) for line in out.splitlines())}


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test():
    require_programs('pipewire', 'wireplumber', 'pipewire-pulse', 'dbus-daemon', 'pw-cat',
                     'pactl', 'paplay', 'aplay', 'arecord', 'sox')
    with Session('audio', audio=True) as s:
        # the first client to ask for sound (pactl here) starts the daemons
        soundcheck.wait_defaults(s)
        _, line = s.compositor.stderr.wait(lambda l: 'audio: sound goes to' in l, 0,
                                           time.monotonic() + scaled(5))
        if line is None:
            s.fail('the compositor did not make the console\'s speaker and microphone')
        daemons = {pid: name.strip() for pid, name in children(s.compositor.pid).items()
                   if name.strip() in ('pipewire', 'wireplumber', 'pipewire-pulse',
                                       'dbus-daemon')}
        log('the session\'s daemons: %s' % sorted(daemons.values()))
        if sorted(daemons.values()) != ['dbus-daemon', 'pipewire', 'pipewire-pulse',
                                        'wireplumber']:
            s.fail('the compositor\'s children are %s' % sorted(daemons.values()))

        log('defaults: %s, %s' % (SPEAKER, MICROPHONE))

        # a console run beside the session, in its runtime directory, finds the
        # session's own PipeWire: playing into it would echo, so it has no sound
        echo = s.start_console(console_id='beside', wait_attached=False,
                               extra_args=['--audio', 'auto'])
        _, line = echo.stderr.wait(lambda l: 'no sound device' in l, 0,
                                   time.monotonic() + scaled(10))
        if line is None or 'session would hear itself' not in line:
            s.fail('a console beside the session: %r' % line)
        log('a console beside the session: %s' % line.strip())
        echo.quit()

        tone = os.path.join(s.tmp, 'tone.wav')
        subprocess.run(['sox', '-n', '-r', '48000', '-c', '2', '-b', '16', tone,
                        'synth', '0.5', 'sine', '440', 'vol', '0.5'], check=True)
        mark = s.compositor.stderr.mark()
        for argv in (['pw-cat', '--playback', tone], ['paplay', tone], ['aplay', '-q', tone]):
            r = s.run_client(argv, timeout=10)
            if r.returncode != 0:
                s.fail('%s with no console: status %d: %s' % (argv[0], r.returncode,
                                                             r.stderr.decode()[-300:]))
            log('%s played into the console speaker' % argv[0])
        _, line = s.compositor.stderr.wait(lambda l: 'the console speaker plays sound' in l,
                                           mark, time.monotonic() + scaled(5))
        if line is None:
            s.fail('the compositor did not hear what was played')

        # the microphone, with no console's behind it: silence
        recorded = os.path.join(s.tmp, 'mic.wav')
        r = s.run_client(['arecord', '-q', '-d', '1', '-f', 'S16_LE', '-r', '48000', '-c', '2',
                          recorded], timeout=10)
        if r.returncode != 0:
            s.fail('arecord from the console microphone: status %d: %s' % (
                r.returncode, r.stderr.decode()[-300:]))
        with wave.open(recorded) as w:
            frames = w.readframes(w.getnframes())
        if len(frames) < 48000 * 4 // 2 or any(frames):
            s.fail('the microphone with no console gave %d bytes, %s' % (
                len(frames), 'not silence' if any(frames) else 'too few'))

        # PipeWire dies: said once, and the pixels carry on
        pipewire = [pid for pid, name in daemons.items() if name == 'pipewire'][0]
        mark = s.compositor.stderr.mark()
        os.kill(pipewire, 9)
        _, line = s.compositor.stderr.wait(lambda l: 'audio: PipeWire went away' in l, mark,
                                           time.monotonic() + scaled(5))
        if line is None:
            s.fail('the compositor did not notice PipeWire dying')
        echo = s.start_client([s.slim_echo], wait_line='ready')
        echo_mark = s.console.mark()
        s.console.tap(KEY_A)
        if s.console.next_frame(scaled(10), start=echo_mark) is None:
            s.fail('no frame for a key after PipeWire died')
        s.assert_screens_equal()
        said = [l for l in s.compositor.stderr.since(mark) if 'PipeWire went away' in l]
        if len(said) != 1:
            s.fail('PipeWire\'s end was said %d times' % len(said))
        echo.stop()
    left = [name for pid, name in daemons.items() if alive(pid)]
    if left:
        raise TestFailure('still running after the compositor: %s' % left)


run(test)
