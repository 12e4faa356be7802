"""What the sound tests share: tones made and measured with sox, what a
console's ALSA file device recorded, and the session's PipeWire defaults."""
import array
import os
import re
import subprocess
import wave

from slimtest import log, scaled, wait_until

RATE = 48000
SPEAKER = 'slimland-console-speaker'
MICROPHONE = 'slimland-console-microphone'
# a sample louder than this (of 32767) is sound
LOUD = 1000


def wait_defaults(s):
    """WirePlumber chooses the defaults once it has seen the compositor's
    nodes; no event says so to a client, so ask until it answers."""
    def defaults():
        return tuple(s.run_client(['pactl', what]).stdout.decode().strip()
                     for what in ('get-default-sink', 'get-default-source'))
    wait_until(defaults, scaled(10),
               lambda d: 'the console\'s defaults (they are %r and %r)' % d,
               holds=lambda d: d == (SPEAKER, MICROPHONE), fail=s.fail, pause=0.1)


def make_tone(path, hz, seconds, channels=2):
    subprocess.run(['sox', '-n', '-r', str(RATE), '-c', str(channels), '-b', '16', path,
                    'synth', str(seconds), 'sine', str(hz), 'vol', '0.5'], check=True)


def read_raw(path, start=0, channels=2):
    """The first channel of a raw s16le file, from byte `start`."""
    with open(path, 'rb') as f:
        f.seek(start)
        data = f.read()
    data = data[:len(data) - len(data) % (2 * channels)]
    samples = array.array('h', data)
    return samples[::channels]


def read_wav(path):
    with wave.open(path) as w:
        channels = w.getnchannels()
        samples = array.array('h', w.readframes(w.getnframes()))
    return samples[::channels]


def first_loud(samples):
    for i, v in enumerate(samples):
        if v > LOUD or v < -LOUD:
            return i
    return None


def loudest(samples, seconds):
    """`seconds` of samples from the first loud one (fewer if they end)."""
    i = first_loud(samples)
    if i is None:
        return samples[:0]
    return samples[i:i + int(seconds * RATE)]


def wait_sound(path, start, seconds, timeout):
    """`seconds` of sound from the first loud sample of what the console
    recorded after byte `start`; None if it does not come in time. The file
    grows at the pace the console plays; nothing tells when it has."""
    def heard():
        if os.path.exists(path):
            samples = read_raw(path, start)
            i = first_loud(samples)
            if i is not None and len(samples) - i >= seconds * RATE:
                return samples[i:i + int(seconds * RATE)]
        return None
    return wait_until(heard, timeout, None)


def describe(path, start):
    if not os.path.exists(path):
        return 'no file %s' % path
    samples = read_raw(path, start)
    peak = max((abs(v) for v in samples), default=0)
    return '%d samples recorded, peak %d' % (len(samples), peak)


def sox_stat(samples):
    """sox's rough frequency (Hz) and RMS amplitude (of 1) of mono samples."""
    r = subprocess.run(['sox', '-t', 'raw', '-r', str(RATE), '-e', 'signed', '-b', '16',
                        '-c', '1', '-', '-n', 'stat'], input=samples.tobytes(),
                       capture_output=True, check=True)
    text = r.stderr.decode()
    freq = float(re.search(r'Rough\s+frequency:\s+(\S+)', text).group(1))
    rms = float(re.search(r'RMS\s+amplitude:\s+(\S+)', text).group(1))
    return freq, rms


def longest_gap_ms(samples, amplitude):
    """The longest stretch, in ms, in which no sample reaches a tenth of
    `amplitude` (of 1), as the unit tests count a gap: a sine's own zero
    crossings are far shorter, and the decoder's guess at a lost packet
    fades under it only after a frame or two."""
    floor = amplitude * 32767 / 10
    longest = run = 0
    for v in samples:
        if -floor < v < floor:
            run += 1
            longest = max(longest, run)
        else:
            run = 0
    return longest * 1000 / RATE


def median_frequency(samples):
    """sox's rough frequency of each 100 ms of `samples`, the median: one
    frame guessed or dropped on a loaded machine shifts a window, not the
    tone."""
    step = RATE // 10
    freqs = sorted(sox_stat(samples[i:i + step])[0]
                   for i in range(0, len(samples) - step + 1, step))
    return freqs[len(freqs) // 2]


def check_tone(s, samples, hz, amplitude, what, max_gap_ms=20):
    """`samples` are a tone of `hz` at `amplitude` (peak, of 1): frequency
    within 2% (the median of 100 ms windows), RMS within 3 dB (the codec is
    lossy), no gap longer than `max_gap_ms` (by default the concealment
    limit, two frames: a loaded machine may have the console guess one).
    Returns (frequency, rms, longest gap in ms)."""
    if len(samples) < RATE // 2:
        s.fail('%s: %d samples of sound, not half a second' % (what, len(samples)))
    # kept with the test's logs, to listen to when it fails
    name = re.sub(r'[^a-z0-9]+', '-', what.lower()).strip('-') + '.wav'
    with wave.open(os.path.join(s.outdir, name), 'wb') as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(samples.tobytes())
    rms = sox_stat(samples)[1]
    freq = median_frequency(samples)
    gap = longest_gap_ms(samples, amplitude)
    want_rms = amplitude / 2 ** 0.5
    if abs(freq - hz) > hz * 0.02:
        s.fail('%s: %.1f Hz, not %d' % (what, freq, hz))
    if not want_rms / 1.41 < rms < want_rms * 1.41:
        s.fail('%s: RMS %.3f, not %.3f' % (what, rms, want_rms))
    if gap > max_gap_ms:
        s.fail('%s: a gap of %.1f ms (at most %g)' % (what, gap, max_gap_ms))
    log('%s: %.1f Hz, RMS %.3f, longest gap %.1f ms' % (what, freq, rms, gap))
    return freq, rms, gap


# one device for both ways (asym); the file plugin records what passes
# through it either way, so each way has its own
ASOUNDRC = """pcm.slimconsole {
	type asym
	playback.pcm "slimspeaker"
	capture.pcm "slimmic"
}
pcm.slimspeaker {
	type file
	slave.pcm "null"
	file "%(out)s"
	format "raw"
}
pcm.slimmic {
	type file
	slave.pcm "null"
	file "/dev/null"
	infile "%(mic)s"
	format "raw"
}
"""


def sound_device(s, name, mic_hz):
    """An ALSA device `slimconsole` for a console: it records what is played
    to a file and hears a tone of `mic_hz`. Returns (the console's
    environment and arguments, the file)."""
    out = os.path.join(s.tmp, name + '-speaker.raw')
    mic = os.path.join(s.tmp, name + '-mic.raw')
    subprocess.run(['sox', '-n', '-r', '48000', '-c', '1', '-b', '16', '-e', 'signed', mic,
                    'synth', '120', 'sine', str(mic_hz), 'vol', '0.5'], check=True)
    home = os.path.join(s.tmp, name + '-home')
    os.makedirs(home, exist_ok=True)
    with open(os.path.join(home, '.asoundrc'), 'w') as f:
        f.write(ASOUNDRC % {'out': out, 'mic': mic})
    return {'HOME': home}, ['--audio', 'alsa:slimconsole'], out


def console_with_sound(s, name, mic_hz):
    """A console of the session's whose ALSA device records to a file and
    hears `mic_hz`."""
    env, args, out = sound_device(s, name, mic_hz)
    return s.start_console(console_id=name, extra_args=args, env=env), out


def file_size(path):
    return os.path.getsize(path) if os.path.exists(path) else 0
