"""A toplevel that asks to be fullscreen before its first commit, as gst's
waylandsink does with fullscreen=true, gets it: the first configure already
carries the screen's size (wlroots 0.15 announces a toplevel only at that
commit, after the request). The video fills the console's screen, and once
the client is stopped the console equals grim byte for byte."""
from slimtest import BACKGROUND, Session, fraction_not, require_programs, run


def test():
    require_programs('gst-launch-1.0')
    with Session('early_fullscreen') as s:
        gst = s.start_client(['gst-launch-1.0', '-q', 'videotestsrc', 'is-live=true',
                              'pattern=smpte', '!', 'waylandsink', 'fullscreen=true'])
        # SMPTE bars cover the screen: not a pixel of the background left
        s.wait_screen(lambda img: fraction_not(img, BACKGROUND) == 1.0,
                      'the video on the whole screen', timeout=20)
        if gst.proc.poll() is not None:
            s.fail('gst-launch exited (%s): no fullscreen window' % gst.proc.returncode)
        s.assert_frozen_equal(gst)
        gst.stop()


run(test)
