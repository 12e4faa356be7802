"""Sound follows the card: a session of the session manager's plays on the
console its card was tapped on, and moves with the card.

Two consoles of slimland-sessiond's play through ALSA devices that record to
files (tests/integration/soundcheck.py). The user logs in at A (binding the
card tapped there) and a tone played in the session (pw-cat, as root, in the
user's runtime directory) arrives at A; `slimlandctl audio` shows A's codec,
bit rate, jitter buffer and loss. The card tapped on B moves the session
there: the same tone arrives at B, A (back at its greeter, which has no
sound) hears nothing more, and `slimlandctl audio` names B.
"""
import os
import subprocess
import time

from slimsessiond import ManagerSession
from slimtest import log, require_programs, run, scaled, unique_name
import soundcheck

# run-unique names (slimrun.py): a user, its PAM service and the greeter user
USER = SERVICE = unique_name('snd')
GREETER_USER = unique_name('snd-gr')
CARD = '04a0d10a0d1000'
SIZE = (800, 600)


def play(s, tone):
    """pw-cat in the user's session (its PipeWire answers in its runtime dir)."""
    env = dict(os.environ, XDG_RUNTIME_DIR='/run/user/%d' % s.pw.pw_uid)
    r = subprocess.run(['pw-cat', '--playback', tone], env=env, capture_output=True,
                       timeout=scaled(15))
    if r.returncode != 0:
        s.fail('pw-cat --playback in the session: %s' % r.stderr.decode()[-300:])


def wait_ctl_line(s, word, console_id):
    """`slimlandctl WORD`'s line for the console (reports come every 2 s)."""
    deadline = time.monotonic() + scaled(10)
    while True:
        for line in s.ctl(word):
            f = line.split()
            if len(f) > 1 and f[0] == word and f[1] == console_id:
                return f
        if time.monotonic() > deadline:
            s.fail('slimlandctl %s never named %s' % (word, console_id))
        time.sleep(0.2)  # a bounded poll: nothing announces a report


def check_link_line(s, console_id, sid):
    """The pacer's view of the console's link: a round trip, its minimum no larger."""
    f = wait_ctl_line(s, 'link', console_id)
    log('slimlandctl link: %s' % ' '.join(f))
    if len(f) != 9 or f[2] != sid or not 0 <= float(f[6]) <= float(f[5]) or float(f[5]) <= 0:
        s.fail('slimlandctl link says %s' % ' '.join(f))


def heard_at(s, out, start, what):
    heard = soundcheck.wait_sound(out, start, 0.9, scaled(10))
    if heard is None:
        s.fail('%s played no tone: %s' % (what, soundcheck.describe(out, start)))
    soundcheck.check_tone(s, heard, 440, 0.5, what)


def test():
    require_programs('pipewire', 'wireplumber', 'pipewire-pulse', 'dbus-daemon', 'pw-cat',
                     'sox')
    with ManagerSession('sessiond_audio', USER, SERVICE, GREETER_USER) as s:
        s.start_manager()
        env_a, args_a, out_a = soundcheck.sound_device(s, 'desk-a', 660)
        env_b, args_b, out_b = soundcheck.sound_device(s, 'desk-b', 880)
        a = s.approved_console('desk-a', SIZE, env=env_a, extra_args=args_a)
        b = s.approved_console('desk-b', SIZE, env=env_b, extra_args=args_b)
        a.cmd('card insert ' + CARD)
        s.wait_why(a.id, 'unknown card')
        a.cmd('card remove')
        sid = s.log_in(a)[1]
        log('session %s on A' % sid)
        tone = os.path.join(s.tmp, 'tone.wav')
        soundcheck.make_tone(tone, 440, 1.0)
        os.chmod(tone, 0o644)

        start_a = soundcheck.file_size(out_a)
        play(s, tone)
        heard_at(s, out_a, start_a, 'A, the session\'s console')
        f = wait_ctl_line(s, 'audio', a.id)
        log('slimlandctl audio: %s' % ' '.join(f))
        if f[2] != sid or f[3] != 'opus' or f[4] != '64' or not 20 <= int(f[5]) <= 200:
            s.fail('slimlandctl audio says %s' % ' '.join(f))
        check_link_line(s, a.id, sid)

        # the card on B: the session, and its sound, go there
        mark_b = b.mark()
        b.cmd('card insert ' + CARD)
        b.wait_for('attached', 20, start=mark_b)
        s.wait_console_state(b.id, 'session', timeout=30)
        s.wait_console_state(a.id, 'greeter', timeout=30)
        start_a, start_b = soundcheck.file_size(out_a), soundcheck.file_size(out_b)
        play(s, tone)
        heard_at(s, out_b, start_b, 'B, after the card moved the session')
        # what A's device still held of the first tone's fading end may reach its
        # file late (ALSA's file plugin writes in blocks): the tone itself must not
        a_now = soundcheck.read_raw(out_a, start_a)
        loud = [i for i, v in enumerate(a_now) if abs(v) > 0.25 * 32767]
        if loud:
            freq, rms = soundcheck.sox_stat(a_now[loud[0]:loud[0] + 4800])
            s.fail('A, at its greeter, played the tone %.0f ms after the move (%.0f Hz, '
                   'RMS %.3f)' % (loud[0] / 48, freq, rms))
        f = wait_ctl_line(s, 'audio', b.id)
        log('slimlandctl audio: %s' % ' '.join(f))
        if any(line.split()[1:2] == [a.id] for line in s.ctl('audio')):
            s.fail('slimlandctl audio still names A')
        check_link_line(s, b.id, sid)
        if any(line.split()[1:2] == [a.id] for line in s.ctl('link')):
            s.fail('slimlandctl link still names A')


run(test)
