"""The session manager's Prometheus metrics (metrics_listen) end to end:
slimland-sessiond as root, a user logged in at a console, a session whose
startup plays a video (mpv) beside foot.

- two scrapes a few seconds apart: the console's bytes grow, its
  keystroke-to-pixels histogram counts each key typed, the console, session
  and CPU series carry the right labels, and the video's figures are there;
- `promtool check metrics` finds nothing wrong with the text;
- hostile clients: garbage, a path or a method that is not GET /metrics,
  a header of a few MB (refused, the connection closed, the manager's
  memory as it was), 2,000 connections at once: meanwhile and afterwards a
  scrape works, a key still reaches the session and is timed, and the
  manager holds no more descriptors than before;
- `slimlandctl top` shows the console and the session, and quits on q.
"""
import os
import re
import select
import socket
import subprocess
import time

from slimsessiond import ManagerSession
from slimtest import (BTN_LEFT, KEY_A, log, require_programs, rss_kb, run, scaled, unique_name,
                      wait_until)

# run-unique names (slimrun.py): a user, its PAM service and the greeter user
USER = SERVICE = unique_name('metrics')
GREETER_USER = unique_name('metrics-gr')
SIZE = (1024, 768)
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def free_tcp_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def http(port, request, source='127.0.0.1', timeout=10):
    """The whole answer to a raw request, read until the server closes."""
    with socket.create_connection(('127.0.0.1', port), timeout=scaled(timeout),
                                  source_address=(source, 0)) as c:
        c.sendall(request)
        answer = b''
        while True:
            part = c.recv(65536)
            if not part:
                return answer
            answer += part


def scrape_text(s, port, source='127.0.0.1'):
    answer = http(port, b'GET /metrics HTTP/1.1\r\nHost: localhost\r\n'
                  b'Connection: close\r\n\r\n', source)
    head, _, body = answer.partition(b'\r\n\r\n')
    if not head.startswith(b'HTTP/1.1 200') or \
            b'text/plain; version=0.0.4' not in head:
        s.fail('GET /metrics answered %r' % head[:300])
    return body.decode()


def parse(text):
    """{(name, frozenset of (label, value)): value}."""
    samples = {}
    for line in text.splitlines():
        if not line or line.startswith('#'):
            continue
        m = SAMPLE.match(line)
        if not m:
            raise ValueError('not a sample: %r' % line)
        labels = frozenset(LABEL.findall(m.group(2) or ''))
        samples[(m.group(1), labels)] = float(m.group(3))
    return samples


def value(samples, name, **labels):
    """The sample whose labels include these, or None."""
    want = set(labels.items())
    for (n, ls), v in samples.items():
        if n == name and want <= set(ls):
            return v
    return None


def assert_promtool(s, text):
    path = os.path.join(s.tmp, 'scrape.txt')
    with open(path, 'w') as f:
        f.write(text)
    with open(path) as f:
        r = subprocess.run(['promtool', 'check', 'metrics'], stdin=f, capture_output=True,
                           text=True, timeout=scaled(30))
    if r.returncode != 0 or r.stdout.strip() or r.stderr.strip():
        s.fail('promtool check metrics: status %d: %s%s' % (r.returncode, r.stdout, r.stderr))
    log('promtool check metrics: clean (%d lines)' % len(text.splitlines()))


def session_script(s, clip):
    """The session: mpv playing the clip, and foot."""
    path = os.path.join(s.tmp, 'session.sh')
    with open(path, 'w') as f:
        f.write('#!/bin/sh\n'
                'mpv --vo=wlshm --no-audio --loop=inf --hwdec=no --osd-level=0 --no-osc '
                '--no-input-default-bindings --really-quiet --no-border '
                '%s &\n'
                'exec foot\n' % clip)
    os.chmod(path, 0o755)
    return path


def wait_scrape(s, port, holds, what, timeout=30, source='127.0.0.1'):
    return wait_until(lambda: parse(scrape_text(s, port, source)), scaled(timeout), what,
                      holds=holds, fail=s.fail, pause=0.5)


def key_count(samples, console):
    return value(samples, 'slimland_console_key_to_pixels_seconds_count', console=console) or 0


def timed_key(s, port, console, source='127.0.0.1'):
    """One key typed at the console: the histogram counts it (scraped from source)."""
    before = key_count(parse(scrape_text(s, port, source)), console.id)
    console.tap(KEY_A)
    wait_scrape(s, port, lambda m: key_count(m, console.id) > before,
                'the key timed (count above %d)' % before, source=source)


def hostile(s, port, console):
    pid = s.manager.pid
    fds_before = len(os.listdir('/proc/%d/fd' % pid))
    rss_before = rss_kb(pid)

    answer = http(port, b'\x16\x03\x01\x02\x00garbage\r\n\r\n')
    if answer and not answer.startswith(b'HTTP/1.1 4'):
        s.fail('garbage was answered %r' % answer[:100])
    for request, status in ((b'GET / HTTP/1.1\r\nHost: x\r\n\r\n', b'404'),
                            (b'GET /metrics/x HTTP/1.0\r\n\r\n', b'404'),
                            (b'POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n'
                             b'\r\nabc', b'405'),
                            (b'HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n', b'405')):
        answer = http(port, request)
        if not answer.startswith(b'HTTP/1.1 ' + status):
            s.fail('%r was answered %r, not %s' % (request[:20], answer[:60], status))
    log('garbage, other paths and other methods refused')

    # a header of 8 MB: refused and closed long before its end
    with socket.create_connection(('127.0.0.1', port), timeout=scaled(10)) as c:
        c.sendall(b'GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: ')
        sent, closed = 0, False
        try:
            while sent < 8 << 20:
                c.sendall(b'a' * 65536)
                sent += 65536
        except OSError:
            closed = True
        answer = b''
        try:
            while True:
                part = c.recv(65536)
                if not part:
                    closed = True
                    break
                answer += part
        except OSError:
            closed = True
    if not closed:
        s.fail('a header of %d bytes was read to its end' % sent)
    if answer and not answer.startswith(b'HTTP/1.1 431'):
        s.fail('a huge header was answered %r' % answer[:80])
    log('a huge header: closed after %d bytes sent, answered %r' % (sent, answer[:32]))

    # 2,000 connections at once, from 127.0.0.1
    flood = []
    try:
        for _ in range(2000):
            c = socket.socket()
            c.setblocking(False)
            try:
                c.connect(('127.0.0.1', port))
            except BlockingIOError:
                pass
            flood.append(c)
        # meanwhile, from another address (127.0.0.1 has had its share): a
        # scrape, and a key timed
        samples = parse(scrape_text(s, port, source='127.0.0.2'))
        log('a scrape beside 2000 connections: %d samples' % len(samples))
        timed_key(s, port, console, source='127.0.0.2')
        fds = len(os.listdir('/proc/%d/fd' % pid))
        if fds > fds_before + 64:
            s.fail('the manager holds %d descriptors with the flood open, %d before' %
                   (fds, fds_before))
    finally:
        for c in flood:
            c.close()
    rss_after = rss_kb(pid)
    log('manager RSS %d kB before the hostile clients, %d kB after' % (rss_before, rss_after))
    if rss_after > rss_before + 16 * 1024:
        s.fail('the manager grew from %d kB to %d kB' % (rss_before, rss_after))
    # and from the flooded address too, once it has gone
    wait_until(lambda: parse(scrape_text(s, port)), scaled(20), 'a scrape after the flood',
               fail=s.fail, pause=0.5)
    timed_key(s, port, console)


def top(s, console, sid):
    """slimlandctl top: two views with the console and the session, then q."""
    p = subprocess.Popen([s.slimlandctl, '--socket', os.path.join(s.run_dir, 'ctl.sock'),
                          'top'], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    out = b''
    try:
        deadline = time.monotonic() + scaled(15)
        while out.count(b'slimlandctl top') < 2 and time.monotonic() < deadline:
            ready, _, _ = select.select([p.stdout], [], [], deadline - time.monotonic())
            if not ready:
                break
            part = os.read(p.stdout.fileno(), 65536)
            if not part:
                break
            out += part
        p.stdin.write(b'q')
        p.stdin.flush()
        status = p.wait(timeout=scaled(5))
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    text = out.decode(errors='replace')
    last = text.rsplit('slimlandctl top', 1)[-1]
    if out.count(b'slimlandctl top') < 2:
        s.fail('slimlandctl top drew %d views: %r' % (out.count(b'slimlandctl top'), text))
    if status != 0:
        s.fail('slimlandctl top exited with %s after q' % status)
    rows = [l.split() for l in last.splitlines()]
    if not any(r[:4] == [console.id, 'session', sid, USER] for r in rows if r):
        s.fail('slimlandctl top has no row for console %s: %s' % (console.id, last))
    if not any(r[:4] == [sid, USER, 'attached', console.id] for r in rows if r):
        s.fail('slimlandctl top has no row for session %s: %s' % (sid, last))
    log('slimlandctl top:%s' % last)


def test():
    require_programs('promtool', 'mpv', 'ffmpeg', 'foot')
    port = free_tcp_port()
    with ManagerSession('metrics', USER, SERVICE, GREETER_USER,
                        extra_config=['metrics_listen = %d' % port]) as s:
        clip = os.path.join(s.tmp, 'clip.mkv')
        subprocess.run(['ffmpeg', '-v', 'error', '-y', '-f', 'lavfi', '-i',
                        'testsrc2=size=320x240:rate=30', '-t', '4', '-c:v', 'mpeg4', '-q:v', '1',
                        clip], check=True, timeout=scaled(60))
        os.chmod(clip, 0o644)
        s.startup = session_script(s, clip)
        with open(s.config_path, 'a') as f:
            f.write('startup = %s\n' % s.startup)
        s.start_manager()
        a = s.approved_console('desk-mt', SIZE)
        row = s.log_in(a)
        sid = row[1]
        labels = {'console': a.id, 'session': sid, 'user': USER}

        first = wait_scrape(s, port, lambda m: (
            value(m, 'slimland_console_video_bytes_per_second', **labels) or 0) > 0,
            'the video\'s rate')
        sent = value(first, 'slimland_console_sent_bytes_total', **labels)
        playing = wait_scrape(s, port, lambda m: value(
            m, 'slimland_console_sent_bytes_total', **labels) > sent,
            'the bytes sent to grow while the video plays')
        log('while the video plays: %d bytes sent, then %d' % (
            sent, value(playing, 'slimland_console_sent_bytes_total', **labels)))
        text = scrape_text(s, port)
        assert_promtool(s, text)
        first = parse(text)
        if value(first, 'slimland_console_state', console=a.id, state='session') != 1:
            s.fail('console %s is not in state session: %s' % (a.id, text))
        if value(first, 'slimland_console_state', console=a.id, state='greeter') != 0:
            s.fail('console %s is in state greeter too' % a.id)
        if value(first, 'slimland_session_info', session=sid, user=USER, state='attached',
                 console=a.id) != 1:
            s.fail('no slimland_session_info for session %s of %s on %s' % (sid, USER, a.id))
        for name in ('slimland_console_round_trip_seconds',
                     'slimland_console_sent_datagrams_total',
                     'slimland_console_repaired_datagrams_total'):
            if value(first, name, **labels) is None:
                s.fail('no %s for %s' % (name, labels))
        cpu = value(first, 'slimland_session_cpu_seconds_total', session=sid, user=USER,
                    **{'class': 'compositor'})
        if cpu is None or cpu <= 0:
            s.fail('the compositor class of session %s used no CPU: %s' % (sid, cpu))
        if value(first, 'process_resident_memory_bytes') is None:
            s.fail('no process_resident_memory_bytes')
        memory_cgroup = '/sys/fs/cgroup/memory/%s/user-%d.slice/session-%s' % (
            s.cgroup_slice, s.pw.pw_uid, sid)
        log('session %s: compositor CPU %.2f s, memory %s bytes (memory cgroup %s)' % (
            sid, cpu, value(first, 'slimland_session_memory_bytes', session=sid, user=USER),
            'there' if os.path.isdir(memory_cgroup) else 'absent'))
        if os.path.isdir(memory_cgroup) and not value(
                first, 'slimland_session_memory_bytes', session=sid, user=USER):
            s.fail('session %s has a memory cgroup but no slimland_session_memory_bytes' % sid)

        # foot's window, below and beside mpv's whichever mapped first (32 px
        # apart, foot at least 700x500, the clip 320x240), takes the keys
        a.motion(600, 450)
        a.click(BTN_LEFT)

        # keys, one at a time: each one timed
        for _ in range(3):
            timed_key(s, port, a)
        second = parse(scrape_text(s, port))
        log('bytes %d -> %d, keys %d -> %d (sum %.4f s)' % (
            value(first, 'slimland_console_sent_bytes_total', **labels),
            value(second, 'slimland_console_sent_bytes_total', **labels),
            key_count(first, a.id), key_count(second, a.id),
            value(second, 'slimland_console_key_to_pixels_seconds_sum', **labels)))
        if value(second, 'slimland_console_sent_bytes_total', **labels) <= \
                value(first, 'slimland_console_sent_bytes_total', **labels):
            s.fail('the console\'s bytes did not grow')
        if key_count(second, a.id) < key_count(first, a.id) + 3:
            s.fail('3 keys typed, the histogram counts %d more' % (
                key_count(second, a.id) - key_count(first, a.id)))
        inf = value(second, 'slimland_console_key_to_pixels_seconds_bucket', le='+Inf', **labels)
        if inf != key_count(second, a.id):
            s.fail('the +Inf bucket (%s) is not the count' % inf)
        assert_promtool(s, scrape_text(s, port))

        hostile(s, port, a)
        top(s, a, sid)


run(test)
