"""The cgroup tree and the compositor's policy on cgroup v2, in a QEMU
virtual machine booting Debian's kernel (this host's own cpu controller is
cgroup v1), each run there as root by init.sh's slim.run:

  1. tests/test-cgroup.c, on the unified hierarchy with the cpu and memory
     controllers: it must say it ran on v2 and pass every test;
  2. focus-cgroup.sh: slimland in a session's compositor class with two
     slim-echo windows and slimland-console attached: the window mapped
     last is interactive, the other background; a click through the
     console on the other swaps them.

Logs (the serial console) in $SLIMTEST_OUTDIR/vm-cgroup.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'integration'))
from slimtest import Session, log, run  # noqa: E402
from vmlib import Vm, build_initramfs, vm_inputs  # noqa: E402


def boot(s, console, kernel, run, extra, trees=()):
    vmlinuz, moddir, version = kernel
    initrd = build_initramfs(s.tmp, console, moddir, version, extra=extra, trees=trees)
    return Vm(s.outdir, vmlinuz, initrd, 0, run=run)


def test():
    console, vmlinuz, moddir, version = vm_inputs()
    kernel = (vmlinuz, moddir, version)
    with Session('vm-cgroup', console=False, compositor=False) as s:
        vm = boot(s, console, kernel, '/usr/bin/test-cgroup',
                  [(os.environ['SLIM_TEST_CGROUP'], '/usr/bin/test-cgroup')])
        try:
            m = vm.wait_line(r'vm: cgroup controllers: (.*)$', 60, 'the cgroup controllers')
            log('cgroup v2 controllers in the VM: %s' % m.group(1))
            if 'cpu' not in m.group(1).split():
                s.fail('the VM\'s cgroup v2 has no cpu controller: %s' % m.group(1))
            vm.wait_line(r'cgroups: v2, clients classed in ', 60, 'the policy on v2')
            m = vm.wait_line(r'vm: /usr/bin/test-cgroup exited with status (\d+)', 60,
                             'the end of test-cgroup')
            if m.group(1) != '0':
                s.fail('test-cgroup failed in the VM (status %s):\n%s' % (
                    m.group(1), '\n'.join(vm.serial.tail(60))))
            log('test-cgroup passed on cgroup v2')
        finally:
            vm.stop()

        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'focus-cgroup.sh')
        vm = boot(s, console, kernel, '/usr/bin/focus-cgroup.sh',
                  [(script, '/usr/bin/focus-cgroup.sh'),
                   (os.environ['SLIMLAND'], '/usr/bin/slimland'),
                   (os.environ['SLIM_ECHO'], '/usr/bin/slim-echo')],
                  trees=['/usr/share/X11/xkb'])
        try:
            m = vm.wait_line(r'vm: /usr/bin/focus-cgroup.sh exited with status (\d+)', 120,
                             'the end of focus-cgroup.sh')
            focus = [l for l in vm.serial.lines if l.startswith('vm: focus: ')]
            log('\n'.join(focus))
            if m.group(1) != '0':
                s.fail('focus-cgroup.sh failed in the VM:\n%s' % '\n'.join(vm.serial.tail(60)))
        finally:
            vm.stop()


if __name__ == '__main__':
    run(test)
