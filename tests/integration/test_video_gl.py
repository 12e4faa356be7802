"""Video and a game drawn with OpenGL in software (Mesa's llvmpipe, over
wl_shm): mpv --vo=gpu playing a clip, and chromium-bsu (a game from
Debian's archive) on its animated title screen and then in play. Each is
found to be video by how it redraws (neither says so), goes to the console
as CSCS, and once stopped the console equals grim byte for byte."""
import os
import subprocess

from slimtest import NO_CODEC, KEY_ENTER, Session, log, require_programs, run, scaled

GL_ENV = {'LIBGL_ALWAYS_SOFTWARE': '1', 'SDL_VIDEODRIVER': 'wayland',
          # chromium-bsu: no sound card here, and none wanted
          'SDL_AUDIODRIVER': 'dummy', 'ALSOFT_DRIVERS': 'null'}


def wait_video(s, what, before):
    # 60 pieces: a few frames' worth as video, which llvmpipe draws slowly on
    # a loaded machine (two suites at once gave a title screen under 200 in 30 s)
    st = s.wait_stats(lambda st: st['cscs'] > before['cscs'] + 60, 'CSCS for ' + what,
                      timeout=30)
    log('%s: CSCS %dx%d -> %dx%d' % (what, st['cscs_src_w'], st['cscs_src_h'],
                                      st['cscs_dst_w'], st['cscs_dst_h']))


def test():
    require_programs('mpv', 'ffmpeg', '/usr/games/chromium-bsu')
    with Session('video_gl', size=(800, 600), console_args=NO_CODEC) as s:
        clip = os.path.join(s.tmp, 'clip.mkv')
        subprocess.run(['ffmpeg', '-v', 'error', '-y', '-f', 'lavfi', '-i',
                        'mandelbrot=size=320x240:rate=30', '-t', '4', '-c:v', 'mpeg4',
                        '-q:v', '2', clip], check=True, timeout=scaled(60))
        before = s.console.stats()
        mpv = s.start_client(['mpv', '--vo=gpu', '--gpu-context=wayland', '--no-audio',
                              '--loop=inf', '--hwdec=no', '--osd-level=0', '--no-osc',
                              '--no-input-default-bindings', '--really-quiet', clip],
                             env=GL_ENV)
        wait_video(s, 'mpv --vo=gpu', before)
        s.assert_frozen_equal(mpv)
        mpv.stop()

        before = s.console.stats()
        game = s.start_client(['/usr/games/chromium-bsu'], env=GL_ENV)
        wait_video(s, 'chromium-bsu\'s title screen', before)
        # Enter: "new game"; the game plays (and the hero ship dies) on its own
        s.tap(KEY_ENTER)
        before = s.console.stats()
        wait_video(s, 'chromium-bsu in play', before)
        s.assert_frozen_equal(game)


run(test)
