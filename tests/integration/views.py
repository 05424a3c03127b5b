#!/usr/bin/env python3
"""Check recorderd's flame graph and speedscope views against its folded stacks.

  views.py --recorderd PATH [--lua lua5.1] PROGRAM...

Runs each Lua PROGRAM under `recorderd run`, then checks the session's
flamegraph.svg (well-formed XML, self-contained, the root frame's title at
100%, every title "label (N ms, P%)", the embedded script valid for node if
node exists) and profile.speedscope.json (structure; the sum of the weights
is the total of `recorderd report S --format folded --weight time`; every
sample is a list of valid frame indices; every folded stack is a sample of
the same weight). `recorderd report --format flamegraph|speedscope -o F`
must write the same files. The JSON must satisfy the speedscope file format
(tests/integration/speedscope_schema.json, checked by Debian's
python3-jsonschema). If npm can install ajv-cli, speedscope and
jsdom, the JSON is also validated against speedscope's own schema and the
SVG's zoom is clicked through under jsdom; without npm or the network those
checks are skipped with a note.
Exit status: 0 pass, 1 fail, 77 skipped (recorderd does not exist).
"""

import json
import os
import re
import shutil
import sys
import xml.etree.ElementTree as ET

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402
import harness  # noqa: E402
import reftrace_post  # noqa: E402

SVG = '{http://www.w3.org/2000/svg}'
TITLE_RE = re.compile(r'^(.+) \((\d+\.\d+) ms, (\d+\.\d{2})%\)$')
SCHEMA_URL = 'https://www.speedscope.app/file-format-schema.json'
NPM_PACKAGES = ['ajv-cli@5', 'speedscope@1.25.0', 'jsdom@24']

# Clicks the narrowest frame above depth 1 of the SVG in argv[2] under
# jsdom: it must fill the width, its ancestors stay (dimmed), the others
# hide; then "Reset zoom" must bring every frame back where it was.
ZOOM_JS = r'''
const {JSDOM} = require('jsdom');
const fs = require('fs');
const dom = new JSDOM(fs.readFileSync(process.argv[2], 'utf8'),
                      {contentType: 'image/svg+xml', runScripts: 'outside-only'});
const w = dom.window, d = w.document;
w.eval(d.querySelector('script').textContent); // jsdom runs no SVG <script>
const gs = [...d.querySelectorAll('g.f')];
const rect = g => g.querySelector('rect');
const pos = g => rect(g).getAttribute('x') + ' ' + rect(g).getAttribute('width');
const before = gs.map(pos);
const deep = gs.filter(g => +g.getAttribute('data-d') >= 2);
if (!deep.length) throw new Error('no frame above depth 1');
const t = deep.reduce((a, b) => +rect(b).getAttribute('width') < +rect(a).getAttribute('width') ? b : a);
t.dispatchEvent(new w.MouseEvent('click', {bubbles: true}));
if (pos(t) !== '10.00 1180.00') throw new Error('zoomed frame at ' + pos(t));
const root = gs.find(g => g.getAttribute('data-d') === '0');
if (root.style.display === 'none' || root.style.opacity !== '0.6') throw new Error('root hidden');
const shown = gs.filter(g => g.style.display !== 'none').length;
if (shown >= gs.length) throw new Error('nothing hidden by the zoom');
d.getElementById('unzoom').dispatchEvent(new w.MouseEvent('click'));
gs.forEach((g, i) => {
  if (g.style.display === 'none' || pos(g) !== before[i]) throw new Error('not restored: ' + pos(g));
});
console.log('zoom ok: ' + shown + ' of ' + gs.length + ' frames shown when zoomed');
'''


check, run_ok = harness.expect, harness.run_ok


def read_folded(path):
    """Raw folded stacks (no recursion compression) -> summed weights."""
    d = {}
    with open(path, encoding='utf-8', errors='replace') as f:
        for line in f:
            stack, _, w = line.rstrip('\n').rpartition(' ')
            check(stack and w.isdigit(), 'bad folded line %r' % line)
            d[stack] = d.get(stack, 0) + int(w)
    return d


# {======================================================================
# flamegraph.svg

def check_svg(path, node):
    root = ET.parse(path).getroot()   # raises on malformed XML
    check(root.tag == SVG + 'svg', 'root element is %s' % root.tag)
    text = open(path, encoding='utf-8').read()
    check('href' not in text and text.count('http') == 1,
          'flamegraph.svg refers to something outside itself')
    frames = root.findall(SVG + 'g')
    check(len(frames) > 1, 'flamegraph.svg has %d frames' % len(frames))
    roots = [g for g in frames if g.get('data-d') == '0']
    check(len(roots) == 1, '%d root frames' % len(roots))
    title = roots[0].find(SVG + 'title').text
    check(title.startswith('all (') and title.endswith(', 100.00%)'),
          'root title %r' % title)
    root_w = float(roots[0].find(SVG + 'rect').get('width'))
    top = 0.0
    for g in frames:
        t = g.find(SVG + 'title').text
        check(TITLE_RE.match(t), 'bad title %r' % t)
        w = float(g.find(SVG + 'rect').get('width'))
        check(0.1 <= w <= root_w + 0.01, 'frame width %s: %r' % (w, t))
        label = g.find(SVG + 'text').text or ''
        check(len(label) * 7 <= w, 'text %r wider than its frame' % label)
        if g.get('data-d') == '1':
            top += w
    check(abs(top - root_w) < 0.01 * len(frames) + 0.2,
          'depth-1 frames span %.2f px of %.2f' % (top, root_w))
    script = root.find(SVG + 'script')
    check(script is not None and 'zoom' in script.text, 'no zoom script')
    if node:
        js = path + '.js'
        with open(js, 'w') as f:
            f.write(script.text)
        run_ok([node, '--check', js], os.path.dirname(path))
    return len(frames)

# }======================================================================


# {======================================================================
# profile.speedscope.json

def frame_label(fr, cwd):
    """The folded label of a speedscope frame (see rd_speedscope.h): its
    whole file shown as stacks.folded shows it (corpus.folded_label, cwd
    the program's working directory)."""
    if 'file' in fr:
        return corpus.folded_label('%s@%s:%d' % (fr['name'], fr['file'], fr['line']), cwd)
    if fr['name'].endswith(' [C]'):
        return fr['name'][:-4] + '@[C]'
    if fr['name'] == reftrace_post.CUT:  # the middle of a deep stack, cut
        return fr['name']
    return '?@?'


def check_speedscope(path, folded, session_name, cwd):
    with open(path, encoding='utf-8') as f:
        d = json.load(f)
    check(d['$schema'] == SCHEMA_URL, 'bad $schema %r' % d.get('$schema'))
    frames = d['shared']['frames']
    check(all(isinstance(fr.get('name'), str) for fr in frames), 'frame without name')
    check(len(d['profiles']) == 1, '%d profiles' % len(d['profiles']))
    p = d['profiles'][0]
    check(p['type'] == 'sampled' and p['unit'] == 'nanoseconds'
          and p['startValue'] == 0 and p['name'] == session_name,
          'bad profile header %r' % {k: p[k] for k in p if k not in ('samples', 'weights')})
    samples, weights = p['samples'], p['weights']
    check(len(samples) == len(weights), 'samples and weights differ in length')
    check(all(isinstance(w, int) and w > 0 for w in weights), 'a weight is not positive')
    total = sum(folded.values())
    check(sum(weights) == total == p['endValue'],
          'weights sum %d, endValue %d, folded total %d' % (sum(weights), p['endValue'], total))
    got = {}
    for s, w in zip(samples, weights):
        check(s and all(isinstance(i, int) and 0 <= i < len(frames) for i in s),
              'bad sample %r' % s)
        key = ';'.join(frame_label(frames[i], cwd) for i in s)
        got[key] = got.get(key, 0) + w
    for stack, w in folded.items():
        check(got.get(stack) == w, 'folded stack %s %d is %s in speedscope'
              % (corpus.squeeze(stack), w, got.get(stack)))
    check(len(got) == len(folded), 'speedscope has stacks folded has not')
    return len(samples)

# }======================================================================


# {======================================================================
# speedscope's own schema, through npm

def install_npm(tmp):
    """Returns (ajv, schema, node_modules) paths, or None with a note."""
    npm = shutil.which('npm')
    if not npm:
        print('NOTE: npm not found: speedscope schema and zoom checks skipped')
        return None
    prefix = os.path.join(tmp, 'npm')
    res = harness.run([npm, 'install', '--prefix', prefix, '--no-audit', '--no-fund']
                     + NPM_PACKAGES, tmp, harness.base_env(), 240)
    if res.status != 0:
        print('NOTE: npm install failed (no network?): speedscope schema and zoom checks '
              'skipped\n%s'
              % harness.show_bytes(res.err, 300))
        return None
    ajv = os.path.join(prefix, 'node_modules', '.bin', 'ajv')
    for dirpath, _, files in os.walk(os.path.join(prefix, 'node_modules', 'speedscope')):
        if 'file-format-schema.json' in files:
            return (ajv, os.path.join(dirpath, 'file-format-schema.json'),
                    os.path.join(prefix, 'node_modules'))
    raise harness.Failure('no file-format-schema.json in the speedscope package')

# }======================================================================


# {======================================================================
# the speedscope format, offline: our JSON Schema transcription of
# speedscope's file-format-spec.ts, checked by Debian's python3-jsonschema
# (run by Debian's python, which has it)

SCHEMA_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'speedscope_schema.json')
DEBIAN_PYTHON = '/usr/bin/python3'
VALIDATOR = r'''
import json, sys
import jsonschema
with open(sys.argv[1]) as f:
    schema = json.load(f)
jsonschema.Draft7Validator.check_schema(schema)
with open(sys.argv[2]) as f:
    doc = json.load(f)
errors = sorted(jsonschema.Draft7Validator(schema).iter_errors(doc), key=str)
for e in errors[:5]:
    print(e.message[:200], list(e.absolute_path)[:8])
sys.exit(1 if errors else 0)
'''


def validate_offline(path, tmp):
    """Raises Failure unless path satisfies the speedscope file format."""
    res = harness.run([DEBIAN_PYTHON, '-c', VALIDATOR, SCHEMA_FILE, path], tmp,
                     harness.base_env(), 300)
    err = res.err.decode('utf-8', 'replace')
    check('ModuleNotFoundError' not in err and 'No such file' not in err,
          'cannot validate: %s needs python3-jsonschema (run scripts/setup)\n%s'
          % (DEBIAN_PYTHON, err[-300:]))
    check(res.status == 0, 'the speedscope format rejects %s:\n%s'
          % (path, harness.show_bytes(res.out + res.err)))


def validator_can_fail(path, tmp):
    """The validator rejects a copy of path with one event type broken."""
    with open(path) as f:
        d = json.load(f)
    prof = d['profiles'][0]
    if prof.get('type') == 'evented' and prof['events']:
        prof['events'][0]['type'] = 'X'
    else:
        prof['samples'] = [[-1]]
    bad = os.path.join(tmp, 'broken.speedscope.json')
    with open(bad, 'w') as f:
        json.dump(d, f)
    try:
        validate_offline(bad, tmp)
    except harness.Failure:
        return
    raise harness.Failure('the speedscope validator accepted a broken file')


def validate(npm, path, tmp):
    res = harness.run([npm[0], 'validate', '--spec=draft7', '-s', npm[1], '-d', path],
                     tmp, harness.base_env())
    check(res.status == 0, 'speedscope schema rejects %s:\n%s'
          % (path, harness.show_bytes(res.out + res.err)))


def check_zoom(npm, svg, tmp):
    if not shutil.which('node'):
        return 'zoom not checked (no node)'
    script = os.path.join(tmp, 'zoom.js')
    with open(script, 'w') as f:
        f.write(ZOOM_JS)
    env = harness.base_env()
    env['NODE_PATH'] = npm[2]
    res = harness.run([shutil.which('node'), script, svg], tmp, env)
    check(res.status == 0, 'zoom script failed on %s:\n%s'
          % (svg, harness.show_bytes(res.out + res.err)))
    return res.out.decode().strip()

# }======================================================================


# {======================================================================

def one(args, prog, tmp, npm):
    name, session = harness.record(args, prog, tmp, 'speedscope')
    folded_path = os.path.join(tmp, name + '.folded')
    run_ok([args.recorderd, 'report', session, '--format', 'folded', '--weight', 'time',
            '-o', folded_path], tmp)
    folded = read_folded(folded_path)
    svg = os.path.join(session, 'flamegraph.svg')
    js = os.path.join(session, 'profile.speedscope.json')
    nframes = check_svg(svg, shutil.which('node'))
    cwd = corpus.session_cwd(session)
    nsamples = check_speedscope(js, folded, os.path.basename(session), cwd)
    for fmt, ext in (('flamegraph', '.svg'), ('speedscope', '.speedscope.json')):
        out = os.path.join(tmp, name + ext)
        run_ok([args.recorderd, 'report', session, '--format', fmt, '-o', out], tmp)
        if fmt == 'flamegraph':
            check_svg(out, None)
        else:
            # named as the session's own: the session's name, from session.json
            check_speedscope(out, folded, os.path.basename(session), cwd)
    validate_offline(js, tmp)
    validator_can_fail(js, tmp)
    extra = ', format valid'
    if npm:
        validate(npm, js, tmp)
        extra += ', schema valid, ' + check_zoom(npm, svg, tmp)
    print('%s: %d flame frames, %d samples, %d ns%s'
          % (name, nframes, nsamples, sum(folded.values()), extra))


def main(argv):
    def body(args, tmp):
        npm = install_npm(tmp)
        for prog in args.programs:
            one(args, prog, tmp, npm)
    return harness.program_main(argv, __doc__, 'luatrace-views-', body,
                                (ValueError, KeyError, TypeError, ET.ParseError))

# }======================================================================


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
