"""Video goes to the console as CSCS and everything else stays exact.

First a terminal scrolling as fast as it can: it redraws like a video, but
its picture is text, so the compositor says so and no CSCS goes out.

mpv (--vo=wlshm, software decoding) plays clips made with ffmpeg's lavfi
sources over a foot terminal that shows text (windows cascade: foot at
(32, 32), mpv at (64, 64)):
- a moving clip: the console's stats show CSCS while it plays, and
  everything outside the video (the terminal's text among it) equals grim
  byte for byte while it plays, and mpv inhibits idle (until it exits);
  once mpv is stopped (SIGSTOP) the whole console equals grim byte for
  byte;
- a clip whose every frame is the same picture, so that grim and the
  console show the same frame while it plays: the console's picture of the
  video is within PSNR 35 dB of the server's (CSCS is lossy by design:
  4:2:0 chroma, and the console's bilinear scaling when the budget asks
  for fewer samples), and exact elsewhere.
"""
import math
import os
import subprocess
import time

from slimtest import (NO_CODEC, BACKGROUND, Session, fraction_not, images_equal, log, require_programs,
                      run, scaled, ImageChops)

W, H = 800, 600
CLIP_W, CLIP_H = 320, 240
BOX = (64, 64, 64 + CLIP_W, 64 + CLIP_H)  # mpv's window: the second to map
MIN_PSNR = 35.0
# a picture with smooth colour, as video has: testsrc2's saturated bars with sharp
# edges lose more to 4:2:0 chroma (30 dB)
SOURCE = 'mandelbrot'


def make_clip(path, still, rate=30, seconds=4):
    """An MPEG-4 clip of a lavfi source (or its first frame again and again)."""
    src = '%s=size=%dx%d:rate=%d' % (SOURCE, CLIP_W, CLIP_H, rate)
    vf = ['-vf', 'trim=end_frame=1,loop=loop=-1:size=1'] if still else []
    subprocess.run(['ffmpeg', '-v', 'error', '-y', '-f', 'lavfi', '-i', src, *vf,
                    '-t', str(seconds), '-c:v', 'mpeg4', '-q:v', '2', path],
                   check=True, timeout=scaled(60))


def psnr(a, b):
    """PSNR in dB over R, G and B of two images of one size."""
    hist = ImageChops.difference(a, b).histogram()
    sq = sum(count * (i % 256) ** 2 for i, count in enumerate(hist))
    mse = sq / (a.size[0] * a.size[1] * 3)
    return float('inf') if mse == 0 else 10 * math.log10(255 ** 2 / mse)


def outside_box(img):
    """The image with the video's box painted out."""
    img = img.copy()
    img.paste((0, 0, 0), BOX)
    return img


def play(s, clip):
    return s.start_client(['mpv', '--vo=wlshm', '--no-audio', '--loop=inf', '--hwdec=no',
                           '--osd-level=0', '--no-osc', '--no-input-default-bindings',
                           '--really-quiet', '--no-border', clip])


def test():
    require_programs('mpv', 'ffmpeg', 'foot')
    with Session('video', size=(W, H), console_args=NO_CODEC) as s:
        moving = os.path.join(s.tmp, 'moving.mkv')
        still = os.path.join(s.tmp, 'still.mkv')
        make_clip(moving, still=False)
        make_clip(still, still=True)
        mark = s.compositor.stderr.mark()
        scroll = s.start_client(['foot', '--', 'sh', '-c',
                                 'yes "text scrolling by, not a video" | head -n 10000000'])
        _, line = s.compositor.stderr.wait(lambda l: 'text or a user interface' in l, mark,
                                           time.monotonic() + scaled(20))
        if line is None:
            s.fail('the compositor never looked at the scrolling terminal\'s picture')
        log(line)
        # it is looked at again each second while it scrolls, and said once:
        # 300 frames more are 2.5 s at least (frames come at 120 Hz at most)
        mark = s.compositor.stderr.mark()
        frames = s.console.stats()['frames']
        s.wait_stats(lambda st: st['frames'] > frames + 300, '300 more frames of scrolling',
                     timeout=30)
        again = [l for l in s.compositor.stderr.since(mark) if 'text or a user interface' in l]
        if again:
            s.fail('the log said the terminal was text again: %s' % again[0])
        if s.console.stats()['cscs'] != 0:
            s.fail('a scrolling terminal went as CSCS')
        scroll.stop()
        s.wait_screen(lambda img: fraction_not(img, BACKGROUND) == 0, 'the terminal gone')
        s.start_client(['foot', '--', 'sh', '-c',
                        'printf "exact text beside a video\\n"; exec sleep 3600'])
        s.wait_screen(lambda img: fraction_not(img, BACKGROUND) > 0.3, 'the foot window')
        s.settled()

        # The moving clip: CSCS on the console, exact text beside it.
        before = s.console.stats()
        mark = s.compositor.stderr.mark()
        mpv = play(s, moving)
        # playing, mpv keeps the session from going idle (--stop-screensaver)
        _, line = s.compositor.stderr.wait(lambda l: 'idle: inhibited (1 inhibitor)' in l, mark,
                                           time.monotonic() + scaled(20))
        if line is None:
            s.fail('mpv playing did not inhibit idle')
        st = s.wait_stats(lambda st: st['cscs'] > before['cscs'] + 200, 'CSCS for the video',
                          timeout=30)
        log('while playing: %s' % st)
        g = s.grim_image()
        c = s.console_image()
        why = images_equal(outside_box(g), outside_box(c))
        if why:
            s.fail('outside the video, the console differs from grim while it plays: ' + why)
        a, b = s.grim_image().crop(BOX), g.crop(BOX)
        if images_equal(a, b) is None:
            s.fail('the video\'s box did not change between two screenshots: is mpv at %s?'
                   % (BOX,))
        s.assert_frozen_equal(mpv)
        mark = s.compositor.stderr.mark()
        mpv.stop()
        _, line = s.compositor.stderr.wait(lambda l: 'idle: allowed (0 inhibitors)' in l, mark,
                                           time.monotonic() + scaled(10))
        if line is None:
            s.fail('the session stayed inhibited after mpv stopped')

        # The still clip: grim and the console show the same frame while it plays.
        before = s.console.stats()
        mpv = play(s, still)
        s.wait_stats(lambda st: st['cscs'] > before['cscs'] + 200, 'CSCS for the still clip',
                     timeout=30)
        g = s.grim_image()
        c = s.console_image()
        why = images_equal(outside_box(g), outside_box(c))
        if why:
            s.fail('outside the still video, the console differs from grim: ' + why)
        quality = psnr(g.crop(BOX), c.crop(BOX))
        log('PSNR of the video on the console: %.1f dB' % quality)
        if quality < MIN_PSNR:
            g.save(os.path.join(s.outdir, 'psnr-grim.png'))
            c.save(os.path.join(s.outdir, 'psnr-console.png'))
            s.fail('the video on the console is %.1f dB from the server\'s, under %.0f dB'
                   % (quality, MIN_PSNR))
        if quality == float('inf'):
            s.fail('the video on the console is exact: it did not go as CSCS')
        s.assert_frozen_equal(mpv)


run(test)
