#!/usr/bin/python3
"""Each program's --help names its manual page, and both the same options.

check-man.py PROGRAM PAGE.scd [PROGRAM PAGE.scd ...]: the long options
--help prints (the lines that describe them) and the ones the page's
OPTIONS list; a page that misses one, or names one --help does not, fails.
"""
import os
import re
import subprocess
import sys

OPTION = re.compile(r'(?<![\w-])--([a-z][a-z0-9-]*)')


def help_options(program):
    """The options --help's usage lines name, and those its lines begin with
    (not the ones a description mentions in passing)."""
    r = subprocess.run([program, '--help'], capture_output=True, text=True, timeout=10)
    found = set()
    for line in (r.stdout + r.stderr).splitlines():
        words = line.strip()
        if words.startswith('usage:') or words.startswith('['):
            found |= set(OPTION.findall(words))
        else:
            m = re.match(r'(?:-\w, )?--([a-z][a-z0-9-]*)', words)
            if m:
                found.add(m.group(1))
    return found


def page_options(path):
    """The options its OPTIONS section names (other sections may name other
    programs' options)."""
    with open(path) as f:
        text = f.read()
    m = re.search(r'^# OPTIONS\n(.*?)(?=^# |\Z)', text, re.M | re.S)
    return set(OPTION.findall(m.group(1))) if m else set()


def main(args):
    failed = False
    for program, page in zip(args[::2], args[1::2]):
        h, p = help_options(program), page_options(page)
        name = os.path.basename(page)[:-len('.scd')]
        title = '%s(%s)' % tuple(name.rsplit('.', 1))
        r = subprocess.run([program, '--help'], capture_output=True, text=True, timeout=10)
        if title not in r.stdout + r.stderr:
            print('%s --help does not name %s' % (program, title))
            failed = True
        if not h:
            print('%s --help names no option' % program)
            failed = True
        for name, missing in (('its page', h - p), ('--help', p - h)):
            if missing:
                print('%s: %s lacks %s' % (program, name,
                                            ', '.join('--' + o for o in sorted(missing))))
                failed = True
        if not failed:
            print('%s: %d options in --help and %s' % (program, len(h), page))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
