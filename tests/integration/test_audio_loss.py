"""Sound over a lossy LAN: the session (its compositor in one network
namespace) plays a tone to a console in another, through a bridge whose
nftables rule drops 5%, then 10%, of the datagrams reaching the console.

A lost AUDIO packet is never sent again on its own: the next datagrams
carry copies of it (two), and a packet lost with all its copies is the
Opus decoder's guess. What arrives must still be the tone: its frequency within 2%,
its level within 3 dB, and no gap longer than the concealment limit, two
frames (20 ms), where the level falls under a tenth of the tone's. Root
only (network namespaces, nftables).
"""
import os

from slimnet import Lan
from slimtest import Session, log, require_programs, run, scaled
import soundcheck
from soundcheck import console_with_sound

PORT = 5571
CONCEALMENT_LIMIT_MS = 20


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
                log('console: %s' % ' '.join('%s=%s' % kv for kv in
                                             sorted(console.audio_stats().items())))
                freq, rms, gap = soundcheck.check_tone(
                    s, heard, 440, 0.5, 'the console at %d%% loss' % percent,
                    max_gap_ms=CONCEALMENT_LIMIT_MS)
                log('%d%% loss: %d datagrams dropped' % (percent, dropped))
                desk.lose(0)
            st = console.audio_stats()
            log('console: %s' % ' '.join('%s=%s' % kv for kv in sorted(st.items())))
            if st['repaired'] == 0:
                s.fail('no packet was rebuilt from its copies: %s' % st)


run(test)
