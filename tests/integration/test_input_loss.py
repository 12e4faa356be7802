"""Typing over a lossy network. The compositor and the console run in network
namespaces of their own, joined by a veth pair that drops N% of the UDP
datagrams each way (N = 5, 10, 20; slimnet.py). 500 characters typed into
slim-echo --print-keys arrive exactly once and in order, and no key is left
held: slim-echo autorepeats a key held past the repeat delay as any client
does, and after a pause nothing more has come. A console that falls silent
(every datagram it sends dropped) with a key down has it released by the
compositor after a second, and its typing carries on once it is heard again.
Once the loss stops, the console shows what the compositor renders, byte for
byte. Root only (77 otherwise)."""
import os
import random
import re
import time

from slimnet import Lan
from slimtest import KEY_A, KEY_LEFTSHIFT, KEYMAP_US, Session, log, run, scaled

PORT = 5555
CHARACTERS = 500
LOSSES = (5, 10, 20)
KEY_GAP = 0.01   # seconds between key events: a fast typist
# longer than the autorepeat delay (600 ms) and the compositor's 1 s safety net
PAUSE = 1.5
# a console holding a key says HELD this often (console/core/input-queue.c)
HELD_PERIOD = 0.25

LETTERS = 'abcdefghijklmnopqrstuvwxyz'
DIGITS = '0123456789'
SHIFTED = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ$_>'


def make_text(rng, n):
    """Letters, digits, spaces and some shifted characters."""
    out = []
    for _ in range(n):
        r = rng.random()
        pool = LETTERS if r < 0.6 else DIGITS if r < 0.75 else ' ' if r < 0.88 else SHIFTED
        out.append(rng.choice(pool))
    return ''.join(out)


def key_events(text):
    """The key events typing `text` makes, as slim-echo prints them."""
    events = []
    for ch in text:
        code, shift = KEYMAP_US[ch]
        if shift:
            events.append((KEY_LEFTSHIFT, 'pressed'))
        events += [(code, 'pressed'), (code, 'released')]
        if shift:
            events.append((KEY_LEFTSHIFT, 'released'))
    return events


def text_of(events):
    """What a client would have typed out of `events` (repeats included)."""
    chars = {v: k for k, v in KEYMAP_US.items()}
    shift, out = False, []
    for code, what in events:
        if code == KEY_LEFTSHIFT:
            shift = what != 'released'
        elif what != 'released':
            out.append(chars.get((code, shift), '?'))
    return ''.join(out)


def type_text(console, text):
    for code, what in key_events(text):
        console.key(code, what == 'pressed')
        time.sleep(KEY_GAP)


def parse(line):
    _, code, what = line.split()
    return int(code), what


def wait_keys(s, echo, start, count, timeout):
    """Waits until slim-echo has printed `count` key lines from line `start` on."""
    deadline = time.monotonic() + scaled(timeout)
    i, seen = start, 0
    while seen < count:
        i, line = echo.stdout.wait(lambda l: l.startswith('key '), i, deadline)
        if line is None:
            s.fail('slim-echo got %d of %d key events within %gs' % (seen, count, scaled(timeout)))
        seen += 1
        i += 1


def all_acknowledged(s, timeout=10):
    """The console's stats once the server has acknowledged all its input."""
    deadline = time.monotonic() + scaled(timeout)
    while True:
        st = s.stats()
        if st['input_acked'] == st['input_sent'] or time.monotonic() > deadline:
            return st
        time.sleep(0.1)  # a bounded poll of the console's counters


def set_loss(net, percent, console=True):
    """`percent` % of the datagrams lost each way; console=False: only those
    the console sends (the server's side loses them)."""
    server, desk = net
    server.lose(percent)
    desk.lose(percent if console else 0)


def check_round(s, echo, net, loss, text, mark):
    want = key_events(text)
    wait_keys(s, echo, mark, len(want), 60)
    # the one deliberate sleep: a key left down would repeat, or be released late
    time.sleep(PAUSE)
    got = [parse(l) for l in echo.stdout.since(mark) if l.startswith('key ')]
    dropped = sum(host.dropped() for host in net)
    st = all_acknowledged(s)
    log('%d%% loss: %d datagrams dropped; console: %d input events sent, %d retransmissions, '
        '%d acknowledged, %d dropped' % (loss, dropped, st['input_sent'],
                                        st['input_retransmits'], st['input_acked'],
                                        st['input_dropped']))
    if got != want:
        first = next((i for i, (g, w) in enumerate(zip(got, want)) if g != w),
                     min(len(got), len(want)))
        s.fail('at %d%% loss slim-echo got %d key events for %d; the first difference is at '
               '%d: got %s, typed %s\n  typed: %r\n  got:   %r' % (
                   loss, len(got), len(want), first, got[first:first + 4],
                   want[first:first + 4], text, text_of(got)))
    if text_of(got) != text:
        s.fail('at %d%% loss the text differs: %r' % (loss, text_of(got)))
    if dropped == 0:
        s.fail('at %d%% loss nftables dropped nothing: the test tested nothing' % loss)
    if st['input_acked'] != st['input_sent'] or st['input_dropped'] != 0:
        s.fail('at %d%% loss the console still waits for acknowledgements: %s' % (loss, st))


def silent_console(s, echo, net):
    """A key down, then not a datagram from the console: the compositor lets go."""
    set_loss(net, 0)
    mark = echo.stdout.mark()
    s.console.key(KEY_A, True)
    echo.stdout.wait(lambda l: l == 'key %d pressed' % KEY_A, mark,
                     time.monotonic() + scaled(10))
    log_mark = s.compositor.stderr.mark()
    set_loss(net, 100, console=False)
    silent_at = time.monotonic()
    _, line = echo.stdout.wait(lambda l: l == 'key %d released' % KEY_A, mark,
                               time.monotonic() + scaled(10))
    if line is None:
        s.fail('the compositor did not release the key of a silent console')
    after = time.monotonic() - silent_at
    log('a silent console\'s key released after %.2fs' % after)
    # the silence began at the console's last datagram, which may have left up to one
    # HELD period before the loss was switched on
    if after < 1.0 - HELD_PERIOD:
        s.fail('the key was released %.2fs into the silence, before the second was up' % after)
    # said before the release went out, but read from its stderr by another thread
    _, said = s.compositor.stderr.wait(lambda l: 'silent' in l and 'released' in l, log_mark,
                                       time.monotonic() + scaled(5))
    if said is None:
        s.fail('the compositor did not say it released the keys of a silent console')
    silent_ms = int(re.search(r'silent for (\d+) ms', said).group(1))
    if silent_ms < 1000:
        s.fail('the compositor released the keys after %d ms of silence, not a second' % silent_ms)
    # heard again: its release finds nothing to release, and typing goes on
    set_loss(net, 0)
    s.console.key(KEY_A, False)
    mark = echo.stdout.mark()
    type_text(s.console, 'ok')
    want = key_events('ok')
    wait_keys(s, echo, mark, len(want), 10)
    time.sleep(PAUSE)
    got = [parse(l) for l in echo.stdout.since(mark) if l.startswith('key ')]
    if got != want:
        s.fail('after the silence slim-echo got %s, not %s' % (got, want))


def test():
    seed = int(os.environ.get('SLIMTEST_SEED', str(int(time.time()))))
    rng = random.Random(seed)
    log('random seed %d (SLIMTEST_SEED=%d repeats it)' % (seed, seed))
    with Lan('input_loss') as lan:
        net = (lan.host('srv', 1), lan.host('desk', 2))
        with Session('input_loss', port=PORT, listen_host=net[0].addr,
                     compositor_prefix=net[0].argv([]), console_prefix=net[1].argv([])) as s:
            run_rounds(s, net, rng)


def run_rounds(s, net, rng):
    """Each loss rate in turn, then a console gone silent, then the picture."""
    echo = s.start_client([s.slim_echo, '--print-keys'], wait_line='ready')
    s.settled()
    sent = 0
    for loss in LOSSES:
        set_loss(net, loss)
        text = make_text(rng, CHARACTERS)
        mark = echo.stdout.mark()
        started = time.monotonic()
        type_text(s.console, text)
        log('%d%% loss: typed %d characters (%d key events) in %.1fs' % (
            loss, len(text), len(key_events(text)), time.monotonic() - started))
        check_round(s, echo, net, loss, text, mark)
        sent += len(key_events(text))
        if s.stats()['input_sent'] != sent:
            s.fail('the console sent %d input events, not the %d typed' % (
                s.stats()['input_sent'], sent))
    silent_console(s, echo, net)
    set_loss(net, 0)
    s.settled()
    s.assert_screens_equal()


run(test)
