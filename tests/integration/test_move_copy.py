"""Alt + drag moves a window; the console receives the move as COPY
commands, not as the window's pixels again, and the pointer with each
frame of the drag (it rides in the frame's datagrams)."""
from slimtest import BTN_LEFT, KEY_LEFTALT, BACKGROUND, Session, log, run

STEPS = 20
STEP = (10, 5)  # pixels per motion: 200 x 100 in all


def test():
    with Session('move_copy') as s:
        s.start_client([s.slim_echo], wait_line='ready')
        # the first window is placed at (32, 32); slim-echo is 256x256 and white
        x0, y0 = 32, 32
        img = s.wait_screen(lambda img: img.getpixel((x0 + 128, y0 + 128)) == (255, 255, 255),
                            'slim-echo at (32, 32)')
        s.settled()
        before = s.stats()
        s.motion(x0 + 128, y0 + 128)
        s.key(KEY_LEFTALT, True)
        s.button(BTN_LEFT, True)
        for i in range(1, STEPS + 1):
            s.rmotion(*STEP)
            # a frame already under way when the motion arrived may still
            # carry the previous position: the next frames must bring this one
            want = (x0 + 128 + i * STEP[0], y0 + 128 + i * STEP[1])
            s.wait_stats(lambda st: (st['cursor_x'], st['cursor_y']) == want,
                         'pointer at %r after step %d of the drag' % (want, i), timeout=5)
        s.button(BTN_LEFT, False)
        s.key(KEY_LEFTALT, False)
        s.settled()
        after = s.stats()
        d = {k: after[k] - before[k] for k in after}
        log('during the drag: copy_px=%d fill_px=%d set_px=%d bitmap_px=%d frames=%d '
            'datagrams=%d bytes=%d' % (d['copy_px'], d['fill_px'], d['set_px'], d['bitmap_px'],
                                       d['frames'], d['datagrams'], d['bytes']))
        painted = d['set_px'] + d['bitmap_px'] + d['fill_px']
        if d['copy_px'] < 2 * painted:
            s.fail('the drag arrived mostly as pixels, not moves: copy_px=%d, '
                   'set_px+bitmap_px+fill_px=%d' % (d['copy_px'], painted))
        img = s.assert_screens_equal()
        # the window is where the drag left it, and no longer where it was
        x1, y1 = x0 + STEPS * STEP[0], y0 + STEPS * STEP[1]
        if img.getpixel((x1 + 128, y1 + 128)) != (255, 255, 255) or \
                img.getpixel((x0 + 8, y0 + 8)) != BACKGROUND:
            s.fail('the window is not at (%d, %d) after the drag' % (x1, y1))


run(test)
