"""YUV clients without a detour, and the viewport honoured.

- gst's videotestsrc in NV12, I420 and YUY2 into waylandsink (wl_shm YUV
  buffers): the picture on the server (grim) matches the same pattern drawn
  from BGRx: MIN_NEAR of its pixels within MAX_CONVERSION_DIFF a channel
  (the conversion rounds unlike GStreamer's; 4:2:0 blends the chroma of
  the two columns at a bar's edge), and the console equals grim byte for
  byte once the client is stopped.
- A 320x240 NV12 video made fullscreen on an 800x600 screen (waylandsink
  scales it with wp_viewporter) goes to the console as CSCS of its own
  320x240 planes, scaled by the console to 800x600.
- weston-simple-damage --use-viewport (a viewport that crops its buffer)
  shows what it shows without the viewport: the crop's offset counts.
"""
import os

from slimtest import (NO_CODEC, BACKGROUND, Session, fraction_not, log, require_programs, run,
                      Image, ImageChops)

MAX_CONVERSION_DIFF = 6
# the rest: columns where a bar's edge shares its chroma sample with the next bar
MIN_NEAR = 0.97
W, H = 320, 240


def pattern_box(img):
    """The bounding box of what is not the background."""
    return ImageChops.difference(img, Image.new('RGB', img.size, BACKGROUND)).getbbox()


def show(s, fmt, extra=()):
    return s.start_client(['gst-launch-1.0', '-q', 'videotestsrc', 'pattern=smpte75', '!',
                           'video/x-raw,format=%s,width=%d,height=%d' % (fmt, W, H), '!',
                           'waylandsink', *extra])


def picture(s, fmt):
    """grim's picture of the pattern in `fmt`, the console equal to it."""
    gst = show(s, fmt)
    s.wait_screen(lambda img: fraction_not(img, BACKGROUND) > 0.1, 'the %s picture' % fmt)
    img = s.assert_frozen_equal(gst)
    gst.stop()
    s.wait_screen(lambda img: fraction_not(img, BACKGROUND) == 0, 'the %s window gone' % fmt)
    box = pattern_box(img)
    return img.crop(box)


def test():
    require_programs('gst-launch-1.0', 'weston-simple-damage')
    with Session('yuv_clients', size=(800, 600), console_args=NO_CODEC) as s:
        reference = picture(s, 'BGRx')
        for fmt in ('NV12', 'I420', 'YUY2'):
            img = picture(s, fmt)
            if img.size != reference.size:
                s.fail('%s shows %s, BGRx %s' % (fmt, img.size, reference.size))
            r, g, b = ImageChops.difference(img, reference).split()
            worst = ImageChops.lighter(ImageChops.lighter(r, g), b)
            near = sum(worst.histogram()[:MAX_CONVERSION_DIFF + 1]) / (W * H)
            log('%s: %.2f%% of the pixels within %d of the BGRx picture' % (
                fmt, 100 * near, MAX_CONVERSION_DIFF))
            if near < MIN_NEAR:
                img.save(os.path.join(s.outdir, '%s-grim.png' % fmt))
                s.fail('%s: only %.2f%% of the pixels within %d of BGRx' % (
                    fmt, 100 * near, MAX_CONVERSION_DIFF))

        # fullscreen: the viewport scales 320x240 to the screen, the console gets 320x240
        gst = s.start_client(['gst-launch-1.0', '-q', 'videotestsrc', 'pattern=ball',
                              'is-live=true', '!',
                              'video/x-raw,format=NV12,width=%d,height=%d,framerate=30/1'
                              % (W, H), '!', 'waylandsink', 'fullscreen=true'])
        st = s.wait_stats(lambda st: st['cscs'] > 0 and st['cscs_dst_w'] == 800,
                          'CSCS of the fullscreen video', timeout=20)
        log('CSCS %dx%d -> %dx%d' % (st['cscs_src_w'], st['cscs_src_h'], st['cscs_dst_w'],
                                     st['cscs_dst_h']))
        if (st['cscs_src_w'], st['cscs_src_h'], st['cscs_dst_h']) != (W, H, 600):
            s.fail('the fullscreen video went as %dx%d -> %dx%d, not %dx%d -> 800x600' % (
                st['cscs_src_w'], st['cscs_src_h'], st['cscs_dst_w'], st['cscs_dst_h'], W, H))
        s.assert_frozen_equal(gst)
        gst.stop()
        s.wait_screen(lambda img: fraction_not(img, BACKGROUND) == 0, 'the video gone')

        # a viewport's crop: the same picture with and without it
        shots = []
        for args in ([], ['--use-viewport']):
            c = s.start_client(['weston-simple-damage', '--width=300', '--height=200', *args])
            s.wait_screen(lambda img: fraction_not(img, BACKGROUND) > 0.05,
                          'weston-simple-damage %s' % ' '.join(args))
            shots.append(s.assert_frozen_equal(c))
            c.stop()
            s.wait_screen(lambda img: fraction_not(img, BACKGROUND) == 0, 'its window gone')
        # weston-simple-damage paints what a viewport must crop away red; the
        # border and background are the same with and without (the ball moves)
        plain, cropped = ([c for n, c in sorted(img.crop(pattern_box(img)).getcolors(1 << 20),
                                               reverse=True)[:2]] for img in shots)
        log('most common colours: %s without the viewport, %s with it' % (plain, cropped))
        if plain != cropped:
            s.fail('with its viewport weston-simple-damage shows %s, not %s' % (cropped, plain))


run(test)
