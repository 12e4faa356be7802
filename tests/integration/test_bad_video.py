"""Bad YUV buffers, viewports and content types: each client gets the
protocol error the specs prescribe, the compositor says so once in its log,
and nothing else changes. Then a client that says "video" through
wp_content_type_v1 goes as CSCS from its first frames, and once stopped the
console equals grim byte for byte. A second console that says in its HELLO
that video may take only 2 Mbit/s on its link gets the same video from
far fewer samples."""
import os

from slimtest import NO_CODEC, BACKGROUND, Session, fraction_not, log, run

# mode -> what slim-bad-yuv must print
EXPECTED = {
    'stride': 'error wl_shm_pool 1',         # wl_shm.error.invalid_stride
    'pool': 'error wl_shm_pool 1',
    'viewport-src': 'error wp_viewport 2',   # wp_viewport.error.out_of_buffer
    'viewport-zero': 'error wp_viewport 0',  # wp_viewport.error.bad_value
    'content-twice': 'error wp_content_type_manager_v1 0',  # already_constructed
    'odd': 'ok',
}


def test():
    with Session('bad_video', console_args=NO_CODEC) as s:
        bad = os.environ.get('SLIM_BAD_YUV', '')
        mark = s.compositor.stderr.mark()
        for mode, want in EXPECTED.items():
            r = s.run_client([bad, mode])
            got = r.stdout.decode().strip()
            log('%s: %s' % (mode, got))
            if got != want:
                s.fail('slim-bad-yuv %s printed %r, not %r (stderr %r)' % (
                    mode, got, want, r.stderr.decode()))
        said = [l for l in s.compositor.log_since(mark) if 'YUV buffer' in l]
        if len(said) != 2:
            s.fail('the compositor said %d lines of the two bad YUV buffers: %s' % (
                len(said), said))
        # nothing else changed: the screen is the background again, on both ends
        s.wait_screen(lambda img: fraction_not(img, BACKGROUND) == 0, 'the windows gone')
        s.assert_screens_equal()

        before = s.console.stats()
        video = s.start_client([bad, 'video'], wait_line='ready')
        s.wait_stats(lambda st: st['cscs'] > before['cscs'], 'CSCS for a client that says video')
        hinted = [l for l in s.compositor.log_since(mark) if 'client says video' in l]
        if not hinted:
            s.fail('the compositor never took the client\'s word that it shows video')
        s.assert_frozen_equal(video)
        full = s.console.stats()
        video.stop()

        # a console on a slow link: --video-budget 2 (Mbit/s) in its HELLO
        s.console.quit()
        s.console = s.start_console(extra_args=['--video-budget', '2'])
        video = s.start_client([bad, 'video'], wait_line='ready')
        slow = s.wait_stats(lambda st: st['cscs'] > 0, 'CSCS on the slow console')
        log('CSCS %dx%d on the console at 200 Mbit/s, %dx%d at 2' % (
            full['cscs_src_w'], full['cscs_src_h'], slow['cscs_src_w'], slow['cscs_src_h']))
        if slow['cscs_src_w'] * 4 > full['cscs_src_w']:
            s.fail('the console asked for 2 Mbit/s and got %dx%d samples (%dx%d at 200)' % (
                slow['cscs_src_w'], slow['cscs_src_h'], full['cscs_src_w'], full['cscs_src_h']))
        s.assert_frozen_equal(video)


run(test)
