"""
What an attacker on the LAN does with raw sockets, for the attack tests
(run as root inside a test namespace, see slimnet.py):

  rawnet.py send
      reads JSON lines {"src", "sport", "dst", "dport", "data" (hex),
      "repeat" (optional)} on stdin and sends each as an IPv4/UDP datagram
      with exactly that source, true or not; prints "sent PACKETS BYTES"
      (UDP payload bytes) at the end.
  rawnet.py flood RATE SECONDS
      reads datagrams as send does ("sport" null: a new random source port
      for each one sent) and sends them in turn at RATE a second for
      SECONDS or until SIGTERM; prints "flooding" once the first one went,
      then at the end "sent PACKETS BYTES SECONDS".
  rawnet.py sniff IFNAME PORT COUNT SECONDS
      prints "ready", then each IPv4/UDP datagram seen on IFNAME from or to
      PORT as a JSON line like send's input, until COUNT were seen or
      SECONDS passed.
"""
import json
import random
import select
import signal
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
ETH_P_IP = 0x0800


def udp_packet(src, sport, dst, dport, payload):
    udp = struct.pack('!HHHH', sport, dport, 8 + len(payload), 0) + payload  # no checksum
    # version/IHL, TOS, total length, id, fragment, TTL, protocol, checksum,
    # source, destination: the kernel fills in the length, id and checksum
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 0, 0, 0x4000, 64, socket.IPPROTO_UDP, 0,
                     socket.inet_aton(src), socket.inet_aton(dst))
    return ip + udp


def send():
    sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    packets = payload_bytes = 0
    for line in sys.stdin:
        if not line.strip():
            continue
        d = json.loads(line)
        payload = bytes.fromhex(d['data'])
        pkt = udp_packet(d['src'], d['sport'], d['dst'], d['dport'], payload)
        for _ in range(d.get('repeat', 1)):
            sock.sendto(pkt, (d['dst'], 0))
            packets += 1
            payload_bytes += len(payload)
    print('sent %d %d' % (packets, payload_bytes), flush=True)


def flood(rate, seconds):
    sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    rng = random.Random(1)
    packets = []
    for line in sys.stdin:
        if not line.strip():
            continue
        d = json.loads(line)
        payload = bytes.fromhex(d['data'])
        # random ports made beforehand: the loop below does nothing but send
        ports = [d['sport']] if d['sport'] is not None else \
            [rng.randrange(1024, 65536) for _ in range(512)]
        for port in ports:
            packets.append((udp_packet(d['src'], port, d['dst'], d['dport'], payload),
                            d['dst'], len(payload)))
    rng.shuffle(packets)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    tried = sent = payload_bytes = 0
    start = time.monotonic()
    elapsed = 0.0
    while elapsed < seconds and not stop:
        due = min(int(elapsed * rate) + 1, int(seconds * rate))
        while tried < due:
            pkt, dst, n = packets[tried % len(packets)]
            tried += 1
            try:
                sock.sendto(pkt, (dst, 0))
            except OSError:
                continue  # the kernel's queue is full: that one is not sent
            sent += 1
            payload_bytes += n
            if sent == 1:
                print('flooding', flush=True)
        time.sleep(0.0005)
        elapsed = time.monotonic() - start
    print('sent %d %d %.3f' % (sent, payload_bytes, time.monotonic() - start), flush=True)


def sniff(ifname, port, count, seconds):
    # every frame (bound to ETH_P_IP alone, a bridge port shows none), IPv4 kept
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    sock.bind((ifname, ETH_P_ALL))
    print('ready', flush=True)
    deadline = time.monotonic() + seconds
    seen = 0
    while seen < count:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([sock], [], [], left)[0]:
            break
        frame = sock.recv(65536)
        if frame[12:14] != b'\x08\x00':
            continue
        ip = frame[14:]
        if len(ip) < 28 or ip[9] != socket.IPPROTO_UDP:
            continue
        ihl = (ip[0] & 15) * 4
        sport, dport, length = struct.unpack('!HHH', ip[ihl:ihl + 6])
        if port not in (sport, dport):
            continue
        print(json.dumps({'src': socket.inet_ntoa(ip[12:16]), 'sport': sport,
                          'dst': socket.inet_ntoa(ip[16:20]), 'dport': dport,
                          'data': ip[ihl + 8:ihl + length].hex()}), flush=True)
        seen += 1


if __name__ == '__main__':
    if sys.argv[1:2] == ['send']:
        send()
    elif sys.argv[1:2] == ['flood'] and len(sys.argv) == 4:
        flood(float(sys.argv[2]), float(sys.argv[3]))
    elif sys.argv[1:2] == ['sniff'] and len(sys.argv) == 6:
        sniff(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]))
    else:
        sys.exit(__doc__)
