"""
A real etcd cluster for the tests of server groups: N members (default 3)
of the system's etcd (Debian's etcd-server, /usr/bin/etcd), each in a
slimnet Host of its own, or all on 127.0.0.1 when given no hosts, and
etcdctl (API v3) to look at and change what it holds.

    with Lan('group') as lan:
        hosts = [lan.host('etcd%d' % i, 10 + i) for i in range(3)]
        with EtcdCluster('group', outdir, hosts=hosts) as etcd:
            srv = lan.host('srv', 1)  # given etcd.endpoints
            etcd.put('/slimland/x', '1')
            etcd.stop_member(0)                 # SIGKILL: a power cut
            etcd.start_member(0)                # again, with its data
            etcd.wait_healthy()
            etcd.get_prefix('/slimland/')       # {'/slimland/x': '1'}

    with EtcdCluster('local', outdir) as etcd:  # loopback, no root needed
        ...

In hosts, member i listens on hosts[i].addr, client port 2379 and peer
port 2380; on loopback, on ports the kernel just handed out (free unless
raced). etcdctl runs in the namespace of `client_host` (default: the
first member's host, whose namespace stays on the LAN when its member is
stopped), or here on loopback; give a host of the test's own to talk to
the cluster from where the servers are.

Every member's data directory is in a temporary directory of the
cluster's own, removed at the end; each member's log (--log-level warn)
goes to OUTDIR/NAME-etcdI.stderr.log, kept, and appended to when it is
started again. The cluster is torn down at the end, failure or not
(SIGTERM, then SIGKILL). Each cluster has a token of its own
(--initial-cluster-token), so that clusters never join one another.

A put that timed out has an unknown outcome, as with any etcd client: a
member without quorum may have it in its log, and the cluster commit it
once quorum is back.

With tls={'ca': CA, 'cert': CERT, 'key': KEY} (PEM files), the client
URLs are https: every member serves them with CERT and KEY (a certificate
for its address, which should allow clientAuth too: etcd 3.4's gateway
dials its own gRPC with it) and, with --client-cert-auth, takes only
clients with a certificate CA signed; etcdctl then presents CERT and KEY
and trusts CA. Peers still talk http.

Skipped (exit 77) when etcd or etcdctl is not installed.
"""
import base64
import json
import os
import shutil
import signal
import socket
import select
import subprocess
import time
import uuid

import slimrun
from slimtest import Process, TestFailure, log, require_programs, scaled, wait_until

ETCD = 'etcd'
ETCDCTL = 'etcdctl'
CLIENT_PORT = 2379
PEER_PORT = 2380


class EtcdError(TestFailure):
    """An etcdctl command that failed (or timed out)."""


def free_tcp_ports(n):
    """n distinct TCP ports on loopback the kernel just handed out, all held
    at once while asked for (free unless raced)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(('127.0.0.1', 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _clean_env():
    """The environment without etcd's own variables, which both programs
    read as flags."""
    return {k: v for k, v in os.environ.items()
            if not k.startswith('ETCD_') and not k.startswith('ETCDCTL_')}


class Member:
    """One member's addresses and data; its process while it runs."""

    def __init__(self, cluster, i, addr, client_port, peer_port, host):
        self.i = i
        self.name = '%s-etcd%d' % (cluster.name, i)
        self.host = host
        self.client_url = '%s://%s:%d' % ('https' if cluster.tls else 'http', addr,
                                          client_port)
        self.peer_url = 'http://%s:%d' % (addr, peer_port)
        self.data_dir = os.path.join(cluster.tmp, 'etcd%d' % i)
        self.proc = None
        self.starts = 0

    def running(self):
        return self.proc is not None


class EtcdCluster:
    """An N-member etcd cluster (a context manager): started, and by
    default healthy, on entry; stopped and its data removed on exit."""

    def __init__(self, name, outdir, hosts=None, size=3, client_host=None, wait=True,
                 timeout=30, log_level='warn', extra_args=(), tls=None):
        """name: for the logs and the token; outdir: where the members' logs
        go (made if need be). hosts: slimnet Hosts, one member in each (then
        `size` is their number); none: `size` members on loopback.
        client_host: the Host etcdctl runs in (default hosts[0]). wait: on
        entry, wait_healthy(timeout). log_level: etcd's --log-level.
        extra_args: more etcd flags for every member. tls: {'ca', 'cert',
        'key'}: https client URLs with client certificates (see above)."""
        self.name = name
        self.outdir = outdir
        self.hosts = list(hosts) if hosts else []
        self.size = len(self.hosts) if self.hosts else size
        self.client_host = client_host or (self.hosts[0] if self.hosts else None)
        self.wait = wait
        self.timeout = timeout
        self.log_level = log_level
        self.extra_args = list(extra_args)
        self.tls = dict(tls) if tls else None
        self.token = '%s-%d-%s' % (name, os.getpid(), uuid.uuid4().hex[:12])
        self.tmp = None
        self.members = []
        self.last_check = ''

    # -- set-up and tear-down
    def __enter__(self):
        require_programs(ETCD, ETCDCTL)
        os.makedirs(self.outdir, exist_ok=True)
        self.tmp = slimrun.mkdtemp('etcd')
        try:
            if self.hosts:
                self.members = [Member(self, i, h.addr, CLIENT_PORT, PEER_PORT, h)
                                for i, h in enumerate(self.hosts)]
            else:
                ports = free_tcp_ports(2 * self.size)
                self.members = [Member(self, i, '127.0.0.1', ports[2 * i], ports[2 * i + 1],
                                       None) for i in range(self.size)]
            log('etcd cluster %s: %d members at %s (token %s, data in %s)' % (
                self.name, self.size, ' '.join(self.endpoints), self.token, self.tmp))
            for m in self.members:
                self._start(m, 'new')
            if self.wait:
                self.wait_healthy(self.timeout)
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def close(self):
        """Stops every member (SIGTERM, then SIGKILL) and removes the data."""
        for m in self.members:
            if m.proc is not None:
                status = m.proc.stop(signal.SIGTERM, timeout=5)
                m.proc = None
                log('%s stopped (status %s)' % (m.name, status))
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None

    # -- members
    @property
    def endpoints(self):
        """Every member's client URL, 'http(s)://ADDR:PORT', running or not."""
        return [m.client_url for m in self.members]

    def running(self):
        """The indices of the members this cluster started and has not stopped."""
        return [m.i for m in self.members if m.running()]

    def _start(self, m, state):
        initial = ','.join('%s=%s' % (o.name, o.peer_url) for o in self.members)
        argv = [ETCD, '--name', m.name, '--data-dir', m.data_dir,
                '--listen-client-urls', m.client_url, '--advertise-client-urls', m.client_url,
                '--listen-peer-urls', m.peer_url, '--initial-advertise-peer-urls', m.peer_url,
                '--initial-cluster', initial, '--initial-cluster-state', state,
                '--initial-cluster-token', self.token,
                '--logger', 'zap', '--log-outputs', 'stderr',
                '--log-level', self.log_level] + self._tls_args() + self.extra_args
        if m.host is not None:
            argv = m.host.argv(argv)
        m.proc = Process(m.name, argv, _clean_env(), self.outdir)
        m.starts += 1
        log('%s started (pid %d, %s)' % (m.name, m.proc.pid, state))

    def _tls_args(self):
        if not self.tls:
            return []
        return ['--cert-file', self.tls['cert'], '--key-file', self.tls['key'],
                '--trusted-ca-file', self.tls['ca'], '--client-cert-auth']

    def stop_member(self, i, graceful=False, timeout=10):
        """Stops member i: SIGKILL, as a power cut would, or with graceful
        SIGTERM (then SIGKILL after `timeout` seconds). Returns its status."""
        m = self.members[i]
        if m.proc is None:
            raise TestFailure('%s is not running' % m.name)
        status = m.proc.stop(signal.SIGTERM if graceful else signal.SIGKILL, timeout)
        m.proc = None
        log('%s stopped with %s (status %s)' % (m.name, 'SIGTERM' if graceful else 'SIGKILL',
                                                status))
        return status

    def start_member(self, i):
        """Starts member i again, with its data (--initial-cluster-state
        existing). Does not wait: see wait_healthy."""
        m = self.members[i]
        if m.proc is not None:
            raise TestFailure('%s is running already' % m.name)
        self._start(m, 'existing')

    # -- etcdctl
    def _etcdctl_argv(self, args, endpoints, timeout):
        """argv and environment of etcdctl ARGS (see etcdctl)."""
        if endpoints is None:
            endpoints = [self.members[i].client_url for i in self.running()] or self.endpoints
        argv = [ETCDCTL, '--endpoints=' + ','.join(endpoints), '--dial-timeout=%gs' % min(
            timeout, scaled(2)), '--command-timeout=%gs' % timeout]
        if self.tls:
            argv += ['--cacert=' + self.tls['ca'], '--cert=' + self.tls['cert'],
                     '--key=' + self.tls['key']]
        argv += list(args)
        if self.client_host is not None:
            argv = self.client_host.argv(argv)
        env = _clean_env()
        env['ETCDCTL_API'] = '3'
        return argv, env

    def etcdctl(self, *args, endpoints=None, timeout=5, check=True):
        """etcdctl ARGS (API v3) in client_host's namespace against
        `endpoints` (default: those of the running members, or all when
        none runs), with --command-timeout=`timeout` s; the
        CompletedProcess (text). check: raise EtcdError on a failure."""
        timeout = scaled(timeout)
        argv, env = self._etcdctl_argv(args, endpoints, timeout)
        try:
            r = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=timeout + scaled(5))
        except subprocess.TimeoutExpired:
            raise EtcdError('etcdctl %s: no answer within %gs' % (
                ' '.join(args), timeout + scaled(5)))
        r.stdout = r.stdout.decode('utf-8', 'replace')
        r.stderr = r.stderr.decode('utf-8', 'replace')
        if check and r.returncode != 0:
            raise EtcdError('etcdctl %s: exit status %d: %s' % (
                ' '.join(args), r.returncode, r.stderr.strip()[-2000:]))
        return r

    def put(self, key, value, timeout=5, endpoints=None):
        """Puts key = value (str); raises EtcdError when it did not succeed
        within `timeout` seconds (its outcome is then unknown)."""
        self.etcdctl('put', '--', key, value, endpoints=endpoints, timeout=timeout)

    def get_prefix(self, prefix, timeout=5, endpoints=None):
        """The keys starting with `prefix` and their values: {key: value}
        (str), read linearizably (so with quorum only)."""
        return self._get_prefix(prefix, timeout, endpoints)[0]

    def _get_prefix(self, prefix, timeout=5, endpoints=None):
        """get_prefix's answer, and the store's revision it was read at."""
        r = self.etcdctl('get', '--prefix', '-w', 'json', '--', prefix, endpoints=endpoints,
                         timeout=timeout)
        answer = json.loads(r.stdout)
        kvs = {base64.b64decode(kv['key']).decode('utf-8', 'replace'):
               base64.b64decode(kv.get('value', '')).decode('utf-8', 'replace')
               for kv in answer.get('kvs', [])}
        return kvs, int(answer['header']['revision'])

    def wait_prefix(self, prefix, predicate, timeout=10):
        """The keys under `prefix` (as get_prefix) once predicate(kvs) holds:
        read again at each change a watch from the revision read reports,
        so none is missed and nothing is polled. None at the timeout."""
        kvs, rev = self._get_prefix(prefix)
        if predicate(kvs):
            return kvs
        argv, env = self._etcdctl_argv(('watch', '--prefix', '--rev=%d' % (rev + 1), '--',
                                        prefix), None, scaled(timeout))
        watch = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + scaled(timeout)
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([watch.stdout], [], [], left)[0]:
                    return None
                if not os.read(watch.stdout.fileno(), 65536):
                    return None  # the watch ended
                kvs = self.get_prefix(prefix)
                if predicate(kvs):
                    return kvs
        finally:
            watch.kill()
            watch.wait()

    def delete_prefix(self, prefix, timeout=5, endpoints=None):
        """Deletes the keys starting with `prefix`; how many there were."""
        r = self.etcdctl('del', '--prefix', '--', prefix, endpoints=endpoints, timeout=timeout)
        return int(r.stdout.split()[0])

    def health(self, timeout=0.5):
        """{client URL: healthy} of the running members, from `etcdctl
        endpoint health` (a linearizable read through each)."""
        urls = [self.members[i].client_url for i in self.running()]
        if not urls:
            return {}
        r = self.etcdctl('endpoint', 'health', '-w', 'json', endpoints=urls, timeout=timeout,
                         check=False)
        self.last_check = (r.stdout + r.stderr).strip()
        result = {u: False for u in urls}
        try:
            entries = json.loads(r.stdout)
        except ValueError:
            return result
        seen = {}
        for e in entries:  # 3.4 may list an endpoint twice: all must say healthy
            url = e.get('endpoint')
            if url in result:
                seen[url] = seen.get(url, True) and e.get('health') is True
        result.update(seen)
        return result

    def leader(self, timeout=2):
        """The index of the member the running members say leads, or None
        (no leader, or no answer): from `etcdctl endpoint status`."""
        r = self.etcdctl('endpoint', 'status', '-w', 'json', timeout=timeout, check=False)
        try:
            entries = json.loads(r.stdout)
        except ValueError:
            return None
        index = {m.client_url: m.i for m in self.members}
        ids = {e['Status']['header']['member_id']: index.get(e['Endpoint']) for e in entries}
        leaders = {e['Status'].get('leader') for e in entries}
        if len(leaders) != 1:
            return None
        return ids.get(leaders.pop())

    def wait_healthy(self, timeout=30):
        """Waits until every running member answers healthy; fails after
        `timeout` seconds, or as soon as one has exited, with the logs.
        Returns the seconds it took."""
        start = time.monotonic()

        def health():
            for i in self.running():
                m = self.members[i]
                if not m.proc.alive():
                    self.fail('%s exited (status %s)' % (m.name, m.proc.proc.poll()))
            try:
                return self.health()
            except EtcdError as e:
                self.last_check = str(e)
                return {}
        # between polls 0.1 s; etcdctl waits up to 0.5 s itself
        wait_until(health, scaled(timeout),
                   lambda _: 'etcd cluster %s to be healthy: %s' % (self.name, self.last_check),
                   holds=lambda h: h and all(h.values()), fail=self.fail, pause=0.1)
        took = time.monotonic() - start
        log('etcd cluster %s healthy (members %s) after %.2fs' % (
            self.name, ','.join(str(i) for i in self.running()), took))
        return took

    # -- failures
    def logs_text(self):
        out = []
        for m in self.members:
            path = os.path.join(self.outdir, m.name + '.stderr.log')
            lines = m.proc.stderr.tail(15) if m.proc is not None else _tail(path, 15)
            out.append('--- %s log (last lines; %s) ---' % (
                m.name, 'running' if m.running() else 'stopped'))
            out += lines
        out.append('(all logs in %s)' % self.outdir)
        return '\n' + '\n'.join(out)

    def fail(self, msg):
        raise TestFailure(msg + self.logs_text())


def _tail(path, n):
    try:
        with open(path, encoding='utf-8', errors='replace') as f:
            return [l.rstrip('\n') for l in f.readlines()[-n:]]
    except OSError:
        return []
