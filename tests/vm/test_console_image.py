"""The console image (data/console-image) as people use it, in QEMU
(software emulation), against a session manager on this host.

1. Netbooted (the image's vmlinuz and initrd.gz, as PXE would load them)
   with slimland.manager=bad..address: the console says on its screen that
   the manager cannot be reached (the VM's scanout equals the status
   screen slimland-console draws here, headless, for the same error) and
   tries again (its log says so twice).
2. The USB stick (slimland-console.img on QEMU's xHCI, booted by the
   firmware through syslinux) with slimland.manager= naming a
   slimland-sessiond here (enroll = open): the greeter shows on the
   virtio-gpu display (the scanout equals grim's screenshot of the greeter's
   compositor); a card tapped on the image's pcscd (vsmartcard's vpcd in the
   image, the card emulator here reaching it through QEMU's port forward)
   is unknown, and the greeter says so; the login typed on the VM's
   keyboard starts the session, which the scanout shows, and the card is
   bound to it. The console's sound card is found (an HD audio card).
   The console kept its key on the stick's SLIMSTATE partition: the key
   read back from the image gives the id the manager knows the console by.

The VM reaches the manager at an address of this host (198.18.77.1 on lo,
the test's own: QEMU's user network reaches this host's addresses, not
its loopback), because the manager redirects a console to its
compositors at the address the console reached it at.
Logs (serial consoles, QEMU, the manager) in $SLIMTEST_OUTDIR/console_image.
"""
import json
import os
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'integration'))
from card_emulator import Card  # noqa: E402
from slimpcsc import find_pcscd, free_tcp_port_pair  # noqa: E402
from slimsessiond import PASSWORD, ManagerSession  # noqa: E402
from slimtest import (BACKGROUND, Image, TestFailure, TestSkip, fraction_not, images_equal,  # noqa: E402
                      log, run, scaled, unique_name)
from vmlib import Vm, build_initramfs, consoleimage, vm_inputs, wait_scanout  # noqa: E402

USER = SERVICE = unique_name('img')
GREETER_USER = unique_name('img-gr')
UID = bytes.fromhex('04c0ffee5117a1')
# the address of this host the VM reaches the manager at (on lo, the test's own)
ADDR = '198.18.77.1'
VPCD_PORT = 35963


class HostAddress:
    """ManagerSession's `host`: the manager listens on ADDR, in this namespace."""
    addr = ADDR

    @staticmethod
    def argv(argv):
        return argv


def ip(*args, check=True):
    r = subprocess.run(('ip',) + args, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise TestFailure('ip %s: %s' % (' '.join(args), r.stderr.strip()))


def scanout_equals(s, vm, expected, what, timeout):
    """Until the VM's scanout equals expected() (an image); returns it."""
    return wait_scanout(s, vm, timeout, images_equal, 'the scanout shows ' + what,
                        expected=expected)


def status_screen_here(s, console, size, manager):
    """What slimland-console draws here, headless at `size`, for --manager `manager`."""
    state = os.path.join(s.tmp, 'host-console')
    os.makedirs(state, exist_ok=True)
    png = os.path.join(s.tmp, 'status-here.png')
    proc = subprocess.Popen([console, '--manager', manager, '--output', 'headless',
                             '--size', '%dx%d' % size, '--screenshot', png,
                             '--state-dir', state, '--card-reader=none', '--audio', 'none'],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    # a console that says nothing ends, and so does the loop below
    watchdog = threading.Timer(scaled(30), proc.kill)
    watchdog.start()
    try:
        said = []
        for line in proc.stderr:
            said.append(line.rstrip())
            if 'cannot resolve' in line:
                proc.send_signal(signal.SIGUSR1)
            if 'screenshot written' in line:
                break
        else:
            raise TestFailure('the console here drew no status screen: %s' % '\n'.join(said))
    finally:
        watchdog.cancel()
        proc.terminate()
        proc.wait(10)
    with Image.open(png) as im:
        return im.convert('RGB')


def bad_address(s, console, vmlinuz, initrd):
    """1: netbooted with a manager address that does not resolve."""
    outdir = os.path.join(s.outdir, 'netboot')
    os.makedirs(outdir, exist_ok=True)
    vm = Vm(outdir, vmlinuz, initrd, 0,
            append='console=ttyS0 panic=-1 quiet slimland.manager=bad..address')
    try:
        vm.wait_line(r'no slimland\.state=: the console\'s key lives in memory', 90,
                     'that the netbooted console keeps its key in memory')
        for n in (1, 2):
            vm.wait_line(r'--manager bad\.\.address:5550: cannot resolve bad\.\.address.*'
                         r'trying again', 60, 'that it cannot resolve the address (%d)' % n)
        mode = vm.screendump(os.path.join(s.tmp, 'size')).size
        want = status_screen_here(s, console, mode, 'bad..address')
        scanout_equals(s, vm, lambda: want, 'the status screen: the manager cannot be reached',
                       30)
    finally:
        vm.stop()


def shows(s, vm, runtime, display, what, timeout=60):
    return scanout_equals(s, vm, lambda: s.grim_of(runtime, display), what, timeout)


def stick(s, console, disk):
    """2: the USB stick against the manager: greeter, card, login, session."""
    host_vpcd = free_tcp_port_pair()
    outdir = os.path.join(s.outdir, 'stick')
    os.makedirs(outdir, exist_ok=True)
    vm = Vm(outdir, None, None, 0, disk=disk, hostfwd=[(host_vpcd, VPCD_PORT)], sound=True)
    card = Card(host_vpcd, uid=UID)
    try:
        vm.wait_line(r'the console\'s key is on /dev/sd[a-z]2 \(SLIMSTATE\)', 120,
                     'that the key partition is mounted')
        vm.wait_line(r'audio: the session\'s sound plays on', 60, 'that the console has sound')
        table = s.wait_ctl(lambda t: any(k[0] == 'console' for k in t), 'the VM\'s console', 90)
        console_id = next(k[1] for k in table if k[0] == 'console')
        log('the VM\'s console is %s' % console_id)
        s.wait_console_state(console_id, 'greeter', timeout=60)
        runtime = s.greeter_runtime(console_id)
        display = s.compositor_display(GREETER_USER, 'greeter-' + console_id)
        deadline = time.monotonic() + scaled(60)
        while fraction_not(shows(s, vm, runtime, display, 'the greeter'), BACKGROUND) < 0.3:
            if time.monotonic() > deadline:
                raise TestFailure('the greeter\'s window never showed on the scanout')
            time.sleep(0.3)

        # a card on the image's reader: unknown, the greeter says so
        log_pos = s.manager.stderr.mark()
        card.insert(scaled(30))
        s.wait_why(console_id, 'unknown card', timeout=30)
        shows(s, vm, runtime, display, 'the greeter, after the card')

        # the login typed on the VM's keyboard: the session, with the card bound to it
        vm.type_text(USER + '\n')
        vm.type_text(PASSWORD + '\n')
        s.manager_log_wait('%s logged in' % USER, log_pos, timeout=60)
        table = s.wait_console_state(console_id, 'session', timeout=60)
        sid = s.user_session(table)[1]
        deadline = time.monotonic() + scaled(60)
        runtime = '/run/user/%d' % s.pw.pw_uid
        display = s.compositor_display(USER, 'session-' + sid)
        while fraction_not(shows(s, vm, runtime, display, 'the session'), BACKGROUND) < 0.05:
            if time.monotonic() > deadline:
                raise TestFailure('the session\'s window never showed on the scanout')
            time.sleep(0.3)
    finally:
        card.remove()
        vm.stop()
    return console_id


def key_on_stick(s, console, disk, console_id):
    """The console's key, read back from the image's SLIMSTATE partition, is its id's."""
    out = subprocess.run(['sfdisk', '--json', disk], capture_output=True, text=True, check=True)
    part = json.loads(out.stdout)['partitiontable']['partitions'][1]
    state = os.path.join(s.tmp, 'state.ext4')
    with open(disk, 'rb') as f, open(state, 'wb') as g:
        f.seek(part['start'] * 512)
        g.write(f.read(part['size'] * 512))
    # the VM was switched off, not shut down: replay the journal first, as the
    # console's own mount at its next boot would (debugfs alone refuses bitmaps
    # the journal has not caught up with)
    fsck = subprocess.run(['e2fsck', '-fy', state], capture_output=True, text=True)
    if fsck.returncode > 2:
        raise TestFailure('e2fsck of the stick\'s SLIMSTATE: status %d: %s' % (
            fsck.returncode, (fsck.stdout + fsck.stderr)[-500:]))
    keys = os.path.join(s.tmp, 'keys-from-stick')
    os.mkdir(keys, 0o700)
    r = subprocess.run(['debugfs', '-R', 'dump /console.key %s/console.key' % keys, state],
                       capture_output=True, text=True)
    if not os.path.exists(os.path.join(keys, 'console.key')):
        raise TestFailure('no console.key on the stick\'s SLIMSTATE: %s' % r.stderr)
    os.chmod(os.path.join(keys, 'console.key'), 0o600)
    r = subprocess.run([console, '--print-id', '--state-dir', keys], capture_output=True,
                       text=True, check=True)
    if r.stdout.strip() != console_id:
        raise TestFailure('the key on the stick is console %s, the manager knows %s' % (
            r.stdout.strip(), console_id))
    log('the key on the stick\'s SLIMSTATE is console %s\'s' % console_id)


def test():
    console, vmlinuz, moddir, version = vm_inputs('foot', 'grim', 'ip', 'debugfs', 'e2fsck',
                                                  'sfdisk', 'mkfs.fat', 'mcopy', 'syslinux',
                                                  'mkfs.ext4')
    if find_pcscd() is None or not os.path.exists(consoleimage.VPCD_CONF):
        raise TestSkip('pcscd or vsmartcard-vpcd is not installed')
    if not os.path.exists(consoleimage.SYSLINUX_MBR):
        raise TestFailure('%s is missing: apt-get install syslinux-common' %
                          consoleimage.SYSLINUX_MBR)
    t0 = time.monotonic()
    ip('addr', 'del', ADDR + '/32', 'dev', 'lo', check=False)  # a killed run's
    ip('addr', 'add', ADDR + '/32', 'dev', 'lo')
    try:
        with ManagerSession('console_image', USER, SERVICE, GREETER_USER, enroll='open',
                            host=HostAddress()) as s:
            # the product's initramfs and /init, with the virtual reader for the card
            initrd = build_initramfs(s.tmp, console, moddir, version,
                                     init=os.path.join(consoleimage.HERE, 'init.sh'), vpcd=True)
            log('image built in %.1fs' % (time.monotonic() - t0))
            bad_address(s, console, vmlinuz, initrd)
            log('bad address done, %.1fs after the start' % (time.monotonic() - t0))
            disk = consoleimage.build_disk(s.tmp, vmlinuz, initrd, 'console=ttyS0 panic=-1 '
                                           'slimland.manager=%s:%d' % (ADDR, s.port))
            s.start_manager()
            console_id = stick(s, console, disk)
            key_on_stick(s, console, disk, console_id)
    finally:
        ip('addr', 'del', ADDR + '/32', 'dev', 'lo', check=False)
    log('console image test: %.1fs' % (time.monotonic() - t0))


run(test)
