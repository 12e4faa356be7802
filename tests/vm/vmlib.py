"""The VM the console tests boot: Debian's kernel under QEMU (software
emulation, no KVM here) with an initramfs built here from busybox, udev,
the console built by meson with every library it loads, and the kernel
modules for the emulated devices. Its /init is init.sh. QMP drives it:
screendumps, keys and tablet motion.
"""

import glob
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'integration'))
from slimtest import (Image, TestFailure, TestSkip, _LineLog, images_equal, log,  # noqa: E402
                      require_programs, scaled)

HERE = os.path.dirname(os.path.abspath(__file__))
KERNEL_CACHE = '/var/cache/slimland/vm-kernel'
# bochs: QEMU's standard VGA, a KMS device without a cursor plane
MODULES = ['virtio_pci', 'virtio_net', 'virtio_input', 'evdev', 'virtio-gpu', 'bochs', 'zram']
# udev's rules that name what an input or DRM device is; the rest would
# only run helpers this initramfs does not have
UDEV_RULES = ['50-udev-default.rules', '60-input-id.rules', '60-drm.rules',
              '60-evdev.rules', '70-mouse.rules', '70-touchpad.rules']
QEMU = 'qemu-system-x86_64'

# character -> (QEMU qcode, shift), us layout
QCODES = {' ': ('spc', False), '-': ('minus', False), '_': ('minus', True), '.': ('dot', False),
          '>': ('dot', True), '/': ('slash', False), '\n': ('ret', False)}
for _c in 'abcdefghijklmnopqrstuvwxyz':
    QCODES[_c] = (_c, False)
    QCODES[_c.upper()] = (_c, True)
for _c in '0123456789':
    QCODES[_c] = (_c, False)


# -- the kernel and the initramfs

def find_kernel():
    """(vmlinuz, modules directory, version) of an unpacked linux-image package."""
    roots = [os.environ['SLIM_VM_KERNEL_ROOT']] if os.environ.get('SLIM_VM_KERNEL_ROOT') else \
        sorted(os.path.dirname(p) for p in glob.glob(os.path.join(KERNEL_CACHE, '*', '.unpacked')))
    for root in reversed(roots):
        for vmlinuz in sorted(glob.glob(os.path.join(root, 'boot', 'vmlinuz-*'))):
            version = os.path.basename(vmlinuz)[len('vmlinuz-'):]
            moddir = os.path.join(root, 'lib', 'modules', version)
            if os.path.isdir(moddir):
                return vmlinuz, moddir, version
    raise TestFailure('no kernel for the VM in %s: run .ci/install-deps (it unpacks '
                      'linux-image-amd64\'s kernel there)' % KERNEL_CACHE)


def shared_libraries(program):
    """Every library ldd says `program` loads, with the dynamic loader."""
    out = subprocess.run(['ldd', program], capture_output=True, text=True, check=True).stdout
    libs = []
    for line in out.splitlines():
        m = re.search(r'=>\s*(/\S+)', line) or re.match(r'\s*(/\S+)', line)
        if m:
            libs.append(m.group(1))
    return libs


def copy_file(root, path, dest=None):
    """Copies `path` (its content, following links) to the same place under root."""
    target = root + (dest or path)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    if not os.path.exists(target):
        shutil.copy2(os.path.realpath(path), target)


def module_index(moddir):
    """Module name (with '_' for '-') -> path of its .ko file."""
    index = {}
    for dirpath, _, files in os.walk(os.path.join(moddir, 'kernel')):
        for f in files:
            if f.endswith('.ko'):
                index[f[:-3].replace('-', '_')] = os.path.join(dirpath, f)
    return index


def module_closure(moddir, names):
    """The .ko files of `names` and of everything they depend on."""
    index = module_index(moddir)
    todo = [n.replace('-', '_') for n in names]
    found = {}
    while todo:
        name = todo.pop()
        if name in found:
            continue
        if name not in index:
            continue  # built into this kernel
        found[name] = index[name]
        deps = subprocess.run(['modinfo', '-F', 'depends', index[name]], capture_output=True,
                              text=True, check=True).stdout.strip()
        todo += [d.replace('-', '_') for d in deps.split(',') if d]
    return sorted(found.values())


def build_initramfs(workdir, console, moddir, version, pairing_key=None, extra=(), trees=()):
    """`extra`: more programs, (host path, path in the VM), with their
    libraries (for slim.run=, see Vm; a script goes without); `trees`:
    directories copied whole to the same place (data a program reads)."""
    root = os.path.join(workdir, 'root')
    shutil.rmtree(root, ignore_errors=True)
    for d in ('usr/bin', 'usr/sbin', 'usr/lib', 'lib64', 'bin', 'sbin', 'dev', 'proc', 'sys',
              'run', 'tmp', 'etc/udev'):
        os.makedirs(os.path.join(root, d))
    # merged /usr, as on the host: the libraries' paths work as ldd printed them
    os.symlink('usr/lib', os.path.join(root, 'lib'))
    shutil.copy2('/bin/busybox', os.path.join(root, 'bin', 'busybox'))
    os.symlink('busybox', os.path.join(root, 'bin', 'sh'))  # for /init's #!; it installs the rest
    copy_file(root, console, '/usr/bin/slimland-console')
    udevadm = shutil.which('udevadm') or '/bin/udevadm'
    copy_file(root, udevadm, '/usr/bin/udevadm')
    os.makedirs(os.path.join(root, 'usr/lib/systemd'), exist_ok=True)
    os.symlink('/usr/bin/udevadm', os.path.join(root, 'usr/lib/systemd/systemd-udevd'))
    programs = [console, udevadm]
    for path, dest in extra:
        copy_file(root, path, dest)
        with open(path, 'rb') as f:
            if f.read(2) != b'#!':
                programs.append(path)
    for tree in trees:
        shutil.copytree(tree, root + tree, symlinks=True)
    # seatd, for the tests that take the seat through it (slim.seat=seatd)
    seatd = shutil.which('seatd') or '/usr/sbin/seatd'
    if os.path.exists(seatd):
        copy_file(root, seatd, '/usr/bin/seatd')
        programs.append(seatd)
    for program in programs:
        for lib in shared_libraries(program):
            copy_file(root, lib)
    for rule in UDEV_RULES:
        path = os.path.join('/lib/udev/rules.d', rule)
        if os.path.exists(path):
            copy_file(root, path, '/usr/lib/udev/rules.d/' + rule)
    if os.path.isdir('/usr/share/libinput'):
        shutil.copytree('/usr/share/libinput', os.path.join(root, 'usr/share/libinput'))
    with open(os.path.join(root, 'etc/passwd'), 'w') as f:
        f.write('root:x:0:0:root:/:/bin/sh\n')
    with open(os.path.join(root, 'etc/group'), 'w') as f:
        f.write('root:x:0:\ninput:x:101:\nvideo:x:44:\nrender:x:105:\ntty:x:5:\n')
    # the modules it needs, and a modules.dep for busybox's modprobe
    kroot = os.path.join(root, 'usr/lib/modules', version)
    for ko in module_closure(moddir, MODULES):
        dest = os.path.join(kroot, os.path.relpath(ko, moddir))
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copy2(ko, dest)
    for f in ('modules.order', 'modules.builtin', 'modules.builtin.modinfo'):
        if os.path.exists(os.path.join(moddir, f)):
            shutil.copy2(os.path.join(moddir, f), kroot)
    subprocess.run(['depmod', '-b', root, version], check=True)
    if pairing_key:
        # the session's pairing key, where init.sh's console reads it
        dest = os.path.join(root, 'etc/slimland-pairing.key')
        shutil.copy2(pairing_key, dest)
        os.chmod(dest, 0o600)
    shutil.copy2(os.path.join(HERE, 'init.sh'), os.path.join(root, 'init'))
    os.chmod(os.path.join(root, 'init'), 0o755)
    initrd = os.path.join(workdir, 'initrd.gz')
    subprocess.run('find . | cpio --quiet -o -H newc | gzip -1 > %s' % initrd, shell=True,
                   cwd=root, check=True)
    shutil.rmtree(root)
    log('initramfs: %s, %.1f MB' % (initrd, os.path.getsize(initrd) / 1e6))
    return initrd


# -- the VM

class Qmp:
    """QEMU's machine protocol on a Unix socket: one command at a time."""

    def __init__(self, path, deadline):
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.sock.connect(path)
                break
            except OSError:
                self.sock.close()
                if time.monotonic() > deadline:
                    raise TestFailure('QEMU\'s QMP socket %s never opened' % path)
                time.sleep(0.05)
        self.sock.settimeout(scaled(30))
        self.file = self.sock.makefile('rwb')
        self._read()  # the greeting
        self.execute('qmp_capabilities')

    def _read(self):
        while True:
            line = self.file.readline()
            if not line:
                raise TestFailure('QEMU closed its QMP socket')
            msg = json.loads(line)
            if 'event' not in msg:
                return msg

    def execute(self, command, **arguments):
        msg = {'execute': command}
        if arguments:
            msg['arguments'] = arguments
        self.file.write(json.dumps(msg).encode() + b'\n')
        self.file.flush()
        reply = self._read()
        if 'error' in reply:
            raise TestFailure('QMP %s: %s' % (command, reply['error'].get('desc')))
        return reply.get('return')

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


class Vnc:
    """QEMU's VNC server, as a desktop's VNC viewer would resize it: a
    SetDesktopSize message (RFB's ExtendedDesktopSize extension) reaches
    the display device as a new preferred size, which virtio-gpu tells the
    guest as a monitor hot-plug."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(scaled(30))
        self.sock.connect(path)
        if self._recv(12) != b'RFB 003.008\n':
            raise TestFailure('QEMU\'s VNC server speaks another RFB version')
        self.sock.sendall(b'RFB 003.008\n')
        types = self._recv(self._recv(1)[0])
        if 1 not in types:
            raise TestFailure('QEMU\'s VNC server wants authentication: %r' % types)
        self.sock.sendall(b'\x01')  # security: none
        if self._recv(4) != b'\0\0\0\0':
            raise TestFailure('QEMU\'s VNC server refused the connection')
        self.sock.sendall(b'\x01')  # ClientInit: shared
        init = self._recv(24)
        self.size = struct.unpack('>HH', init[:4])
        self._recv(struct.unpack('>I', init[20:24])[0])  # the desktop's name
        # SetEncodings: raw and ExtendedDesktopSize (-308)
        self.sock.sendall(struct.pack('>BBHii', 2, 0, 2, 0, -308))

    def _recv(self, n):
        data = b''
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise TestFailure('QEMU closed its VNC socket')
            data += chunk
        return data

    def set_desktop_size(self, width, height):
        self.sock.sendall(struct.pack('>BBHHBB', 251, 0, width, height, 1, 0) +
                          struct.pack('>IHHHHI', 0, 0, 0, width, height, 0))

    def close(self):
        self.sock.close()


class Vm:
    def __init__(self, outdir, vmlinuz, initrd, port, gpu='virtio-gpu-pci', vnc=False,
                 seatd=False, run=None, arg=None, heads=1):
        """`gpu`: the display device's QEMU name; `vnc`: serve VNC on a
        Unix socket (self.vnc_path) for Vnc; `heads`: the GPU's outputs
        (virtio-gpu's max_outputs), the second and further ones
        disconnected until a Vnc on vnc_paths[i] gives them a size (with
        `vnc`); `seatd`: the console takes the
        seat through seatd rather than libseat's built-in backend; `run`: a
        program in the VM that init.sh runs instead of the console, with
        `arg` (one word)."""
        self.qmp_path = os.path.join(outdir, 'qmp.sock')
        if os.path.exists(self.qmp_path):
            os.unlink(self.qmp_path)
        # 1 GiB: the initramfs (the console and every library it loads, the
        # H.264 decoder's among them: 170 MB unpacked) lives in its RAM
        argv = [QEMU, '-machine', 'q35', '-cpu', 'max', '-m', '1024', '-smp', '1',
                '-nographic', '-vga', 'none', '-no-reboot',
                '-kernel', vmlinuz, '-initrd', initrd,
                '-append', 'console=ttyS0 panic=-1 quiet slim.port=%d%s%s' % (
                    port, ' slim.seat=seatd' if seatd else '',
                    (' slim.run=' + run if run else '') + (' slim.arg=' + arg if arg else '')),
                '-device', gpu + (',max_outputs=%d' % heads if heads > 1 else '') + ',id=gpu',
                '-device', 'virtio-keyboard-pci,id=kbd',
                '-device', 'virtio-tablet-pci,id=tablet',
                '-netdev', 'user,id=n0', '-device', 'virtio-net-pci,netdev=n0,romfile=',
                '-qmp', 'unix:%s,server=on,wait=off' % self.qmp_path]
        self.vnc_path = os.path.join(outdir, 'vnc.sock')
        # a VNC server for each head: its viewer's size is that monitor's
        self.vnc_paths = [self.vnc_path] + [os.path.join(outdir, 'vnc-%d.sock' % i)
                                            for i in range(1, heads)]
        for i, path in enumerate(self.vnc_paths if vnc else []):
            if os.path.exists(path):
                os.unlink(path)
            argv += ['-vnc', 'unix:%s' % path + (
                ',id=vnc%d,display=gpu,head=%d' % (i, i) if i else '')]
        log('qemu: %s' % ' '.join(argv))
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        self.serial = _LineLog(self.proc.stdout, os.path.join(outdir, 'serial.log'))
        self.qmp = Qmp(self.qmp_path, time.monotonic() + scaled(20))
        self.pos = 0

    def wait_line(self, pattern, timeout, what=None):
        """The first serial line from the last one matched on that matches the
        regular expression; its match object."""
        rx = re.compile(pattern)
        i, line = self.serial.wait(lambda l: rx.search(l) is not None, self.pos,
                                   time.monotonic() + scaled(timeout))
        if line is None:
            raise TestFailure('the VM never said %s within %gs (QEMU %s); serial console:\n%s' % (
                what or repr(pattern), scaled(timeout),
                'running' if self.proc.poll() is None else 'exited: %s' % self.proc.poll(),
                '\n'.join(self.serial.tail(60))))
        self.pos = i + 1
        return rx.search(line)

    def screendump(self, path, head=0):
        """A head's scanout as an RGB image (PNG where this QEMU writes PNG)."""
        try:
            self.qmp.execute('screendump', filename=path + '.png', device='gpu', head=head,
                             format='png')
            path += '.png'
        except TestFailure:
            self.qmp.execute('screendump', filename=path + '.ppm', device='gpu', head=head)
            path += '.ppm'
        with Image.open(path) as im:
            return im.convert('RGB')

    def key(self, qcode, down):
        self.qmp.execute('input-send-event', events=[
            {'type': 'key', 'data': {'down': down, 'key': {'type': 'qcode', 'data': qcode}}}])

    def chord(self, *qcodes):
        """Presses the keys in order and releases them in reverse."""
        for q in qcodes:
            self.key(q, True)
        for q in reversed(qcodes):
            self.key(q, False)

    def chord_until(self, qcodes, pattern, timeout, what):
        """Presses the chord, and again every 2 s, until a serial line matches:
        keys pressed while a VT switch is still under way go nowhere (the
        console has let the keyboard go, the kernel has not taken it yet)."""
        rx = re.compile(pattern)
        deadline = time.monotonic() + scaled(timeout)
        while time.monotonic() < deadline:
            self.chord(*qcodes)
            i, line = self.serial.wait(lambda l: rx.search(l) is not None, self.pos,
                                       min(deadline, time.monotonic() + scaled(2)))
            if line is not None:
                self.pos = i + 1
                return rx.search(line)
        return self.wait_line(pattern, 0, what)  # fails, with the serial console

    def type_text(self, text):
        # At a person's pace: QMP injects as fast as it is asked, and the
        # kernel's evdev buffer (a few dozen events) overflows (SYN_DROPPED)
        # when an emulated guest on a busy host does not read it in time.
        for ch in text:
            qcode, shift = QCODES[ch]
            if shift:
                self.key('shift', True)
            self.key(qcode, True)
            self.key(qcode, False)
            if shift:
                self.key('shift', False)
            time.sleep(0.02)

    def move_abs(self, x, y, width, height):
        """The tablet to pixel (x, y): QEMU's absolute axes run 0..0x7fff."""
        self.qmp.execute('input-send-event', events=[
            {'type': 'abs', 'data': {'axis': 'x', 'value': x * 0x8000 // width}},
            {'type': 'abs', 'data': {'axis': 'y', 'value': y * 0x8000 // height}}])

    def stop(self):
        if self.proc.poll() is None:
            try:
                self.qmp.execute('quit')
            except (TestFailure, OSError):
                pass
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
                self.proc.wait()
        self.qmp.close()
        self.serial.finish()


def read_fifo(fd, want, timeout):
    import select
    data = b''
    deadline = time.monotonic() + scaled(timeout)
    while want not in data:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TestFailure('the shell wrote %r into the FIFO, not %r, within %gs' % (
                data, want, scaled(timeout)))
        readable, _, _ = select.select([fd], [], [], left)
        if readable:
            chunk = os.read(fd, 4096)
            data += chunk
            if not chunk:
                time.sleep(0.01)
    return data


def wait_scanout(s, vm, timeout, compare, what, head=0, box=None):
    """Waits until compare(grim's screenshot, the VM's scanout) is None
    rather than what differs; returns grim's image. `head`: the GPU output
    whose scanout, `box`: the part of grim's screenshot it shows (all)."""
    deadline = time.monotonic() + scaled(timeout)
    n = 0
    while True:
        n += 1
        g = s.grim_image()
        g = g.crop(box) if box else g
        d = vm.screendump(os.path.join(s.tmp, 'dump-%d' % n), head)
        why = compare(g, d)
        if why is None:
            log('%s (%dx%d) after %d attempt(s)' % ((what,) + g.size + (n,)))
            return g
        if time.monotonic() > deadline:
            g.save(os.path.join(s.outdir, 'unequal-grim.png'))
            d.save(os.path.join(s.outdir, 'unequal-scanout.png'))
            raise TestFailure('%s: not so: %s (images in %s)' % (what, why, s.outdir))
        time.sleep(0.2)


def screens_equal(s, vm, timeout, head=0, box=None):
    """Waits until the VM's scanout of `head` equals grim's screenshot (its
    `box`, else all of it); returns the image."""
    return wait_scanout(s, vm, timeout, images_equal, 'scanout %d equals the compositor%s' % (
        head, ' in %s' % (box,) if box else ''), head, box)


def vm_inputs(*programs):
    """What a VM test needs, checked: (console, vmlinuz, modules directory,
    kernel version). `programs`: more that it runs on the host."""
    require_programs(QEMU, 'cpio', 'gzip', 'depmod', 'modinfo', 'udevadm', *programs)
    if not os.path.exists('/bin/busybox'):
        raise TestFailure('/bin/busybox is missing: apt-get install busybox-static')
    console = os.environ.get('SLIMLAND_CONSOLE')
    if not console or not os.access(console, os.X_OK):
        raise TestSkip('SLIMLAND_CONSOLE is not set to a program')
    return (console,) + find_kernel()
