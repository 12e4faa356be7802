"""The clipboard and the primary selection work between two clients
(wl-copy, then wl-paste)."""
from slimtest import Session, log, require_programs, run

TEXT = 'slimland clipboard \u2713 %s'


def check(s, extra, what):
    text = TEXT % what
    # wl-copy forks a server of the selection and exits once the selection is set;
    # the server stays in wl-copy's process group, which the session ends
    copy = s.start_client(['wl-copy'] + extra + ['--', text])
    status = copy.wait_exit(10)
    if status != 0:
        s.fail('wl-copy %s failed (%d): %s' % (' '.join(extra), status,
                                               '\n'.join(copy.stderr.tail(10))))
    paste = s.run_client(['wl-paste', '--no-newline'] + extra)
    got = paste.stdout.decode(errors='replace')
    if paste.returncode != 0 or got != text:
        s.fail('wl-paste %s gave %r (status %d, stderr %r), not %r' % (
            ' '.join(extra), got, paste.returncode, paste.stderr.decode(errors='replace'), text))
    log('%s: %r went through' % (what, text))


def test():
    require_programs('wl-copy', 'wl-paste')
    with Session('clipboard') as s:
        check(s, [], 'clipboard')
        check(s, ['--primary'], 'primary')
        # both at once: neither replaced the other
        paste = s.run_client(['wl-paste', '--no-newline'])
        if paste.stdout.decode(errors='replace') != TEXT % 'clipboard':
            s.fail('the primary selection replaced the clipboard: %r' % paste.stdout)


run(test)
