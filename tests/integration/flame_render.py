#!/usr/bin/env python3
"""Render recorderd's flame graph in headless Chromium and use it.

  flame_render.py --recorderd PATH [--lua lua5.1] [--chromium PATH] PROGRAM...

Runs each Lua PROGRAM under `recorderd run` (temporary directory, always
removed) and opens the session's flamegraph.svg and report.html (whose
flame graph is inline) in headless Chromium. A copy of each page gets a
probe script: one at the start records script errors, one at the end,
once the page is laid out, measures every frame (getBBox, the client rect,
the computed style, the text's rendered length), asks elementFromPoint
what is under the middle of each frame, clicks (at its middle, through
whatever is there) a frame two levels up or more, measures again, clicks
"Reset zoom", measures again, then searches (window.prompt answered) and
writes all that into the DOM as JSON, which `chromium --dump-dom` prints.
The test then checks, against the page's own markup and profile.txt:
  - no script error; every frame drawn (width > 0), its <title> first
    (the hover tooltip of the whole frame) as "LABEL (N ms, P%)", its text
    inside it as rendered; the root frame spans the full width;
  - under the middle of every frame 2 px wide or more is that frame (what
    the pointer hovers and clicks there);
  - the title of the widest frame whose function is in no other frame
    gives that function's total time of profile.txt, and its percent that
    time over the root's;
  - the click zooms: the clicked frame spans the full width, its subtree
    is stretched in proportion, its ancestors span the full width dimmed,
    every other frame is hidden and "Reset zoom" shows; "Reset zoom" puts
    every frame back and hides itself;
  - the search colours exactly the frames whose label matches and says
    how many;
  - a screenshot (`--screenshot`, PNG decoded with zlib) is not blank: it
    has many colours, and at several frames, past the end of their text,
    the pixel has the frame's fill.
Chromium is required: without it the test fails and says to run
scripts/setup. Each Chromium gets a temporary --user-data-dir and runs in
its own process group, killed whole when it is done or times out.
Exit status: 0 pass, 1 fail, 77 skipped (recorderd does not exist).
"""

import html
import json
import os
import re
import shutil
import struct
import sys
import zlib

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402
import harness  # noqa: E402

WIDTH = 1400  # px: the page's 1200 px flame graph plus the HTML margins
TITLE_RE = re.compile(r'^(.+) \((\d+\.\d+) ms, (\d+\.\d{2})%\)$')
PROFILE_ROW = re.compile(r'^\s*\d+\s+[\d.]+\s+[\d.]+\s+([\d.]+)\s+([\d.]+)\s+[\d.]+\s+(\S.*)$')
RESULT_RE = re.compile(r'<(?:desc|pre) id="flametest"[^>]*>(.*?)</(?:desc|pre)>', re.S)

# First thing in the page: collect script errors (the flame graph's own
# script runs while the page is parsed, before the probe).
ERRORS_JS = r'''
window.__flameErrors = [];
window.addEventListener('error', function (e) {
  window.__flameErrors.push(String(e.message) + ' at ' + e.lineno);
});
'''

# Last thing in the page. SEARCH is replaced by the regular expression the
# search prompt answers.
PROBE_JS = r'''
(function () {
  var R = {errors: window.__flameErrors || []};
  function rectOf(g) { return g.querySelector('rect'); }
  function measure(g) {
    var r = rectOf(g), t = g.querySelector('text'), b = r.getBBox();
    var c = r.getBoundingClientRect(), cs = getComputedStyle(g);
    return {d: +g.getAttribute('data-d'), x: b.x, w: b.width, h: b.height,
            cx: c.left + window.scrollX, cy: c.top + window.scrollY, cw: c.width, ch: c.height,
            title: g.querySelector('title').textContent, first: g.firstElementChild.tagName,
            text: t.textContent, tx: +t.getAttribute('x'),
            tw: t.textContent ? t.getComputedTextLength() : 0,
            shown: cs.display !== 'none' && cs.visibility !== 'hidden',
            opacity: +cs.opacity, fill: r.getAttribute('fill'), paint: getComputedStyle(r).fill};
  }
  function under(el) {
    var c = el.getBoundingClientRect();
    return document.elementFromPoint(c.left + c.width / 2, c.top + c.height / 2);
  }
  function click(el) {
    var c = el.getBoundingClientRect();
    el.dispatchEvent(new MouseEvent('click', {bubbles: true, cancelable: true, view: window,
      clientX: c.left + c.width / 2, clientY: c.top + c.height / 2}));
  }
  try {
    var gs = Array.prototype.slice.call(document.querySelectorAll('g.f'));
    var svg = gs[0].ownerSVGElement;
    svg.scrollIntoView();
    var sb = svg.getBoundingClientRect();
    R.svg = {w: +svg.getAttribute('width'), h: +svg.getAttribute('height'),
             top: sb.top + window.scrollY, left: sb.left + window.scrollX,
             bottom: sb.bottom + window.scrollY, right: sb.right + window.scrollX};
    R.before = gs.map(measure);
    R.hits = gs.map(function (g) {
      if (rectOf(g).getBoundingClientRect().width < 2) return null;
      var e = under(rectOf(g));
      return e ? gs.indexOf(e.closest('g.f')) : -1;
    });
    // the deepest level (3 at most) of frames two levels up or more with a
    // frame above them, not wider than 60% of the root; its widest frame
    var root = R.before.filter(function (f) { return f.d === 0; })[0], best = -1;
    R.before.forEach(function (f, i) {
      var above = R.before.some(function (a) {
        return a.d === f.d + 1 && a.x >= f.x - 0.01 && a.x + a.w <= f.x + f.w + 0.01; });
      var b = best < 0 ? null : R.before[best], d = Math.min(f.d, 3);
      if (f.d >= 2 && above && f.w <= 0.6 * root.w &&
          (!b || d > Math.min(b.d, 3) || (d === Math.min(b.d, 3) && f.w > b.w)))
        best = i;
    });
    R.target = best;
    if (best >= 0) {
      var hit = under(rectOf(gs[best]));
      R.clicked = hit ? hit.tagName : null;
      click(hit || rectOf(gs[best]));
      R.zoomed = gs.map(measure);
      R.unzoomWhenZoomed = document.getElementById('unzoom').getAttribute('visibility');
      click(document.getElementById('unzoom'));
      R.reset = gs.map(measure);
      R.unzoomWhenReset = document.getElementById('unzoom').getAttribute('visibility');
    }
    window.prompt = function () { return SEARCH; };
    click(document.getElementById('search'));
    R.matched = document.getElementById('matched').textContent;
    R.searched = gs.map(function (g) { return rectOf(g).getAttribute('fill'); });
  } catch (e) {
    R.exception = String(e && e.stack || e);
  }
  var out = document.createElementNS(document.documentElement.namespaceURI,
                                     document.contentType === 'image/svg+xml' ? 'desc' : 'pre');
  out.setAttribute('id', 'flametest');
  out.textContent = JSON.stringify(R);
  document.documentElement.appendChild(out);
})();
'''


# Labels of wide glyphs: the markup cuts labels by an average glyph width,
# the page's script by what the browser measures.
WIDE = '''local function WMWMWMWMWMWMWMWMWMWMWMWMWMWMWMWMWMWMWMWMWMWMWMWMWMWMWMWM(n)
  local s = 0
  for i = 1, n do s = s + i end
  return s
end
local function MWMWMWMWMWMWMWMWMWMWMWMW(n)
  local s = 0
  for i = 1, n do s = s + i end
  return s
end
local function light(n)
  local s = 0
  for i = 1, n do s = s + WMWMWMWMWMWMWMWMWMWMWMWMWMWMWMWMWMWMWMWMWMWMWMWMWMWMWMWM(1) end
  return s
end
for _ = 1, 3 do
  print(WMWMWMWMWMWMWMWMWMWMWMWMWMWMWMWMWMWMWMWMWMWMWMWMWMWMWMWM(20000),
        MWMWMWMWMWMWMWMWMWMWMWMW(6000), light(3000))
end
'''


check, run_ok = harness.expect, harness.run_ok


# {======================================================================
# Chromium

def chromium(args, tmp, url, *opts):
    """Chromium's stdout for url (corpus.headless), which must exit 0."""
    res = corpus.headless(args.chromium, tmp, url, *opts)
    check(res.status == 0, 'chromium %s exited with %s:\n%s'
          % (' '.join(opts), res.status, harness.show_bytes(res.out + res.err, 1500)))
    return res.out.decode('utf-8', 'replace')


def instrument(page, out, search, is_svg):
    """A copy of page with the error hook first and the probe last."""
    with open(page, encoding='utf-8') as f:
        text = f.read()
    probe = PROBE_JS.replace('SEARCH', json.dumps(search))
    if is_svg:
        wrap = '<script type="text/ecmascript"><![CDATA[%s]]></script>\n'
        head = re.search(r'<svg[^>]*>\n', text)
        check(head and text.rstrip().endswith('</svg>'), 'flamegraph.svg: no <svg> ... </svg>')
        at = head.end()
        end = text.rstrip()[:-len('</svg>')]
        text = text[:at] + wrap % ERRORS_JS + end[at:] + wrap % probe + '</svg>\n'
    else:
        check(text.count('<head>') == 1 and text.count('</body>') == 1,
              'report.html: not one <head> and one </body>')
        text = text.replace('<head>', '<head>\n<script>%s</script>' % ERRORS_JS)
        text = text.replace('</body>', '<script>%s</script>\n</body>' % probe)
    with open(out, 'w', encoding='utf-8') as f:
        f.write(text)


def probe(args, tmp, page, search, is_svg):
    copy = os.path.join(tmp, 'probe' + ('.svg' if is_svg else '.html'))
    instrument(page, copy, search, is_svg)
    dom = chromium(args, tmp, 'file://' + copy, '--window-size=%d,900' % WIDTH, '--dump-dom')
    m = RESULT_RE.search(dom)
    check(m, 'no probe result in the DOM chromium dumped (did the page load?):\n%s'
          % harness.show_bytes(dom.encode(), 800))
    return json.loads(html.unescape(m.group(1)))

# }======================================================================


# {======================================================================
# PNG, enough of it for a screenshot: 8-bit RGB or RGBA, not interlaced

def png_pixels(path):
    """(width, height, channels, rows): rows are bytes, unfiltered."""
    with open(path, 'rb') as f:
        data = f.read()
    check(data[:8] == b'\x89PNG\r\n\x1a\n', '%s is not a PNG' % path)
    at, idat, hdr = 8, b'', None
    while at < len(data):
        n, kind = struct.unpack('>I4s', data[at:at + 8])
        body = data[at + 8:at + 8 + n]
        if kind == b'IHDR':
            hdr = struct.unpack('>IIBBBBB', body)
        elif kind == b'IDAT':
            idat += body
        at += 12 + n
    check(hdr, 'no IHDR in %s' % path)
    w, h, depth, ctype, _, _, interlace = hdr
    check(depth == 8 and ctype in (2, 6) and not interlace,
          'PNG kind: depth %d, colour type %d, interlace %d' % (depth, ctype, interlace))
    ch = 3 if ctype == 2 else 4
    raw, stride, rows, prev = zlib.decompress(idat), w * ch, [], bytearray(w * ch)
    for y in range(h):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - ch] if i >= ch else 0
            b, c = prev[i], prev[i - ch] if i >= ch else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, ch, rows


def rgb(fill):
    m = re.match(r'^rgb\((\d+),\s*(\d+),\s*(\d+)\)$', fill)
    check(m, 'fill %r is not rgb(r,g,b)' % fill)
    return tuple(int(v) for v in m.groups())


def unrastered(rows, ch, box):
    """How many sampled pixels inside the flame graph's box are pure white.
    Its background is #f8f8f0 and nothing drawn in it is white, so these
    are tiles Chromium had not rastered when it took the screenshot (seen
    under load at the bottom of a page, in spite of
    --run-all-compositor-stages-before-draw: CI at 20d2b0f)."""
    x0, x1 = int(box['left']) + 2, min(int(box['right']) - 2, len(rows[0]) // ch)
    y0, y1 = int(box['top']) + 2, min(int(box['bottom']) - 2, len(rows))
    return sum(1 for y in range(y0, y1, 2) for x in range(x0, x1, 2)
               if rows[y][x * ch:x * ch + 3] == b'\xff\xff\xff')


def screenshot(args, tmp, page, res):
    """The page's screenshot, taken again (at most corpus.CHROMIUM_TRIES times)
    while part of the flame graph is not rastered; then none may be."""
    png = os.path.join(tmp, 'shot.png')
    height = int(min(res['svg']['bottom'] + 20, 8000))
    for attempt in range(1, corpus.CHROMIUM_TRIES + 1):
        chromium(args, tmp, 'file://' + page, '--window-size=%d,%d' % (WIDTH, height),
                 '--screenshot=' + png)
        w, h, ch, rows = png_pixels(png)
        check((w, h) == (WIDTH, height), 'screenshot is %dx%d, not %dx%d' % (w, h, WIDTH, height))
        white = unrastered(rows, ch, res['svg'])
        if not white:
            return w, h, ch, rows
        print('screenshot: %d white pixels in the flame graph (not rastered); take it again'
              % white)
    check(False, 'screenshot: %d white pixels in the flame graph in %d runs'
          % (white, corpus.CHROMIUM_TRIES))


def check_screenshot(args, tmp, page, res):
    w, h, ch, rows = screenshot(args, tmp, page, res)
    colours = set()
    for row in rows[::4]:
        for i in range(0, len(row), 4 * ch):
            colours.add(row[i:i + 3])
    check(len(colours) >= 8, 'the screenshot has %d colours: blank' % len(colours))
    probes = 0
    for f in res['before']:
        room = f['cx'] + f['cw'] - 2 - (f['cx'] + (f['tx'] - f['x']) + f['tw'] + 2)
        if f['ch'] < 10 or room < 3:
            continue
        x = int(f['cx'] + f['cw'] - 2 - room / 2)
        y = int(f['cy'] + f['ch'] / 2)
        if not (0 <= x < w and 0 <= y < h):
            continue
        got = tuple(rows[y][x * ch:x * ch + 3])
        want = rgb(f['fill'])
        check(all(abs(a - b) <= 3 for a, b in zip(got, want)),
              'screenshot pixel (%d, %d) of %r is %r, its fill %r' % (x, y, f['title'], got, want))
        probes += 1
    check(probes >= 3, 'only %d frames could be probed in the screenshot' % probes)
    return len(colours), probes

# }======================================================================


# {======================================================================
# the checks

def close(a, b, eps=0.02):
    return abs(a - b) <= eps


def check_frames(res):
    check(not res.get('exception'), 'the probe raised: %s' % res.get('exception'))
    check(not res['errors'], 'script errors in the page: %r' % res['errors'])
    fs = res['before']
    check(len(fs) > 5, 'only %d frames' % len(fs))
    roots = [f for f in fs if f['d'] == 0]
    check(len(roots) == 1, '%d root frames' % len(roots))
    full = res['svg']['w'] - 2 * roots[0]['x']
    check(close(roots[0]['w'], full) and close(roots[0]['x'], 10) and full > 1000,
          'root frame at x %.2f, %.2f px wide, of %s' % (roots[0]['x'], roots[0]['w'],
                                                          res['svg']['w']))
    for i, f in enumerate(fs):
        check(f['shown'] and f['w'] > 0 and f['h'] > 0 and f['cw'] > 0,
              'frame %r not drawn: %r' % (f['title'], f))
        check(f['first'] == 'title' and TITLE_RE.match(f['title']), 'frame %d: first child %s, '
              'title %r' % (i, f['first'], f['title']))
        check(not f['text'] or f['tx'] + f['tw'] <= f['x'] + f['w'] + 0.5,
              'the text %r of %r is %.1f px wide, past its %.1f px frame'
              % (f['text'], f['title'], f['tw'], f['w']))
        check(not f['text'] or f['tw'] > 0, 'text %r rendered 0 px wide (no font?)' % f['text'])
        check(f['paint'].replace(' ', '') == f['fill'].replace(' ', ''),
              'frame %r painted %s, fill %s' % (f['title'], f['paint'], f['fill']))
        hit = res['hits'][i]
        check(hit is None or hit == i, 'under the middle of %r is frame %s'
              % (f['title'], hit if hit is None or hit < 0 else fs[hit]['title']))
    check(sum(h is not None for h in res['hits']) >= 3, 'fewer than 3 frames hit-tested')
    return roots[0]


def profile_totals(session):
    """{label: total ms} of profile.txt's total-time table (the flame
    graph's labels are profile.txt's, rd_label.h)."""
    totals, on = {}, False
    with open(os.path.join(session, 'profile.txt')) as f:
        for line in f:
            if line.startswith('By total time'):
                on = True
            m = PROFILE_ROW.match(line) if on else None
            if m:
                totals[m.group(3)] = float(m.group(1))
    check(totals, 'no total-time table in profile.txt')
    return totals


def call_tree_nodes(session):
    """{label: number of call-tree nodes it is in}, from stacks.folded
    (each NAME@SRC:LINE as the flame graph shows it): a function in one
    drawn frame may be in other nodes too narrow to draw (under 0.1 px),
    which profile.txt's total counts."""
    paths, cwd = {}, corpus.session_cwd(session)
    with open(os.path.join(session, 'stacks.folded')) as f:
        for line in f:
            frames = [corpus.human_label(fr, cwd) for fr in line.rsplit(' ', 1)[0].split(';')]
            for k, label in enumerate(frames):
                paths.setdefault(label, set()).add(tuple(frames[:k + 1]))
    return {label: len(p) for label, p in paths.items()}


def half_ulp(ms):
    return 0.0005 if ms >= 1 else 0.0000005


def check_title(res, root, session):
    """Every frame whose function is in no other node of the call tree
    against profile.txt;
    returns the widest under 100%."""
    totals = profile_totals(session)
    nodes = call_tree_nodes(session)
    parsed = [TITLE_RE.match(f['title']).groups() for f in res['before']]
    count = {}
    for label, _, _ in parsed:
        count[label] = count.get(label, 0) + 1
    root_ms = float(TITLE_RE.match(root['title']).group(2))
    cands = [i for i, f in enumerate(res['before'])
             if f['d'] > 0 and count[parsed[i][0]] == 1 and nodes.get(parsed[i][0]) == 1
             and parsed[i][0] in totals]
    for i in cands:
        title, want = res['before'][i]['title'], totals[parsed[i][0]]
        ms, pct = float(parsed[i][1]), float(parsed[i][2])
        # profile.txt prints 0.001 ms; frames under 0.1 px are left out of the SVG
        check(abs(ms - want) <= 0.0006 + 0.0001 * root_ms,
              'title %r: %.6f ms, profile.txt total %.3f ms' % (title, ms, want))
        # titles print ms to 6 decimals under 1 ms, to 3 above
        err = pct * (half_ulp(ms) / ms + half_ulp(root_ms) / root_ms) if ms else 0
        check(abs(pct - 100 * ms / root_ms) <= 0.0051 + err,
              'title %r: %.2f%%, but %.6f of %.6f ms is %.4f%%'
              % (title, pct, ms, root_ms, 100 * ms / root_ms))
    # any share but 0 and 100% tests the percent; the band is wide because
    # a small program's shares move with the load: a stall while lua5.1
    # parses the script (the top C function's own time) once left
    # calls_recursion's widest such frame, its main chunk, under 1% (CI at 6f08ef4)
    mid = [(res['before'][i]['w'], i) for i in cands if 0 < float(parsed[i][2]) < 100]
    check(mid, 'no frame of a share between 0% and 100% whose function is in no other frame')
    i = max(mid)[1]
    return '%s %s ms %s%% (%d titles)' % (parsed[i] + (len(cands),))


def inside(a, t):
    return a['x'] >= t['x'] - 0.01 and a['x'] + a['w'] <= t['x'] + t['w'] + 0.01


def check_zoom(res, root):
    i = res['target']
    check(i is not None and i >= 0, 'no frame two levels up with a frame above it to click')
    before, zoomed, reset = res['before'], res['zoomed'], res['reset']
    t = before[i]
    check(res['clicked'] in ('rect', 'text'), 'the click landed on a %s' % res['clicked'])
    z = zoomed[i]
    check(close(z['x'], root['x']) and close(z['w'], root['w']) and z['shown'],
          'clicked %r: at x %.2f, %.2f px wide after the zoom' % (t['title'], z['x'], z['w']))
    k, hidden, sub = root['w'] / t['w'], 0, 0
    for j, (b, a) in enumerate(zip(before, zoomed)):
        if b['d'] >= t['d'] and inside(b, t):
            sub += 1
            check(a['shown'] and close(a['x'], root['x'] + (b['x'] - t['x']) * k, 0.05)
                  and close(a['w'], b['w'] * k, 0.05) and close(a['opacity'], 1),
                  'in the zoomed subtree, %r: x %.2f w %.2f from x %.2f w %.2f (x%.3f)'
                  % (b['title'], a['x'], a['w'], b['x'], b['w'], k))
            check(not a['text'] or a['tx'] + a['tw'] <= a['x'] + a['w'] + 0.5,
                  'zoomed: the text %r of %r past its frame' % (a['text'], a['title']))
        elif b['d'] < t['d'] and b['x'] <= t['x'] + 0.01 and b['x'] + b['w'] >= t['x'] + t['w'] - 0.01:
            check(a['shown'] and close(a['x'], root['x']) and close(a['w'], root['w'])
                  and close(a['opacity'], 0.6),
                  'ancestor %r after the zoom: x %.2f w %.2f opacity %s'
                  % (b['title'], a['x'], a['w'], a['opacity']))
        else:
            check(not a['shown'], '%r outside the zoomed frame is still shown' % b['title'])
            hidden += 1
    check(sub >= 2 and hidden >= 1, 'zoom: %d frames in the subtree, %d hidden' % (sub, hidden))
    check(res['unzoomWhenZoomed'] == 'visible' and res['unzoomWhenReset'] == 'hidden',
          '"Reset zoom" visibility %s when zoomed, %s after it'
          % (res['unzoomWhenZoomed'], res['unzoomWhenReset']))
    for b, a in zip(before, reset):
        check(a['shown'] and close(a['x'], b['x']) and close(a['w'], b['w'])
              and a['text'] == b['text'] and close(a['opacity'], 1),
              'after "Reset zoom", %r: x %.2f w %.2f, before x %.2f w %.2f'
              % (b['title'], a['x'], a['w'], b['x'], b['w']))
    return '%s: %d in its subtree, %d hidden' % (TITLE_RE.match(t['title']).group(1), sub, hidden)


def search_for(page):
    """A regular expression (plain letters) matching some frames, not all,
    from the frames' titles in the page's markup."""
    with open(page, encoding='utf-8') as f:
        titles = re.findall(r'<g class="f" data-d="[1-9]\d*"><title>([^<]*)</title>', f.read())
    names = [re.split(r' \(| \[C\]$', html.unescape(t))[0] for t in titles]
    for n in sorted(set(names), key=lambda n: (min(names.count(n), 2), len(n), n), reverse=True):
        if re.match(r'^[A-Za-z_]{3,}$', n) and 0 < names.count(n) < len(names):
            return n
    return 'print'


def check_search(res, regex):
    want = [i for i, f in enumerate(res['before'])
            if f['d'] and re.search(regex, TITLE_RE.match(f['title']).group(1))]
    got = [i for i, fill in enumerate(res['searched']) if fill == 'rgb(220,0,220)']
    check(got == want, 'search %r coloured frames %r, %r match' % (regex, got, want))
    check(res['matched'] == 'Matched: %d frames' % len(want), 'search %r: %r, %d frames match'
          % (regex, res['matched'], len(want)))
    return len(want)


def one_page(args, tmp, page, session, is_svg):
    regex = search_for(page)
    res = probe(args, tmp, page, regex, is_svg)
    root = check_frames(res)
    title = check_title(res, root, session)
    zoom = check_zoom(res, root)
    matched = check_search(res, regex)
    colours, probes = check_screenshot(args, tmp, page, res)
    return ('%d frames; title %s; zoomed %s; search %r: %d; screenshot %d colours, %d frames '
            'at their fill' % (len(res['before']), title, zoom, regex, matched, colours, probes))


def one(args, prog, tmp):
    name, session = harness.record(args, prog, tmp, 'folded')
    for page, is_svg in (('flamegraph.svg', True), ('report.html', False)):
        print('%s %s: %s' % (name, page, one_page(args, tmp, os.path.join(session, page),
                                                   session, is_svg)))


def main(argv):
    def body(args, tmp):
        args.chromium = args.chromium or shutil.which('chromium') or shutil.which('chromium-browser')
        if not args.chromium:
            print('FAIL: chromium is not installed: the flame graph must be checked in headless '
                  'Chromium; run scripts/setup as root (it installs Debian\'s chromium)')
            return 1
        src = os.path.join(tmp, 'src')
        os.mkdir(src)
        wide = os.path.join(src, 'wide.lua')
        with open(wide, 'w') as f:
            f.write(WIDE)
        one(args, wide, tmp)
        for prog in args.programs:
            one(args, prog, tmp)
    return harness.program_main(
        argv, __doc__, 'luatrace-flame-', body,
        (ValueError, KeyError, TypeError, AttributeError, IndexError, zlib.error, struct.error),
        lambda ap: ap.add_argument('--chromium', default=None))

# }======================================================================


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
