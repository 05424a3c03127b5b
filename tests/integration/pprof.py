#!/usr/bin/env python3
"""Check recorderd's profile.pb.gz with `go tool pprof` (Debian golang-go).

  pprof.py --recorderd PATH [--lua lua5.1] PROGRAM...

Runs each Lua PROGRAM under `recorderd run` (from its own directory, in a
temporary output directory, always removed), then:
  - `go tool pprof -raw` reads the profile: sample types time/nanoseconds
    (the default) and lines/count; the mapping (pprof's File:) is the
    session's name; the time values add up to the session's
    traced_ns (profile.txt's traced time) within 1 ns, the line values to
    the line-weighted folded stacks;
  - `-top -sample_index=time` (every node kept, in ns) gives each function
    the self time of profile.txt (functions of the same label added up),
    within profile.txt's rounding, and the same top function;
  - `-traces` lists one stack per sample, each with a known function;
  - `recorderd report S --format pprof -o F` gives the same samples;
  - every sample has exactly one label, coroutine=NAME, and the names are
    the track names of `recorderd report S --format chrome` (rd_timeline
    numbers and names its tracks by code of its own); `-tags` lists them
    with the totals of the -raw samples, and `-tagfocus` on each keeps
    exactly its samples' time.
A program of the test's own, WORKERS, runs one function in three
coroutines resumed from one line (so their stacks are the same) doing
different amounts of work: each coroutine's samples must be apart, with
the line events a line hook of its own counts in an untraced run. Another,
SPAWN, runs 6000 short coroutines of two functions to their end, and from
the 1500th on keeps two coroutines of one function suspended: the first
1000 to end keep labels of their own, the later ones are labelled
`coroutine * (LABEL)` of their function, and the line events per function
and of each long-lived coroutine are what their hooks count untraced
(recorderd folds ended coroutines while the second long-lived one's frames
hold shares that move).
Go needs a writable HOME and GOCACHE: both go to the temporary directory.
Exit status: 0 pass, 1 fail, 77 skipped (no recorderd, no go).
"""

import gzip
import json
import os
import re
import shutil
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

# pprof prints a percentage under 1% with %5.2g: 9.8e-05% for 20 ns in 20 ms
PCT = r'[\d.]+(?:e[-+]\d+)?%'
TOP_ROW = re.compile(r'^\s*(\d+)ns\s+%s\s+%s\s+(\d+)ns\s+%s\s+(\S.*)$' % (PCT, PCT, PCT))
TAG_ROW = re.compile(r'^\s+(\S+)\s+\(\s*%s\):\s(.+)$' % PCT)
PROFILE_ROW = re.compile(r'^\s*\d+\s+([\d.]+)\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+(\S.*)$')


# The same function in three coroutines, resumed from one line. With
# TRUTH=1 (untraced) each coroutine counts its own line events with a hook
# of its own (hooks are per coroutine in Lua 5.1) and prints them in the
# order the coroutines first ran.
WORKERS = '''local truth, order, count = os.getenv("TRUTH") == "1", {}, {}
local function worker(n)
  local s = 0
  for i = 1, n do
    for j = 1, i do s = s + j end
    coroutine.yield(s)
  end
  return s
end
local work, cos = {3, 12, 40}, {}
for k = 1, #work do
  local co = coroutine.create(worker)
  cos[k] = co
  if truth then
    count[co] = 0
    debug.sethook(co, function()
      if count[co] == 0 then order[#order + 1] = co end
      count[co] = count[co] + 1
    end, "l")
  end
end
local live = #cos
while live > 0 do
  live = 0
  for k = 1, #cos do
    if coroutine.status(cos[k]) ~= "dead" then
      coroutine.resume(cos[k], work[k])
      live = live + 1
    end
  end
end
if truth then
  for k = 1, #order do print("coroutine " .. k .. " " .. count[order[k]]) end
end
'''
WORKER_LINES = 2  # `local function worker(n)` is line 2 of WORKERS

# With TRUTH=1 (untraced) each coroutine counts its line events into its
# function's count (the long-lived one's: its own) with a hook of its own.
SPAWN = '''local truth, n, count = os.getenv("TRUTH") == "1", tonumber(arg[1]), {}
local function evens(m)
  for i = 2, m, 2 do coroutine.yield(i) end
end
local function odds(m)
  for i = 1, m, 2 do coroutine.yield(i) end
end
local function watch(co, key)
  if not truth then return end
  count[key] = count[key] or 0
  debug.sethook(co, function() count[key] = count[key] + 1 end, "l")
end
local function keep()
  local s = 0
  while true do s = s + coroutine.yield(s) end
end
local keepers = {}
local total = 0
for k = 1, n do
  if k == 1500 then -- past the kept ones: their shares come after folded ones
    for i = 1, 2 do
      keepers[i] = coroutine.create(keep)
      watch(keepers[i], "keeper" .. i)
      coroutine.resume(keepers[i])
    end
  end
  local body = k % 2 == 0 and evens or odds
  local co = coroutine.create(body)
  watch(co, body == evens and "evens" or "odds")
  local _, v = coroutine.resume(co, 6)
  while coroutine.status(co) ~= "dead" do
    total = total + v
    if keepers[1] then coroutine.resume(keepers[k % 2 + 1], v) end
    _, v = coroutine.resume(co)
  end
end
if truth then
  for key, c in pairs(count) do print(key .. " " .. c) end
end
'''
SPAWN_LINES = {'evens': 2, 'odds': 5, 'keep': 13}  # where each function starts
SPAWN_N = 6000
KEPT = 1000  # ended coroutines labelled apart (rd_model.h RD_TRACKS_KEPT)


check = harness.expect


def run_ok(cmd, cwd, env=None):
    return harness.run_ok(cmd, cwd, 180, env).out.decode('utf-8', 'replace')


def go_env(tmp):
    env = harness.base_env()
    env['HOME'] = tmp
    env['GOCACHE'] = os.path.join(tmp, 'gocache')
    env['GOPATH'] = os.path.join(tmp, 'gopath')
    env.pop('PPROF_TMPDIR', None)
    return env


def pprof(args, tmp, path, *opts):
    return run_ok([args.go, 'tool', 'pprof'] + list(opts) + [path], tmp, go_env(tmp))


def read_raw(text):
    """Sample types, then [(time, lines, location ids, {label: [values]})]
    of `pprof -raw`: a sample's labels are the lines below it."""
    head, _, rest = text.partition('\nSamples:\n')
    check(rest, 'no Samples: in pprof -raw output:\n' + text[:600])
    lines = rest.split('\n')
    types = lines[0].split()
    samples = []
    for line in lines[1:]:
        m = re.match(r'^\s+(\d+)\s+(\d+):((?: \d+)+) ?$', line)
        lab = re.match(r'^\s+([^\s:]+):\[(.*)\]$', line)
        if m:
            samples.append((int(m.group(1)), int(m.group(2)), m.group(3).split(), {}))
        elif lab and samples:
            labels = samples[-1][3]
            labels.setdefault(lab.group(1), []).append(lab.group(2))
        else:
            break
    return types, samples


def read_profile_txt(path):
    """{label: self ms} (labels alike added up) of profile.txt's self table."""
    selfs, in_self = {}, False
    with open(path) as f:
        for line in f:
            if line.startswith('By self time'):
                in_self = True
            elif line.startswith('By total time'):
                break
            m = PROFILE_ROW.match(line) if in_self else None
            if m:
                label = m.group(2)
                selfs[label] = selfs.get(label, 0.0) + float(m.group(1))
    check(selfs, 'no functions in ' + path)
    return selfs


def folded_total(args, session, tmp):
    path = os.path.join(tmp, 'lines.folded')
    run_ok([args.recorderd, 'report', session, '--format', 'folded', '--weight', 'lines',
            '-o', path], tmp)
    with open(path) as f:
        return sum(int(line.rsplit(' ', 1)[1]) for line in f if line.strip())


def check_top(args, tmp, pb, selfs, total):
    text = pprof(args, tmp, pb, '-top', '-sample_index=time', '-unit=ns', '-nodecount=100000',
                 '-nodefraction=0', '-edgefraction=0')
    check('Type: time' in text, 'pprof -top: no "Type: time":\n' + text[:600])
    check('Total samples = %dns' % total in text, 'pprof total is not %d ns:\n%s'
          % (total, text[:600]))
    flat = {}
    rows = text.split('\n')
    head = [i for i, line in enumerate(rows) if line.split()[:2] == ['flat', 'flat%']]
    check(head, 'pprof -top: no header row:\n' + text[:600])
    for line in rows[head[0] + 1:]:
        m = TOP_ROW.match(line)
        check(m or not line.strip(), 'pprof -top: a row not understood: %r' % line)
        if m:
            check(m.group(3) not in flat, 'pprof -top: %s twice' % m.group(3))
            flat[m.group(3)] = int(m.group(1))
    check(sum(flat.values()) == total, 'flat times add up to %d, not %d'
          % (sum(flat.values()), total))
    for label, ms in selfs.items():
        got = flat.get(label, 0) / 1e6
        # profile.txt prints each function's self to 0.001 ms
        check(abs(got - ms) <= 0.0006 * (1 + label.startswith('?')),
              '%s: self %.6f ms in pprof, %.3f in profile.txt' % (label, got, ms))
    rest = set(flat) - set(selfs) - {'(no frame)'}
    check(not rest, 'functions in pprof but not in profile.txt: %r' % sorted(rest))
    top_p = max(selfs, key=lambda k: selfs[k])
    # profile.txt lists functions only: the time with no frame at all (before
    # the first event) is pprof's alone, and may be the largest on a slow run
    top_g = max((k for k in flat if k != '(no frame)'), key=lambda k: flat[k])
    check(top_p == top_g or abs(flat[top_g] / 1e6 - selfs[top_p]) < 0.001,
          'top function %r in pprof, %r in profile.txt' % (top_g, top_p))
    return top_g


def chrome_tracks(args, session, tmp):
    """{tid - 1: thread name} of `report --format chrome`."""
    path = os.path.join(tmp, 'tracks.chrome.json')
    run_ok([args.recorderd, 'report', session, '--format', 'chrome', '-o', path], tmp)
    with open(path) as f:
        events = json.load(f)['traceEvents']
    return {e['tid'] - 1: e['args']['name'] for e in events
            if e.get('ph') == 'M' and e.get('name') == 'thread_name'}


def by_coroutine(samples):
    """{coroutine name: [time, lines]}; every sample has one coroutine label."""
    per = {}
    for t, n, locs, labels in samples:
        check(list(labels) == ['coroutine'] and len(labels['coroutine']) == 1,
              'a sample (%s) has the labels %r, not one coroutine' % (' '.join(locs), labels))
        acc = per.setdefault(labels['coroutine'][0], [0, 0])
        acc[0] += t
        acc[1] += n
    return per


def read_tags(text):
    """{value: total} of the coroutine tag in `pprof -tags -unit=ns`."""
    tags, key = {}, None
    for line in text.split('\n'):
        head = re.match(r'^\s*(\S+): Total ', line)
        if head:
            key = head.group(1)
            continue
        m = TAG_ROW.match(line)
        if m and key == 'coroutine':
            tags[m.group(2)] = m.group(1)
    return tags


def check_coroutines(args, tmp, pb, session, samples):
    """The labels against the chrome tracks, -tags and -tagfocus. A chrome
    track without samples of its own must have been folded: its label's
    `coroutine * (LABEL)` has samples. -tagfocus runs on 40 of them at most
    (main, the folded, the first)."""
    per = by_coroutine(samples)
    tracks = chrome_tracks(args, session, tmp)
    folded = {n for n in per if n.startswith('coroutine * (')}
    check(set(per) - folded <= set(tracks.values()), 'coroutine labels %r, chrome tracks %r'
          % (sorted(set(per) - folded), sorted(tracks.values())))
    for name in set(tracks.values()) - set(per):
        m = re.match(r'^coroutine \d+ (\(.*\))$', name)
        check(m and 'coroutine * ' + m.group(1) in folded,
              'chrome track %r has no samples, none folded of its label' % name)
    check(tracks.get(0) == 'main', 'the first track is %r' % tracks.get(0))
    tags = read_tags(pprof(args, tmp, pb, '-tags', '-unit=ns'))
    check(set(tags) == set(per), '-tags lists %r, the samples %r' % (sorted(tags), sorted(per)))
    for name in sorted(per, key=lambda n: (n != 'main', n not in folded, n))[:40]:
        t = per[name][0]
        check(tags[name] in ('%dns' % t, '%d.0ns' % t),
              '-tags: %s %s, its samples %d ns' % (name, tags[name], t))
        focus = '-tagfocus=coroutine=^%s$' % re.escape(name)
        top = pprof(args, tmp, pb, '-top', '-unit=ns', '-nodecount=100000', '-nodefraction=0',
                    '-edgefraction=0', focus)
        want = 'Total samples = %dns' % sum(s[0] for s in samples)
        got = re.search(r'Showing nodes accounting for (\d+)ns, ', top)
        check(want in top and got and int(got.group(1)) == t,
              '%s: -tagfocus keeps %s ns, its samples %d ns:\n%s'
              % (focus, got and got.group(1), t, top[:600]))
    return per, tracks


def one(args, prog, tmp, *prog_args):
    name, session = harness.record(args, prog, tmp, 'pprof', *prog_args, timeout=180)
    pb = os.path.join(session, 'profile.pb.gz')
    with open(pb, 'rb') as f:
        check(f.read(2) == b'\x1f\x8b', 'profile.pb.gz is not gzipped')
    string_table(pb)
    with open(os.path.join(session, 'session.json')) as f:
        traced = json.load(f)['traced_ns']
    raw = pprof(args, tmp, pb, '-raw')
    types, samples = read_raw(raw)
    check(types == ['time/nanoseconds[dflt]', 'lines/count'], 'sample types %r' % types)
    total = sum(s[0] for s in samples)
    check(abs(total - traced) <= 1, 'samples add up to %d ns, traced_ns is %d' % (total, traced))
    lines = sum(s[1] for s in samples)
    check(lines == folded_total(args, session, tmp),
          'line events %d differ from the folded stacks' % lines)
    check('Duration: ' in raw and 'PeriodType: time nanoseconds' in raw and 'Time: ' in raw,
          'no time, duration or period type:\n' + raw[:400])
    # the mapping is the script (app for lua5.1 app.lua): pprof prints it
    # as File: and names the profiles it saves after it (the whole command
    # put spaces in that file name). The session is named so too, but for
    # the .PID suffix it takes when another run of the same script holds
    # that name (the suite runs coroutines.lua in several tests at once).
    session_name = json.load(open(os.path.join(session, 'session.json')))['session']
    check(re.fullmatch(r'%s(\.\d+)*' % re.escape(name), session_name),
          'session %s is not named after %s' % (session_name, name))
    check(re.search(r'^Mappings\n1: \S+ %s  ' % re.escape(name), raw, re.M),
          'the mapping is not %s:\n%s' % (name, raw[raw.find('Mappings'):][:200]))
    top = check_top(args, tmp, pb, read_profile_txt(os.path.join(session, 'profile.txt')),
                    total)
    traces = pprof(args, tmp, pb, '-traces')
    blocks = [b for b in traces.split('-----------+') if re.search(r'^\s+\d', b, re.M)]
    check(len(blocks) == len(samples), '%d traces, %d samples' % (len(blocks), len(samples)))
    again = os.path.join(tmp, name + '.pb.gz')
    run_ok([args.recorderd, 'report', session, '--format', 'pprof', '-o', again], tmp)
    check(read_raw(pprof(args, tmp, again, '-raw'))[1] == samples,
          'report --format pprof gives other samples')
    per, _ = check_coroutines(args, tmp, pb, session, samples)
    print('%s: %d samples, %d ns, %d line events, top %s, %d coroutines'
          % (name, len(samples), total, lines, top, len(per)))
    return session, samples


def varint(b, at):
    v = shift = 0
    while True:
        c = b[at]
        at += 1
        v |= (c & 0x7f) << shift
        shift += 7
        if c < 0x80:
            return v, at


def string_table(pb):
    """profile.proto's string_table (field 6), each decoded as strict UTF-8,
    as proto3 readers do (a UnicodeDecodeError fails the test)."""
    with gzip.open(pb) as f:
        b = f.read()
    at, strs = 0, []
    while at < len(b):
        key, at = varint(b, at)
        kind = key & 7
        if kind == 0:
            _, at = varint(b, at)
        elif kind == 2:
            n, at = varint(b, at)
            if key >> 3 == 6:
                strs.append(b[at:at + n].decode('utf-8'))
            at += n
        else:
            at += 8 if kind == 1 else 4
    return strs


# names that are no UTF-8, or that the 1023-byte cut of a name would split
# inside a character
BAD_BYTES = '''_G["\\255"] = function() return 1 end
_G[string.rep("\\195\\169", 600)] = function() return 2 end
print(_G["\\255"]() + _G[string.rep("\\195\\169", 600)]())
'''


def bad_bytes(args, tmp):
    prog = os.path.join(tmp, 'bad_bytes.lua')
    with open(prog, 'w') as f:
        f.write(BAD_BYTES)
    outdir = os.path.join(tmp, 'out-bad-bytes')
    run_ok([args.recorderd, 'run', '--quiet', '--time', 'exact', '--out', outdir, '--format', 'pprof',
            '--', args.lua, 'bad_bytes.lua'],
           tmp)
    strs = string_table(os.path.join(harness.find_session(outdir), 'profile.pb.gz'))
    check('\ufffd' in strs and any(s.startswith('\u00e9' * 500) for s in strs),
          'the names of bad_bytes.lua: %r' % [s[:20] for s in strs])
    print('bad_bytes: %d strings, all UTF-8' % len(strs))


def truth_run(args, tmp, name, text, *argv):
    """Writes text as NAME.lua in a directory of its own and runs it
    untraced with TRUTH=1; returns its path and its output."""
    src = os.path.join(tmp, name)
    os.mkdir(src)
    prog = os.path.join(src, name + '.lua')
    with open(prog, 'w') as f:
        f.write(text)
    env = harness.base_env()
    env['TRUTH'] = '1'
    res = harness.run([args.lua, name + '.lua'] + list(argv), src, env)
    check(res.status == 0, '%s.lua (untraced) failed:\n%s' % (name, harness.show_bytes(res.err)))
    return prog, res.out.decode()


def workers(args, tmp):
    """WORKERS: each coroutine's line events as its own hook counts them."""
    prog, out = truth_run(args, tmp, 'workers', WORKERS)
    truth = {}
    for line in out.split('\n'):
        if line:
            k, n = re.match(r'^coroutine (\d+) (\d+)$', line).groups()
            truth[int(k)] = int(n)
    check(sorted(truth) == [1, 2, 3], 'workers.lua printed %r' % out)
    session, samples = one(args, prog, tmp)
    per = by_coroutine(samples)
    for k, n in truth.items():
        name = 'coroutine %d (function@workers.lua:%d)' % (k, WORKER_LINES)
        check(name in per, 'no samples labelled %r: %r' % (name, sorted(per)))
        check(per[name][1] == n, '%s: %d line events, its hook counted %d'
              % (name, per[name][1], n))
    stacks = {}
    for t, n, locs, labels in samples:
        stacks.setdefault(' '.join(locs), set()).add(labels['coroutine'][0])
    shared = [s for s, names in stacks.items() if len(names) == 3]
    check(shared, 'no stack is a sample in each of the three coroutines')
    print('workers: %s' % ', '.join('coroutine %d: %d line events' % kv
                                     for kv in sorted(truth.items())))


def spawn(args, tmp):
    """SPAWN: labels of the kept and the folded coroutines, and their line
    events against their hooks'."""
    prog, out = truth_run(args, tmp, 'spawn', SPAWN, str(SPAWN_N))
    truth = dict((k, int(v)) for k, v in re.findall(r'^(\w+) (\d+)$', out, re.M))
    check(sorted(truth) == ['evens', 'keeper1', 'keeper2', 'odds'], 'spawn.lua printed %r' % out)
    _, samples = one(args, prog, tmp, str(SPAWN_N))
    per = by_coroutine(samples)
    body = {line: key for key, line in SPAWN_LINES.items()}
    keepers = {'coroutine %d (function@spawn.lua:%d)' % (1499 + i, SPAWN_LINES['keep']):
               'keeper%d' % i for i in (1, 2)}
    want = {'main'} | set(keepers)
    want |= {'coroutine * (function@spawn.lua:%d)' % SPAWN_LINES[k] for k in ('evens', 'odds')}
    for k in range(1, KEPT + 1):  # the kth spawned
        key = 'evens' if k % 2 == 0 else 'odds'
        want.add('coroutine %d (function@spawn.lua:%d)' % (k, SPAWN_LINES[key]))
    check(set(per) == want, 'labels: %d, %d more than the kept and folded ones (%r), %d missing '
          '(%r)' % (len(per), len(set(per) - want), sorted(set(per) - want)[:5],
                    len(want - set(per)), sorted(want - set(per))[:5]))
    lines = {}
    for name, (_, n) in per.items():
        m = re.match(r'^coroutine [\d*]+ \(function@spawn\.lua:(\d+)\)$', name)
        if m:
            key = keepers.get(name) or body[int(m.group(1))]
            lines[key] = lines.get(key, 0) + n
    check(lines == truth, 'line events per function %r, their hooks counted %r' % (lines, truth))
    print('spawn: %d labels; line events %r as their hooks count' % (len(per), lines))


def main(argv):
    def body(args, tmp):
        args.go = shutil.which('go') or shutil.which('go', path='/usr/lib/go/bin')
        if not args.go:
            print('SKIP: go not installed (Debian golang-go): go tool pprof not available')
            return harness.SKIP
        for prog in args.programs:
            one(args, prog, tmp)
        workers(args, tmp)
        spawn(args, tmp)
        bad_bytes(args, tmp)
    return harness.program_main(argv, __doc__, 'luatrace-pprof-', body,
                                (ValueError, KeyError, AttributeError, IndexError))


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
