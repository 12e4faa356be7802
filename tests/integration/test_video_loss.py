"""H.264 over a lossy network. The compositor and the console run in network
namespaces of their own, joined by a veth pair that drops N% of the UDP
datagrams each way (N = 0, 5, 10; slimnet.py). mpv plays a moving clip
at 1280x720 for the same time at each rate.

A lost fragment is sent again when the console reports its datagram lost,
so a picture is never drawn broken: the console's decoder never refuses
one. What loss costs is a wait (the longest a stream went without a new
picture, logged beside the loss-free run's) and bytes: at 5% and 10% the
video's bytes stay within 1.2x of the loss-free run's for as many pictures
(a key picture for every loss would cost far more). Once the loss stops,
a still 1280x720 clip comes back within 35 dB (luma PSNR) of the server's
picture, and with mpv stopped the console equals grim byte for byte.
Root only (77 otherwise)."""
import os
import subprocess

from slimnet import Lan
from slimtest import Session, log, psnr_luma, run, scaled

PORT = 5555
W, H = 1280, 720
LOSSES = (0, 5, 10)
PICTURES = 150           # a phase's pictures at each loss rate
MAX_BYTES_RATIO = 1.2
MIN_PSNR = 35.0


def make_clip(path, still):
    src = 'testsrc2=size=%dx%d:rate=30' % (W, H)
    vf = ['-vf', 'trim=end_frame=1,loop=loop=-1:size=1'] if still else []
    subprocess.run(['ffmpeg', '-v', 'error', '-y', '-f', 'lavfi', '-i', src, *vf, '-t', '4',
                    '-c:v', 'mpeg4', '-q:v', '1', path], check=True, timeout=scaled(60))




def set_loss(net, percent):
    for host in net:
        host.lose(percent)


def play(s, clip):
    return s.start_client(['mpv', '--vo=wlshm', '--no-audio', '--loop=inf', '--hwdec=no',
                           '--osd-level=0', '--no-osc', '--no-input-default-bindings',
                           '--really-quiet', '--no-border', '--fs', clip])


def phase(s, net, loss):
    """PICTURES pictures at `loss` %: their bytes a picture, the longest gap."""
    set_loss(net, loss)
    before = s.console.video_stats()  # also starts the gap's count again
    v = s.wait_video(lambda v: v['pictures'] >= before['pictures'] + PICTURES,
                     '%d pictures at %d%% loss' % (PICTURES, loss), timeout=90)
    dropped = sum(host.dropped() for host in net)
    per_picture = (v['bytes'] - before['bytes']) / (v['pictures'] - before['pictures'])
    log('%d%% loss: %.0f bytes a picture, longest without a picture %.0f ms, %d datagrams '
        'dropped, key pictures asked %d, decoding errors %d' % (
            loss, per_picture, v['gap_max_ms'], dropped,
            v['key_requests'] - before['key_requests'], v['errors']))
    if loss and dropped == 0:
        s.fail('nothing was dropped at %d%% loss' % loss)
    if v['errors'] != 0:
        s.fail('the console\'s decoder refused %d pictures: a broken one was decoded'
               % v['errors'])
    return per_picture


def test():
    with Lan('video_loss') as lan:
        net = (lan.host('srv', 1), lan.host('desk', 2))
        with Session('video_loss', size=(W, H), port=PORT, listen_host=net[0].addr,
                     compositor_prefix=net[0].argv([]), console_prefix=net[1].argv([])) as s:
            moving = os.path.join(s.tmp, 'moving.mkv')
            still = os.path.join(s.tmp, 'still.mkv')
            make_clip(moving, still=False)
            make_clip(still, still=True)
            player = play(s, moving)
            s.wait_video(lambda v: v['pictures'] > 30, 'the clip playing', timeout=30)
            costs = {loss: phase(s, net, loss) for loss in LOSSES}
            for loss in LOSSES[1:]:
                ratio = costs[loss] / costs[0]
                log('%d%% loss: %.2fx the loss-free run\'s bytes a picture' % (loss, ratio))
                if ratio > MAX_BYTES_RATIO:
                    s.fail('at %d%% loss the video took %.2fx the bytes of the loss-free run'
                           % (loss, ratio))
            set_loss(net, 0)
            player.stop()
            s.settled()
            before = s.console.video_stats()
            player = play(s, still)
            s.wait_video(lambda v: v['pictures'] >= before['pictures'] + 60, 'the still clip',
                         timeout=30)
            quality = psnr_luma(s.grim_image(), s.console_image())
            log('after the loss: PSNR %.1f dB' % quality)
            if quality < MIN_PSNR or quality == float('inf'):
                s.fail('after the loss the picture is %.1f dB from the server\'s' % quality)
            s.assert_frozen_equal(player)


run(test)
