"""Nothing spent when idle: a session whose screen does not change, with a
console attached over a real network path (the compositor and the console
in network namespaces of their own), costs next to nothing on either side.

Over WINDOW_S seconds, once the screen has settled:
- the compositor's main thread wakes at most once per keepalive it hears
  (every 5 s) and a little more: no periodic timer that does nothing (the
  60 Hz frame timer of wlroots' headless output woke it 60 times a second);
- it uses at most 1 ms of CPU a second;
- the console sends at most 100 bytes of UDP payload per 5 s (nftables
  counts what leaves its namespace), and the server nothing.
Root only (network namespaces, nftables).
"""
import os
import time

from slimnet import Lan
from slimtest import Session, log, run

PORT = 5572
WINDOW_S = 10.0


def main_thread(pid):
    """(voluntary context switches of its main thread, CPU ns of all threads)."""
    with open('/proc/%d/task/%d/status' % (pid, pid)) as f:
        switches = next(int(l.split()[1]) for l in f if l.startswith('voluntary_ctxt_switches'))
    cpu = 0
    for tid in os.listdir('/proc/%d/task' % pid):
        with open('/proc/%d/task/%s/schedstat' % (pid, tid)) as f:
            cpu += int(f.read().split()[0])
    return switches, cpu


def test():
    with Lan('idle_cost') as lan:
        srv, desk = lan.host('srv', 1), lan.host('desk', 2)
        desk.count_udp('up', 'output', 'ip daddr %s' % srv.addr)
        srv.count_udp('down', 'output', 'ip daddr %s' % desk.addr)
        with Session('idle_cost', port=PORT, listen_host=srv.addr,
                     compositor_prefix=srv.argv([]), console_prefix=desk.argv([])) as s:
            s.start_client([s.slim_echo], wait_line='ready')
            s.settled()
            pid = s.compositor.pid
            up0, down0 = desk.counter('up'), srv.counter('down')
            sw0, cpu0 = main_thread(pid)
            time.sleep(WINDOW_S)  # the measurement window itself
            sw1, cpu1 = main_thread(pid)
            up1, down1 = desk.counter('up'), srv.counter('down')
            wakeups = sw1 - sw0
            cpu_ms_per_s = (cpu1 - cpu0) / 1e6 / WINDOW_S
            up_packets = up1[0] - up0[0]
            up_payload = (up1[1] - up0[1]) - 28 * up_packets
            down_packets = down1[0] - down0[0]
            log('over %gs idle: compositor woke %d times, %.3f ms of CPU a second; the '
                'console sent %d datagrams (%d bytes of payload), the server %d' % (
                    WINDOW_S, wakeups, cpu_ms_per_s, up_packets, up_payload, down_packets))
            keepalives = WINDOW_S / 5
            if wakeups > 2 * keepalives + 2:
                s.fail('the idle compositor woke %d times in %gs' % (wakeups, WINDOW_S))
            if cpu_ms_per_s > 1.0:
                s.fail('the idle compositor used %.3f ms of CPU a second' % cpu_ms_per_s)
            if up_payload > 100 * WINDOW_S / 5:
                s.fail('the idle console sent %d bytes in %gs' % (up_payload, WINDOW_S))
            # the keepalives are answered by nothing: an idle session sends nothing
            if down_packets > 0:
                s.fail('the idle server sent %d datagrams' % down_packets)


run(test)
