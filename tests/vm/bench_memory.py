"""bench-memory (tests/bench/bench-memory.c) where it can run: the VM of
the VM tests, Debian's kernel with cgroup v2, the memory controller and a
zram swap device (this host has cgroup v1 and no swap). Prints what the
benchmark printed there.

    bench_memory.py [--json] [--quick]
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'integration'))
from slimtest import Session, TestFailure, run  # noqa: E402
from vmlib import Vm, build_initramfs, vm_inputs  # noqa: E402

ARGS = [a for a in sys.argv[1:] if a in ('--json', '--quick')]
# the benchmark's own output goes to stdout, the harness's logs to stderr
OUT = sys.stdout
sys.stdout = sys.stderr


def test():
    console, vmlinuz, moddir, version = vm_inputs()
    program = os.environ['SLIM_BENCH_MEMORY']
    with Session('bench-memory-vm', console=False, compositor=False) as s:
        initrd = build_initramfs(s.tmp, console, moddir, version,
                                 extra=[(program, '/usr/bin/bench-memory')])
        # one word of arguments on the kernel's command line
        arg = '--json' if '--json' in ARGS else '--quick' if '--quick' in ARGS else None
        vm = Vm(s.outdir, vmlinuz, initrd, 0, run='/usr/bin/bench-memory', arg=arg)
        try:
            vm.wait_line(r'vm: zram swap on', 60, 'the swap device')
            start = vm.pos
            m = vm.wait_line(r'vm: /usr/bin/bench-memory exited with status (\d+)', 1200,
                             'the end of bench-memory')
            lines = [l for l in vm.serial.lines[start:vm.pos - 1] if not l.startswith('vm: ')]
            if '--json' in ARGS:
                lines = [l for l in lines if l.startswith('{')]
            OUT.write('\n'.join(lines) + '\n')
            OUT.flush()
            if m.group(1) != '0':
                raise TestFailure('bench-memory failed in the VM (status %s)' % m.group(1))
        finally:
            vm.stop()


if __name__ == '__main__':
    run(test)
