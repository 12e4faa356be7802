"""
A private PC/SC stack for tests: pcscd with vsmartcard's vpcd driver, in a
mount namespace of its own, its readers on TCP ports of the test's choosing
(cards: card_emulator.py).

pcscd runs privately: bookworm's pcscd (1.9.9) ignores PCSCLITE_CSOCK_NAME
and always makes /run/pcscd/pcscd.comm, so it runs in a mount namespace
(unshare) where a directory of the test is mounted over /run/pcscd; the
socket appears in that directory, and the console finds it through
PCSCLITE_CSOCK_NAME, which the client library does honour. Its vpcd
readers listen on TCP ports of the test's choosing (its own reader.conf),
so a system pcscd and vpcd are left alone.
"""
import os
import shutil
import signal
import socket

from slimtest import Process, TestFailure, scaled, wait_until

VPCD_DRIVER = '/usr/lib/pcsc/drivers/serial/libifdvpcd.so'


def find_pcscd():
    for path in (shutil.which('pcscd'), '/usr/sbin/pcscd'):
        if path and os.access(path, os.X_OK):
            return path
    return None


def free_tcp_port_pair():
    """A port P with P + 1 free too: vpcd's two readers listen on both."""
    for _ in range(50):
        with socket.socket() as a:
            a.bind(('127.0.0.1', 0))
            port = a.getsockname()[1]
            if port >= 65535:
                continue
            with socket.socket() as b:
                try:
                    b.bind(('127.0.0.1', port + 1))
                except OSError:
                    continue
            return port
    raise TestFailure('no free pair of TCP ports for vpcd')


class Pcscd(Process):
    """pcscd -f -a in its own mount namespace, with a private socket; the
    n-th one of a test reuses the first one's socket path, as a restarted
    system pcscd would."""

    def __init__(self, session, pcscd, port, n):
        self.dir = os.path.join(session.tmp, 'pcscd')
        conf = os.path.join(self.dir, 'reader.conf.d')
        run_dir = os.path.join(self.dir, 'run')
        os.makedirs(conf, exist_ok=True)
        os.makedirs(run_dir, exist_ok=True)
        with open(os.path.join(conf, 'vpcd'), 'w') as f:
            f.write('FRIENDLYNAME "Virtual PCD"\nDEVICENAME /dev/null:0x%04X\n'
                    'LIBPATH %s\nCHANNELID 0x%04X\n' % (port, VPCD_DRIVER, port))
        # Without /run/pcscd the directory goes over /run and pcscd makes its own in it.
        if os.path.isdir('/run/pcscd'):
            target, self.socket = '/run/pcscd', os.path.join(run_dir, 'pcscd.comm')
        else:
            target, self.socket = '/run', os.path.join(run_dir, 'pcscd', 'pcscd.comm')
        # what a killed one left behind, so that the new socket is what is waited for
        if os.path.exists(self.socket):
            os.unlink(self.socket)
        argv = ['unshare', '--map-root-user', '--mount', '--propagation', 'private',
                'sh', '-c', 'mount --bind "$1" "$2" && exec "$3" -f -a -c "$4"', 'sh',
                run_dir, target, pcscd, conf]
        super().__init__('pcscd-%d' % n, argv, session.console_env(), session.outdir)
        # The socket is made once the readers of reader.conf are loaded.
        # (nothing says when but the file itself)
        def failed(_):
            status = self.stop(signal.SIGKILL)
            raise TestFailure('pcscd did not start (exit status %s):\n%s' % (
                status, '\n'.join(self.stderr.tail(20))))

        def started():
            if not self.alive():
                failed(None)
            return os.path.exists(self.socket)
        wait_until(started, scaled(15), 'pcscd', fail=failed, pause=0.02)
