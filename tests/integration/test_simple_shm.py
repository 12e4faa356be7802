"""weston-simple-shm animates; once it is stopped, the console shows what the
compositor renders, byte for byte."""
from slimtest import BACKGROUND, Session, fraction_not, require_programs, run


def test():
    require_programs('weston-simple-shm')
    with Session('simple_shm') as s:
        shm = s.start_client(['weston-simple-shm'])
        s.wait_screen(lambda img: fraction_not(img, BACKGROUND) > 0.05, 'weston-simple-shm')
        # a few frames of animation go through
        for _ in range(10):
            if s.console.next_frame(5) is None:
                s.fail('weston-simple-shm does not animate')
        s.assert_frozen_equal(shm)
        shm.stop()


run(test)
