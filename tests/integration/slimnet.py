"""
Test hosts on a LAN of their own: network namespaces made for one test,
each with a veth into a bridge in a namespace of its own, so that
datagrams take the kernel's real network path (ARP, routing, rp_filter,
nftables) between them. Root only; everything is removed at the end, and
nothing ever leaves the namespaces: the addresses are private to them.

    with Lan('attack') as lan:
        srv = lan.host('srv', 1)
        desk = lan.host('desk', 2)
        proc = subprocess.Popen(srv.argv(['slimland', ...]))

A host can count what crosses it (nftables counters), lose datagrams at
random (nftables numgen), and send datagrams from any source address and
sniff the LAN (tests/integration/rawnet.py, run in a namespace).

A Session runs its compositor and consoles in hosts with
listen_host=srv.addr, compositor_prefix=srv.argv([]) and
console_prefix=desk.argv([]); Wayland clients stay outside.
"""
import json
import os
import select
import subprocess
import sys
import time

from slimtest import TestSkip, require_programs, unique_name

HERE = os.path.dirname(os.path.abspath(__file__))
RAWNET = os.path.join(HERE, 'rawnet.py')
PREFIX = '10.77.0.'
# what an nftables counter adds to a UDP payload: IPv4 and UDP headers
UDP_IP_HEADERS = 28


def _ip(*args, ns=None, check=True):
    argv = (['ip', 'netns', 'exec', ns] if ns else []) + list(args)
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if check and r.returncode != 0:
        raise RuntimeError('%s: %s' % (' '.join(argv), r.stdout.decode(errors='replace')))
    return r.stdout.decode(errors='replace')


class Host:
    """One namespace on the LAN, with the address PREFIX + n on its eth0."""

    def __init__(self, lan, name, n, spoof=False):
        self.lan = lan
        self.name = name
        self.ns = '%s-%s' % (lan.tag, name)
        self.addr = PREFIX + str(n)
        # in the LAN's namespace, where only its own hosts' ports are
        self.port_name = ('v' + name)[:15]
        _ip('ip', 'netns', 'add', self.ns)
        lan.namespaces.append(self.ns)
        _ip('ip', 'link', 'set', 'lo', 'up', ns=self.ns)
        _ip('ip', 'link', 'add', 'eth0', 'netns', self.ns, 'type', 'veth', 'peer', 'name',
            self.port_name, 'netns', lan.ns)
        _ip('ip', 'addr', 'add', self.addr + '/16', 'dev', 'eth0', ns=self.ns)
        _ip('ip', 'link', 'set', 'eth0', 'up', ns=self.ns)
        _ip('ip', 'link', 'set', self.port_name, 'master', 'br0', 'up', ns=lan.ns)
        if spoof:
            # a host that lies about its source address: nothing filters it here
            for key in ('net.ipv4.conf.all.rp_filter', 'net.ipv4.conf.eth0.rp_filter'):
                _ip('sysctl', '-q', '-w', key + '=0', ns=self.ns)
        self.tables = False

    def argv(self, argv):
        """`argv` run inside this host's namespace."""
        return ['ip', 'netns', 'exec', self.ns] + list(argv)

    def run(self, *argv, check=True):
        return _ip(*argv, ns=self.ns, check=check)

    def nft(self, script):
        """nftables rules in this host, in a table of the test's: `inet slimtest`."""
        if not self.tables:
            self.run('nft', 'add', 'table', 'inet', 'slimtest')
            self.tables = True
        r = subprocess.run(self.argv(['nft', '-f', '-']), input=script.encode(),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if r.returncode != 0:
            raise RuntimeError('nft in %s: %s\n%s' % (self.name, r.stdout.decode(), script))

    def count_udp(self, name, direction, match):
        """A named counter of UDP datagrams: direction 'input' or 'output',
        `match` an nftables expression (e.g. 'ip daddr 10.77.0.4')."""
        self.nft('add counter inet slimtest %s\n'
                 'add chain inet slimtest %s { type filter hook %s priority 0; }\n'
                 'add rule inet slimtest %s meta l4proto udp %s counter name %s\n'
                 % (name, direction, direction, direction, match, name))

    def counter(self, name):
        """(packets, bytes) of a named counter (bytes of whole IP packets)."""
        out = self.run('nft', '-j', 'list', 'counter', 'inet', 'slimtest', name)
        for item in json.loads(out)['nftables']:
            if 'counter' in item:
                return item['counter']['packets'], item['counter']['bytes']
        raise RuntimeError('no counter %s in %s' % (name, self.name))

    def payload_bytes(self, name):
        """UDP payload bytes a named counter saw (it counts whole IP packets)."""
        packets, nbytes = self.counter(name)
        return nbytes - UDP_IP_HEADERS * packets

    def lose(self, percent):
        """Drops `percent` % of the UDP datagrams arriving at this host, at
        random (nftables `numgen`); 0 none, 100 all. Each host loses what it
        receives, so two hosts that lose N% lose N% in each direction."""
        rules = ('add chain inet slimtest loss { type filter hook input priority -10; }\n'
                 'flush chain inet slimtest loss\n')
        if percent >= 100:
            rules += 'add rule inet slimtest loss meta l4proto udp counter drop\n'
        elif percent > 0:
            rules += ('add rule inet slimtest loss meta l4proto udp numgen random mod 100 < %d '
                      'counter drop\n' % percent)
        self.nft(rules)

    def dropped(self):
        """Datagrams the loss rule now in place has dropped."""
        out = self.run('nft', 'list', 'chain', 'inet', 'slimtest', 'loss', check=False)
        words = out.split()
        return sum(int(v) for w, v in zip(words, words[1:]) if w == 'packets')

    def rawnet(self, *args, stdin=None, timeout=60):
        """tests/integration/rawnet.py in this namespace; its stdout lines."""
        r = subprocess.run(self.argv([sys.executable, RAWNET] + list(args)), input=stdin,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
        if r.returncode != 0:
            raise RuntimeError('rawnet %s in %s: %s' % (' '.join(args), self.name,
                                                          r.stderr.decode(errors='replace')))
        return r.stdout.decode().splitlines()

    def spoof(self, datagrams):
        """Sends datagrams ({'src', 'sport', 'dst', 'dport', 'data' hex}) from
        raw sockets, each with the source it names; (packets, payload bytes)."""
        lines = self.rawnet('send', stdin='\n'.join(json.dumps(d) for d in datagrams).encode())
        _, packets, payload = lines[-1].split()
        return int(packets), int(payload)

    def flood(self, datagrams, rate, seconds):
        """Sends datagrams (as spoof's; 'sport' None: a random port each) in
        turn at `rate` a second for `seconds`, in the background: a Flood,
        under way once constructed."""
        return Flood(self, datagrams, rate, seconds)


class Flood:
    """rawnet.py flood running in a host."""

    def __init__(self, host, datagrams, rate, seconds):
        self.proc = subprocess.Popen(host.argv([sys.executable, RAWNET, 'flood', str(rate),
                                                str(seconds)]),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.proc.stdin.write('\n'.join(json.dumps(d) for d in datagrams).encode())
        self.proc.stdin.close()
        if self.proc.stdout.readline().strip() != b'flooding':
            self.proc.kill()
            raise RuntimeError('rawnet flood: %s' % self.proc.stderr.read().decode())

    def stop(self):
        """Ends it now: (packets, payload bytes, seconds it took)."""
        self.proc.terminate()
        return self.finish(10)

    def finish(self, timeout=120):
        """Waits for its end: (packets, payload bytes, seconds it took)."""
        self.proc.wait(timeout)
        out, err = self.proc.stdout.read(), self.proc.stderr.read()
        if self.proc.returncode != 0:
            raise RuntimeError('rawnet flood: %s' % err.decode(errors='replace'))
        _, packets, payload, seconds = out.decode().split()
        return int(packets), int(payload), float(seconds)


def client_hellos(datagrams):
    """The DTLS ClientHellos among datagrams (as a Sniffer gives them)."""
    def is_hello(d):
        data = bytes.fromhex(d['data'])
        # a handshake record of epoch 0 whose message is a ClientHello
        return len(data) > 13 and data[0] == 22 and data[3:5] == b'\0\0' and data[13] == 1
    return [d for d in datagrams if is_hello(d)]


class Sniffer:
    """rawnet.py sniffing a host's port of the bridge, as a switch's mirror
    port would: everything it sends and receives. Ready once constructed."""

    def __init__(self, lan, host, port, count, seconds):
        self.proc = subprocess.Popen(
            ['ip', 'netns', 'exec', lan.ns, sys.executable, RAWNET, 'sniff', host.port_name,
             str(port), str(count), str(seconds)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.seen = []
        if self.proc.stdout.readline().strip() != b'ready':
            self.proc.kill()
            raise RuntimeError('rawnet sniff: %s' % self.proc.stderr.read().decode())

    def until(self, holds, timeout):
        """Reads what it has seen until a datagram for which holds(d) is
        true (the sniffer reads its socket in its own time: on a loaded
        machine a datagram that has arrived may not be printed yet); True
        if one came within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.proc.stdout], [], [], left)[0]:
                return False
            line = self.proc.stdout.readline()
            if not line:
                return False
            if line.startswith(b'{'):
                self.seen.append(json.loads(line))
                if holds(self.seen[-1]):
                    return True

    def stop(self):
        """The datagrams seen, as dicts; stops sniffing."""
        self.proc.terminate()
        out, _ = self.proc.communicate(timeout=10)
        return self.seen + [json.loads(line) for line in out.decode().splitlines()
                            if line.startswith('{')]


class Lan:
    """A bridge in a namespace of its own, and the hosts on it. The
    namespaces are named after the run (slimrun.py), so that two runs at
    once keep apart and a killed run's are swept."""

    made = 0  # LANs made by this run

    def __init__(self, name):
        self.name = name
        self.tag = unique_name('n%d' % Lan.made)
        Lan.made += 1
        self.ns = self.tag + '-lan'
        self.namespaces = []
        self.hosts = []

    def __enter__(self):
        if os.geteuid() != 0:
            raise TestSkip('network namespaces need root')
        require_programs('ip', 'nft')
        try:
            _ip('ip', 'netns', 'add', self.ns)
            self.namespaces.append(self.ns)
            _ip('ip', 'link', 'add', 'br0', 'type', 'bridge', ns=self.ns)
            _ip('ip', 'link', 'set', 'br0', 'up', ns=self.ns)
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def host(self, name, n, spoof=False):
        h = Host(self, name, n, spoof)
        self.hosts.append(h)
        return h

    def sniff(self, host, port, count, seconds):
        """Captures up to `count` datagrams to or from `port` at `host` for at
        most `seconds`: a Sniffer."""
        return Sniffer(self, host, port, count, seconds)

    def close(self):
        for ns in reversed(self.namespaces):
            subprocess.run(['ip', 'netns', 'del', ns], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        self.namespaces = []


class Partitions:
    """Silent drops between hosts of a Lan, both ways, as a partitioned
    network drops: nothing is refused, datagrams and TCP segments just
    vanish. The rules are in an nftables table of their own in the LAN's
    namespace (bridge family, forward hook: every frame from one host to
    another crosses the bridge there), named after the run; the table is
    removed at the end, failure or not.

        with Partitions(lan) as net:
            net.cut(srv_a, members)        # A and each member: nothing either way
            net.cut(desk, srv_b)
            net.heal(srv_a)                # every cut of A's
            net.heal()                     # all of them

    A host's traffic with itself (loopback) never crosses the bridge."""

    def __init__(self, lan):
        self.lan = lan
        self.table = unique_name('cut').replace('-', '_')
        self.pairs = set()  # frozenset({addr, addr}) cut

    def __enter__(self):
        self._apply('add table bridge %s\n' % self.table)
        return self

    def __exit__(self, *exc):
        self.pairs = set()
        subprocess.run(['ip', 'netns', 'exec', self.lan.ns, 'nft', 'delete', 'table', 'bridge',
                        self.table], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return False

    @staticmethod
    def _hosts(h):
        return list(h) if isinstance(h, (list, tuple, set)) else [h]

    def cut(self, a, b):
        """Nothing between any host of `a` and any of `b` (a Host or a list)."""
        for x in self._hosts(a):
            for y in self._hosts(b):
                if x.addr != y.addr:
                    self.pairs.add(frozenset((x.addr, y.addr)))
        self._write()

    def heal(self, a=None, b=None):
        """Ends the cuts between `a` and `b`; b None: every cut of a's; a None: all."""
        if a is None:
            self.pairs = set()
        else:
            xs = {x.addr for x in self._hosts(a)}
            ys = {y.addr for y in self._hosts(b)} if b is not None else None

            def healed(p):
                u, v = tuple(p)
                return any(s in xs and (ys is None or t in ys) for s, t in ((u, v), (v, u)))
            self.pairs = {p for p in self.pairs if not healed(p)}
        self._write()

    def is_cut(self, a, b):
        return frozenset((a.addr, b.addr)) in self.pairs

    def _write(self):
        # the whole chain at once: one nft transaction, no moment half cut
        rules = ['flush table bridge %s' % self.table,
                 'add chain bridge %s drops { type filter hook forward priority -100; }'
                 % self.table]
        for p in sorted(sorted(p) for p in self.pairs):
            x, y = p
            rules.append('add rule bridge %s drops ip saddr %s ip daddr %s drop' % (
                self.table, x, y))
            rules.append('add rule bridge %s drops ip saddr %s ip daddr %s drop' % (
                self.table, y, x))
        self._apply('\n'.join(rules) + '\n')

    def _apply(self, script):
        r = subprocess.run(['ip', 'netns', 'exec', self.lan.ns, 'nft', '-f', '-'],
                           input=script.encode(), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
        if r.returncode != 0:
            raise RuntimeError('nft in %s: %s\n%s' % (self.lan.ns, r.stdout.decode(), script))
