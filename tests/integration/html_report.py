#!/usr/bin/env python3
"""Check recorderd's report.html.

  html_report.py --recorderd PATH [--lua lua5.1] PROGRAM...

Runs each Lua PROGRAM, and a program of its own whose function name and
source hold `<script>` markup, under `recorderd run` (temporary output
directory, always removed), then parses each session's report.html with
html.parser:
  - self-contained: no src attribute, every href a fragment of the page,
    no http(s) URL anywhere, no <link>, <iframe>, <object>, <img>; one
    <script> (the flame graph's), inside its <svg>;
  - escaped: the markup from the trace appears as text (function name in
    the top table, source lines in the listing), never as elements;
  - totals: traced time as profile.txt prints it, events as session.json,
    coverage lines hit/total as coverage.lcov (LH/LF summed), the top
    function and its self time as profile.txt's first row;
  - `recorderd report S --format html -o F` writes a page with the same
    summary;
  - a coverage run (--coverage: no clock) has no time column in any table
    (top functions, files, listings) and says nothing of ms: every cell
    held 0.000.
If chromium is installed, it also renders the page headless (--dump-dom)
and the DOM must hold the flame graph and the tables; otherwise that part
is skipped with a note.
Exit status: 0 pass, 1 fail, 77 skipped (recorderd does not exist).
"""

import html.parser
import json
import os
import re
import shutil
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402
import harness  # noqa: E402

EVIL_NAME = '<script>alert(1)</script>'
EVIL = '''-- markup in a source: <script>alert("src")</script> & "quotes"
local t = {}
t["<script>alert(1)</script>"] = function(n)
  local s = "<b>&amp;</b>"
  for i = 1, n do s = s .. i end
  return #s
end
print(t["<script>alert(1)</script>"](300))
'''
# Lines broken by CR alone (Lua counts each as one), a NUL in a comment, a
# function named with DEL, and a command-line argument that is no UTF-8.
BYTES = (b"local a = 1\rlocal b = 2\r-- \0 nul\r_G['del\\127x'] = function() return a + b end\r"
         b"print(_G['del\\127x']())\r")
BYTES_LAST = "print(_G['del\\127x']())"
PROFILE_ROW = re.compile(r'^\s*\d+\s+([\d.]+)\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+(\S.*)$')


check = harness.expect


def run_ok(cmd, cwd, timeout=harness.RUN_TIMEOUT):
    return harness.run_ok(cmd, cwd, timeout).out.decode('utf-8', 'replace')


class Page(html.parser.HTMLParser):
    """Elements, attributes and text of a page, with the section each
    piece of text is in (the id of the last h2)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.attrs, self.stack = [], [], []
        self.section, self.text, self.rows = None, {}, []
        self.row = None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, tuple(self.stack)))
        self.attrs.extend((tag, k, v or '') for k, v in attrs)
        if tag not in ('meta', 'rect', 'br'):
            self.stack.append(tag)
        if tag == 'h2':
            self.section = dict(attrs).get('id')
        if tag == 'tr':
            self.row = []
        if tag in ('td', 'th') and self.row is not None:
            self.row.append('')

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, tuple(self.stack)))
        self.attrs.extend((tag, k, v or '') for k, v in attrs)

    def handle_endtag(self, tag):
        if tag in self.stack:
            while self.stack.pop() != tag:
                pass
        if tag == 'tr' and self.row is not None:
            self.rows.append((self.section, self.row))
            self.row = None

    def handle_data(self, data):
        self.text[self.section] = self.text.get(self.section, '') + data
        if self.row:
            self.row[-1] += data


def parse(path):
    with open(path, encoding='utf-8') as f:
        raw = f.read()
    p = Page()
    p.feed(raw)
    p.close()
    return raw, p


def check_contained(raw, p):
    check(not re.search(r'https?:', raw), 'an http(s) URL in the page')
    for tag, key, value in p.attrs:
        check(key != 'src', '<%s src=%r>' % (tag, value))
        check(key != 'href' or value.startswith('#'), '<%s href=%r>' % (tag, value))
    names = [t for t, _ in p.tags]
    for bad in ('link', 'iframe', 'object', 'embed', 'img'):
        check(bad not in names, 'a <%s> element' % bad)
    scripts = [parents for t, parents in p.tags if t == 'script']
    check(len(scripts) == 1 and 'svg' in scripts[0],
          'scripts: %r (one, in the flame graph, expected)' % scripts)
    check('@import' not in raw and 'url(' not in raw, 'the style sheet fetches something')


def profile_txt(session):
    # plain text, the command's bytes as given (bytes.lua's is no UTF-8)
    with open(os.path.join(session, 'profile.txt'), errors='surrogateescape') as f:
        text = f.read()
    traced = re.search(r'traced time: ([\d.]+ ms)', text).group(1)
    rows = [PROFILE_ROW.match(line) for line in text.split('By self time')[1].split('\n')]
    first = next(m for m in rows if m)
    return traced, first.group(2), first.group(1)


def lcov_totals(session):
    lh = lf = 0
    with open(os.path.join(session, 'coverage.lcov')) as f:
        for line in f:
            if line.startswith('LH:'):
                lh += int(line[3:])
            elif line.startswith('LF:'):
                lf += int(line[3:])
    return lh, lf


def summary(p):
    return {r[0]: r[1] for s, r in p.rows if s == 'summary' and len(r) == 2}


def check_totals(p, session):
    with open(os.path.join(session, 'session.json')) as f:
        js = json.load(f)
    sm = summary(p)
    traced, top_name, top_self = profile_txt(session)
    check(sm.get('traced time') == traced, 'traced time %r, profile.txt %r'
          % (sm.get('traced time'), traced))
    check(sm.get('events') == str(js['events']), 'events %r, session.json %d'
          % (sm.get('events'), js['events']))
    check(sm.get('command') == js['command'], 'command %r' % sm.get('command'))
    lh, lf = lcov_totals(session)
    check(sm.get('coverage', '').startswith('%d of %d lines' % (lh, lf)),
          'coverage %r, coverage.lcov %d of %d' % (sm.get('coverage'), lh, lf))
    top = [r for s, r in p.rows if s == 'top' and len(r) == 6 and r[0] != 'calls']
    check(top and top[0][5] == top_name and top[0][1] == top_self,
          'top function %r, profile.txt %r %s' % (top[:1], top_name, top_self))
    check('flame' in p.text and any(t == 'g' for t, _ in p.tags), 'no flame graph frames')
    return top_name


def check_escaped(raw, p):
    check('<script>alert' not in raw, 'markup from the trace written unescaped')
    top = [r[5] for s, r in p.rows if s == 'top' and len(r) == 6]
    check(any(EVIL_NAME in name for name in top), 'the function %r is not in the top table'
          % EVIL_NAME)
    src = p.text.get('sources', '')
    check('<script>alert("src")</script> & "quotes"' in src, 'source comment not shown as text')
    check('"<b>&amp;</b>"' in src, 'source string not shown as text')


def check_bytes(raw, p, session):
    """What BYTES gives: lines numbered as Lua numbers them, the NUL shown
    as '?', no DEL or C1 control in the page, a UTF-8 session.json."""
    check(not re.search('[\x7f-\x9f]', raw), 'a DEL or C1 control in the page')
    rows = {r[3]: r for s, r in p.rows if s == 'sources' and len(r) == 4}
    check(rows.get(BYTES_LAST, [None])[:2] == ['5', '1'] and
          rows.get('-- ? nul', [None])[0] == '3', 'source rows: %s' % sorted(rows.values()))
    top = [r[5] for s, r in p.rows if s == 'top' and len(r) == 6]
    check(any(name.startswith('del?x (') for name in top), 'no del?x in the top table: %s' % top)
    with open(os.path.join(session, 'session.json'), 'rb') as f:
        meta = json.loads(f.read().decode('utf-8'))  # strict: raises on bad bytes
    check('\ufffd' in meta['command'], 'the bad byte of the command: %r' % meta['command'])
    with open(os.path.join(session, 'annotate', 'bytes.lua.txt'), encoding='utf-8') as f:
        ann = f.read().splitlines()
    with open(os.path.join(session, 'coverage.txt'), encoding='utf-8') as f:
        cov = f.read()
    check(any(re.match(r'^\s+1\s+[\d.]+\s+5  ' + re.escape(BYTES_LAST) + '$', r) for r in ann),
          'annotate: %s' % ann)
    check(BYTES_LAST in cov and '\r' not in cov and '-- ? nul' in cov, 'coverage.txt:\n' + cov)


def check_chromium(path, tmp):
    exe = shutil.which('chromium') or shutil.which('chromium-browser')
    if not exe:
        return 'chromium not installed: rendering not checked'
    res = corpus.headless(exe, tmp, 'file://' + path, '--dump-dom')
    dom = res.out.decode('utf-8', 'replace')
    check(res.status == 0 and '<svg' in dom and 'class="f"' in dom and 'id="top"' in dom,
          'chromium --dump-dom:\n%s' % harness.show_bytes(res.out + res.err))
    return 'rendered by chromium'


def one(args, path, tmp, evil=False, extra=()):
    name, session = harness.record(args, path, tmp, 'annotate,coverage', *extra)
    page = os.path.join(session, 'report.html')
    raw, p = parse(page)
    check_contained(raw, p)
    top = check_totals(p, session)
    # what a line's time holds, and why the lines do not add up to the
    # traced time, said where the listings begin
    check('ms: time on the line itself, not in the functions it calls' in raw and
          "add up to the Lua functions' self time, not to the traced time" in raw,
          'report.html does not say what its per-line times include')
    if evil:
        check_escaped(raw, p)
    if extra:
        check_bytes(raw, p, session)
    again = os.path.join(tmp, name + '.html')
    run_ok([args.recorderd, 'report', session, '--format', 'html', '-o', again], tmp)
    raw2, p2 = parse(again)
    check_contained(raw2, p2)
    s1, s2 = summary(p), summary(p2)
    # the functions row says what it counts: its Lua ones are those the
    # coverage row counts as hit, but for chunks loaded from strings (no
    # source: not covered)
    fm = re.fullmatch(r'(\d+) run: (\d+) in Lua \((\d+) main chunks?\), (\d+) in C',
                      s1.get('functions', ''))
    cm = re.search(r', (\d+) of \d+ functions', s1.get('coverage', ''))
    strings = 'loadstring' in name
    check(fm and cm and int(fm[1]) == int(fm[2]) + int(fm[4]) and int(fm[3]) >= 1 and
          (int(fm[2]) > int(cm[1]) if strings else fm[2] == cm[1]),
          'functions %r, coverage %r' % (s1.get('functions'), s1.get('coverage')))
    for key in ('traced time', 'events', 'functions', 'stacks', 'coverage'):
        check(s1.get(key) == s2.get(key), 'report --format html: %s %r, session %r'
              % (key, s2.get(key), s1.get(key)))
    print('%s: %d bytes, top %s, %s' % (name, len(raw), top, check_chromium(page, tmp)))


def coverage_run(args, tmp):
    src = os.path.join(tmp, 'cov')
    os.mkdir(src)
    prog = os.path.join(src, 'cov.lua')
    with open(prog, 'w') as f:
        f.write('local function f(x)\n  if x then return 1 end\n  return 2\nend\nprint(f(true))\n')
    outdir = os.path.join(tmp, 'out-cov')
    os.mkdir(outdir)
    run_ok([args.recorderd, 'run', '--quiet', '--coverage', '--out', outdir, '--',
            args.lua, 'cov.lua'], src)
    raw, p = parse(os.path.join(harness.find_session(outdir), 'report.html'))
    heads = [row for _, row in p.rows if row and row[0] in ('calls', 'file', 'line')]
    timecols = {'self ms', 'self%', 'total ms', 'total%', 'ms'}
    check(len(heads) == 3 and not any(timecols & set(row) for row in heads) and
          heads[0] == ['calls', 'function'], 'time columns in a coverage run: %r' % heads)
    check('ms:' not in raw and '0.000' not in raw, 'a coverage run\'s page speaks of ms')
    cov = [row for sec, row in p.rows if sec == 'top' and row and row[0].isdigit()]
    check(cov and all(len(row) == 2 for row in cov), 'top rows: %r' % cov)
    print('cov: no time columns in a coverage run')


def main(argv):
    def body(args, tmp):
        src = os.path.join(tmp, 'src')
        os.mkdir(src)
        evil = os.path.join(src, 'markup.lua')
        with open(evil, 'w') as f:
            f.write(EVIL)
        one(args, evil, tmp, evil=True)
        odd = os.path.join(src, 'bytes.lua')
        with open(odd, 'wb') as f:
            f.write(BYTES)
        one(args, odd, tmp, extra=[os.fsdecode(b'\xff')])
        for prog in args.programs:
            one(args, os.path.abspath(prog), tmp)
        coverage_run(args, tmp)
    return harness.program_main(argv, __doc__, 'luatrace-html-', body,
                                (ValueError, KeyError, AttributeError, StopIteration), programs='*')


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
