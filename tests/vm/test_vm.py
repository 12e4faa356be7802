"""slimland-console on a real kernel: DRM/KMS output and libinput input in a
QEMU virtual machine (software emulation: no KVM here).

The VM boots Debian's kernel with an initramfs built here: busybox, udev,
the console built by meson with every library it loads, and the kernel
modules for virtio-gpu, virtio-input and virtio-net. Its /init (init.sh)
runs the console with --output drm --input libinput against a compositor
on the host, with foot in it. Then:

  (a) QEMU's screendump of the virtio-gpu scanout equals grim's screenshot
      of the compositor, pixel for pixel (the pointer is on the cursor
      plane, which the dump leaves out, as grim does);
  (b) keys injected as a virtio keyboard (QMP input-send-event) reach foot
      on the server: a typed command writes to a FIFO the test reads;
  (c) absolute motion injected as a virtio tablet moves the pointer on the
      console at once, and the server's CURSOR_POS confirms the position
      (the console's -v lines on the serial console);
  (d) Ctrl+Alt+F2 and Ctrl+Alt+F1 switch the virtual terminal away and back
      through the seat: the console lets the display go, takes it back,
      asks the server for a repaint, and the scanout equals grim's again.

It also keeps the console's --bench-present result (copying damage into
the scanout buffer, measured under emulation) in $SLIM_VM_BENCH_OUT for
bench-codec's DRM column.

Waits are on serial lines, QMP answers and screens, each with a deadline.
Logs (serial console, QEMU, the session) in $SLIMTEST_OUTDIR/vm.
"""
import glob
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'integration'))
from slimtest import (BACKGROUND, Image, Session, TestFailure, TestSkip, _LineLog,  # noqa: E402
                      fraction_not, images_equal, log, require_programs, run, scaled)

HERE = os.path.dirname(os.path.abspath(__file__))
KERNEL_CACHE = '/var/cache/slimland/vm-kernel'
MODULES = ['virtio_pci', 'virtio_net', 'virtio_input', 'evdev', 'virtio-gpu']
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


def build_initramfs(workdir, console, moddir, version):
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
    for program in (console, udevadm):
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


class Vm:
    def __init__(self, outdir, vmlinuz, initrd, port):
        self.qmp_path = os.path.join(outdir, 'qmp.sock')
        if os.path.exists(self.qmp_path):
            os.unlink(self.qmp_path)
        argv = [QEMU, '-machine', 'q35', '-cpu', 'max', '-m', '512', '-smp', '1',
                '-nographic', '-vga', 'none', '-no-reboot',
                '-kernel', vmlinuz, '-initrd', initrd,
                '-append', 'console=ttyS0 panic=-1 quiet slim.port=%d' % port,
                '-device', 'virtio-gpu-pci,id=gpu',
                '-device', 'virtio-keyboard-pci,id=kbd',
                '-device', 'virtio-tablet-pci,id=tablet',
                '-netdev', 'user,id=n0', '-device', 'virtio-net-pci,netdev=n0,romfile=',
                '-qmp', 'unix:%s,server=on,wait=off' % self.qmp_path]
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

    def screendump(self, path):
        """The scanout as an RGB image (PNG where this QEMU writes PNG)."""
        try:
            self.qmp.execute('screendump', filename=path + '.png', device='gpu', format='png')
            path += '.png'
        except TestFailure:
            self.qmp.execute('screendump', filename=path + '.ppm', device='gpu')
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


# -- the test

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


def screens_equal(s, vm, outdir, timeout):
    """Waits until the VM's scanout equals grim's screenshot; returns the image."""
    deadline = time.monotonic() + scaled(timeout)
    n = 0
    while True:
        n += 1
        g = s.grim_image()
        d = vm.screendump(os.path.join(s.tmp, 'dump-%d' % n))
        why = images_equal(g, d)
        if why is None:
            log('scanout equals the compositor (%dx%d) after %d attempt(s)' % (g.size + (n,)))
            return g
        if time.monotonic() > deadline:
            g.save(os.path.join(outdir, 'unequal-grim.png'))
            d.save(os.path.join(outdir, 'unequal-scanout.png'))
            raise TestFailure('the VM\'s scanout differs from the compositor: %s (images in %s)'
                              % (why, outdir))
        time.sleep(0.3)


def write_bench(vm_match, version, size):
    out = os.environ.get('SLIM_VM_BENCH_OUT')
    if not out:
        return
    result = {
        'startup_ns': float(vm_match.group(1)),
        'per_pixel_ns': float(vm_match.group(2)),
        'emulated': True,
        'what': 'copying damage into a dumb scanout buffer (virtio-gpu) in a QEMU '
                'software-emulated VM',
        'kernel': version,
        'mode': '%dx%d' % size,
    }
    with open(out, 'w') as f:
        json.dump(result, f, indent=1)
        f.write('\n')
    log('DRM present cost: %.1f ns + %.3f ns/pixel (emulated), in %s' % (
        result['startup_ns'], result['per_pixel_ns'], out))


def test():
    require_programs(QEMU, 'cpio', 'gzip', 'depmod', 'modinfo', 'udevadm', 'foot')
    if not os.path.exists('/bin/busybox'):
        raise TestFailure('/bin/busybox is missing: apt-get install busybox-static')
    console = os.environ.get('SLIMLAND_CONSOLE')
    if not console or not os.access(console, os.X_OK):
        raise TestSkip('SLIMLAND_CONSOLE is not set to a program')
    vmlinuz, moddir, version = find_kernel()
    t0 = time.monotonic()
    # virtio-gpu's default mode; the compositor takes the console's size anyway
    size = (1280, 800)
    with Session('vm', size=size, console=False) as s:
        initrd = build_initramfs(s.tmp, console, moddir, version)
        vm = Vm(s.outdir, vmlinuz, initrd, s.port)
        try:
            fifo = os.path.join(s.home, 'fifo')
            os.mkfifo(fifo)
            fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
            s.start_client(['foot'], env={'SHELL': '/bin/sh', 'PS1': '$ ', 'HOME': s.home})

            vm.wait_line(r'^vm: devices:', 90, 'that its devices are up')
            bench = vm.wait_line(r'^present ([0-9.]+) ([0-9.]+)|^vm: bench done', 60,
                                 'the --bench-present result')
            mode = vm.wait_line(r'drm: /dev/dri/card\d+, (\d+)x(\d+)', 30,
                                'which mode the console set')
            size = (int(mode.group(1)), int(mode.group(2)))
            if bench.group(1) is None:
                raise TestFailure('--bench-present printed no result; serial console:\n' +
                                  '\n'.join(vm.serial.tail(30)))
            write_bench(bench, version, size)
            vm.wait_line(r'attached to 10\.0\.2\.2:%d' % s.port, 60, 'that the console attached')
            log('console attached at %dx%d, %.1fs after the start' % (
                size + (time.monotonic() - t0,)))

            # (a) the scanout shows what the compositor renders, foot included
            deadline = time.monotonic() + scaled(60)
            while True:
                img = screens_equal(s, vm, s.outdir, 60)
                if fraction_not(img, BACKGROUND) > 0.05:
                    break
                if time.monotonic() > deadline:
                    raise TestFailure('foot\'s window never showed on the scanout')
                time.sleep(0.3)

            # (b) keys from the VM's keyboard reach foot's shell on the server
            target = fifo if all(c in QCODES for c in fifo) else 'fifo'
            vm.type_text('echo vm-ok > %s\n' % target)
            try:
                data = read_fifo(fd, b'vm-ok\n', 30)
            except TestFailure as e:
                # Keys lost in a guest starved of CPU: clear the line, type again.
                log('%s; typing again' % e)
                vm.chord('ctrl', 'u')
                vm.type_text('echo vm-ok > %s\n' % target)
                data = read_fifo(fd, b'vm-ok\n', 30)
            log('keys typed in the VM reached foot: the FIFO got %r' % data)
            os.close(fd)

            # (c) the tablet moves the pointer: at once on the console, then
            # confirmed by the server's CURSOR_POS
            # positions QEMU's 0..0x7fff scale reaches exactly at 1280x800
            for x, y in ((400, 300), (1000, 625)):
                vm.move_abs(x, y, size[0], size[1])
                local = vm.wait_line(r'drm: cursor at (\d+),(\d+) \(local\)', 20,
                                     'the local cursor move to %d,%d' % (x, y))
                srv = vm.wait_line(r'drm: cursor at %d,%d \(server\)' % (x, y), 20,
                                   'the server\'s cursor at %d,%d' % (x, y))
                lx, ly = int(local.group(1)), int(local.group(2))
                if abs(lx - x) > 1 or abs(ly - y) > 1:
                    raise TestFailure('tablet at %d,%d moved the console\'s cursor to %d,%d'
                                      % (x, y, lx, ly))
                log('tablet to %d,%d: cursor moved locally to %d,%d, server says %s' % (
                    x, y, lx, ly, srv.group(0)))

            # the pointer is on the cursor plane: the picture is still the same
            screens_equal(s, vm, s.outdir, 30)

            # (d) a VT switch: Ctrl+Alt+F2 gives the display and the keyboard
            # away (the kernel's text console shows), Ctrl+Alt+F1 takes them
            # back, and the picture is there again, repainted by the server
            vm.chord('ctrl', 'alt', 'f2')
            vm.wait_line(r'seat: disabled', 30, 'that the seat went away')
            vm.chord('ctrl', 'alt', 'f1')
            vm.wait_line(r'seat: enabled', 30, 'that the seat came back')
            vm.wait_line(r'display back: asking 10\.0\.2\.2:%d for a repaint' % s.port, 30,
                         'that it asked for a repaint')
            screens_equal(s, vm, s.outdir, 30)
            log('VT switch away and back: the picture is back')
            log('VM test done in %.1fs' % (time.monotonic() - t0))
        finally:
            vm.stop()


run(test)
