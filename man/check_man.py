#!/usr/bin/env python3
"""Renders the manual pages and keeps recorderd(1) in step with --help.

  check_man.py --recorderd PATH PAGE...

Each PAGE is rendered with `man --warnings -l` (MANWIDTH=80) and checked
with `groff -ww -man -z`: both must succeed with nothing on stderr (a roff
mistake, a line groff cannot fit, an unknown macro) and man must print the
page. Then every command, option and option value that `recorderd --help`
names (run, --no-trace, -o, cobertura, speedscope-evented, ...) must appear
in the rendered recorderd.1, so that an option added to --help without its
manual entry fails here. Needs man-db and groff (scripts/setup installs
them)."""
import argparse
import os
import re
import shutil
import subprocess
import sys


def fail(msg):
    print('FAIL: ' + msg)
    sys.exit(1)


def run(cmd, env=None):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env=env, timeout=60)


def tool_env():
    """Our environment for man and groff, without the sanitizer runtimes
    scripts/sanitize preloads for our own code: troff under AddressSanitizer
    aborts on an alloc-dealloc mismatch of its own."""
    env = dict(os.environ)
    for var in ('LD_PRELOAD', 'ASAN_OPTIONS', 'UBSAN_OPTIONS', 'MANPAGER'):
        env.pop(var, None)
    return env


def render(page):
    """The page as man prints it, checked by man and by groff."""
    env = dict(tool_env(), MANWIDTH='80', LC_ALL='C.UTF-8', MAN_KEEP_FORMATTING='',
               PAGER='cat')
    r = run(['man', '--warnings', '-l', page], env)
    err = r.stderr.decode('utf-8', 'replace')
    if r.returncode != 0 or err.strip():
        fail('man --warnings -l %s: exit %d\n%s' % (page, r.returncode, err))
    text = r.stdout.decode('utf-8', 'replace')
    if 'NAME' not in text or len(text.splitlines()) < 20:
        fail('man -l %s printed no page:\n%s' % (page, text[:500]))
    g = run(['groff', '-ww', '-man', '-z', page], tool_env())
    gerr = g.stderr.decode('utf-8', 'replace')
    if g.returncode != 0 or gerr.strip():
        fail('groff -ww -man -z %s: exit %d\n%s' % (page, g.returncode, gerr))
    # col -b would do; man already dropped the overstrikes with MAN_KEEP_FORMATTING
    # unset and no terminal, but strip any that are left
    return re.sub(r'.\x08', '', text)


def help_words(recorderd):
    """Commands, options and option values named by recorderd --help."""
    r = run([recorderd, '--help'])
    if r.returncode != 0:
        fail('recorderd --help: exit %d' % r.returncode)
    text = r.stdout.decode()
    words = set()
    for line in text.splitlines():
        m = re.match(r'\s*recorderd\s+([a-z][\w-]*)', line)
        if m:
            words.add(m.group(1))  # a command
    words.update(re.findall(r'(?<![\w-])(--?[A-Za-z][\w-]*)', text))  # options
    for alts in re.findall(r'--?[\w-]+ ([a-z][\w-]*(?:\|[a-z][\w-]*)+)', text):
        words.update(alts.split('|'))  # --format profile|annotate|...
    m = re.search(r'backends \(SPEC\):(.*)', text)
    if m:
        words.update(re.findall(r'([\w:.-]+) \(', m.group(1)))  # chrome, lua:FILE.lua
    if len(words) < 20:
        fail('found only %s in recorderd --help: did its layout change?' % sorted(words))
    return words


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--recorderd', required=True)
    ap.add_argument('pages', nargs='+')
    args = ap.parse_args()
    for tool in ('man', 'groff'):
        if not shutil.which(tool):
            fail('%s is not installed: run scripts/setup as root (man-db, groff-base)' % tool)
    texts = {os.path.basename(p): render(p) for p in args.pages}
    page = texts.get('recorderd.1')
    if page is None:
        fail('recorderd.1 is not among the pages')
    missing = sorted(w for w in help_words(args.recorderd)
                     if not re.search(r'(?<![\w-])%s(?![\w-])' % re.escape(w), page))
    if missing:
        fail('recorderd --help names what recorderd.1 does not: %s' % ' '.join(missing))
    print('ok: %s render without warnings; recorderd.1 names every command and option '
          'of --help' % ', '.join(sorted(texts)))


if __name__ == '__main__':
    main()
