"""Video goes to a console that decodes H.264 as H.264 (x264 in software
on the server, libavcodec on the console); everything else stays exact.

- mpv (--vo=wlshm) plays a moving testsrc2 clip beside a foot terminal
  showing text: the console's stats count decoded pictures and no CSCS,
  everything outside the video (the text among it) equals grim byte for
  byte while it plays, and once mpv is stopped (SIGSTOP) the whole console
  equals grim byte for byte.
- A 1280x720 clip whose every frame is testsrc2's first, fullscreen, so
  that grim and the console show the same frame while it plays: the
  console's picture is within PSNR 38 dB (luma) of the server's at the
  default budget (H.264 is lossy by design) and was coded at 1280x720.
- gst's videotestsrc in NV12 into waylandsink, mpv --vo=gpu and
  chromium-bsu (a game from Debian's archive) drawn with llvmpipe: each
  goes as H.264, and is exact once stopped.
- A client that says video and changes its size every frame: after a few
  encoders the compositor says so and sends it as CSCS (an encoder costs
  milliseconds to open), making no more encoders meanwhile; once stopped
  the console equals grim.
"""
import os
import subprocess
import time

from slimtest import (BACKGROUND, KEY_ENTER, Session, fraction_not, images_equal, log,
                      psnr_luma, require_programs, run, scaled)

W, H = 1280, 720
CLIP_W, CLIP_H = 640, 360
BOX = (64, 64, 64 + CLIP_W, 64 + CLIP_H)  # mpv's window: the second to map
MIN_PSNR = 38.0
GL_ENV = {'LIBGL_ALWAYS_SOFTWARE': '1', 'SDL_VIDEODRIVER': 'wayland',
          'SDL_AUDIODRIVER': 'dummy', 'ALSOFT_DRIVERS': 'null'}


def make_clip(path, w, h, still, rate=30, seconds=4):
    """A lossless-enough clip of testsrc2 (or its first frame again and again)."""
    src = 'testsrc2=size=%dx%d:rate=%d' % (w, h, rate)
    vf = ['-vf', 'trim=end_frame=1,loop=loop=-1:size=1'] if still else []
    subprocess.run(['ffmpeg', '-v', 'error', '-y', '-f', 'lavfi', '-i', src, *vf,
                    '-t', str(seconds), '-c:v', 'mpeg4', '-q:v', '1', path],
                   check=True, timeout=scaled(60))




def outside_box(img):
    img = img.copy()
    img.paste((0, 0, 0), BOX)
    return img


def mpv(s, clip, *extra, env=None):
    return s.start_client(['mpv', '--no-audio', '--loop=inf', '--hwdec=no', '--osd-level=0',
                           '--no-osc', '--no-input-default-bindings', '--really-quiet',
                           '--no-border', *extra, clip], env=env)


def wait_pictures(s, what, before, n=30, timeout=30):
    """n more decoded pictures, and no CSCS meanwhile."""
    v = s.wait_video(lambda v: v['pictures'] >= before['pictures'] + n,
                     'H.264 pictures for ' + what, timeout=timeout)
    log('%s: %s' % (what, v))
    return v


def test():
    require_programs('mpv', 'ffmpeg', 'foot', 'gst-launch-1.0', '/usr/games/chromium-bsu')
    with Session('video_h264', size=(W, H)) as s:
        moving = os.path.join(s.tmp, 'moving.mkv')
        still = os.path.join(s.tmp, 'still.mkv')
        make_clip(moving, CLIP_W, CLIP_H, still=False)
        make_clip(still, W, H, still=True)
        s.start_client(['foot', '--', 'sh', '-c',
                        'printf "exact text beside a video\\n"; exec sleep 3600'])
        s.wait_screen(lambda img: fraction_not(img, BACKGROUND) > 0.2, 'the foot window')
        s.settled()

        # The moving clip: H.264 on the console, exact text beside it.
        before, cscs = s.console.video_stats(), s.console.stats()['cscs']
        player = mpv(s, moving, '--vo=wlshm')
        v = wait_pictures(s, 'mpv --vo=wlshm', before, n=60)
        if (v['src_w'], v['src_h']) != (CLIP_W, CLIP_H):
            s.fail('the clip went as %dx%d, not %dx%d' % (v['src_w'], v['src_h'], CLIP_W, CLIP_H))
        if s.console.stats()['cscs'] != cscs:
            s.fail('CSCS went to a console that decodes H.264')
        g = s.grim_image()
        c = s.console_image()
        why = images_equal(outside_box(g), outside_box(c))
        if why:
            s.fail('outside the video, the console differs from grim while it plays: ' + why)
        s.assert_frozen_equal(player)
        player.stop()
        s.settled()

        # The still clip fullscreen: its quality on the console.
        before = s.console.video_stats()
        player = mpv(s, still, '--vo=wlshm', '--fs')
        v = wait_pictures(s, 'the still 1280x720 clip', before, n=60)
        if (v['src_w'], v['src_h']) != (W, H):
            s.fail('the still clip went as %dx%d, not %dx%d' % (v['src_w'], v['src_h'], W, H))
        g = s.grim_image()
        c = s.console_image()
        quality = psnr_luma(g, c)
        log('PSNR of the 1280x720 video on the console: %.1f dB' % quality)
        if quality < MIN_PSNR:
            g.save(os.path.join(s.outdir, 'psnr-grim.png'))
            c.save(os.path.join(s.outdir, 'psnr-console.png'))
            s.fail('the video on the console is %.1f dB from the server\'s, under %.0f dB'
                   % (quality, MIN_PSNR))
        if quality == float('inf'):
            s.fail('the video on the console is exact: it did not go as H.264')
        s.assert_frozen_equal(player)
        player.stop()
        s.settled()

        # YUV from a client: gst in NV12.
        before = s.console.video_stats()
        gst = s.start_client(['gst-launch-1.0', '-q', 'videotestsrc', 'pattern=ball',
                              'is-live=true', '!',
                              'video/x-raw,format=NV12,width=640,height=360,framerate=30/1',
                              '!', 'waylandsink'])
        wait_pictures(s, 'gst NV12', before)
        s.assert_frozen_equal(gst)
        gst.stop()
        s.settled()

        # A video that changes its size every frame.
        mark = s.compositor.stderr.mark()
        before = s.console.stats()
        resizing = s.start_client([os.environ['SLIM_BAD_YUV'], 'resizing'], wait_line='ready')
        _, line = s.compositor.stderr.wait(lambda l: 'changes size every few pictures' in l,
                                           mark, time.monotonic() + scaled(20))
        if line is None:
            s.fail('a video resizing every frame was never sent as CSCS')
        s.wait_stats(lambda st: st['cscs'] > before['cscs'] + 30, 'CSCS for the resizing video')
        opened = [l for l in s.compositor.log_since(mark) if 'h264: ' in l and 'x264' in l]
        log('%d encoders opened for it' % len(opened))
        if len(opened) > 6:
            s.fail('%d encoders were opened for a video that resizes every frame' % len(opened))
        s.assert_frozen_equal(resizing)
        resizing.stop()
        s.settled()

        # OpenGL in software: mpv --vo=gpu, and a game.
        before = s.console.video_stats()
        player = mpv(s, moving, '--vo=gpu', '--gpu-context=wayland', env=GL_ENV)
        wait_pictures(s, 'mpv --vo=gpu', before)
        s.assert_frozen_equal(player)
        player.stop()
        s.settled()
        before = s.console.video_stats()
        game = s.start_client(['/usr/games/chromium-bsu'], env=GL_ENV)
        wait_pictures(s, 'chromium-bsu\'s title screen', before)
        s.tap(KEY_ENTER)
        before = s.console.video_stats()
        wait_pictures(s, 'chromium-bsu in play', before)
        s.assert_frozen_equal(game)
        v = s.console.video_stats()
        if v['errors'] != 0:
            s.fail('the console could not decode %d pictures' % v['errors'])


run(test)
