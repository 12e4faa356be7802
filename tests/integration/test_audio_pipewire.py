"""A console with a sound server of its own: PipeWire on both ends.

The session runs its PipeWire (the compositor starts it); the console's
machine runs another one (a bus, pipewire, wireplumber, in a runtime
directory of its own) with a null sink "console-out" as its speaker and,
as its microphone, a source "console-mic" that gives what is played into a
sink "mic-in" (pw-loopback), and the console plays with `--audio pipewire`:
- a 440 Hz tone played with pw-cat in the session arrives at the console's
  sink, recorded from its monitor (frequency within 2%, RMS within 3 dB, no
  gap);
- a 660 Hz tone played into the console's microphone reaches pw-cat
  --record in the session through "Console microphone".
"""
import os
import subprocess
import time

from slimtest import Session, require_programs, run, scaled
import soundcheck


class ConsoleSoundServer:
    """PipeWire for the console's machine, its devices made of null nodes."""

    def __init__(self, s):
        self.s = s
        self.dir = os.path.join(s.tmp, 'console-run')
        os.makedirs(self.dir, mode=0o700, exist_ok=True)
        self.env = dict(os.environ, XDG_RUNTIME_DIR=self.dir,
                        DBUS_SESSION_BUS_ADDRESS='unix:path=%s/bus' % self.dir)
        self.procs = []
        try:
            self.start_daemons(s.outdir)
        except BaseException:
            self.stop()
            raise

    def start_daemons(self, log_dir):
        self.start(['dbus-daemon', '--session', '--address=unix:path=%s/bus' % self.dir,
                    '--nofork', '--nopidfile'], os.path.join(log_dir, 'console-dbus.log'))
        self.wait(lambda: os.path.exists(os.path.join(self.dir, 'bus')), 'the bus')
        self.start(['pipewire'], os.path.join(log_dir, 'console-pipewire.log'))
        self.wait(lambda: self.run('pw-cli', 'info', '0').returncode == 0, 'pipewire')
        self.start(['wireplumber'], os.path.join(log_dir, 'console-wireplumber.log'))
        self.run('pw-cli', 'create-node', 'adapter',
                 '{ factory.name=support.null-audio-sink node.name=console-out '
                 'media.class=Audio/Sink object.linger=true audio.position=[FL FR] '
                 'priority.session=2000 }', check=True)
        # the microphone: what is played into mic-in comes out of console-mic
        self.start(['pw-loopback', '-m', '[MONO]',
                    '--capture-props=media.class=Audio/Sink node.name=mic-in '
                    'priority.session=100',
                    '--playback-props=media.class=Audio/Source node.name=console-mic '
                    'priority.session=3000'],
                   os.path.join(log_dir, 'console-loopback.log'))
        self.wait(self.defaults_set, 'console-out and console-mic as the defaults')

    def start(self, argv, log_path):
        with open(log_path, 'w') as out:
            self.procs.append(subprocess.Popen(argv, env=self.env, stdout=out,
                                               stderr=subprocess.STDOUT))

    def run(self, *argv, timeout=10, check=False):
        r = subprocess.run(argv, env=self.env, capture_output=True, timeout=scaled(timeout))
        if check and r.returncode != 0:
            self.s.fail('%s: %s' % (' '.join(argv), r.stderr.decode()[-300:]))
        return r

    def wait(self, ready, what):
        """Until `ready()`: daemons say nothing when they are ready to serve."""
        deadline = time.monotonic() + scaled(10)
        while not ready():
            if time.monotonic() > deadline:
                self.s.fail('the console\'s sound server: no %s' % what)
            time.sleep(0.05)

    def defaults_set(self):
        # WirePlumber makes them the defaults by their priority, once it saw them
        out = self.run('wpctl', 'inspect', '@DEFAULT_AUDIO_SINK@').stdout.decode()
        src = self.run('wpctl', 'inspect', '@DEFAULT_AUDIO_SOURCE@').stdout.decode()
        return 'console-out' in out and 'console-mic' in src

    def stop(self):
        for p in reversed(self.procs):
            p.terminate()
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def test():
    require_programs('pipewire', 'wireplumber', 'pipewire-pulse', 'dbus-daemon', 'pw-cat',
                     'pw-cli', 'pw-loopback', 'wpctl', 'pactl', 'sox')
    with Session('audio_pipewire', audio=True, console=False) as s:
        soundcheck.wait_defaults(s)
        server = ConsoleSoundServer(s)
        try:
            check(s, server)
        finally:
            server.stop()


def check(s, server):
    # its runtime directory is the sound server's: the session's key is elsewhere
    key = os.path.join(s.runtime_dir, 'slimland-pairing.key')
    console = s.start_console(console_id='desk', extra_args=['--audio', 'pipewire',
                                                             '--pairing-key', key],
                              env={k: server.env[k] for k in ('XDG_RUNTIME_DIR',
                                                              'DBUS_SESSION_BUS_ADDRESS')})
    tone = os.path.join(s.tmp, 'tone.wav')
    soundcheck.make_tone(tone, 440, 1.0)
    # the console's speaker, recorded from its monitor while the session plays
    speaker = os.path.join(s.tmp, 'speaker.wav')
    recorder = subprocess.Popen(['pw-cat', '--record', '--target', 'console-out', '-P',
                                 '{ stream.capture.sink=true }', '--rate', '48000',
                                 '--channels', '2', '--format', 's16', speaker],
                                env=server.env, stderr=subprocess.PIPE)
    mark = console.mark()
    r = s.run_client(['pw-cat', '--playback', tone], timeout=10)
    if r.returncode != 0:
        s.fail('pw-cat --playback in the session: %s' % r.stderr.decode()[-300:])
    # the console says when the tone ended (all of it handed to its sink)
    _, line = console.stdout.wait(lambda l: l.startswith('audio quiet'), mark,
                                  time.monotonic() + scaled(10))
    if line is None:
        s.fail('the console heard no tone begin and end (%s); its sound server:\n%s' % (
            console.audio_stats(), server.run('wpctl', 'status').stdout.decode()))
    recorder.send_signal(2)
    recorder.wait(timeout=scaled(5))
    heard = soundcheck.loudest(soundcheck.read_wav(speaker), 0.9)
    soundcheck.check_tone(s, heard, 440, 0.5, 'the console\'s PipeWire sink')

    # the console's microphone: a tone played into its source reaches the session
    mic_tone = os.path.join(s.tmp, 'mic-tone.wav')
    soundcheck.make_tone(mic_tone, 660, 3.0, channels=1)
    player = subprocess.Popen(['pw-cat', '--playback', '--target', 'mic-in', mic_tone],
                              env=server.env, stderr=subprocess.PIPE)
    recorded = os.path.join(s.tmp, 'mic.wav')
    s.run_client(['timeout', '-s', 'INT', '1.5', 'pw-cat', '--record', '--rate', '48000',
                  '--channels', '1', '--format', 's16', recorded], timeout=10)
    player.wait(timeout=scaled(10))
    soundcheck.check_tone(s, soundcheck.loudest(soundcheck.read_wav(recorded), 0.5), 660, 0.5,
                          'the session\'s recording of the console\'s PipeWire microphone')


run(test)
