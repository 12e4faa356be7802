"""Sound follows the user: the session's sound plays on its console, the
console's microphone reaches the session.

The session runs its own PipeWire (the compositor starts it); the console
plays through ALSA, as a bare console with no sound server does, into ALSA's
file plugin (over the null device), which records what the console played
and plays a tone file as the console's microphone:
- a 440 Hz tone played with pw-cat in the session arrives at the console:
  sox finds its frequency (within 2%) and level (RMS within 3 dB of what was
  played; Opus is lossy, so not sample-exact), and no gap in it;
- the console's microphone (a 660 Hz tone) reaches pw-cat --record in the
  session through "Console microphone", the default source.
Sound moving with a card tap between consoles: test_sessiond_audio.py; over
a lossy network: test_audio_loss.py.
"""
import os

from slimtest import Session, require_programs, run, scaled
import soundcheck
from soundcheck import console_with_sound


def test():
    require_programs('pipewire', 'wireplumber', 'pipewire-pulse', 'dbus-daemon', 'pw-cat',
                     'pactl', 'sox')
    with Session('audio_console', audio=True, console=False) as s:
        soundcheck.wait_defaults(s)
        console, out = console_with_sound(s, 'desk-a', 660)
        tone = os.path.join(s.tmp, 'tone.wav')
        soundcheck.make_tone(tone, 440, 1.0)
        start = soundcheck.file_size(out)
        r = s.run_client(['pw-cat', '--playback', tone], timeout=scaled(10))
        if r.returncode != 0:
            s.fail('pw-cat --playback: %s' % r.stderr.decode()[-300:])
        heard = soundcheck.wait_sound(out, start, 0.9, scaled(5))
        if heard is None:
            s.fail('the console played no tone: %s' % soundcheck.describe(out, start))
        soundcheck.check_tone(s, heard, 440, 0.5, 'the console\'s speaker')

        # the microphone, the other way
        recorded = os.path.join(s.tmp, 'mic.wav')
        # a second and a half of it (pw-cat records until told to stop)
        r = s.run_client(['timeout', '-s', 'INT', '1.5', 'pw-cat', '--record', '--rate', '48000',
                          '--channels', '1', '--format', 's16', recorded], timeout=10)
        samples = soundcheck.read_wav(recorded)
        soundcheck.check_tone(s, soundcheck.loudest(samples, 0.5), 660, 0.5,
                              'the session\'s recording of the console\'s microphone')


run(test)
