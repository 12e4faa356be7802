#!/usr/bin/python3
"""The console image: a machine whose only program is slimland-console.

    consoleimage.py --console build/console/slimland-console --out DIR

writes DIR/vmlinuz and DIR/initrd.gz (to netboot: PXE or iPXE, see
data/ADMIN.md) and DIR/slimland-console.img, a disk image to write to a USB
stick: an MBR with syslinux (BIOS), a FAT partition SLIMBOOT with the
kernel, the initramfs, syslinux.cfg and, for UEFI, systemd-boot as
EFI/BOOT/BOOTX64.EFI with loader/entries/slimland.conf (the kernel command
line is in both, which an administrator may edit on the stick), and a
small ext4 partition SLIMSTATE
where the console keeps its key and the session managers' keys it pinned
(ext4: its journal survives the power switch, and it has the hard links
and modes the key files are written with). Nothing is mounted to build it:
mkfs.fat, mtools, mkfs.ext4 and sfdisk work on files.

The initramfs holds busybox, udev (which loads the drivers of the hardware
it finds and names the input devices libinput goes by), pcscd with the
card reader drivers installed here, ALSA's configuration, the console with
every library it loads, the kernel modules of common desktop hardware and
of QEMU's devices, and init.sh as /init.

The kernel is Debian's linux-image-amd64, unpacked (never installed) by
.ci/install-deps into /var/cache/slimland/vm-kernel. The VM tests
(tests/vm/vmlib.py) build their initramfs with build_initramfs here, with
an /init of their own.
"""

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
KERNEL_CACHE = '/var/cache/slimland/vm-kernel'
# The kernel modules, with what they depend on. Hardware udev finds is
# given its driver by modalias (80-drivers.rules); the rest is loaded by
# name in init.sh.
MODULES = [
    # QEMU's devices (bochs: its standard VGA, a KMS device without a cursor plane)
    'virtio_pci', 'virtio_net', 'virtio_input', 'virtio_blk', 'virtio-gpu', 'bochs',
    # displays of desktop machines and servers
    'i915', 'ast', 'mgag200',
    # the stick: USB storage on any USB controller, SATA, and its key's partition
    'xhci_pci', 'ehci_pci', 'ohci_pci', 'uhci_hcd', 'usb_storage', 'uas', 'sd_mod', 'ahci',
    'ext4', 'crc32c_generic',
    # keyboards and mice
    'evdev', 'usbhid', 'hid_generic',
    # network cards
    'e1000', 'e1000e', 'igb', 'r8169', 'tg3',
    # sound
    'snd_hda_intel', 'snd_hda_codec_generic', 'snd_hda_codec_realtek', 'snd_hda_codec_hdmi',
    'snd_usb_audio',
    # swap in memory (the VM tests' memory benchmark)
    'zram',
]
# udev's rules that load drivers and name what an input or DRM device is;
# the rest would only run helpers this initramfs does not have
UDEV_RULES = ['50-udev-default.rules', '60-input-id.rules', '60-drm.rules',
              '60-evdev.rules', '70-mouse.rules', '70-touchpad.rules', '80-drivers.rules']
PCSC_DRIVERS = '/usr/lib/pcsc/drivers'
VPCD_CONF = '/etc/reader.conf.d/vpcd'
SYSLINUX_MBR = '/usr/lib/syslinux/mbr/mbr.bin'
# for UEFI: systemd-boot, where the firmware looks on a removable disk
SYSTEMD_BOOT = '/usr/lib/systemd/boot/efi/systemd-bootx64.efi'
# the labels init.sh finds the stick's partitions by
BOOT_LABEL = 'SLIMBOOT'
STATE_LABEL = 'SLIMSTATE'
STATE_MB = 8
MB = 1 << 20


class ImageError(Exception):
    pass


def log(text):
    print('console-image: %s' % text, file=sys.stderr, flush=True)


def find_kernel(root=None):
    """(vmlinuz, modules directory, version) of an unpacked linux-image package."""
    root = root or os.environ.get('SLIM_VM_KERNEL_ROOT')
    roots = [root] if root else sorted(
        os.path.dirname(p) for p in glob.glob(os.path.join(KERNEL_CACHE, '*', '.unpacked')))
    for root in reversed(roots):
        for vmlinuz in sorted(glob.glob(os.path.join(root, 'boot', 'vmlinuz-*'))):
            version = os.path.basename(vmlinuz)[len('vmlinuz-'):]
            moddir = os.path.join(root, 'lib', 'modules', version)
            if os.path.isdir(moddir):
                return vmlinuz, moddir, version
    raise ImageError('no kernel in %s: run .ci/install-deps (it unpacks linux-image-amd64\'s '
                     'kernel there)' % KERNEL_CACHE)


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
    return target


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
        if name in found or name not in index:
            continue  # done, or built into this kernel
        found[name] = index[name]
        deps = subprocess.run(['modinfo', '-F', 'depends', index[name]], capture_output=True,
                              text=True, check=True).stdout.strip()
        todo += [d.replace('-', '_') for d in deps.split(',') if d]
    return sorted(found.values())


def build_initramfs(workdir, console, moddir, version, init=None, pairing_key=None, extra=(),
                    trees=(), vpcd=False):
    """The initramfs, workdir/initrd.gz. `init`: its /init (default the
    product's init.sh); `extra`: more programs, (host path, path in the
    image), with their libraries (a script goes without); `trees`:
    directories copied whole to the same place (data a program reads);
    `pairing_key`: a session's pairing key at /etc/slimland-pairing.key
    (for a console given --server); `vpcd`: vsmartcard's virtual reader,
    which takes cards over TCP port 35963 from anyone who reaches it (for
    tests only). Nothing is stripped: Debian's libraries are already, and
    a release build's console is small."""
    root = os.path.join(workdir, 'root')
    shutil.rmtree(root, ignore_errors=True)
    for d in ('usr/bin', 'usr/sbin', 'usr/lib', 'lib64', 'bin', 'sbin', 'dev', 'proc', 'sys',
              'run', 'tmp', 'etc/udev', 'var/lib/slimland-console'):
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
    # seatd, for the VM tests that take the seat through it (slim.seat=seatd)
    seatd = shutil.which('seatd') or '/usr/sbin/seatd'
    if os.path.exists(seatd):
        copy_file(root, seatd, '/usr/bin/seatd')
        programs.append(seatd)
    # pcscd and the card reader drivers installed here (USB CCID readers: libccid)
    pcscd = shutil.which('pcscd') or '/usr/sbin/pcscd'
    if os.path.exists(pcscd):
        copy_file(root, pcscd, '/usr/sbin/pcscd')
        programs.append(pcscd)
        for bundle in glob.glob(os.path.join(PCSC_DRIVERS, '*.bundle')):
            shutil.copytree(bundle, root + bundle, symlinks=True)
            programs += glob.glob(os.path.join(bundle, 'Contents', 'Linux', '*.so*'))
        if vpcd:
            for so in glob.glob(os.path.join(PCSC_DRIVERS, 'serial', 'libifdvpcd.so*')):
                copy_file(root, so)
                programs.append(so)
            copy_file(root, VPCD_CONF)
    os.makedirs(os.path.join(root, 'etc/reader.conf.d'), exist_ok=True)
    for program in programs:
        for lib in shared_libraries(program):
            copy_file(root, lib)
    # ALSA's configuration, without the files that send its default device to PipeWire
    if os.path.isdir('/usr/share/alsa'):
        shutil.copytree('/usr/share/alsa', os.path.join(root, 'usr/share/alsa'),
                        ignore=shutil.ignore_patterns('alsa.conf.d', 'ucm*', 'topology'))
    for rule in UDEV_RULES:
        path = os.path.join('/lib/udev/rules.d', rule)
        if os.path.exists(path):
            copy_file(root, path, '/usr/lib/udev/rules.d/' + rule)
    if os.path.isdir('/usr/share/libinput'):
        shutil.copytree('/usr/share/libinput', os.path.join(root, 'usr/share/libinput'))
    with open(os.path.join(root, 'etc/passwd'), 'w') as f:
        f.write('root:x:0:0:root:/:/bin/sh\n')
    with open(os.path.join(root, 'etc/group'), 'w') as f:
        f.write('root:x:0:\ninput:x:101:\nvideo:x:44:\nrender:x:105:\ntty:x:5:\naudio:x:29:\n')
    # the modules, and a modules.dep for busybox's modprobe and udev
    kroot = os.path.join(root, 'usr/lib/modules', version)
    for ko in module_closure(moddir, MODULES):
        dest = os.path.join(kroot, os.path.relpath(ko, moddir))
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copy2(ko, dest)
    for f in ('modules.order', 'modules.builtin', 'modules.builtin.modinfo'):
        if os.path.exists(os.path.join(moddir, f)):
            shutil.copy2(os.path.join(moddir, f), kroot)
    subprocess.run(['depmod', '-b', root, version], check=True)
    shutil.copy2(os.path.join(HERE, 'udhcpc.script'), os.path.join(root, 'usr/lib/udhcpc.script'))
    if pairing_key:
        # the session's pairing key, for a console given --server
        dest = os.path.join(root, 'etc/slimland-pairing.key')
        shutil.copy2(pairing_key, dest)
        os.chmod(dest, 0o600)
    shutil.copy2(init or os.path.join(HERE, 'init.sh'), os.path.join(root, 'init'))
    os.chmod(os.path.join(root, 'init'), 0o755)
    unpacked = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(root)
                   for f in fs if not os.path.islink(os.path.join(d, f)))
    initrd = os.path.join(workdir, 'initrd.gz')
    subprocess.run('find . | cpio --quiet -o -H newc | gzip -1 > %s' % initrd, shell=True,
                   cwd=root, check=True)
    shutil.rmtree(root)
    log('initramfs: %s, %.1f MB (%.1f MB unpacked)' % (initrd, os.path.getsize(initrd) / 1e6,
                                                       unpacked / 1e6))
    return initrd


def _run(argv, **kwargs):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, **kwargs)
    if p.returncode != 0:
        raise ImageError('%s: exit status %d: %s' % (' '.join(argv), p.returncode,
                                                     p.stdout.decode(errors='replace')))


def build_disk(workdir, vmlinuz, initrd, append=''):
    """workdir/slimland-console.img: MBR and syslinux, SLIMBOOT (kernel,
    initramfs, syslinux and systemd-boot with `append` on the kernel's
    command line) and SLIMSTATE (empty: the console makes its key there)."""
    for tool in ('mkfs.fat', 'mcopy', 'syslinux', 'sfdisk', 'mkfs.ext4'):
        if not shutil.which(tool):
            raise ImageError('%s is missing: apt-get install dosfstools mtools syslinux '
                             'syslinux-common fdisk' % tool)
    for path, package in ((SYSLINUX_MBR, 'syslinux-common'), (SYSTEMD_BOOT, 'systemd-boot-efi')):
        if not os.path.exists(path):
            raise ImageError('%s is missing: apt-get install %s' % (path, package))
    payload = os.path.getsize(vmlinuz) + os.path.getsize(initrd)
    boot_mb = payload // MB + 16  # room for syslinux and a kernel a little larger
    # the parts, before they go into the image: in a directory of their own
    parts = tempfile.mkdtemp(prefix='parts-', dir=workdir)
    boot = os.path.join(parts, 'boot.part')
    _run(['mkfs.fat', '-C', '-n', BOOT_LABEL, boot, str(boot_mb * 1024)])
    cmdline = 'console=tty0 quiet slimland.state=%s %s' % (STATE_LABEL, append)
    note = ('# The console image (BIOS: syslinux.cfg, UEFI: loader/entries/slimland.conf):\n'
            '# the kernel command line. Keys: see slimland\'s data/ADMIN.md, e.g.\n'
            '# slimland.manager=HOST[:PORT][,HOST...]\n')
    files = {
        'syslinux.cfg': note + 'DEFAULT slimland\nPROMPT 0\nTIMEOUT 0\nLABEL slimland\n'
                        '  LINUX /vmlinuz\n  INITRD /initrd.gz\n  APPEND %s\n' % cmdline,
        'loader.conf': 'timeout 0\ndefault slimland.conf\n',
        'slimland.conf': note + 'title slimland console\nlinux /vmlinuz\ninitrd /initrd.gz\n'
                         'options %s\n' % cmdline,
    }
    for name, text in files.items():
        with open(os.path.join(parts, name), 'w') as f:
            f.write(text)
    _run(['mmd', '-i', boot, '::EFI', '::EFI/BOOT', '::loader', '::loader/entries'])
    for src, dest in ((vmlinuz, 'vmlinuz'), (initrd, 'initrd.gz'), ('syslinux.cfg', None),
                      (SYSTEMD_BOOT, 'EFI/BOOT/BOOTX64.EFI'), ('loader.conf', 'loader/'),
                      ('slimland.conf', 'loader/entries/')):
        path = src if os.path.isabs(src) else os.path.join(parts, src)
        _run(['mcopy', '-i', boot, path, '::' + (dest or src)])
    _run(['syslinux', '--install', boot])
    state = os.path.join(parts, 'state.part')
    _run(['mkfs.ext4', '-q', '-F', '-L', STATE_LABEL, '-E', 'root_owner=0:0', state,
          '%dM' % STATE_MB])
    # 1 MiB before the first partition, as partitioning tools leave it
    disk = os.path.join(workdir, 'slimland-console.img')
    with open(disk, 'wb') as f:
        f.truncate((1 + boot_mb + STATE_MB) * MB)
    _run(['sfdisk', '--quiet', disk], input=(
        'label: dos\nstart=1MiB, size=%dMiB, type=c, bootable\nsize=%dMiB, type=83\n'
        % (boot_mb, STATE_MB)).encode())
    with open(disk, 'r+b') as out:
        with open(SYSLINUX_MBR, 'rb') as f:
            out.write(f.read(440))  # the boot code, before the partition table
        for part, start_mb in ((boot, 1), (state, 1 + boot_mb)):
            out.seek(start_mb * MB)
            with open(part, 'rb') as f:
                shutil.copyfileobj(f, out, MB)
    shutil.rmtree(parts)
    log('disk image: %s, %d MiB' % (disk, os.path.getsize(disk) // MB))
    return disk


def main():
    ap = argparse.ArgumentParser(description='Builds the console image: a kernel and '
                                 'initramfs to netboot, and a disk image for a USB stick.')
    ap.add_argument('--console', required=True, help='the slimland-console program')
    ap.add_argument('--out', required=True, help='the directory to write to')
    ap.add_argument('--kernel-root', help='an unpacked linux-image package (default: the '
                    'newest in %s)' % KERNEL_CACHE)
    ap.add_argument('--append', default='', help='more of the stick\'s kernel command line, '
                    'e.g. slimland.manager=HOST')
    args = ap.parse_args()
    try:
        vmlinuz, moddir, version = find_kernel(args.kernel_root)
        os.makedirs(args.out, exist_ok=True)
        initrd = build_initramfs(args.out, args.console, moddir, version)
        shutil.copy2(vmlinuz, os.path.join(args.out, 'vmlinuz'))
        build_disk(args.out, vmlinuz, initrd, args.append)
    except (ImageError, OSError, subprocess.CalledProcessError) as e:
        log(str(e))
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
