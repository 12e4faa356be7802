"""The default session (data/slimland-session, slimland.conf's `startup`):
after a login at the greeter the console shows the user's session with its
panel (yambar: a terminal and an application launcher, the windows, the
clock, log out) and a terminal, exactly as the compositor renders it. "Log
out" on the panel ends the session: the compositor exits, the manager
closes the PAM session, and the console is back at the greeter.

The greeter and the session each have a session bus of their own, which
ends with them with everything it started, as every process of theirs
does; neither starts Xwayland, as no X11 program runs (a GTK program
finding no session bus would start one through X11 where dbus-x11 is
installed, as on most desktop servers). The greeter runs as a uid of
its own that no user has (greeter_uids), and nothing in its log misses
one."""
import os

from slimsessiond import ManagerSession
from slimtest import (BACKGROUND, BTN_LEFT, fraction_not, log, require_programs, run,
                      unique_name)

# run-unique names (slimrun.py): a user, its PAM service and the greeter user
USER = SERVICE = unique_name('desk')
GREETER_USER = unique_name('desk-gr')
SIZE = (1024, 768)
PANEL_H = 28
PANEL = (0x1d, 0x25, 0x30)  # darker than the desktop (BACKGROUND)
EDGE = (0x6a, 0x7a, 0x90)   # a line under it, so that it does not melt into it


def assert_has_bus(s, procs, what):
    """A dbus-daemon among procs (ManagerSession.processes_of): the compositor's."""
    if 'dbus-daemon' not in [name for _, name in procs.values()]:
        s.fail('%s has no session bus of its own: %s' % (
            what, sorted(name for _, name in procs.values())))


def assert_no_user_lookup(s, user, log_name):
    """Nothing in the greeter's log missed a user for its uid (it has none:
    a uid of greeter_uids; USER, LOGNAME and HOME are the greeter user's)."""
    missed = [l for l in s.compositor_log(user, log_name)
              if 'getpwuid' in l or 'unknown user' in l.lower() or 'no passwd' in l.lower()]
    if missed:
        s.fail('%s/%s: a program missed a user for its uid: %s' % (user, log_name, missed[:5]))


def assert_all_ended(s, uid, procs, what):
    """Every process of procs (processes_of) ends, and none of the user's
    that started later runs either (a service its bus started late)."""
    s.wait_gone(procs, what)
    later = s.processes_of(uid)
    for fd, _ in later.values():
        os.close(fd)
    if later:
        s.fail('%s: still running: %s' % (what, ', '.join(
            '%s (%d)' % (name, pid) for pid, (_, name) in sorted(later.items()))))


def test():
    require_programs('yambar', 'foot')
    session = os.environ.get('SLIMLAND_SESSION', '')
    with ManagerSession('default_session', USER, SERVICE, GREETER_USER,
                        startup=session) as s:
        s.start_manager()
        a = s.approved_console('desk-ds', SIZE)
        greeter = s.processes_of(s.greeter_uid(a.id))
        assert_has_bus(s, greeter, 'the greeter')
        row = s.log_in(a)
        sid, compositor = row[1], int(row[3])
        assert_all_ended(s, s.greeter_uids, greeter, 'the greeter after the login')
        s.assert_no_xwayland(GREETER_USER, 'greeter-' + a.id)
        assert_no_user_lookup(s, GREETER_USER, 'greeter-' + a.id)

        # the panel's text on its own background, and foot's window below it
        def panel_and_terminal(img):
            row = [img.getpixel((x, PANEL_H // 2)) for x in range(0, SIZE[0], 2)]
            text = sum(1 for p in row if p != PANEL)
            return text > 20 and fraction_not(img, BACKGROUND) > 0.3
        s.wait_screen(panel_and_terminal, 'the panel and the terminal', console=a, timeout=30)
        s.settled(console=a, quiet=0.5)
        img = s.console_image(a)
        edge = sum(1 for x in range(SIZE[0]) if img.getpixel((x, PANEL_H)) == EDGE)
        if edge < SIZE[0] * 0.9:
            s.fail('the panel has no edge: %d of %d pixels of row %d are %s' % (
                edge, SIZE[0], PANEL_H, EDGE))
        display = s.compositor_display(USER, 'session-%s' % sid)
        s.assert_shows(a, '/run/user/%d' % s.pw.pw_uid, display)
        session = s.processes_of(s.pw.pw_uid)
        if compositor not in session:
            s.fail('the session\'s compositor (%d) is not among its user\'s processes' %
                   compositor)
        assert_has_bus(s, session, 'the session')

        # "Log out", the panel's last word at its right end
        a.motion(SIZE[0] - 20, PANEL_H // 2)
        a.click(BTN_LEFT)
        s.wait_console_state(a.id, 'greeter', timeout=30)
        assert_all_ended(s, s.pw.pw_uid, session, 'the session after log out')
        s.assert_no_xwayland(USER, 'session-%s' % sid)
        log('logged out: the console is back at the greeter, nothing of the session runs')


run(test)
