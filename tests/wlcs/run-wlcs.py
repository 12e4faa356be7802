"""Runs wlcs against slimland's compositor and holds the results to
tests/wlcs/expected-failures: a test that fails and is not listed there
fails this test (a regression, named); a listed test that passes is said
(so the list can shrink), not failed. Prints pass/fail/skip per test group,
the table README's "Conformance (wlcs)" shows.

usage: run-wlcs.py RUNNER MODULE EXPECTED-FAILURES
"""
import collections
import json
import os
import subprocess
import sys
import tempfile


def results(path):
    with open(path) as f:
        report = json.load(f)
    for suite in report['testsuites']:
        for t in suite['testsuite']:
            name = '%s.%s' % (suite['name'], t['name'])
            if t.get('result') == 'SKIPPED' or t.get('status') == 'NOTRUN':
                yield suite['name'], name, 'skip'
            elif t.get('failures'):
                yield suite['name'], name, 'fail'
            else:
                yield suite['name'], name, 'pass'


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    runner, module, expected_path = sys.argv[1:]
    with open(expected_path) as f:
        expected = {line.strip() for line in f if line.strip() and not line.startswith('#')}
    with tempfile.TemporaryDirectory(prefix='slimland-wlcs-') as tmp:
        runtime = os.path.join(tmp, 'run')
        os.mkdir(runtime, 0o700)
        env = dict(os.environ, XDG_RUNTIME_DIR=runtime)
        # sanitizer builds: one suppressions file, made of the ones named
        supps = [p for p in os.environ.get('SLIM_LSAN_SUPPRESSIONS', '').split(':') if p]
        if supps:
            supp = os.path.join(tmp, 'lsan.supp')
            with open(supp, 'w') as f:
                for path in supps:
                    with open(path) as part:
                        f.write(part.read() + '\n')
            env['LSAN_OPTIONS'] = 'suppressions=' + supp
            env['ASAN_OPTIONS'] = 'fast_unwind_on_malloc=0'
            env['UBSAN_OPTIONS'] = 'halt_on_error=1:print_stacktrace=1'

        for var in ('WAYLAND_DISPLAY', 'DISPLAY'):
            env.pop(var, None)
        # gtest's shards run side by side: a compositor each, a quarter of the tests
        shards = min(4, os.cpu_count() or 1)
        outdir = os.environ.get('SLIMTEST_OUTDIR', tmp)
        procs = []
        for i in range(shards):
            out = os.path.join(tmp, 'wlcs-%d.json' % i)
            log = open(os.path.join(outdir, 'wlcs-%d.log' % i), 'w')
            shard_env = dict(env, GTEST_TOTAL_SHARDS=str(shards), GTEST_SHARD_INDEX=str(i))
            procs.append((out, log, subprocess.Popen(
                [runner, module, '--gtest_output=json:' + out], env=shard_env, stdout=log,
                stderr=subprocess.STDOUT)))
        rows = []
        for out, log, proc in procs:
            status = proc.wait()
            log.close()
            if not os.path.exists(out):
                print('wlcs ended with status %d and no report; its output: %s' % (
                    status, log.name))
                return 1
            rows += list(results(out))
            with open(log.name) as f:
                reports = [line for line in f if 'Sanitizer' in line or 'runtime error' in line]
            if reports:
                print('FAIL: sanitizer reports in %s:\n%s' % (log.name, ''.join(reports[:20])))
                return 1
        log = os.path.join(outdir, 'wlcs-*.log')
    groups = collections.defaultdict(collections.Counter)
    for group, _, result in rows:
        groups[group][result] += 1
    print('| group | pass | fail | skip |\n|---|---|---|---|')
    total = collections.Counter()
    for group in sorted(groups):
        c = groups[group]
        total.update(c)
        print('| %s | %d | %d | %d |' % (group, c['pass'], c['fail'], c['skip']))
    print('| all | %d | %d | %d |' % (total['pass'], total['fail'], total['skip']))
    regressions = sorted(name for _, name, result in rows
                         if result == 'fail' and name not in expected)
    fixed = sorted(name for _, name, result in rows if result == 'pass' and name in expected)
    if fixed:
        print('%d listed as failing now pass (take them off %s):' % (len(fixed), expected_path))
        for name in fixed:
            print('  ' + name)
    if regressions:
        print('FAIL: %d test(s) fail that are not expected to (output: %s):' % (
            len(regressions), log))
        for name in regressions:
            print('  ' + name)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
