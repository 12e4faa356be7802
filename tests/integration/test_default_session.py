"""The default session (data/slimland-session, slimland.conf's `startup`):
after a login at the greeter the console shows the user's session with its
panel (yambar: a terminal and an application launcher, the windows, the
clock, log out) and a terminal, exactly as the compositor renders it. "Log
out" on the panel ends the session: the compositor exits, the manager
closes the PAM session, and the console is back at the greeter."""
import os

from slimsessiond import ManagerSession, _pids_of_user
from slimtest import (BACKGROUND, BTN_LEFT, fraction_not, log, require_programs, run,
                      unique_name)

# run-unique names (slimrun.py): a user, its PAM service and the greeter user
USER = SERVICE = unique_name('desk')
GREETER_USER = unique_name('desk-gr')
SIZE = (1024, 768)
PANEL_H = 28
PANEL = (0x33, 0x40, 0x50)


def test():
    require_programs('yambar', 'foot')
    session = os.environ.get('SLIMLAND_SESSION', '')
    with ManagerSession('default_session', USER, SERVICE, GREETER_USER,
                        startup=session) as s:
        s.start_manager()
        a = s.approved_console('desk-ds', SIZE)
        row = s.log_in(a)
        sid, compositor = row[1], int(row[3])

        # the panel's text on its own background, and foot's window below it
        def panel_and_terminal(img):
            row = [img.getpixel((x, PANEL_H // 2)) for x in range(0, SIZE[0], 2)]
            text = sum(1 for p in row if p != PANEL)
            return text > 20 and fraction_not(img, BACKGROUND) > 0.3
        s.wait_screen(panel_and_terminal, 'the panel and the terminal', console=a, timeout=30)
        s.settled(console=a, quiet=0.5)
        display = s.compositor_display(USER, 'session-%s' % sid)
        s.assert_shows(a, '/run/user/%d' % s.pw.pw_uid, display)

        # "Log out", the panel's last word at its right end
        a.motion(SIZE[0] - 20, PANEL_H // 2)
        a.click(BTN_LEFT)
        s.wait_console_state(a.id, 'greeter', timeout=30)
        if compositor in _pids_of_user(s.pw.pw_uid):
            s.fail('the session\'s compositor (%d) still runs after log out' % compositor)
        log('logged out: the console is back at the greeter')


run(test)
