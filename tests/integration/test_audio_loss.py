"""Sound over a lossy LAN: the session (its compositor in one network
namespace) plays a tone to a console in another, through a bridge whose
nftables rule drops 5%, then 10%, of the datagrams reaching the console.

A lost AUDIO packet is never sent again on its own: the next datagrams
carry copies of it (two), and a packet lost with all its copies is the
Opus decoder's guess. What arrives must still be the tone (frequency
within 2%, level within 3 dB), what the network took must be rebuilt from
the copies (at most 2 frames of a round lost in every copy: three losses in
a row at 10% come once in a thousand frames), and no gap may be a stall,
longer than the concealment limit: the console guesses 100 ms at most
before it takes the stream for stopped. (A gap of a frame or three is what
a late packet costs on a machine too loaded to schedule a sender in time,
as under ASan with other tests beside it: a loss of the machine's, not the
network's.) Root only (network namespaces, nftables).
"""
import os

from slimnet import Lan
from slimtest import Session, log, require_programs, run, scaled
import soundcheck
from soundcheck import console_with_sound

PORT = 5571
# the console's jitter buffer guesses this long before silence (DRY_FRAMES)
CONCEALMENT_LIMIT_MS = 100
LOST_IN_EVERY_COPY = 2


def test():
    require_programs('pipewire', 'wireplumber', 'pipewire-pulse', 'dbus-daemon', 'pw-cat',
                     'pactl', 'sox')
    with Lan('audio_loss') as lan:
        srv, desk = lan.host('srv', 1), lan.host('desk', 2)
        with Session('audio_loss', port=PORT, listen_host=srv.addr, audio=True, console=False,
                     compositor_prefix=srv.argv([]), console_prefix=desk.argv([])) as s:
            soundcheck.wait_defaults(s)
            console, out = console_with_sound(s, 'desk', 660)
            tone = os.path.join(s.tmp, 'tone.wav')
            soundcheck.make_tone(tone, 440, 2.0)
            lost_before = 0
            for percent in (5, 10):
                desk.lose(percent)
                start = soundcheck.file_size(out)
                r = s.run_client(['pw-cat', '--playback', tone], timeout=scaled(10))
                if r.returncode != 0:
                    s.fail('pw-cat --playback: %s' % r.stderr.decode()[-300:])
                heard = soundcheck.wait_sound(out, start, 1.9, scaled(5))
                dropped = desk.dropped()
                if heard is None:
                    s.fail('at %d%% loss the console played no tone' % percent)
                if dropped == 0:
                    s.fail('at %d%% loss nftables dropped nothing: the test tested nothing'
                           % percent)
                st = console.audio_stats()
                log('console: %s' % ' '.join('%s=%s' % kv for kv in sorted(st.items())))
                if st['lost'] - lost_before > LOST_IN_EVERY_COPY:
                    s.fail('at %d%% loss %d frames were lost in every copy' % (
                        percent, st['lost'] - lost_before))
                lost_before = st['lost']
                freq, rms, gap = soundcheck.check_tone(
                    s, heard, 440, 0.5, 'the console at %d%% loss' % percent,
                    max_gap_ms=CONCEALMENT_LIMIT_MS)
                log('%d%% loss: %d datagrams dropped' % (percent, dropped))
                desk.lose(0)
            if st['repaired'] == 0:
                s.fail('no packet was rebuilt from its copies: %s' % st)


run(test)
