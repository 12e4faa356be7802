"""The VM the console tests boot: Debian's kernel under QEMU (software
emulation, no KVM here) with the console image's initramfs
(data/console-image/consoleimage.py: busybox, udev, the console built by
meson with every library it loads, the kernel modules), whose /init is
init.sh here unless a test says. QMP drives it: screendumps, keys and
tablet motion.
"""

import json
import os
import re
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'integration'))
from slimtest import (Image, TestFailure, TestSkip, _LineLog, images_equal, log,  # noqa: E402
                      require_programs, scaled)

HERE = os.path.dirname(os.path.abspath(__file__))
# the console image's builder: the VM tests' initramfs is the product's, with an /init of theirs
sys.path.insert(0, os.path.join(HERE, '..', '..', 'data', 'console-image'))
import consoleimage  # noqa: E402
from consoleimage import ImageError  # noqa: E402

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
    try:
        return consoleimage.find_kernel()
    except ImageError as e:
        raise TestFailure(str(e))


def build_initramfs(workdir, console, moddir, version, pairing_key=None, **kwargs):
    """The console image's initramfs (consoleimage.build_initramfs), with
    the VM tests' init.sh as its /init unless `init` says."""
    kwargs.setdefault('init', os.path.join(HERE, 'init.sh'))
    try:
        return consoleimage.build_initramfs(workdir, console, moddir, version,
                                            pairing_key=pairing_key, **kwargs)
    except (ImageError, subprocess.CalledProcessError) as e:
        raise TestFailure('the initramfs: %s' % e)


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
                 seatd=False, run=None, arg=None, heads=1, disk=None, append=None,
                 hostfwd=(), sound=False):
        """`gpu`: the display device's QEMU name; `vnc`: serve VNC on a
        Unix socket (self.vnc_path) for Vnc; `heads`: the GPU's outputs
        (virtio-gpu's max_outputs), the second and further ones
        disconnected until a Vnc on vnc_paths[i] gives them a size (with
        `vnc`); `seatd`: the console takes the
        seat through seatd rather than libseat's built-in backend; `run`: a
        program in the VM that init.sh runs instead of the console, with
        `arg` (one word); `disk`: a raw disk image on a USB stick (xHCI)
        that the firmware boots, rather than vmlinuz and initrd; `append`:
        the kernel command line, rather than the VM tests' (slim.port=...);
        `hostfwd`: (port on this host's loopback, TCP port in the VM) pairs
        QEMU forwards; `sound`: an HD audio card with a duplex codec."""
        self.qmp_path = os.path.join(outdir, 'qmp.sock')
        if os.path.exists(self.qmp_path):
            os.unlink(self.qmp_path)
        # 1 GiB: the initramfs (the console and every library it loads, the
        # H.264 decoder's among them: 170 MB unpacked) lives in its RAM
        argv = [QEMU, '-machine', 'q35', '-cpu', 'max', '-m', '1024', '-smp', '1',
                '-nographic', '-vga', 'none', '-no-reboot']
        if disk:
            argv += ['-device', 'qemu-xhci,id=xhci',
                     '-drive', 'if=none,id=stick,format=raw,file=' + disk,
                     '-device', 'usb-storage,bus=xhci.0,drive=stick,bootindex=0']
        else:
            argv += ['-kernel', vmlinuz, '-initrd', initrd, '-append', append or (
                'console=ttyS0 panic=-1 quiet slim.port=%d%s%s' % (
                    port, ' slim.seat=seatd' if seatd else '',
                    (' slim.run=' + run if run else '') + (' slim.arg=' + arg if arg else '')))]
        if sound:
            # the guest's sound card, with no sound on this host's side
            argv += ['-audiodev', 'none,id=snd0', '-device', 'ich9-intel-hda',
                     '-device', 'hda-duplex,audiodev=snd0']
        argv += ['-device', gpu + (',max_outputs=%d' % heads if heads > 1 else '') + ',id=gpu',
                 '-device', 'virtio-keyboard-pci,id=kbd',
                 '-device', 'virtio-tablet-pci,id=tablet',
                 '-netdev', 'user,id=n0' + ''.join(',hostfwd=tcp:127.0.0.1:%d-:%d' % f
                                                   for f in hostfwd),
                 '-device', 'virtio-net-pci,netdev=n0,romfile=',
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


def wait_scanout(s, vm, timeout, compare, what, head=0, box=None, expected=None):
    """Waits until compare(grim's screenshot, the VM's scanout) is None
    rather than what differs; returns grim's image. `head`: the GPU output
    whose scanout, `box`: the part of grim's screenshot it shows (all);
    `expected`: what gives the image to compare instead of grim's."""
    deadline = time.monotonic() + scaled(timeout)
    n = 0
    while True:
        n += 1
        g = expected() if expected else s.grim_image()
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
