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
      asks the server for a repaint, and the scanout equals grim's again;
  (e) a monitor of another size is plugged in (a VNC viewer's SetDesktopSize,
      which virtio-gpu reports to the guest as a hot-plug): the console sets
      the new mode, says HELLO with it, the session resizes, and the
      scanout equals grim's at the new size;
  (f) the monitor unplugged is said once and changes nothing; one plugged
      in again brings the picture back at its size;
  (g) a monitor swapped while the seat is away (VT 2) is set up when the
      seat comes back;
  (h) a second monitor plugged in (virtio-gpu's second output, given a
      size by a VNC viewer of its own): the console drives both, each on
      a CRTC of its own, left to right, says HELLO with two heads (the
      compositor says so), and each head's scanout equals its rectangle
      of grim's screenshot; the tablet moved onto the second head puts
      the pointer on that CRTC's cursor plane;
  (i) that monitor unplugged again: HELLO with one head, and the first
      head goes on showing the session.

It also keeps the console's --bench-present result (copying damage into
the scanout buffer, measured under emulation) in $SLIM_VM_BENCH_OUT for
bench-codec's DRM column.

Waits are on serial lines, QMP answers and screens, each with a deadline.
Logs (serial console, QEMU, the session) in $SLIMTEST_OUTDIR/vm.
"""
import json
import os
import re
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'integration'))
from slimtest import BACKGROUND, Session, TestFailure, fraction_not, log, run, scaled  # noqa: E402
from vmlib import (QCODES, Vm, Vnc, build_initramfs, read_fifo, screens_equal,  # noqa: E402
                   vm_inputs)


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


def plug_in(s, vm, vnc, size, plug=True):
    """A monitor of `size` plugged in (unless `plug` is False: it was): the
    console sets its mode and attaches again with it, and the session's
    screen, grim's, equals the scanout at that size."""
    if plug:
        vnc.set_desktop_size(*size)
    vm.wait_line(r'drm: the display changed: %dx%d' % size, 30, 'the %dx%d mode' % size)
    vm.wait_line(r'the display is %dx%d \(1 head\) now; connecting to 10\.0\.2\.2:%d' % (
        size + (s.port,)), 30, 'a new HELLO with the new size')
    vm.wait_line(r'attached to 10\.0\.2\.2:%d' % s.port, 30, 'that the console attached again')
    img = screens_equal(s, vm, 30)
    if img.size != size:
        raise TestFailure('after the hot-plug the screens are %dx%d, not %dx%d' % (
            img.size + size))
    log('monitor hot-plug: the session is %dx%d and the scanout equals it' % size)


def compositor_says(s, mark, pattern, timeout, what):
    """The compositor's first log line from `mark` that matches."""
    rx = re.compile(pattern)
    _, line = s.compositor.stderr.wait(lambda l: rx.search(l) is not None, mark,
                                       time.monotonic() + scaled(timeout))
    if line is None:
        raise TestFailure('the compositor never said %s within %gs' % (what, scaled(timeout)))
    return line


def two_heads(s, vm, first, second):
    """(h) and (i): a second monitor of size `second` plugged in next to the
    first (of size `first`), then unplugged."""
    t0 = time.monotonic()
    screen = (first[0] + second[0], max(first[1], second[1]))
    mark = s.compositor.stderr.mark()
    vnc2 = Vnc(vm.vnc_paths[1])
    try:
        vnc2.set_desktop_size(*second)
        vm.wait_line(r'drm: the display changed: %dx%d, 2 heads' % screen, 30,
                     'that it drives two heads')
        heads = [vm.wait_line(r'drm: head (Virtual-\d): %dx%d at (\d+),0, .* CRTC (\d+)' % size,
                              10, 'head %dx%d' % size) for size in (first, second)]
        if heads[1].group(2) != str(first[0]) or heads[0].group(3) == heads[1].group(3):
            raise TestFailure('the heads are not side by side on CRTCs of their own: %s / %s'
                              % (heads[0].group(0), heads[1].group(0)))
        vm.wait_line(r'the display is %dx%d \(2 heads\) now; connecting to 10\.0\.2\.2:%d' % (
            screen + (s.port,)), 30, 'a new HELLO with two heads')
        vm.wait_line(r'attached to 10\.0\.2\.2:%d' % s.port, 30, 'that the console attached')
        compositor_says(s, mark, r'attached, %dx%d in 2 heads' % screen, 30,
                        'that the console has two heads')
        boxes = [(0, 0) + first, (first[0], 0, screen[0], second[1])]
        for head, box in enumerate(boxes):
            img = screens_equal(s, vm, 30, head, box)
        # the second head's picture is not the first's: a scanout of the
        # wrong part of the screen would not pass for it
        if img == s.grim_image().crop((0, 0) + second):
            raise TestFailure('both heads\' parts of the session look the same: the '
                              'comparison tells nothing')
        log('two heads: %s and %s, each scanout equals its part of the session' % (
            heads[0].group(1), heads[1].group(1)))
        # the pointer on the second head is on its CRTC's plane
        x, y = first[0] + second[0] // 2, second[1] // 2
        vm.move_abs(x, y, screen[0], screen[1])
        vm.wait_line(r'drm: the pointer is on %s\'s cursor plane' % heads[1].group(1), 20,
                     'the pointer on the second head')

        # (i) unplugged: one head again, still showing the session
        mark = s.compositor.stderr.mark()
        vnc2.set_desktop_size(0, 0)
        vm.wait_line(r'the display is %dx%d \(1 head\) now; connecting to 10\.0\.2\.2:%d' % (
            first + (s.port,)), 30, 'a new HELLO with one head')
        vm.wait_line(r'attached to 10\.0\.2\.2:%d' % s.port, 30, 'that the console attached')
        compositor_says(s, mark, r'attached, %dx%d in 1 head\b' % first, 30,
                        'that the console has one head')
        screens_equal(s, vm, 30)
    finally:
        vnc2.close()
    log('second monitor plugged in and out in %.1fs' % (time.monotonic() - t0))


def test():
    console, vmlinuz, moddir, version = vm_inputs('foot')
    t0 = time.monotonic()
    # virtio-gpu's default mode; the compositor takes the console's size anyway
    size = (1280, 800)
    with Session('vm', size=size, console=False) as s:
        initrd = build_initramfs(s.tmp, console, moddir, version,
                                 os.path.join(s.runtime_dir, 'slimland-pairing.key'))
        vm = Vm(s.outdir, vmlinuz, initrd, s.port, vnc=True, heads=2)
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
                img = screens_equal(s, vm, 60)
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
            screens_equal(s, vm, 30)

            # (d) a VT switch: Ctrl+Alt+F2 gives the display and the keyboard
            # away (the kernel's text console shows), Ctrl+Alt+F1 takes them
            # back, and the picture is there again, repainted by the server
            vm.chord('ctrl', 'alt', 'f2')
            vm.wait_line(r'seat: disabled', 30, 'that the seat went away')
            vm.chord_until(('ctrl', 'alt', 'f1'), r'seat: enabled', 30,
                           'that the seat came back')
            vm.wait_line(r'display back: asking 10\.0\.2\.2:%d for a repaint' % s.port, 30,
                         'that it asked for a repaint')
            screens_equal(s, vm, 30)
            log('VT switch away and back: the picture is back')

            # (e) a monitor of another size is plugged in: QEMU's VNC server
            # passes a viewer's SetDesktopSize to virtio-gpu as the display's
            # new preferred mode, which the guest's kernel reports as a
            # hot-plug. The console sets the mode and says HELLO with its
            # size in a new association; the session follows.
            vnc = Vnc(vm.vnc_path)
            try:
                plug_in(s, vm, vnc, (1024, 768))
                # the tablet spans the new screen
                vm.move_abs(512, 384, 1024, 768)
                vm.wait_line(r'drm: cursor at 512,384 \(server\)', 20,
                             'the server\'s cursor at 512,384 on the new screen')

                # (f) unplugged (a size of 0 disables virtio-gpu's output): the
                # console says so and keeps going; another monitor brings the
                # picture back at its size
                vnc.set_desktop_size(0, 0)
                vm.wait_line(r'no display connected; the picture comes back with a display',
                             30, 'that the monitor was unplugged')
                plug_in(s, vm, vnc, (800, 600))

                # (g) swapped while the seat is away (VT 2): the console looks
                # at the display when the seat comes back
                vm.chord('ctrl', 'alt', 'f2')
                vm.wait_line(r'seat: disabled', 30, 'that the seat went away')
                vnc.set_desktop_size(1152, 864)
                vm.wait_line(r'drm: the display changed while the seat is away', 30,
                             'that the console noticed the swap while away')
                vm.chord_until(('ctrl', 'alt', 'f1'), r'seat: enabled', 30,
                               'that the seat came back')
                plug_in(s, vm, vnc, (1152, 864), plug=False)

                # (h), (i): a second monitor plugged in, and out again
                two_heads(s, vm, (1152, 864), (1024, 768))
            finally:
                vnc.close()
            log('VM test done in %.1fs' % (time.monotonic() - t0))
        finally:
            vm.stop()


run(test)
