#!/usr/bin/python3
"""hunt2: run a Lua program traced and untraced, validate every output with a
real parser. usage: check.py [--cwd DIR] [--keep] NAME -- lua5.1 ARGS...
Prints PROBLEM lines; exit 1 if any."""
import gzip, json, os, re, shutil, subprocess, sys, html.parser, struct
import xml.etree.ElementTree as ET
import jsonschema
import html5lib
sys.path.insert(0, '/tmp/hunt2/pb')
import profile_pb2

RD = os.environ.get('RD', '/work/main/build/recorderd/recorderd')
SCHEMA = json.load(open('/work/main/tests/integration/speedscope_schema.json'))
HERE = os.path.dirname(os.path.abspath(__file__))
problems = []


def P(fmt, msg):
    s = 'PROBLEM [%s] %s' % (fmt, msg)
    problems.append(s)
    print(s[:2000])


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


def short(b, n=300):
    return repr(b[:n])


# ---------------------------------------------------------------- JSON
def walk_strings(o, path='$'):
    if isinstance(o, str):
        yield path, o
    elif isinstance(o, dict):
        for k, v in o.items():
            yield path + '.<key>', k
            yield from walk_strings(v, path + '.' + k)
    elif isinstance(o, list):
        for i, v in enumerate(o):
            yield from walk_strings(v, '%s[%d]' % (path, i))


def load_json(fmt, path):
    b = open(path, 'rb').read()
    try:
        t = b.decode('utf-8')
    except UnicodeDecodeError as e:
        P(fmt, '%s: not UTF-8: %s near %s' % (path, e, short(b[max(0, e.start - 60):e.start + 20])))
        t = b.decode('utf-8', 'surrogateescape')
    try:
        d = json.loads(t)  # strict=True: raw control chars rejected
    except json.JSONDecodeError as e:
        P(fmt, '%s: json: %s near %r' % (path, e, t[max(0, e.pos - 60):e.pos + 20]))
        return None
    for p, s in walk_strings(d):
        if re.search('[\ud800-\udfff]', s):
            P(fmt, '%s: lone surrogate in string at %s: %r' % (path, p, s[:80]))
            break
    return d


def check_speedscope(fmt, path, evented=False):
    d = load_json(fmt, path)
    if d is None:
        return
    errs = sorted(jsonschema.Draft7Validator(SCHEMA).iter_errors(d), key=str)
    for e in errs[:3]:
        P(fmt, '%s: schema: %s' % (path, str(e)[:400]))
    nf = len(d['shared']['frames'])
    for prof in d['profiles']:
        if prof['type'] == 'evented':
            st = []
            last = -1
            for ev in prof['events']:
                if ev['at'] < last:
                    P(fmt, 'time goes back'); break
                last = ev['at']
                if ev['type'] == 'O':
                    st.append(ev['frame'])
                else:
                    if not st or st[-1] != ev['frame']:
                        P(fmt, '%s: profile %r: C %d does not close top %r' % (path, prof['name'], ev['frame'], st[-1:]))
                        break
                    st.pop()
            if st:
                P(fmt, '%s: profile %r: %d frames left open' % (path, prof['name'], len(st)))
        else:
            for s in prof['samples']:
                if any(not (0 <= i < nf) for i in s):
                    P(fmt, 'bad frame index'); break


def check_chrome(path):
    fmt = 'chrome'
    d = load_json(fmt, path)
    if d is None:
        return
    stacks = {}
    for ev in d['traceEvents']:
        if ev['ph'] == 'M':
            continue
        k = (ev['pid'], ev['tid'])
        st = stacks.setdefault(k, [])
        if ev['ph'] == 'B':
            st.append((ev['name'], ev.get('cat')))
        elif ev['ph'] == 'E':
            if not st or st[-1] != (ev['name'], ev.get('cat')):
                P(fmt, 'tid %r: E %r closes %r' % (k, ev['name'][:80], st[-1:]))
                return
            st.pop()
    for k, st in stacks.items():
        if st:
            P(fmt, 'tid %r: %d B left open' % (k, len(st)))


# ---------------------------------------------------------------- XML / HTML
def check_xml(fmt, path):
    r = run(['xmllint', '--noout', path])
    if r.returncode != 0 or r.stderr:
        P(fmt, '%s: xmllint rc=%d: %s' % (path, r.returncode, r.stderr.decode('utf-8', 'replace')[:600]))
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        P(fmt, '%s: ElementTree: %s' % (path, e))
        return None
    for el in root.iter():
        if 'zzhostile' in el.tag:
            P(fmt, '%s: injected element <%s>' % (path, el.tag))
    return root


class HP(html.parser.HTMLParser):
    VOID = {'meta', 'br', 'hr', 'img', 'input', 'link', 'col', 'wbr', 'area', 'base', 'source'}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []
        self.errs = []
        self.tags = set()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        if 'zzhostile' in tag:
            self.errs.append('injected start tag <%s> at %s' % (tag, self.getpos()))
        for a, v in attrs:
            if 'zzhostile' in a:
                self.errs.append('injected attribute %r on <%s> at %s' % (a, tag, self.getpos()))
        if tag not in self.VOID:
            self.stack.append((tag, self.getpos()))

    def handle_startendtag(self, tag, attrs):
        self.tags.add(tag)
        if 'zzhostile' in tag:
            self.errs.append('injected tag <%s/> at %s' % (tag, self.getpos()))

    def handle_endtag(self, tag):
        if 'zzhostile' in tag:
            self.errs.append('injected end tag </%s> at %s' % (tag, self.getpos()))
        if tag in self.VOID:
            return
        if not self.stack or self.stack[-1][0] != tag:
            self.errs.append('end tag </%s> at %s closes %r' % (tag, self.getpos(), self.stack[-1:]))
            # try to recover
            for i in range(len(self.stack) - 1, -1, -1):
                if self.stack[i][0] == tag:
                    del self.stack[i:]
                    break
        else:
            self.stack.pop()


def check_html(path):
    fmt = 'html'
    b = open(path, 'rb').read()
    try:
        t = b.decode('utf-8')
    except UnicodeDecodeError as e:
        P(fmt, '%s: not UTF-8: %s near %s' % (path, e, short(b[max(0, e.start - 60):e.start + 20])))
        t = b.decode('utf-8', 'replace')
    bad = re.search('[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]', t)
    if bad:
        P(fmt, '%s: control char %r at offset %d: %r' % (path, bad.group(), bad.start(), t[max(0, bad.start() - 80):bad.start() + 20]))
    p5 = html5lib.HTMLParser()
    p5.parse(b, transport_encoding='utf-8')
    for pos, code, data in p5.errors[:5]:
        P(fmt, '%s: html5lib: %s %s %s' % (path, pos, code, data))
    h = HP()
    h.feed(t)
    h.close()
    for e in h.errs[:5]:
        P(fmt, '%s: %s' % (path, e))
    if h.stack:
        P(fmt, '%s: unclosed tags %r' % (path, h.stack[:5]))
    # the inline svg must be XML too
    m = re.search(r'<svg.*?</svg>', t, re.S)
    if m:
        tmp = path + '.inline.svg'
        open(tmp, 'w', encoding='utf-8', errors='surrogateescape').write(m.group())
        r = run(['xmllint', '--noout', tmp])
        if r.returncode != 0:
            P(fmt, 'inline svg of %s: xmllint: %s' % (path, r.stderr.decode('utf-8', 'replace')[:600]))
        os.unlink(tmp)
    # script content must not be terminated early
    for sm in re.finditer(r'<script[^>]*>(.*?)</script', t, re.S | re.I):
        if '<!--' in sm.group(1):
            P(fmt, '%s: <!-- inside a script' % path)


# ---------------------------------------------------------------- text formats
def check_folded(path):
    fmt = 'folded'
    b = open(path, 'rb').read()
    if b and not b.endswith(b'\n'):
        P(fmt, '%s: no final newline' % path)
    for i, line in enumerate(b.split(b'\n')[:-1] if b else []):
        m = re.fullmatch(rb'(.+) ([0-9]+)', line)
        if not m:
            P(fmt, '%s:%d: bad line %s' % (path, i + 1, short(line)))
            continue
        frames = m.group(1).split(b';')
        for f in frames:
            if not re.fullmatch(rb'.*@.*', f, re.S) and f != b'[...]':
                P(fmt, '%s:%d: frame without @: %s (in %s)' % (path, i + 1, short(f), short(line)))
                break
            if not (re.search(rb'@\[C\]$', f) or re.search(rb':[0-9]+$', f) or f == b'[...]'):
                P(fmt, '%s:%d: frame not NAME@SRC:LINE / NAME@[C]: %s' % (path, i + 1, short(f)))
                break
        try:
            line.decode('utf-8')
        except UnicodeDecodeError:
            pass  # allowed? flamegraph.pl copes; note once
    return b


def check_lcov(path, cwd):
    fmt = 'lcov'
    b = open(path, 'rb').read()
    state = 'out'
    pat = {
        b'TN': rb'TN:.*', b'SF': rb'SF:/.+', b'FN': rb'FN:[0-9]+,[^,\n]+',
        b'FNDA': rb'FNDA:[0-9]+,[^,\n]+', b'FNF': rb'FNF:[0-9]+', b'FNH': rb'FNH:[0-9]+',
        b'DA': rb'DA:[0-9]+,[0-9]+', b'LF': rb'LF:[0-9]+', b'LH': rb'LH:[0-9]+',
    }
    for i, line in enumerate(b.split(b'\n')):
        if line == b'':
            continue
        if line == b'end_of_record':
            if state != 'in':
                P(fmt, '%s:%d: end_of_record outside a record' % (path, i + 1))
            state = 'out'
            continue
        key = line.split(b':', 1)[0]
        if key not in pat or not re.fullmatch(pat[key], line, re.S):
            P(fmt, '%s:%d: bad line %s' % (path, i + 1, short(line)))
            continue
        if key == b'SF':
            state = 'in'
            f = line[3:]
            if not os.path.exists(f):
                P(fmt, '%s:%d: SF does not exist: %s' % (path, i + 1, short(f)))
    if state != 'out':
        P(fmt, '%s: record not ended' % path)
    if b.strip():
        r = run(['lcov', '--summary', path])
        if r.returncode != 0 or b'WARNING' in r.stderr + r.stdout:
            P(fmt, 'lcov --summary rc=%d: %s' % (r.returncode, (r.stderr + r.stdout)[-500:].decode('utf-8', 'replace')))
        out = '/tmp/hunt2-genhtml'
        shutil.rmtree(out, ignore_errors=True)
        r = run(['genhtml', '-q', '-o', out, path], cwd='/tmp')
        if r.returncode != 0 or r.stderr.strip():
            P(fmt, 'genhtml rc=%d: %s' % (r.returncode, (r.stderr + r.stdout)[-600:].decode('utf-8', 'replace')))


def check_luacov(path):
    fmt = 'luacov'
    b = open(path, 'rb').read()
    lines = b.split(b'\n')
    if b and lines[-1] != b'':
        P(fmt, '%s: no final newline' % path)
    lines = lines[:-1]
    i = 0
    while i < len(lines):
        m = re.fullmatch(rb'([0-9]+):(.+)', lines[i], re.S)
        if not m:
            P(fmt, '%s:%d: bad header %s' % (path, i + 1, short(lines[i])))
            return
        n = int(m.group(1))
        if i + 1 >= len(lines):
            P(fmt, '%s: header without counts' % path)
            return
        counts = lines[i + 1]
        if not re.fullmatch(rb'([0-9]+ )*', counts) or counts.count(b' ') != n:
            P(fmt, '%s:%d: %d counts expected: %s' % (path, i + 2, n, short(counts)))
        i += 2


def check_callgrind(path):
    fmt = 'callgrind'
    b = open(path, 'rb').read()
    for i, line in enumerate(b.split(b'\n')):
        if line == b'' or line.startswith(b'#'):
            continue
        if re.fullmatch(rb'(version|creator|pid|cmd|part|desc|positions|events|event|summary|totals):.*', line):
            continue
        if re.fullmatch(rb'(fl|fi|fe|fn|cfi|cfl|cfn|ob|cob)=.*', line):
            if b'\r' in line:
                P(fmt, '%s:%d: CR in %s' % (path, i + 1, short(line)))
            continue
        if re.fullmatch(rb'calls=[0-9]+ [0-9]+', line):
            continue
        if re.fullmatch(rb'[+-]?[0-9]+( [0-9]+)*', line) or re.fullmatch(rb'\*( [0-9]+)*', line):
            continue
        P(fmt, '%s:%d: bad line %s' % (path, i + 1, short(line)))
        break
    r = run(['callgrind_annotate', path], cwd='/tmp')
    if r.returncode != 0 or r.stderr.strip():
        P(fmt, 'callgrind_annotate rc=%d: %s' % (r.returncode, r.stderr[-600:].decode('utf-8', 'replace')))


# ---------------------------------------------------------------- pprof
def varint(b, i):
    v = 0; s = 0
    while True:
        c = b[i]; i += 1
        v |= (c & 0x7f) << s; s += 7
        if not c & 0x80:
            return v, i


def fields(b):
    i = 0
    out = []
    while i < len(b):
        k, i = varint(b, i)
        f, w = k >> 3, k & 7
        if w == 0:
            v, i = varint(b, i)
        elif w == 2:
            n, i = varint(b, i)
            v = b[i:i + n]; i += n
            if i > len(b):
                raise ValueError('truncated')
        elif w == 1:
            v = b[i:i + 8]; i += 8
        elif w == 5:
            v = b[i:i + 4]; i += 4
        else:
            raise ValueError('wire type %d' % w)
        out.append((f, w, v))
    return out


def check_pprof(path):
    fmt = 'pprof'
    try:
        raw = gzip.decompress(open(path, 'rb').read())
        top = fields(raw)
    except Exception as e:
        P(fmt, '%s: decode: %s' % (path, e)); return
    strings = [v for f, w, v in top if f == 6]
    if not strings or strings[0] != b'':
        P(fmt, 'string_table[0] is not empty')
    for s in strings:
        try:
            s.decode('utf-8')
        except UnicodeDecodeError:
            P(fmt, 'string_table has invalid UTF-8 (proto3 string): %s' % short(s)); break
    ns = len(strings)
    funcs = {}
    for f, w, v in top:
        if f == 5:
            d = {ff: vv for ff, ww, vv in fields(v)}
            funcs[d.get(1)] = d
            for k in (2, 3, 4):
                if d.get(k, 0) >= ns:
                    P(fmt, 'function string index out of range'); break
    locs = set()
    for f, w, v in top:
        if f == 4:
            d = fields(v)
            locs.add([vv for ff, ww, vv in d if ff == 1][0])
            for ff, ww, vv in d:
                if ff == 4:
                    ld = {a: c for a, _, c in fields(vv)}
                    if ld.get(1) not in funcs:
                        P(fmt, 'line refers to unknown function %r' % ld.get(1))
    try:
        pp = profile_pb2.Profile()
        pp.ParseFromString(raw)
    except Exception as e:
        P(fmt, 'python protobuf (libprotobuf) rejects %s: %r' % (path, e))
    r = run(['go', 'tool', 'pprof', '-raw', path], cwd='/tmp')
    if r.returncode != 0:
        P(fmt, 'go tool pprof -raw rc=%d: %s' % (r.returncode, r.stderr[-600:].decode('utf-8', 'replace')))


# ---------------------------------------------------------------- main
def main(argv):
    cwd = os.getcwd()
    keep = False
    while argv[0].startswith('--'):
        if argv[0] == '--cwd':
            cwd = argv[1]; argv = argv[2:]
        elif argv[0] == '--keep':
            keep = True; argv = argv[1:]
    name = argv[0]
    assert argv[1] == '--'
    cmd = argv[2:]
    out = '/tmp/hunt2-out/' + name
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    env = dict(os.environ)
    env.pop('LUA_INIT', None)
    u = run(cmd, cwd=cwd, env=env)
    t = run([RD, 'run', '--quiet', '--out', out, '-b', 'chrome', '-b', 'speedscope-evented', '--'] + cmd,
            cwd=cwd, env=env)
    if (u.returncode, u.stdout) != (t.returncode, t.stdout):
        P('run', 'traced rc/stdout differ: untraced rc=%d %s / traced rc=%d %s'
          % (u.returncode, short(u.stdout), t.returncode, short(t.stdout)))
    if u.stderr != t.stderr:
        P('run', 'stderr differs:\nuntraced %s\ntraced   %s' % (short(u.stderr, 600), short(t.stderr, 600)))
    sess = [os.path.join(out, d) for d in os.listdir(out)]
    if len(sess) != 1:
        P('run', 'sessions: %r' % sess)
        if not sess:
            return
    s = sess[0]
    files = sorted(os.listdir(s))
    print('session', s, files)
    sj = load_json('session.json', os.path.join(s, 'session.json'))
    if sj:
        if sj.get('bad_records'):
            P('session.json', 'bad_records=%r' % sj['bad_records'])
        if sj.get('error'):
            P('session.json', 'error=%r' % sj['error'])
        if sj.get('status') != 'complete':
            P('session.json', 'status=%r' % sj.get('status'))
    for f in ['profile.txt', 'stacks.folded', 'flamegraph.svg', 'profile.speedscope.json',
              'callgrind.out', 'profile.pb.gz', 'report.html', 'annotate', 'coverage.lcov',
              'luacov.stats.out', 'coverage.txt', 'coverage.xml', 'trace.ltr',
              'trace.chrome.json', 'trace.speedscope.json', 'session.json']:
        if f not in files:
            P('run', 'missing %s' % f)
    j = lambda f: os.path.join(s, f)
    ok = lambda f: os.path.exists(j(f))
    if ok('stacks.folded'): check_folded(j('stacks.folded'))
    if ok('flamegraph.svg'): check_xml('flamegraph.svg', j('flamegraph.svg'))
    if ok('coverage.xml'): check_xml('cobertura', j('coverage.xml'))
    if ok('report.html'): check_html(j('report.html'))
    if ok('profile.speedscope.json'): check_speedscope('speedscope', j('profile.speedscope.json'))
    if ok('trace.speedscope.json'): check_speedscope('speedscope-evented', j('trace.speedscope.json'))
    if ok('trace.chrome.json'): check_chrome(j('trace.chrome.json'))
    if ok('coverage.lcov'): check_lcov(j('coverage.lcov'), cwd)
    if ok('luacov.stats.out'): check_luacov(j('luacov.stats.out'))
    if ok('callgrind.out'): check_callgrind(j('callgrind.out'))
    if ok('profile.pb.gz'): check_pprof(j('profile.pb.gz'))
    # annotate: every file starts with '== PATH'
    if ok('annotate'):
        for a in os.listdir(j('annotate')):
            b = open(os.path.join(j('annotate'), a), 'rb').read()
            if not b.startswith(b'== '):
                P('annotate', '%s does not start with == PATH' % a)
    # replay: every report again
    rp = '/tmp/hunt2-out/' + name + '.replay'
    shutil.rmtree(rp, ignore_errors=True)
    os.makedirs(rp)
    for fmtn, fn in [('profile', 'p.txt'), ('folded', 'f.folded'), ('flamegraph', 'f.svg'),
                     ('speedscope', 's.json'), ('callgrind', 'cg.out'), ('pprof', 'p.pb.gz'),
                     ('html', 'r.html'), ('lcov', 'c.lcov'), ('luacov', 'l.out'),
                     ('coverage', 'c.txt'), ('cobertura', 'c.xml'), ('chrome', 'c.json'),
                     ('speedscope-evented', 'se.json')]:
        r = run([RD, 'report', s, '--format', fmtn, '-o', os.path.join(rp, fn)], cwd=cwd)
        if r.returncode != 0 or r.stderr:
            P('report-' + fmtn, 'rc=%d stderr=%s' % (r.returncode, short(r.stderr, 600)))
    # replayed files must equal the session's (except timestamps)
    for a, b in [('stacks.folded', 'f.folded'),
                 ('coverage.lcov', 'c.lcov'), ('luacov.stats.out', 'l.out')]:
        if ok(a) and os.path.exists(os.path.join(rp, b)):
            if open(j(a), 'rb').read() != open(os.path.join(rp, b), 'rb').read():
                P('replay', '%s differs from report %s' % (a, b))
    r = run([RD, 'report', s, '--format', 'annotate', '-o', os.path.join(rp, 'ann')], cwd=cwd)
    if r.returncode != 0 or r.stderr:
        P('report-annotate', 'rc=%d stderr=%s' % (r.returncode, short(r.stderr, 600)))
    print('%s: %d problems' % (name, len(problems)))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
