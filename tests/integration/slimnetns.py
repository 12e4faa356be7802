"""Two network namespaces joined by a veth pair, with datagram loss on demand:
a real network path between a compositor and a console, on one host.

    with NetnsPair() as net:
        net.set_loss(10)          # drop 10% of UDP datagrams each way
        ... net.prefix(net.server) + argv ...
        net.set_loss(0)

The server side is 10.99.0.1/24, the console side 10.99.0.2/24; both exist
only inside the namespaces, which get names of their own per run and are
deleted on the way out, whatever happened. Loss is an nftables rule on each
side's input hook (`numgen random mod 100 < N drop`). Needs root, `ip` and
`nft`: NetnsPair.check() raises TestSkip otherwise.
"""
import os
import shutil
import subprocess

from slimtest import TestSkip, log

SERVER_ADDR = '10.99.0.1'
CONSOLE_ADDR = '10.99.0.2'
TABLE = 'slimloss'


class NetnsPair:
    def __init__(self, tag='slim'):
        unique = '%d-%s' % (os.getpid(), os.urandom(3).hex())
        self.server = '%s-srv-%s' % (tag, unique)
        self.console = '%s-con-%s' % (tag, unique)
        self.made = []

    @staticmethod
    def check():
        if os.geteuid() != 0:
            raise TestSkip('network namespaces need root')
        missing = [p for p in ('ip', 'nft') if not shutil.which(p)]
        if missing:
            raise TestSkip('missing program(s): %s (iproute2, nftables)' % ', '.join(missing))

    @staticmethod
    def prefix(ns):
        """The argv that runs a program in namespace ns."""
        return ['ip', 'netns', 'exec', ns]

    def _run(self, argv, stdin=None):
        result = subprocess.run(argv, input=stdin, capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError('%s: %s' % (' '.join(argv), result.stderr.strip()))

    def __enter__(self):
        self.check()
        try:
            for ns in (self.server, self.console):
                try:
                    self._run(['ip', 'netns', 'add', ns])
                except RuntimeError as e:
                    # a container without the capability: the host cannot run this test
                    if not self.made:
                        raise TestSkip('cannot make a network namespace: %s' % e)
                    raise
                self.made.append(ns)
                self._run(['ip', '-n', ns, 'link', 'set', 'lo', 'up'])
            # made inside the namespaces: the names never meet the host's
            self._run(['ip', '-n', self.server, 'link', 'add', 'slim0', 'type', 'veth',
                       'peer', 'name', 'slim1', 'netns', self.console])
            for ns, dev, addr in ((self.server, 'slim0', SERVER_ADDR),
                                  (self.console, 'slim1', CONSOLE_ADDR)):
                self._run(['ip', '-n', ns, 'addr', 'add', addr + '/24', 'dev', dev])
                self._run(['ip', '-n', ns, 'link', 'set', dev, 'up'])
                self._run(self.prefix(ns) + ['nft', '-f', '-'], stdin=(
                    'table inet %s {\n'
                    '  chain in { type filter hook input priority 0; policy accept; }\n'
                    '}\n' % TABLE))
        except BaseException:
            self.__exit__(None, None, None)
            raise
        log('namespaces %s (%s) and %s (%s)' % (self.server, SERVER_ADDR, self.console,
                                                CONSOLE_ADDR))
        return self

    def __exit__(self, exc_type, exc, tb):
        # the veth pair goes with the namespaces
        for ns in self.made:
            subprocess.run(['ip', 'netns', 'del', ns], capture_output=True)
        self.made = []
        return False

    def set_loss(self, percent, server=True, console=True):
        """Drops `percent` % of the UDP datagrams arriving on each side (or only
        on the server's or the console's); 0: none."""
        for ns in [n for n, on in ((self.server, server), (self.console, console)) if on]:
            rules = 'flush chain inet %s in\n' % TABLE
            if percent >= 100:
                rules += 'add rule inet %s in meta l4proto udp counter drop\n' % TABLE
            elif percent > 0:
                rules += ('add rule inet %s in meta l4proto udp numgen random mod 100 < %d '
                          'counter drop\n' % (TABLE, percent))
            self._run(self.prefix(ns) + ['nft', '-f', '-'], stdin=rules)

    def dropped(self):
        """Datagrams dropped so far by the current rules, both sides together."""
        total = 0
        for ns in (self.server, self.console):
            out = subprocess.run(self.prefix(ns) + ['nft', 'list', 'chain', 'inet', TABLE, 'in'],
                                 capture_output=True, text=True).stdout
            for word, value in zip(out.split(), out.split()[1:]):
                if word == 'packets':
                    total += int(value)
        return total
