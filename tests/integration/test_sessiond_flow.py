"""The session manager end to end, with the real components: slimland-sessiond
as root, PAM (pam_unix, a user made for the test), slimland-greeter in
greeter compositors, the user's compositor running foot, and two headless
consoles with stdin card readers.

- both consoles show the greeter (what the greeter compositor renders);
- a card nobody knows is said to be unknown, and reaches no session;
- a wrong password is refused, after a delay, and the console stays on the
  greeter; while PAM waits (pam_exec on a FIFO the test holds), the manager
  answers slimlandctl: logins do not block it;
- logging in through A's keys starts the user's session, which A shows,
  and binds the card tapped before; keys typed on A reach foot's shell; the
  PAM session was opened by a login worker, the compositor's parent, never
  by the manager;
- the card on B moves the session to B, at B's size; A goes back to the
  greeter and its keys reach the session no more, B's do;
- the session manager killed with SIGKILL: B's picture and keys go on; once
  restarted, it knows the session and the consoles again;
- the card taken off B sends B to the greeter and leaves the session running,
  detached; tapped on A, the session comes back on A at A's size.
"""
import os
import signal
import subprocess
import time

from slimsessiond import PASSWORD, ManagerSession, _pids_of
from slimtest import (BACKGROUND, KEY_ENTER, fraction_not, log, read_fifo, run, scaled,
                      unique_name)

# run-unique names (slimrun.py): a user, its PAM service and the greeter user
USER = SERVICE = unique_name('flow')
GREETER_USER = unique_name('flow-gr')
CARD = '04c0ffee112233'
UNKNOWN = '04deadbeef0000'
SIZE_A = (1024, 768)
SIZE_B = (1280, 800)


def test():
    with ManagerSession('sessiond_flow', USER, SERVICE, GREETER_USER, pam_hooks=True) as s:
        with s.fifo(owner=s.pw) as (fifo, fd):
            flow(s, fifo, fd)


def assert_greeter(s, console):
    """The console shows its greeter compositor's picture, with the form."""
    s.wait_console_state(console.id, 'greeter')
    s.wait_screen(lambda img: fraction_not(img, BACKGROUND) > 0.5, 'the greeter window',
                  timeout=30, console=console)
    s.settled(console=console, quiet=0.5)
    display = s.compositor_display(GREETER_USER, 'greeter-' + console.id)
    img = s.assert_shows(console, s.greeter_runtime(console.id), display)
    if img.size != console.size:
        s.fail('%s: the greeter is %s, not %s' % (console.name, img.size, console.size))
    return img


def parent_of(pid):
    with open('/proc/%d/stat' % pid) as f:
        return int(f.read().rsplit(')', 1)[1].split()[1])


def assert_pam_session_in_worker(s, compositor_pid):
    """pam_open_session ran in the compositor's parent, a login worker, not in
    the manager (whose process pam_systemd and pam_limits would act on)."""
    with open(s.pam_hook_log) as f:
        opened = [int(l.split()[1]) for l in f if l.startswith('open_session ')]
    if len(opened) != 1:
        s.fail('pam_open_session ran %d times: %s' % (len(opened), opened))
    if opened[0] == s.manager.pid:
        s.fail('the PAM session was opened in the manager (pid %d)' % opened[0])
    if parent_of(compositor_pid) != opened[0]:
        s.fail('the compositor %d is not the child of the process that opened the PAM '
               'session (%d)' % (compositor_pid, opened[0]))
    if parent_of(opened[0]) != s.manager.pid:
        s.fail('the PAM session was opened by %d, not a login worker of the manager'
               % opened[0])
    log('PAM session opened by login worker %d (manager %d), compositor %d'
        % (opened[0], s.manager.pid, compositor_pid))


def session_log(s):
    table = s.listing()
    sess = s.user_session(table)
    return sess[1] if sess else None


def assert_session_on(s, console, sid):
    s.wait_console_state(console.id, 'session', user_session=sid)
    display = s.compositor_display(USER, 'session-%s' % sid)
    s.wait_screen(lambda img: fraction_not(img, BACKGROUND) > 0.3, 'foot', console=console)
    s.settled(console=console, quiet=0.5)
    img = s.assert_shows(console, '/run/user/%d' % s.pw.pw_uid, display)
    if img.size != console.size:
        s.fail('%s: the session is %s, not %s' % (console.name, img.size, console.size))
    return img


def assert_seamless(s, console, mark, what):
    """From the greeter to the session, the console never showed a refusal
    (the greeter keeps it until the session has it)."""
    refused = [l for l in console.stdout.since(mark) if l.startswith('refused')]
    if refused:
        s.fail('%s: %s was refused on the way: %s' % (console.name, what, refused))


def type_and_read(s, console, word, fd, fifo):
    console.type_text('echo %s >%s\n' % (word, fifo))
    return read_fifo(s, fd, word.encode() + b'\n', 15)


def enroll(s, a, b):
    """New consoles wait for the administrator: no greeter until approved."""
    for c in (a, b):
        line = c.wait_for('manager refused pending', 15)
        if c.id not in line:
            s.fail('%s\'s screen does not show its id while it waits: %r' % (c.name, line))
    table = {f[1]: f for f in (l.split() for l in s.ctl('consoles'))}
    for c in (a, b):
        if table.get(c.id, [None] * 3)[2] != 'pending':
            s.fail('slimlandctl consoles does not list %s as pending: %s' % (c.id, table))
    if _pids_of(s.greeter_uids):
        s.fail('a greeter runs for consoles nobody approved')
    if s.listing():
        s.fail('consoles nobody approved are in the table: %s' % s.listing())
    # by the whole id, and by 8 digits of it
    s.ctl('approve', a.id, 'desk-a')
    s.ctl('approve', b.id[:8])
    table = {f[1]: f for f in (l.split() for l in s.ctl('consoles'))}
    if table[a.id][2:] != ['approved', table[a.id][3], table[a.id][4], 'desk-a'] or \
            table[b.id][2] != 'approved':
        s.fail('slimlandctl consoles after approving: %s' % table)
    log('consoles %s and %s approved' % (a.id, b.id))


def pinned_key(s, console):
    """The manager's key as the console pinned it on first contact."""
    with open(os.path.join(console.state_dir, 'known-servers')) as f:
        pins = [l.split() for l in f if l.startswith('127.0.0.1:%d ' % s.port)]
    if len(pins) != 1:
        s.fail('%s pinned %d keys for the manager' % (console.name, len(pins)))
    return pins[0][1]


def revoke(s, a, sid):
    """Revoked, A is refused, its session detached and its greeter gone."""
    mark = a.mark()
    s.ctl('revoke', a.id)
    a.wait_for('manager refused denied', 15, start=mark)
    table = s.wait_ctl(lambda t: ('console', a.id) not in t and
                       (s.user_session(t) or [''] * 6)[5] == 'detached',
                       'A gone and the session detached')
    consoles = {f[1]: f for f in (l.split() for l in s.ctl('consoles'))}
    if consoles[a.id][2] != 'revoked':
        s.fail('slimlandctl consoles does not say A is revoked: %s' % consoles[a.id])
    s.wait_ctl(lambda t: not any(f[0] == 'session' and f[2] == GREETER_USER and f[-1] == a.id
                                 for f in t.values()), 'no greeter left for A')
    log('A revoked: %s' % ' '.join(s.user_session(table)))


def flow(s, fifo, fd):
    s.start_manager()
    a = s.start_managed_console('desk-a', SIZE_A)
    b = s.start_managed_console('desk-b', SIZE_B)
    enroll(s, a, b)
    for c in (a, b):
        c.wait_for('manager attached', 15)
        c.wait_for('redirect 127.0.0.1:', 15)
        c.wait_for('attached', 20)
    key = s.ctl('key')[0]
    if pinned_key(s, a) != key or pinned_key(s, b) != key:
        s.fail('the consoles pinned %s and %s, the manager says %s' % (
            pinned_key(s, a), pinned_key(s, b), key))
    for c in (a, b):
        assert_greeter(s, c)
    s.wait_why(a.id, 'no card yet')

    # a card nobody knows, on A: the greeter says so
    mark = a.mark()
    a.cmd('card insert ' + CARD)
    s.wait_why(a.id, 'unknown card')
    if a.next_frame(scaled(10), start=mark) is None:
        s.fail('the greeter on A did not change for the unknown card')
    a.cmd('card remove')

    # a wrong password, on B: refused after a delay, B stays on the greeter
    s.settled(console=b, quiet=0.5)
    b.type_text(USER + '\n')
    b.type_text('wrong-' + PASSWORD)
    s.settled(console=b, quiet=0.5)
    log_pos = s.manager.stderr.mark()
    mark = b.mark()
    s.hold_pam()
    b.tap(KEY_ENTER)
    sent = time.monotonic()
    # PAM waits in the login worker until the test lets it go: the manager answers meanwhile
    s.manager_log_wait('login: %s at %s: worker' % (USER, b.id), log_pos)
    asked = time.monotonic()
    try:
        s.listing()
    except subprocess.TimeoutExpired:
        s.fail('slimlandctl list got no answer while PAM waited: the login blocks the manager')
    log('slimlandctl list answered in %.3fs while PAM waited' % (time.monotonic() - asked))
    s.release_pam()
    s.manager_log_wait('login failed for %s' % USER, log_pos)
    # "Checking…" at once; the refusal on screen only after the delay
    if b.next_frame(scaled(5), start=mark) is None:
        s.fail('the greeter on B did not react to the submitted form')
    s.settled(console=b, quiet=0.3)
    checking = s.console_image(b)
    mark = b.mark()
    if b.next_frame(scaled(10), start=mark) is None:
        s.fail('the greeter on B never showed the refusal')
    delay = time.monotonic() - sent
    log('the refusal came %.2fs after the submit' % delay)
    if delay < 1.5:
        s.fail('the refusal came %.2fs after the submit: no delay' % delay)
    s.settled(console=b, quiet=0.5)
    if s.console_image(b).tobytes() == checking.tobytes():
        s.fail('the greeter on B shows the same screen before and after the refusal')
    table = s.listing()
    if s.user_session(table) or s.console_on(table, b.id)[0] != 'greeter':
        s.fail('a wrong password started something: %s' % table)

    # log in on A with the keys: the card tapped there is the session's now
    s.settled(console=a, quiet=0.5)
    mark = a.mark()
    log_pos = s.manager.stderr.mark()
    a.type_text(USER + '\n' + PASSWORD + '\n')
    s.manager_log_wait('%s logged in' % USER, log_pos)
    a.wait_for('redirect 127.0.0.1:', 15, start=mark)
    a.wait_for('attached', 20, start=mark)
    table = s.wait_console_state(a.id, 'session', timeout=30)
    sid = s.user_session(table)[1]
    log('session %s on A' % sid)
    assert_pam_session_in_worker(s, int(s.user_session(table)[3]))
    assert_seamless(s, a, mark, 'the login')
    assert_session_on(s, a, sid)
    data = type_and_read(s, a, 'from-a-1', fd, fifo)
    log('A typed into the session: %r' % data)

    # an unknown token on B: B stays on the greeter
    b.cmd('card insert ' + UNKNOWN)
    s.wait_why(b.id, 'unknown card')
    b.cmd('card remove')
    table = s.listing()
    if s.console_on(table, b.id)[0] != 'greeter':
        s.fail('an unknown card took B off the greeter: %s' % table)

    # the card on B: the session moves there, at B's size; A to the greeter
    mark_a, mark_b = a.mark(), b.mark()
    log_pos = s.manager.stderr.mark()
    b.cmd('card insert ' + CARD)
    b.wait_for('redirect 127.0.0.1:', 15, start=mark_b)
    b.wait_for('attached', 20, start=mark_b)
    s.manager_log_wait('console %s: attached to session %s (%dx%d)' % ((b.id, sid) + SIZE_B),
                       log_pos)
    a.wait_for('redirect 127.0.0.1:', 15, start=mark_a)
    a.wait_for('attached', 20, start=mark_a)
    assert_session_on(s, b, sid)
    assert_seamless(s, b, mark_b, 'the card')
    assert_greeter(s, a)
    s.wait_why(a.id, 'the session moved to another console')
    # A's keys go to A's greeter now, B's to the session
    a.type_text('echo from-a-2 >%s\n' % fifo)
    data = type_and_read(s, b, 'from-b-1', fd, fifo)
    if b'from-a-2' in data:
        s.fail('keys typed on A reached the session after it moved to B: %r' % data)

    # the manager dies: B's picture and keys go on without it
    s.stop_manager(signal.SIGKILL)
    data = type_and_read(s, b, 'from-b-2', fd, fifo)
    mark = b.mark()
    b.type_text(' ')
    if b.next_frame(scaled(10), start=mark) is None:
        s.fail('no frame on B for a key while the manager is dead')
    # and it comes back: the same session, still on B
    mark_b = b.mark()
    s.start_manager()
    b.wait_for('manager attached', 20, start=mark_b)
    s.wait_console_state(b.id, 'session', user_session=sid, timeout=30)
    s.wait_console_state(a.id, 'greeter', timeout=30)
    touched = [l for l in b.stdout.since(mark_b) if l.startswith(('redirect', 'connecting',
                                                                  'attached', 'refused'))]
    if touched:
        s.fail('the restarted manager touched B\'s display association: %s' % touched)
    data = type_and_read(s, b, 'from-b-3', fd, fifo)

    # the card off B: B to the greeter, the session detached and running
    mark_b = b.mark()
    b.cmd('card remove')
    b.wait_for('redirect 127.0.0.1:', 15, start=mark_b)
    s.wait_why(b.id, 'card removed')
    table = s.wait_ctl(lambda t: (s.user_session(t) or [''] * 6)[5] == 'detached',
                       'the session detached')
    assert_greeter(s, b)

    # the card on A: the session comes back there, at A's size
    mark_a = a.mark()
    log_pos = s.manager.stderr.mark()
    a.cmd('card insert ' + CARD)
    a.wait_for('redirect 127.0.0.1:', 15, start=mark_a)
    a.wait_for('attached', 20, start=mark_a)
    s.manager_log_wait('console %s: attached to session %s (%dx%d)' % ((a.id, sid) + SIZE_A),
                       log_pos)
    assert_session_on(s, a, sid)
    assert_seamless(s, a, mark_a, 'the card')
    data = type_and_read(s, a, 'from-a-3', fd, fifo)
    log('the FIFO at the end: %r' % data)
    revoke(s, a, sid)


run(test)
