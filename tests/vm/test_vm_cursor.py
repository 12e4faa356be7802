"""The software cursor of slimland-console's DRM output, on a real kernel,
with the seat taken through seatd.

QEMU's bochs-display is driven by the kernel's bochs DRM driver, which has
no cursor plane: drmModeSetCursor answers ENXIO. The console must then draw
the pointer into its scanout buffers itself, from the shadow framebuffer,
rather than give the display up. In a QEMU virtual machine (software
emulation) booted as test_vm.py boots it, but with seatd running as a
system service would run it, against a compositor on this host:

  (a) the console opens the seat through seatd, and says it draws the
      pointer in software;
  (b) with the tablet at a point P (confirmed by the server's CURSOR_POS,
      the console's -v line), QEMU's screendump equals grim's screenshot
      of the compositor everywhere outside the cursor's rectangle around
      P, and differs inside it: the pointer is drawn there;
  (c) with the tablet at Q, far away, the area around P equals grim's
      again (the old pointer was erased) and the area around Q differs;
      a few more moves near Q flip the buffers further, and P stays
      clean in every screendump: both scanout buffers were repaired;
  (d) Ctrl+Alt+F2 and Ctrl+Alt+F1 switch VTs away and back through seatd,
      and the picture comes back with the pointer at Q.

The cursor's rectangle is the image's real size and hotspot, which the
console logs at -v when the server sends a new image.

Waits are on serial lines and screendumps, each with a deadline.
Logs (serial console, QEMU, the session) in $SLIMTEST_OUTDIR/vm-cursor.
"""
import os
import re
import shutil
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'integration'))
from slimtest import Session, TestFailure, log, run, scaled  # noqa: E402
from vmlib import Vm, build_initramfs, vm_inputs, wait_scanout  # noqa: E402

from PIL import ImageChops  # noqa: E402

IMAGE_LINE = r'drm: cursor image (\d+)x(\d+), hotspot (\d+),(\d+)'


def cursor_box(pos, image, size):
    """(x1, y1, x2, y2) of the cursor with its hotspot at pos, on the screen."""
    w, h, hx, hy = image
    x, y = pos[0] - hx, pos[1] - hy
    return (max(x, 0), max(y, 0), min(x + w, size[0]), min(y + h, size[1]))


def compare(grim, dump, drawn):
    """None if `dump` equals `grim` outside the box `drawn` and differs inside
    it, else what is wrong."""
    if grim.size != dump.size:
        return 'sizes differ: %s vs %s' % (grim.size, dump.size)
    diff = ImageChops.difference(grim, dump)
    inside = diff.crop(drawn)
    if inside.getbbox() is None:
        return 'no pointer drawn inside %s' % (drawn,)
    diff.paste((0, 0, 0), drawn)
    outside = diff.getbbox()
    if outside is not None:
        return 'differing pixels outside the cursor %s, inside %s' % (drawn, outside)
    return None


def wait_screen(s, vm, drawn, timeout, what):
    """Waits until the scanout is the compositor's picture with the pointer
    in `drawn` (and nowhere else)."""
    wait_scanout(s, vm, timeout, lambda grim, dump: compare(grim, dump, drawn),
                 '%s: the pointer inside %s, the compositor\'s picture outside' % (what, drawn))


def move_to(vm, x, y, size):
    """The tablet to (x, y); the position the server confirms (CURSOR_POS)."""
    vm.move_abs(x, y, size[0], size[1])
    deadline = time.monotonic() + scaled(20)
    while True:
        left = deadline - time.monotonic()
        m = vm.wait_line(r'drm: cursor at (-?\d+),(-?\d+) \(server\)\s*$', max(left, 0.1),
                         'the server\'s cursor near %d,%d' % (x, y))
        pos = int(m.group(1)), int(m.group(2))
        if abs(pos[0] - x) <= 2 and abs(pos[1] - y) <= 2:
            return pos


def test():
    console, vmlinuz, moddir, version = vm_inputs()
    t0 = time.monotonic()
    # bochs' default mode; the compositor takes the console's size anyway
    size = (1024, 768)
    with Session('vm-cursor', size=size, console=False) as s:
        initrd = build_initramfs(s.tmp, console, moddir, version,
                                 os.path.join(s.runtime_dir, 'slimland-pairing.key'))
        if not shutil.which('seatd') and not os.path.exists('/usr/sbin/seatd'):
            raise TestFailure('seatd is missing: apt-get install seatd')
        vm = Vm(s.outdir, vmlinuz, initrd, s.port, gpu='bochs-display', seatd=True)
        try:
            # (a) the real console run (not --bench-present's) finds no plane
            vm.wait_line(r'^vm: seatd running', 120, 'that seatd runs')
            vm.wait_line(r'^vm: console', 60, 'that the console starts')
            vm.wait_line(r"libseat: .*Seat opened with backend 'seatd'", 30,
                         'that the console took the seat through seatd')
            vm.wait_line(r'drm: no cursor plane \(([^)]+)\); drawing the pointer in software', 30,
                         'that it draws the pointer in software')
            mode = vm.wait_line(r'drm: /dev/dri/card\d+, (\d+)x(\d+)', 30,
                                'which mode the console set')
            size = (int(mode.group(1)), int(mode.group(2)))
            vm.wait_line(r'attached to 10\.0\.2\.2:%d' % s.port, 60, 'that the console attached')
            log('console attached at %dx%d, software cursor, %.1fs after the start' % (
                size + (time.monotonic() - t0,)))

            # (b) the pointer at P is drawn there, and only there
            p = move_to(vm, size[0] // 4, size[1] // 4, size)
            # the image the server sent, wherever in the log it came
            _, line = vm.serial.wait(lambda l: 'drm: cursor image' in l, 0,
                                     time.monotonic() + scaled(10))
            if line is None:
                raise TestFailure('the console never logged the cursor image it got')
            m = re.search(IMAGE_LINE, line)
            image = tuple(int(g) for g in m.groups())
            log('cursor image %dx%d, hotspot %d,%d' % image)
            wait_screen(s, vm, cursor_box(p, image, size), 30, 'pointer at %d,%d' % p)

            # (c) at Q, far away: P is clean again; further moves flip the
            # buffers, and P stays clean in each (both buffers were repaired)
            qx, qy = size[0] * 3 // 4, size[1] * 3 // 4
            for i, (dx, dy) in enumerate(((0, 0), (32, 16), (64, 32))):
                q = move_to(vm, qx + dx, qy + dy, size)
                wait_screen(s, vm, cursor_box(q, image, size), 30,
                            'pointer moved to %d,%d (%d)' % (q + (i + 1,)))

            # (d) a VT switch through seatd: away and back, the picture and
            # the pointer return
            vm.chord('ctrl', 'alt', 'f2')
            vm.wait_line(r'seat: disabled', 30, 'that the seat went away')
            vm.chord_until(('ctrl', 'alt', 'f1'), r'seat: enabled', 30,
                           'that the seat came back')
            wait_screen(s, vm, cursor_box(q, image, size), 30, 'back from VT 2')
            log('VM cursor test done in %.1fs' % (time.monotonic() - t0))
        finally:
            vm.stop()


run(test)
