"""Helpdesk shadowing end to end (slimlandctl shadow, session-manager.md §2
and §4): slimland-sessiond as root, a user logged in at console A (foot),
console B on its greeter lent to watch A's session.

- refused at once, each with its message and a non-zero exit: a session
  that does not exist, a console not enrolled, a caller that is not root;
- the user says N to the question their compositor draws: B keeps its
  greeter and shows nothing of the session; no answer in 30 s is no, too;
- the user says Y: B shows the session exactly as grim sees it, and so
  does A. The red bar the compositor draws over everything is in the
  session's own pixels, so both consoles and grim show it: nothing
  differs. The pointer A moves is drawn on B too; keys typed on B
  (watching only) never reach foot, A's do;
  Ctrl+Alt+Escape on A ends it and B goes back to its greeter;
- with --control and a yes, B moves the pointer and its keys reach foot;
  the owner's console
  leaving (slimlandctl detach) ends the watching, B goes back to its
  greeter.
"""
import os
import subprocess
import time

from slimsessiond import ManagerSession
from slimtest import (BACKGROUND, KEY_ESC, KEY_LEFTALT, fraction_not, log, read_fifo, run,
                      scaled, unique_name, wait_until)

USER = SERVICE = unique_name('shadow')
GREETER_USER = unique_name('shadow-gr')
SIZE = (1024, 768)
KEY_LEFTCTRL = 29
KEY_Y = 21
KEY_N = 49
# what the compositor draws (src/compositor/shadow.c): the question's ground, the bar
ASK_BG = (0x1c, 0x2a, 0x44)
BAR = (0xd0, 0x18, 0x18)


def test():
    with ManagerSession('shadow', USER, SERVICE, GREETER_USER) as s:
        with s.fifo(owner=s.pw) as (fifo, fd):
            flow(s, fifo, fd)


def has(img, rgb):
    return fraction_not(img, rgb) < 1.0


def ctl_status(s, *args, user=None):
    argv = [s.slimlandctl, '--socket', os.path.join(s.run_dir, 'ctl.sock')] + list(args)
    if user:
        argv = ['runuser', '-u', user, '--'] + argv
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=scaled(60))
    return r.returncode, r.stdout.decode(errors='replace') + r.stderr.decode(errors='replace')


def refused(s, want, *args, user=None):
    status, out = ctl_status(s, *args, user=user)
    if status == 0 or want not in out:
        s.fail('slimlandctl %s: status %d, %r (wanted a refusal saying %r)' % (
            ' '.join(args), status, out, want))
    log('slimlandctl %s refused: %s' % (' '.join(args), out.strip()))


def ask(s, sid, console, *extra):
    """slimlandctl shadow in the background, and the question on A's screen."""
    argv = [s.slimlandctl, '--socket', os.path.join(s.run_dir, 'ctl.sock'), 'shadow', sid,
            console.id] + list(extra)
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    s.wait_ctl(lambda t: t.get(('shadow', sid), [])[2:] == [console.id, 'asking'],
               'session %s asking' % sid)
    return p


def finished(s, p, timeout):
    try:
        out, _ = p.communicate(timeout=scaled(timeout))
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        s.fail('slimlandctl shadow did not finish in %gs' % scaled(timeout))
    return p.returncode, out.decode(errors='replace')


def wait_question(s, a, shown):
    s.wait_screen(lambda img: has(img, ASK_BG) == shown,
                  'the question %s on A' % ('shown' if shown else 'gone'), console=a)


def assert_greeter(s, b):
    s.wait_console_state(b.id, 'greeter', timeout=30)
    s.wait_screen(lambda img: fraction_not(img, BACKGROUND) > 0.5, 'the greeter window',
                  timeout=30, console=b)
    s.settled(console=b, quiet=0.5)
    display = s.compositor_display(GREETER_USER, 'greeter-' + b.id)
    img = s.assert_shows(b, s.greeter_runtime(b.id), display)
    if has(img, BAR) or has(img, ASK_BG):
        s.fail('B shows the shadow\'s bar or question on its greeter')


def no(s, a, b, sid):
    mark = b.mark()
    p = ask(s, sid, b)
    wait_question(s, a, True)
    a.tap(KEY_N)
    status, out = finished(s, p, 15)
    if status == 0 or 'the user refused' not in out:
        s.fail('slimlandctl shadow after N: status %d, %r' % (status, out))
    wait_question(s, a, False)
    if any(l.startswith('redirect') for l in b.stdout.since(mark)):
        s.fail('B was sent somewhere after the user said no')
    assert_greeter(s, b)
    log('N: refused (%s), B on its greeter' % out.strip().splitlines()[-1])

    mark = b.mark()
    p = ask(s, sid, b)
    wait_question(s, a, True)
    status, out = finished(s, p, 50)
    if status == 0 or 'did not answer' not in out:
        s.fail('slimlandctl shadow, no answer: status %d, %r' % (status, out))
    wait_question(s, a, False)
    if any(l.startswith('redirect') for l in b.stdout.since(mark)):
        s.fail('B was sent somewhere when nobody answered')
    assert_greeter(s, b)
    log('no answer: refused (%s)' % out.strip().splitlines()[-1])


def yes(s, a, b, sid, *extra):
    p = ask(s, sid, b, *extra)
    wait_question(s, a, True)
    s.console_image(a).save(os.path.join(s.outdir, 'question%s.png' % ''.join(extra)))
    a.tap(KEY_Y)
    status, out = finished(s, p, 30)
    if status != 0 or 'watches' not in out:
        s.fail('slimlandctl shadow after Y: status %d, %r' % (status, out))
    display = s.compositor_display(USER, 'session-%s' % sid)
    runtime = '/run/user/%d' % s.pw.pw_uid
    s.wait_screen(lambda img: has(img, BAR), 'the bar on B', console=b, timeout=20)
    s.settled(console=b, quiet=0.5)
    img = s.assert_shows(b, runtime, display)
    s.assert_shows(a, runtime, display)
    if not has(img, BAR):
        s.fail('grim does not show the bar while B watches')
    img.save(os.path.join(s.outdir, 'watching%s.png' % ''.join(extra)))
    log('Y: B shows the session, bar included, as grim and A do')


def pointer_follows(s, mover, other, pos):
    """The pointer moved at one console is where both consoles draw it (the
    watcher is sent the pointer as the session's console is)."""
    mover.motion(*pos)
    for c in (mover, other):
        s.wait_stats(lambda st: (st['cursor_x'], st['cursor_y']) == pos,
                     '%s\'s pointer at %s' % (c.name, pos), console=c)
    log('pointer moved on %s to %s: both consoles draw it there' % (mover.name, pos))


def flow(s, fifo, fd):
    s.start_manager()
    a = s.approved_console('desk-a', SIZE)
    b = s.approved_console('desk-b', SIZE)
    sid = s.log_in(a)[1]
    s.wait_screen(lambda img: fraction_not(img, BACKGROUND) > 0.3, 'foot', console=a)
    s.settled(console=a, quiet=0.5)
    a.type_text('echo ready >%s\n' % fifo)
    read_fifo(s, fd, b'ready\n', 15)

    refused(s, 'no session 4242', 'shadow', '4242', b.id)
    refused(s, 'not enrolled', 'shadow', sid, 'c0ffee00c0ffee00')
    refused(s, 'root only', 'shadow', sid, b.id, user=USER)
    refused(s, 'no console watches', 'shadow', '--stop', sid)

    no(s, a, b, sid)

    # watching only: B's keys stay out, A's go in; A's chord ends it
    yes(s, a, b, sid)
    pointer_follows(s, a, b, (300, 200))
    b.type_text('echo fromshadow >%s\n' % fifo)
    a.type_text('echo fromowner >%s\n' % fifo)
    read_fifo(s, fd, b'fromowner\n', 15, forbidden=b'fromshadow')
    a.key(KEY_LEFTCTRL, True)
    a.key(KEY_LEFTALT, True)
    a.tap(KEY_ESC)
    a.key(KEY_LEFTALT, False)
    a.key(KEY_LEFTCTRL, False)
    s.wait_ctl(lambda t: t.get(('shadow', sid), [])[2:] == [b.id, 'over', 'owner-ended'],
               'the watching ended by the owner')
    assert_greeter(s, b)
    s.wait_screen(lambda img: not has(img, BAR), 'the bar gone from A', console=a)
    log('Ctrl+Alt+Escape on A: over, B on its greeter')

    # with control: B's keys reach foot; the owner's console leaving ends it
    yes(s, a, b, sid, '--control')
    pointer_follows(s, b, a, (420, 330))
    b.type_text('echo fromshadow >%s\n' % fifo)
    read_fifo(s, fd, b'fromshadow\n', 15)
    s.ctl('detach', sid)
    s.wait_ctl(lambda t: t.get(('shadow', sid), [])[2:] == [b.id, 'over', 'owner-left'],
               'the watching ended with the owner\'s console')
    assert_greeter(s, b)
    log('--control: B typed into foot; A detached: over, B on its greeter')


run(test)
