"""Server groups on etcd over https with client certificates
(session-manager.md §9; `etcd_ca`, `etcd_cert`, `etcd_key`): one etcd
member on loopback (slimetcd.py with tls=) serving https with a
certificate of a throwaway CA and taking only clients with a certificate
of that CA (--client-cert-auth), and three slimland-sessiond servers on
loopback, all with `etcd = https://127.0.0.1:PORT`:

    A  etcd_ca = the CA, etcd_cert/etcd_key = a client certificate of it
    B  etcd_ca = the CA, no client certificate
    C  etcd_ca = another throwaway CA, the good client certificate

1. A registers: its `slimlandctl group` lists it as (this), reachable,
   and etcdctl (with the client certificate) reads its servers/A key;
2. B is refused by etcd (no client certificate; etcd logs that it
   rejected it): B logs `group: etcd unreachable`, and for TTL + 3 s the
   registry never holds B while A's view stays just A, reachable, and A
   logs nothing unreachable;
3. C cannot verify etcd's certificate: the same, its reason about the
   certificate, never registered;
4. the three stop on SIGTERM with status 0 (sanitizer builds: no report).

The certificates are made with /usr/bin/openssl in a temporary directory
of the test's own, removed at the end, failure or not.

Root only (users, PAM); skipped without etcd.
"""
import contextlib
import os
import shutil
import subprocess
import time

from slimetcd import EtcdCluster
from slimgroup import PREFIX, complete, stop_cleanly, view, wait_views
from slimsessiond import ManagerSession
import slimrun
from slimtest import TestFailure, TestSkip, log, require_programs, run, scaled, unique_name

NAME = 'group_tls'
TTL = 3
OPENSSL = '/usr/bin/openssl'


def openssl(*args, cwd):
    r = subprocess.run([OPENSSL] + list(args), cwd=cwd, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=30)
    if r.returncode != 0:
        raise TestFailure('openssl %s: %s' % (' '.join(args), r.stdout.decode(errors='replace')))


def make_ca(d, name):
    openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1',
            '-nodes', '-days', '2', '-subj', '/CN=slimtest %s' % name,
            '-addext', 'basicConstraints=critical,CA:TRUE',
            '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
            '-keyout', name + '.key', '-out', name + '.pem', cwd=d)
    return os.path.join(d, name + '.pem')


def make_cert(d, name, ca, cn, extensions):
    """A key and a certificate `ca` signs: (cert path, key path)."""
    openssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
            '-subj', '/CN=' + cn, '-keyout', name + '.key', '-out', name + '.csr', cwd=d)
    with open(os.path.join(d, name + '.ext'), 'w') as f:
        f.write('basicConstraints = critical,CA:FALSE\n'
                'keyUsage = critical,digitalSignature,keyEncipherment\n' + extensions)
    openssl('x509', '-req', '-in', name + '.csr', '-CA', ca + '.pem', '-CAkey', ca + '.key',
            '-CAcreateserial', '-days', '2', '-extfile', name + '.ext',
            '-out', name + '.pem', cwd=d)
    return os.path.join(d, name + '.pem'), os.path.join(d, name + '.key')


def test():
    if os.geteuid() != 0:
        raise TestSkip('needs root (useradd, PAM, starting compositors as users)')
    require_programs('etcd', 'etcdctl', OPENSSL)
    base = os.environ.get('SLIMTEST_OUTDIR', os.path.join(os.getcwd(), 'integration-output'))
    outdir = os.path.join(base, NAME)
    shutil.rmtree(outdir, ignore_errors=True)
    os.makedirs(outdir)
    with contextlib.ExitStack() as stack:
        pki = slimrun.mkdtemp('pki')
        stack.callback(shutil.rmtree, pki, ignore_errors=True)
        ca = make_ca(pki, 'ca')
        other_ca = make_ca(pki, 'other-ca')
        # etcd 3.4's gateway dials its own gRPC with the server certificate
        # as a client one: it must allow clientAuth too
        server_cert, server_key = make_cert(
            pki, 'etcd', 'ca', '127.0.0.1',
            'extendedKeyUsage = serverAuth,clientAuth\n'
            'subjectAltName = IP:127.0.0.1,DNS:localhost\n')
        client_cert, client_key = make_cert(pki, 'client', 'ca', 'slimland-sessiond',
                                            'extendedKeyUsage = clientAuth\n')
        log('throwaway CAs and certificates in %s' % pki)

        etcd = stack.enter_context(EtcdCluster(
            NAME, os.path.join(outdir, 'etcd'), size=1,
            tls={'ca': ca, 'cert': server_cert, 'key': server_key}))
        endpoint = etcd.endpoints[0]
        if not endpoint.startswith('https://'):
            raise TestFailure('etcd endpoint %s is not https' % endpoint)
        # etcd takes no client without a certificate of its CA
        r = subprocess.run(['etcdctl', '--endpoints=' + endpoint, '--cacert=' + ca,
                            '--dial-timeout=2s', '--command-timeout=3s', 'get', 'x'],
                           env=dict(os.environ, ETCDCTL_API='3'), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=scaled(20))
        if r.returncode == 0:
            raise TestFailure('etcd answered a client without a certificate: %s'
                              % r.stdout.decode(errors='replace'))

        common = ['etcd = ' + endpoint, 'group_prefix = ' + PREFIX, 'group_ttl = %d' % TTL]
        tls = {
            'A': ['etcd_ca = ' + ca, 'etcd_cert = ' + client_cert, 'etcd_key = ' + client_key],
            'B': ['etcd_ca = ' + ca],
            'C': ['etcd_ca = ' + other_ca, 'etcd_cert = ' + client_cert,
                  'etcd_key = ' + client_key],
        }
        servers = {}
        for n in ('A', 'B', 'C'):
            low = n.lower()
            s = stack.enter_context(ManagerSession(
                '%s/%s' % (NAME, n), unique_name('gtls-' + low), unique_name('gtls-' + low),
                unique_name('gtls-%s-gr' % low),
                extra_config=common + ['server_name = ' + n] + tls[n]))
            s.server = n
            servers[n] = s
        group_tls(etcd, servers)


def registry(etcd):
    return etcd.get_prefix(PREFIX + 'servers/')


def group_tls(etcd, servers):
    a, b, c = servers['A'], servers['B'], servers['C']
    just_a = {'A': a}

    # 1. A, with its client certificate, registers
    t = time.monotonic()
    a.start_manager()
    a.manager_log_wait('group: A registered under %s' % PREFIX, timeout=20)
    log('A registered over https %.2fs after its start' % (time.monotonic() - t))
    wait_views(just_a, lambda n, v: complete(v, just_a, {}, n)
               and v.endpoint == etcd.endpoints[0], 'A in its own view, reachable, over https')
    log('A\'s view:\n' + view(a).text())
    reg = registry(etcd)
    if set(reg) != {PREFIX + 'servers/A'}:
        raise TestFailure('the registry, read with etcdctl over https: %r' % reg)
    log('etcdctl (client certificate) reads %s: %s' % (PREFIX + 'servers/A',
                                                        reg[PREFIX + 'servers/A'][:120]))

    # 2, 3. B (no client certificate) and C (the wrong CA): refused, logged
    mark_a = a.manager.stderr.mark()
    started = time.monotonic()
    b.start_manager()
    c.start_manager()
    said = {}
    for s, why in ((b, 'no client certificate'), (c, 'the wrong CA')):
        i = s.manager_log_wait('group: etcd unreachable (', timeout=20)
        said[s.server] = s.manager.stderr.lines[i - 1]
        log('%s (%s) said, %.2fs after its start: %s' % (
            s.server, why, time.monotonic() - started, said[s.server].split('] ', 1)[-1]))
    # B's refusal is etcd's (client-cert-auth); C's, its own check of etcd
    rejected = [l for l in etcd.members[0].proc.stderr.lines
                if "client didn't provide a certificate" in l]
    if not rejected:
        etcd.fail('etcd never said it rejected a client without a certificate')
    if 'certificate' not in said['C']:
        raise TestFailure('C\'s reason is not its check of etcd\'s certificate: ' + said['C'])
    # a bounded time, polled: a lease's length and more
    until = started + scaled(TTL + 3)
    polls = 0
    while time.monotonic() < until or polls < 3:
        reg = registry(etcd)
        if set(reg) != {PREFIX + 'servers/A'}:
            raise TestFailure('the registry holds %s (only A should be there)' % sorted(reg))
        v = view(a)
        if not complete(v, just_a, {}, 'A'):
            raise TestFailure('A\'s view with B and C refused:\n' + v.text())
        polls += 1
        time.sleep(0.2)
    log('for %.2fs (%d polls) the registry held A alone and A\'s view was complete' % (
        time.monotonic() - started, polls))
    for s in (b, c):
        if any(' registered under ' in l for l in s.manager.stderr.lines):
            raise TestFailure('%s says it registered' % s.server)
        v = view(s)
        if not v.ok or v.reachable or v.registered:
            raise TestFailure('%s\'s view should say unreachable, not registered:\n%s' % (
                s.server, v.text()))
        log('%s\'s view:\n%s' % (s.server, v.text()))
    said_a = [l for l in a.manager.stderr.since(mark_a) if 'group: etcd unreachable' in l]
    if said_a:
        raise TestFailure('A said etcd is unreachable: %s' % said_a)

    # 4. all stop cleanly
    stop_cleanly(servers)


run(test)
