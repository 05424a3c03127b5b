#!/usr/bin/env python3
"""Renders the manual pages and keeps recorderd(1) in step with --help.

  check_man.py --recorderd PATH PAGE...

Each PAGE is rendered with `man --warnings -l` (MANWIDTH=80) and checked
with `groff -ww -man -z`: both must succeed with nothing on stderr (a roff
mistake, a line groff cannot fit, an unknown macro) and man must print the
page. Then recorderd.1 must have, under COMMANDS, a subsection
"recorderd CMD ..." for every command `recorderd --help` lists, naming
every option and option value of `recorderd CMD --help` (--no-trace, -o,
wait, ...), and the page must name every format, file and backend those
help texts list (cobertura, coverage.xml, speedscope-evented, ...), so that
an option added to --help without its manual entry fails here. Needs man-db and groff (scripts/setup installs
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


def help_text(recorderd, *args):
    r = run([recorderd] + list(args) + ['--help'])
    if r.returncode != 0:
        fail('recorderd %s --help: exit %d' % (' '.join(args), r.returncode))
    return r.stdout.decode()


def commands(recorderd):
    """The commands `recorderd --help` lists (its usage lines)."""
    cmds = []
    for line in help_text(recorderd).splitlines():
        m = re.match(r'\s*recorderd\s+([a-z][\w-]*)', line)
        if m and m.group(1) not in cmds:
            cmds.append(m.group(1))
    if len(cmds) < 8:
        fail('found only %s in recorderd --help: did its layout change?' % cmds)
    return cmds


def option_words(text):
    """Options and option values of the `options:` block of a command's
    --help: `  -o, --out DIR   ...`, `  --mode wait|drop   ...`."""
    words = set()
    block = re.search(r'^options:\n(.*?)(?:\n\n|\Z)', text, re.S | re.M)
    if not block:
        return words
    for line in block.group(1).splitlines():
        m = re.match(r'\s{2}(-\S.*?)(?:\s{2,}|$)', line)
        if not m:
            continue  # a description's continuation line
        col = m.group(1)
        words.update(re.findall(r'(?<![\w-])(--?[A-Za-z][\w-]*)', col))
        for arg in col.split():
            if '|' in arg:
                words.update(arg.split('|'))  # --mode wait|drop
    return words


def format_words(text):
    """Format names, their files and the backends a command's --help lists."""
    words = set()
    block = re.search(r'^formats[^\n]*:\n(.*?)(?:\n\n|\Z)', text, re.S | re.M)
    if block:
        for line in block.group(1).splitlines():
            m = re.match(r'\s{2}[* ]\s(\w[\w-]*)\s+(?:(\S+)\s{2,})?', line)
            if m:
                words.add(m.group(1))  # profile, cobertura, none
                if m.group(2):
                    words.add(m.group(2))  # profile.txt, annotate/
            elif line.startswith('backends'):
                rest = line.split(':', 1)[1] + ' ' + block.group(1).split(line, 1)[1]
                words.update(re.findall(r'([\w:.-]+) \(', rest))  # chrome, lua:FILE.lua
                words.update(re.findall(r'\(([\w.-]+\.json)\)', rest))
                break
    return words


def by_command(page, section, heading, keep_heading):
    """The rendered page's section (COMMANDS, SYNOPSIS) split by command:
    {"run": text, ...}. A line matching heading starts a command's text;
    keep_heading: the rest of that line is part of it, and a command met
    twice gets both texts."""
    m = re.search(r'^%s\n(.*?)^\S' % section, page, re.S | re.M)
    if not m:
        fail('recorderd.1 has no %s section' % section)
    out, cur = {}, None
    for line in m.group(1).splitlines():
        h = re.match(heading, line)
        if h:
            cur = h.group(1)
            tail = line[len(h.group(0)):] + '\n' if keep_heading else ''
            out[cur] = (out.get(cur, '') if keep_heading else '') + tail
        elif cur:
            out[cur] += line + '\n'
    return out


def sections(page):
    """The subsections of COMMANDS: a heading is indented 3, its text 7."""
    return by_command(page, 'COMMANDS', r'   recorderd ([a-z][\w-]*)', False)


def synopses(page):
    """The SYNOPSIS by command; report's two forms are one text."""
    return by_command(page, 'SYNOPSIS', r'\s{7}recorderd ([a-z][\w-]*)', True)


def option_names(text):
    """Each option line of a command's --help as the set of its names:
    [{'-o', '--out'}, {'--ring'}, ...] (not --help)."""
    names = []
    block = re.search(r'^options:\n(.*?)(?:\n\n|\Z)', text, re.S | re.M)
    for line in block.group(1).splitlines() if block else []:
        m = re.match(r'\s{2}(-\S.*?)(?:\s{2,}|$)', line)
        if m:
            opt = set(re.findall(r'(?<![\w-])(--?[A-Za-z][\w-]*)', m.group(1)))
            if opt != {'-h', '--help'}:
                names.append(opt)
    return names


def tags(section):
    """The tags of a subsection's tagged paragraphs: the lines indented 7
    that begin with an option (`-o DIR, --out DIR`), as man renders .TP."""
    return '\n'.join(line for line in section.splitlines() if re.match(r' {7}-', line))


def present(word, text):
    return re.search(r'(?<![\w-])%s(?![\w-])' % re.escape(word), text)


def check_recorderd(recorderd, page):
    """Every command has a subsection naming each of its --help options; the
    formats, files and backends appear in the page."""
    secs = sections(page)
    syn = synopses(page)
    problems = []
    for cmd in commands(recorderd):
        text = help_text(recorderd, cmd)
        if 'example:' not in text:
            problems.append('recorderd %s --help has no example' % cmd)
        if cmd not in secs:
            problems.append('no subsection "recorderd %s" under COMMANDS' % cmd)
            continue
        # --help/-h: every command has it; the page says so once
        missing = sorted(w for w in option_words(text) - {'--help', '-h'}
                         if not present(w, secs[cmd]))
        if missing:
            problems.append('recorderd %s: %s' % (cmd, ' '.join(missing)))
        # each option a paragraph of its own (a lost .TP runs it into the
        # one before) and in the command's synopsis
        for opt in option_names(text):
            if not any(present(w, tags(secs[cmd])) for w in opt):
                problems.append('recorderd %s: %s has no paragraph of its own'
                                % (cmd, '/'.join(sorted(opt))))
            if not any(present(w, syn.get(cmd, '')) for w in opt):
                problems.append('recorderd %s: %s is not in the SYNOPSIS'
                                % (cmd, '/'.join(sorted(opt))))
        missing = sorted(w for w in format_words(text) if not present(w, page))
        if missing:
            problems.append('recorderd %s formats: %s' % (cmd, ' '.join(missing)))
    top = help_text(recorderd)
    missing = sorted(w for w in set(re.findall(r'(?<![\w-])(--?[a-z][\w-]*)', top)) | {'-h'}
                     if not present(w, page))
    if missing:
        problems.append('recorderd --help: %s' % ' '.join(missing))
    if problems:
        fail('recorderd.1 does not name what --help does:\n  ' + '\n  '.join(problems))


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
    check_recorderd(args.recorderd, page)
    print('ok: %s render without warnings; recorderd.1 has a subsection per command '
          'naming each option of its --help, and every format' % ', '.join(sorted(texts)))


if __name__ == '__main__':
    main()
