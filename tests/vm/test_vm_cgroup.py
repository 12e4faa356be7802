"""The cgroup tree and the compositor's policy on cgroup v2, in a QEMU
virtual machine booting Debian's kernel (this host's own cpu controller is
cgroup v1): tests/test-cgroup.c run there as root (init.sh's slim.run), on
the unified hierarchy with the cpu and memory controllers. It must say it
ran on v2 and pass every test.

Logs (the serial console) in $SLIMTEST_OUTDIR/vm-cgroup.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'integration'))
from slimtest import Session, log, run  # noqa: E402
from vmlib import Vm, build_initramfs, vm_inputs  # noqa: E402


def test():
    console, vmlinuz, moddir, version = vm_inputs()
    program = os.environ['SLIM_TEST_CGROUP']
    with Session('vm-cgroup', console=False, compositor=False) as s:
        initrd = build_initramfs(s.tmp, console, moddir, version,
                                 extra=[(program, '/usr/bin/test-cgroup')])
        vm = Vm(s.outdir, vmlinuz, initrd, 0, run='/usr/bin/test-cgroup')
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


if __name__ == '__main__':
    run(test)
