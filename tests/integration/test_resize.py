"""The screen follows the console's size: 800x600, then a console with the
same id at 1024x768, which then changes to 960x540 in place (as after a
monitor hot-plug); a maximized window fills the new screen."""
from slimtest import BACKGROUND, Session, fraction_not, log, require_programs, run


def check_size(s, size):
    img = s.assert_screens_equal()
    if img.size != size:
        s.fail('the compositor renders %dx%d, not the console\'s %dx%d' % (img.size + size))
    log('screen is %dx%d' % size)


def test():
    require_programs('foot')
    # the compositor starts at 640x480; the console says 800x600
    with Session('resize', size=(640, 480), console_size=(800, 600)) as s:
        check_size(s, (800, 600))
        s.console.quit()
        s.console = s.start_console(size=(1024, 768))
        check_size(s, (1024, 768))
        # its screen changes size in place (a monitor hot-plug): a new association
        mark = s.console.mark()
        s.console.cmd('resize 960 540')
        s.console.wait_for('attached', 15, start=mark)
        s.console.size = (960, 540)
        check_size(s, (960, 540))
        s.start_client(['foot', '--maximized'], env={'SHELL': '/bin/sh', 'PS1': '$ '})
        img = s.wait_screen(lambda img: fraction_not(img, BACKGROUND) > 0.9,
                            'a maximized foot covering the screen')
        s.settled()
        img = s.assert_screens_equal()
        covered = fraction_not(img, BACKGROUND)
        # its frame reaches every edge: no row or column of the desktop shows
        edges = {'top row': img.crop((0, 0, img.size[0], 1)),
                 'bottom row': img.crop((0, img.size[1] - 1, img.size[0], img.size[1])),
                 'left column': img.crop((0, 0, 1, img.size[1])),
                 'right column': img.crop((img.size[0] - 1, 0, img.size[0], img.size[1]))}
        for name, strip in edges.items():
            if fraction_not(strip, BACKGROUND) < 0.5:
                s.fail('the maximized window does not reach the screen\'s %s '
                       '(%.0f%% of the screen covered)' % (name, 100 * covered))
        log('maximized foot covers %.1f%% of the screen' % (100 * covered))


run(test)
