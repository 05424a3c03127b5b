#!/usr/bin/env python3
"""Check the timeline backends (chrome, speedscope-evented) against the profile.

  timeline.py --recorderd PATH [--lua lua5.1] PROGRAM...

Runs each Lua PROGRAM under `recorderd run --backend chrome --backend
speedscope-evented`, then checks:
- trace.chrome.json: parses with python's json; the structure Perfetto and
  chrome://tracing read (traceEvents of B/E/M events with the fields each
  needs, ts in µs); per track, B/E balance, each E repeats its B's name and cat, times never
  go back and every slice lies inside its parent; every track is named
  (thread_name: "main", "coroutine N (...)") and sorted; the process is
  named; the top-level slices of the main track add up to the time inside
  any frame (traced_ns of session.json less the time on no frame, within
  rounding); calls per function (B events that are not snapshot frames)
  equal the calls of profile.txt for every function wholly inside the
  trace;
- trace.speedscope.json: one evented profile per chrome track, named alike,
  with balanced events (each close is the frame on top) whose times never
  decrease and equal the chrome track's; then a sampled profile equal to
  the folded stacks; all frames valid indices; the file satisfies the
  speedscope file format (speedscope_schema.json, python3-jsonschema). If
  npm can install ajv-cli and speedscope, it is also validated against
  speedscope's own schema, and
  if it can install DevTools' trace engine (@paulirish/trace_engine), that
  must read every chrome track, named, with all its slices nested;
- `recorderd report S --format chrome|speedscope-evented -o FILE` writes
  the same events as the session did.
Exit status: 0 pass, 1 fail, 77 skipped (recorderd does not exist).
"""

import json
import os
import re
import shutil
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import corpus  # noqa: E402
import views  # noqa: E402

check = views.check
PROFILE_RE = re.compile(r'^\s*(\d+)\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+(.+)$')


def ns(ts):
    """A chrome ts (µs with three decimals) as integer ns."""
    return int(round(ts * 1000))


# {======================================================================
# trace.chrome.json

def check_event_fields(ev):
    check(isinstance(ev, dict) and ev.get('ph') in ('B', 'E', 'M'), 'bad event %r' % ev)
    check(isinstance(ev.get('pid'), int) and isinstance(ev.get('tid'), int),
          'pid/tid not integers: %r' % ev)
    check(isinstance(ev.get('name'), str) and ev['name'], 'event without name: %r' % ev)
    if ev['ph'] == 'M':
        check(isinstance(ev.get('args'), dict), 'metadata without args: %r' % ev)
        if ev['name'] == 'thread_sort_index':
            check(isinstance(ev['args'].get('sort_index'), int), 'bad sort index %r' % ev)
        else:
            check(ev['name'] in ('process_name', 'thread_name')
                  and isinstance(ev['args'].get('name'), str), 'bad metadata %r' % ev)
    else:
        check(isinstance(ev.get('ts'), (int, float)) and ev['ts'] >= 0, 'bad ts %r' % ev)
        check('args' not in ev, 'args would split speedscope frames: %r' % ev)
        check(isinstance(ev.get('cat'), str), 'no cat: %r' % ev)


def slices_of(events):
    """Per tid: slices (name, cat, start ns, end ns, depth, B's index) in the
    order they end, checked nested."""
    open_, out, last = {}, {}, {}
    for seq, ev in enumerate(events):
        if ev['ph'] == 'M':
            continue
        tid, t = ev['tid'], ns(ev['ts'])
        check(t >= last.get(tid, 0), 'tid %d: time goes back at %r' % (tid, ev))
        last[tid] = t
        stack = open_.setdefault(tid, [])
        if ev['ph'] == 'B':
            stack.append([ev['name'], ev['cat'], t, seq])
            continue
        check(stack, 'tid %d: E with nothing open: %r' % (tid, ev))
        name, cat, t0, bseq = stack.pop()
        check(name == ev['name'] and cat == ev.get('cat'), 'tid %d: E %r %r closes B %r %r'
              % (tid, ev['name'], ev.get('cat'), name, cat))
        out.setdefault(tid, []).append((name, cat, t0, t, len(stack), bseq))
    for tid, stack in open_.items():
        check(not stack, 'tid %d: %d slices never end' % (tid, len(stack)))
    for tid, sl in out.items():
        check_nesting(tid, sl)
    return out


def check_nesting(tid, sl):
    """Each slice lies within the slice one level up that contains its start."""
    by_start = sorted(sl, key=lambda s: s[5])
    parents = []
    for s in by_start:
        del parents[s[4]:]
        if s[4]:
            check(len(parents) == s[4], 'tid %d: no parent for %r' % (tid, s))
            p = parents[-1]
            check(p[2] <= s[2] and s[3] <= p[3], 'tid %d: %r outside its parent %r'
                  % (tid, s, p))
        parents.append(s)


def profile_calls(path):
    """calls per function from profile.txt (its first table), by the name
    it shows (NAME (SRC:LINE), NAME [C])."""
    calls, on = {}, False
    with open(path, encoding='utf-8', errors='replace') as f:
        for line in f:
            if line.startswith('By self time'):
                on = True
            elif on and not line.strip():
                break
            elif on:
                m = PROFILE_RE.match(line)
                if m:
                    calls[m.group(2)] = calls.get(m.group(2), 0) + int(m.group(1))
    check(calls, 'no functions in %s' % path)
    return calls


def check_calls(slices, profile, cwd):
    """Calls per function in the chrome tracks (folded labels, named as
    profile.txt names them: ./ and the working directory off a source)
    against profile.txt's."""
    counted, snap = {}, set()
    for sl in slices.values():
        for label, cat, *_ in sl:
            name = corpus.human_label(label, cwd)
            if 'snapshot' in cat.split(','):
                snap.add(name)
            else:
                counted[name] = counted.get(name, 0) + 1
    n = 0
    for name in set(counted) | set(profile):
        if name in snap:
            continue
        check(counted.get(name, 0) == profile.get(name, 0),
              '%s: %d calls in the timeline, %d in profile.txt'
              % (name, counted.get(name, 0), profile.get(name, 0)))
        n += 1
    return n


def check_chrome(path, session, folded_total):
    with open(path, encoding='utf-8') as f:
        d = json.load(f)
    check(isinstance(d, dict) and isinstance(d.get('traceEvents'), list), 'no traceEvents')
    check(d.get('displayTimeUnit') in ('ms', 'ns'), 'bad displayTimeUnit')
    evs = d['traceEvents']
    for ev in evs:
        check_event_fields(ev)
    check(len({ev['pid'] for ev in evs}) == 1, 'several pids')
    meta = {(ev['name'], ev['tid']): ev['args'] for ev in evs if ev['ph'] == 'M'}
    check(('process_name', 0) in meta, 'no process_name')
    sl = slices_of(evs)
    for tid in sl:
        name = meta.get(('thread_name', tid), {}).get('name')
        check(name == 'main' if tid == 1 else re.match(r'^coroutine %d \(.+\)$' % (tid - 1),
                                                       name or ''),
              'track %d named %r' % (tid, name))
        check(meta.get(('thread_sort_index', tid)) == {'sort_index': tid},
              'track %d not sorted' % tid)
    top = sum(s[3] - s[2] for s in sl.get(1, []) if s[4] == 0)
    traced = session['traced_ns']
    tol = 2 + len(sl.get(1, [])) + folded_total[1]
    check(abs(top - folded_total[0]) <= tol and top <= traced + 2,
          'main track top-level slices %d ns, traced_ns %d, time inside frames %d'
          % (top, traced, folded_total[0]))
    return d, sl, top

# }======================================================================


# {======================================================================
# trace.speedscope.json

def check_evented(path, chrome_sl, chrome_names, folded, cwd):
    with open(path, encoding='utf-8') as f:
        d = json.load(f)
    check(d['$schema'] == views.SCHEMA_URL, 'bad $schema')
    frames = d['shared']['frames']
    profs = d['profiles']
    check(len(profs) == len(chrome_names) + 1, '%d profiles for %d tracks'
          % (len(profs), len(chrome_names)))
    for k, p in enumerate(profs[:-1]):
        check(p['type'] == 'evented' and p['unit'] == 'nanoseconds'
              and p['name'] == chrome_names[k + 1], 'bad evented profile header %r'
              % {a: b for a, b in p.items() if a != 'events'})
        stack, last, got = [], p['startValue'], []
        for e in p['events']:
            check(isinstance(e['frame'], int) and 0 <= e['frame'] < len(frames),
                  'bad frame %r' % e)
            check(e['at'] >= last and e['at'] <= p['endValue'], 'time goes back: %r' % e)
            last = e['at']
            if e['type'] == 'O':
                stack.append((e['frame'], e['at']))
            else:
                check(stack and stack[-1][0] == e['frame'], '%s: close %r, top %r'
                      % (p['name'], e, stack[-1:]))
                f, t0 = stack.pop()
                got.append((t0, e['at'], len(stack)))
        check(not stack, '%s: %d frames left open' % (p['name'], len(stack)))
        want = [s[2:5] for s in chrome_sl.get(k + 1, [])]
        check(got == want, '%s: evented frames differ from the chrome track' % p['name'])
    s = profs[-1]
    check(s['type'] == 'sampled', 'last profile is %s' % s['type'])
    got = {}
    for smp, w in zip(s['samples'], s['weights']):
        key = ';'.join(views.frame_label(frames[i], cwd) for i in smp)
        got[key] = got.get(key, 0) + w
    check(got == folded, 'sampled profile differs from the folded stacks')
    return len(profs) - 1


def events_only(path):
    """What a report must repeat: the events, without pid and process name."""
    with open(path, encoding='utf-8') as f:
        d = json.load(f)
    evs = d['traceEvents'] if 'traceEvents' in d else d['profiles']
    out = []
    for ev in evs:
        if isinstance(ev, dict) and ev.get('name') == 'process_name':
            continue
        ev = dict(ev)
        ev.pop('pid', None)
        if ev.get('type') == 'sampled':
            ev.pop('name')  # named after the session, or the trace's path
        out.append(ev)
    return out

# }======================================================================


# {======================================================================
# Chrome DevTools' trace engine, through npm

DEVTOOLS_PACKAGE = '@paulirish/trace_engine@0.0.65'
DEVTOOLS_JS = r'''
import {analyzeTrace} from '@paulirish/trace_engine/analyze-trace.mjs';
const {parsedTrace} = await analyzeTrace(process.argv[2]);
const out = {};
for (const [pid, p] of parsedTrace.data.Renderer.processes)
  for (const [tid, t] of p.threads)
    out[tid] = {name: t.name, entries: t.entries.length, roots: t.tree.roots.size};
console.log(JSON.stringify(out));
'''


def install_devtools(tmp):
    """A script running DevTools' trace engine, or None with a note."""
    npm = shutil.which('npm')
    prefix = os.path.join(tmp, 'npm-devtools')
    res = harness.run([npm, 'install', '--prefix', prefix, '--no-audit', '--no-fund',
                      DEVTOOLS_PACKAGE], tmp, harness.base_env(), 240) if npm else None
    if not res or res.status != 0 or not shutil.which('node'):
        print('NOTE: cannot install %s: DevTools check skipped' % DEVTOOLS_PACKAGE)
        return None
    script = os.path.join(prefix, 'devtools.mjs')
    with open(script, 'w') as f:
        f.write(DEVTOOLS_JS)
    return script


def check_devtools(script, path, sl, names, tmp):
    """The engine of Chrome's Performance panel reads every track, named,
    with every slice, nested: no B/E mismatch."""
    res = harness.run([shutil.which('node'), script, path], tmp, harness.base_env(), 120)
    err = res.err.decode(errors='replace')
    check(res.status == 0 and 'mismatch' not in err, 'DevTools trace engine on %s: %s'
          % (path, harness.show_bytes(res.out + res.err)))
    got = json.loads(res.out.decode().strip().splitlines()[-1])
    for tid, s in sl.items():
        g = got.get(str(tid))
        roots = sum(1 for x in s if x[4] == 0)
        check(g == {'name': names[tid], 'entries': len(s), 'roots': roots},
              'DevTools reads track %d as %r, not %r' % (tid, g, (names[tid], len(s), roots)))

# }======================================================================


# {======================================================================

def one(args, prog, tmp, npm, devtools):
    path = os.path.abspath(prog)
    name = os.path.splitext(os.path.basename(path))[0]
    outdir = os.path.join(tmp, 'out-' + name)
    os.mkdir(outdir)
    res = harness.run([args.recorderd, 'run', '--quiet', '--out', outdir, '--backend', 'chrome',
                      '--backend', 'speedscope-evented', '--', args.lua, os.path.basename(path)],
                     os.path.dirname(path), harness.base_env())
    check(res.status is not None and res.status < 128, 'recorderd run died: %r' % res.status)
    session = harness.find_session(outdir)
    with open(os.path.join(session, 'session.json')) as f:
        sj = json.load(f)
    check(sj['error'] == '', 'session error %r' % sj['error'])
    folded_path = os.path.join(tmp, name + '.folded')
    views.run_ok([args.recorderd, 'report', session, '--format', 'folded', '--weight', 'time',
                  '-o', folded_path], tmp)
    folded = views.read_folded(folded_path)
    chrome_path = os.path.join(session, 'trace.chrome.json')
    d, sl, top = check_chrome(chrome_path, sj, (sum(folded.values()), len(folded)))
    ncalls = check_calls(sl, profile_calls(os.path.join(session, 'profile.txt')), sj.get('cwd'))
    names = {ev['tid']: ev['args']['name'] for ev in d['traceEvents']
             if ev['ph'] == 'M' and ev['name'] == 'thread_name'}
    evjs = os.path.join(session, 'trace.speedscope.json')
    nprof = check_evented(evjs, sl, names, folded, sj.get('cwd'))
    for fmt, fname in (('chrome', 'trace.chrome.json'),
                       ('speedscope-evented', 'trace.speedscope.json')):
        out = os.path.join(tmp, name + '-' + fname)
        r = views.run_ok([args.recorderd, 'report', session, '--format', fmt, '-o', out], tmp)
        check(events_only(out) == events_only(os.path.join(session, fname)),
              'report --format %s differs from the session\'s %s' % (fmt, fname))
        check(r.err == b'recorderd report: wrote %s\n' % out.encode(),
              'report --format %s -o FILE said %r' % (fmt, r.err))
        # no -o: the backend's own file in the working directory, said so
        here = os.path.join(tmp, name + '-here-' + fmt)
        os.mkdir(here)
        r = views.run_ok([args.recorderd, 'report', session, '--format', fmt], here)
        check(os.listdir(here) == [fname] and r.err == b'recorderd report: wrote %s\n' % fname.encode(),
              'report --format %s: wrote %s, said %r' % (fmt, os.listdir(here), r.err))
    views.validate_offline(evjs, tmp)
    views.validator_can_fail(evjs, tmp)
    extra = ', speedscope format valid'
    if npm:
        views.validate(npm, evjs, tmp)
        extra += ', speedscope schema valid'
    if devtools:
        check_devtools(devtools, chrome_path, sl, names, tmp)
        extra += ', DevTools reads it'
    print('%s: %d tracks, %d slices, main %d ns of %d traced, %d functions\' calls agree, '
          '%d evented profiles%s'
          % (name, len(names), sum(len(s) for s in sl.values()), top, sj['traced_ns'], ncalls,
             nprof, extra))


def main(argv):
    def body(args, tmp):
        npm = None if args.no_npm else views.install_npm(tmp)
        devtools = None if args.no_npm else install_devtools(tmp)
        for prog in args.programs:
            one(args, prog, tmp, npm, devtools)
    return harness.program_main(
        argv, __doc__, 'luatrace-timeline-', body, (ValueError, KeyError, TypeError, IndexError),
        lambda ap: ap.add_argument('--no-npm', action='store_true', help='skip the schema check'))

# }======================================================================


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
