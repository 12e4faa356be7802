"""The protocols everyday clients ask for, each doing what it is for:

- xdg-decoration: a client that asks to draw its own frame is told so
  (mode 1); one that asks for the compositor's gets it (mode 2) and a title
  bar above its window, on the console as on grim, by which it is dragged.
- pointer lock: slim-protocols locks the pointer when it enters; the
  console's relative motion reaches it as relative motion, and the pointer
  does not move (no absolute motion event).
- idle inhibit: the compositor says the session is kept awake while the
  client inhibits idle, and no longer once it is gone.
- virtual keyboard: wtype types into foot, whose shell writes into a FIFO.
- layer-shell popups: slim-panel's menu, opened by a click near the
  screen's right edge, is slid onto the screen, shows there, and a click
  outside it closes it.
- layer shell: yambar, a panel at the top with a 30-pixel exclusive zone:
  a maximized foot (with the title bar it asks for) starts below it.
- foreign toplevels: the panel's task list (yambar's foreign-toplevel
  module) is empty with no window, and shows foot's title once it maps.
"""
import os
import time

from slimtest import (BACKGROUND, BTN_LEFT, Session, fraction_not, log, read_fifo,
                      require_programs, run, scaled)

TITLEBAR = (0x3f, 0x4f, 0x66)  # decoration.c's title bar colour
TITLEBAR_H = 24
PANEL = (0x20, 0x40, 0x60)
MY_PANEL = (0x20, 0x50, 0xc0)  # slim-panel's
MENU = (0x30, 0xa0, 0x50)  # and its menu's
YAMBAR = '''bar:
  height: 30
  location: top
  background: 204060ff
  font: DejaVu Sans:size=10
  left:
    - foreign-toplevel:
        content:
          string: {text: "{app-id} {title}", foreground: ffffffff}
'''


def panel_blank(img):
    return all(img.getpixel((x, y)) == PANEL for x in range(0, 400, 3) for y in (8, 15, 22))


def test():
    require_programs('wtype', 'foot', 'yambar')
    client = os.environ.get('SLIM_PROTOCOLS', '')
    with Session('protocols', size=(800, 600)) as s:
        # decorations
        mine = s.start_client([client, 'decorate-client'], wait_line='ready')
        mine.wait_line('mode 1', timeout=scaled(5))
        mine.stop()
        s.wait_screen(lambda img: fraction_not(img, BACKGROUND) == 0, 'the window gone')
        theirs = s.start_client([client, 'decorate-server'], wait_line='ready')
        theirs.wait_line('mode 2', timeout=scaled(5))
        s.settled()
        img = s.assert_screens_equal()
        # the first window goes to (32, 32 + the bar): the bar is above it
        # (looked at above its title's text)
        bar = img.getpixel((100, 32 + 2))
        if bar != TITLEBAR:
            s.fail('no title bar above the window: %s at (100, %d)' % (bar, 32 + 2))
        # dragged by its title bar
        s.console.motion(100, 40)
        s.console.button(BTN_LEFT, True)
        for step in range(1, 6):
            s.console.motion(100 + 20 * step, 40 + 10 * step)
        s.console.button(BTN_LEFT, False)
        s.settled()
        img = s.assert_screens_equal()
        if img.getpixel((200, 82 + 2)) != TITLEBAR:
            s.fail('the title bar did not take the window along')
        # its close button (the title bar's right end) asks the client to close:
        # slim-protocols exits on xdg_toplevel.close
        s.console.motion(132 + 200 - 10, 82 + TITLEBAR_H // 2)
        s.console.click()
        theirs.wait_exit(timeout=5)
        s.wait_screen(lambda img: fraction_not(img, BACKGROUND) == 0, 'the window gone')

        # a panel's menu: 100 pixels wide from x=760 would leave the screen, so slides left
        panel = s.start_client([os.environ.get('SLIM_PANEL', ''), ], wait_line='ready')
        s.wait_screen(lambda img: img.getpixel((400, 10)) == MY_PANEL, 'slim-panel')
        s.console.motion(760, 15)
        s.console.click()
        panel.wait_line('popup 700 15', timeout=scaled(5))
        s.wait_screen(lambda img: (img.getpixel((705, 20)), img.getpixel((795, 90)),
                                   img.getpixel((695, 60))) == (MENU, MENU, BACKGROUND),
                      'the menu at (700, 15)-(800, 95)')
        s.console.motion(400, 300)
        s.console.click()
        panel.wait_line('dismissed', timeout=scaled(5))
        s.wait_screen(lambda img: img.getpixel((750, 60)) == BACKGROUND, 'the menu gone')
        panel.stop()
        s.wait_screen(lambda img: fraction_not(img, BACKGROUND) == 0, 'the panel gone')

        # pointer lock and relative motion
        lock = s.start_client([client, 'lock'], wait_line='ready')
        s.console.motion(100, 100)
        lock.wait_line('locked', timeout=scaled(5))
        mark = lock.stdout.mark()
        s.console.rmotion(5, 7)
        lock.wait_line('relative 5 7', timeout=scaled(5))
        moved = [l for l in lock.stdout.since(mark) if l.startswith('motion')]
        if moved:
            s.fail('the pointer moved while locked: %s' % moved)
        lock.stop()

        # idle inhibit
        mark = s.compositor.stderr.mark()
        inhibit = s.start_client([client, 'inhibit'], wait_line='ready')
        s.compositor.stderr.wait(lambda l: 'idle: inhibited (1 inhibitor)' in l, mark,
                                 time.monotonic() + scaled(5))
        inhibit.stop()
        _, line = s.compositor.stderr.wait(lambda l: 'idle: allowed (0 inhibitors)' in l, mark,
                                           time.monotonic() + scaled(5))
        if line is None:
            s.fail('the compositor never let the session go idle again')

        # a virtual keyboard: wtype types into foot
        s.wait_screen(lambda img: fraction_not(img, BACKGROUND) == 0, 'the windows gone')
        with s.fifo(os.path.join(s.home, 'fifo')) as (_, fd):
            typist = s.start_client(['foot'], env={'SHELL': '/bin/sh', 'PS1': '$ ',
                                                   'HOME': s.home})
            s.wait_screen(lambda img: fraction_not(img, BACKGROUND) > 0.3, 'the foot window')
            s.settled()
            r = s.run_client(['wtype', 'echo slim-wtype > fifo\n'])
            if r.returncode != 0:
                s.fail('wtype: %s' % r.stderr.decode())
            log('the FIFO got %r' % read_fifo(s, fd, b'slim-wtype\n', 10))
        typist.stop()
        s.wait_screen(lambda img: fraction_not(img, BACKGROUND) == 0, 'the terminal gone')

        # a panel reserves its zone; a maximized window fills what is left
        config = os.path.join(s.config_home, 'yambar')
        os.makedirs(config)
        with open(os.path.join(config, 'config.yml'), 'w') as f:
            f.write(YAMBAR)
        # the pointer on the panel from the start (the compositor tells it its
        # screen first: yambar looks it up on entering)
        s.console.motion(10, 10)
        s.start_client(['yambar'])
        s.wait_screen(panel_blank, 'the panel, no window in its task list')
        s.start_client(['foot', '--maximized'], env={'SHELL': '/bin/sh', 'HOME': s.home})
        s.wait_screen(lambda img: img.getpixel((400, 30 + TITLEBAR_H // 2)) == TITLEBAR,
                      'the maximized foot below the panel')
        s.settled()
        img = s.assert_screens_equal()
        if img.getpixel((600, 10)) != PANEL:
            s.fail('the maximized window covers the panel')
        if panel_blank(img):
            s.fail('the panel\'s task list does not show foot')


run(test)
