#!/usr/bin/env python3
"""User backends in Lua (`--backend lua:FILE`), run by a real recorderd.

  luabk.py CASE --recorderd PATH --lua lua5.1 --root SOURCE_ROOT [PROGRAM...]

CASE is one of:
  examples  scripts/backends/linehits.lua and slowcalls.lua on PROGRAMs: the
            per-line hits equal coverage.lcov's; the slow calls are exactly
            the slow ones of a program made for it; `report` rebuilds both
  folded    a backend folding stacks from enter/leave/line/thread must give
            exactly `report --format folded --weight lines`, for each PROGRAM
  error     a backend raising in record(): traceback on stderr, the session
            complete with its reports, a second backend still written
  syntax    a backend that does not compile, or returns no table
  sequence  the record() calls of a small program, against a list derived
            by hand from the program (see SEQUENCE)
Exit status: 0 pass, 1 fail, 77 skipped (recorderd does not exist).
"""

import json
import os
import re
import shutil
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402
import harness  # noqa: E402
from harness import cases, expect as check  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
TESTBK = os.path.join(HERE, 'luabk')


def run(cmd, cwd, env=None):
    e = harness.base_env()
    e.update(env or {})
    return harness.run(cmd, cwd, e)


def run_ok(cmd, cwd, env=None):
    e = harness.base_env()
    e.update(env or {})
    return harness.run_ok(cmd, cwd, env=e, limit=3000)


def programs(args, *names):
    """The corpus programs tests/lua/NAME.lua a case runs."""
    return [os.path.abspath(os.path.join(args.root, 'tests', 'lua', n + '.lua')) for n in names]


def traced(args, prog, tmp, backends, env=None, name='out', formats=None):
    """Runs lua PROG (in its directory) under recorderd run with backends
    (and the reports formats, besides the default ones); returns the
    result and the session directory."""
    out = os.path.join(tmp, name)
    os.mkdir(out)
    cmd = [args.recorderd, 'run', '--quiet', '--out', out]
    if formats:
        cmd += ['--format', formats]
    for b in backends:
        cmd += ['--backend', 'lua:' + b]
    cmd += ['--', args.lua, os.path.basename(prog)]
    return run(cmd, os.path.dirname(os.path.abspath(prog)), env), out


def session_of(res, out, any_status=False):
    check(any_status or res.status == 0, 'recorderd run exited with %s:\n%s'
          % (res.status, corpus.show_bytes(res.err, 3000)))
    s = harness.find_session(out)
    with open(os.path.join(s, 'session.json')) as f:
        j = json.load(f)
    check(j['status'] == 'complete', 'session %s' % j['status'])
    return s, j


# {======================================================================
# examples

def lcov_hits(path, cwd):
    """{(absolute file, line): hits} of the lines hit; a relative SF is a
    file under the program's working directory cwd."""
    hits, sf = {}, None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith('SF:'):
                sf = os.path.join(cwd, line[3:])
            elif line.startswith('DA:'):
                ln, n = line[3:].split(',')[:2]
                if int(n):
                    hits[(sf, int(ln))] = int(n)
    return hits


def linehits(path, cwd):
    """{(absolute file, line): hits} of linehits.txt, for files that exist."""
    hits = {}
    with open(path) as f:
        lines = f.read().splitlines()
    check(lines[0].split() == ['HITS', 'MS', 'FILE:LINE'], 'bad header %r' % lines[0])
    for line in lines[1:]:
        m = re.match(r'^ *(\d+) +(\d+\.\d{3})  (.*):(\d+)  #+$', line)
        check(m, 'bad linehits line %r' % line)
        src = os.path.normpath(os.path.join(cwd, m.group(3)))
        if os.path.isfile(src):
            hits[(src, int(m.group(4)))] = int(m.group(1))
    return hits


def case_examples(args, tmp):
    bk = os.path.join(args.root, 'scripts', 'backends')
    hits_bk, slow_bk = os.path.join(bk, 'linehits.lua'), os.path.join(bk, 'slowcalls.lua')
    for i, prog in enumerate(programs(args, 'coroutines', 'errors_pcall', 'tail_calls', 'modules')):
        res, out = traced(args, prog, tmp, [hits_bk, slow_bk], name='ex%d' % i)
        s, j = session_of(res, out)
        want = lcov_hits(os.path.join(s, 'coverage.lcov'), j['cwd'])
        got = linehits(os.path.join(s, 'linehits.txt'), j['cwd'])
        check(got == want, '%s: linehits differ from coverage.lcov:\n%s'
              % (prog, sorted(set(got.items()) ^ set(want.items()))[:20]))
        again = os.path.join(tmp, 'again%d.txt' % i)
        run_ok([args.recorderd, 'report', s, '--format', 'lua:' + hits_bk, '-o', again], tmp)
        check(linehits(again, j['cwd']) == got, 'report rebuilds other linehits')
        print('ok: linehits of %s: %d lines' % (os.path.basename(prog), len(got)))
    slow_program(args, tmp, slow_bk)


SLOW = '''local function fast(x) return x * 2 end
local function slow() os.execute("sleep 0.05") end
for i = 1, 200 do fast(i) end
for i = 1, 3 do slow() end
'''


def slow_calls(path):
    with open(path) as f:
        lines = f.read().splitlines()
    check(lines[0] == '# calls of 20 ms or more', 'bad first line %r' % lines[0])
    rows = []
    for line in lines[2:]:
        m = re.match(r'^ *(\d+\.\d{3}) +(\d+)  (\w+) +(.+?)  (.+)$', line)
        check(m, 'bad slowcalls line %r' % line)
        rows.append((float(m.group(1)), int(m.group(2)), m.group(3), m.group(4), m.group(5)))
    return rows


def slow_program(args, tmp, slow_bk):
    prog = os.path.join(tmp, 'slow.lua')
    with open(prog, 'w') as f:
        f.write(SLOW)
    env = {'LUATRACE_SLOW_MS': '20'}
    res, out = traced(args, prog, tmp, [slow_bk], env, name='slow')
    s, _ = session_of(res, out)
    rows = slow_calls(os.path.join(s, 'slowcalls.txt'))
    # each slow() spends its 50 ms in os.execute; the main chunk and the
    # interpreter's C entry hold them all; fast() never comes near 20 ms
    labels = [r[3] for r in rows]
    check(labels == ['os.execute@[C]', 'slow@slow.lua:2'] * 3 + ['main chunk@slow.lua:0', 'lua5.1@[C]'],
          'slow calls: %r' % rows)
    check(all(r[2] == 'return' and r[0] >= 45 for r in rows), 'slow calls: %r' % rows)
    check([r[4] for r in rows[:2]] == ['slow@slow.lua:2', 'main chunk@slow.lua:0'],
          'callers: %r' % rows)
    again = os.path.join(tmp, 'slow-again.txt')
    run_ok([args.recorderd, 'report', s, '--format', 'lua:' + slow_bk, '-o', again], tmp, env)
    check([r[3] for r in slow_calls(again)] == labels, 'report rebuilds other slow calls')
    print('ok: slowcalls: %d calls' % len(rows))

# }======================================================================


# {======================================================================
# folded

def read_folded(path):
    d = {}
    with open(path) as f:
        for line in f:
            k, _, n = line.rstrip('\n').rpartition(' ')
            d[k] = d.get(k, 0) + int(n)
    return {k: v for k, v in d.items() if v}


def case_folded(args, tmp):
    bk = os.path.join(TESTBK, 'folded.lua')
    for i, prog in enumerate(programs(args, 'coroutines', 'coroutines_nested', 'coroutine_wrap',
                                      'errors_pcall', 'errors_xpcall', 'tail_calls',
                                      'exit_coroutine', 'c_callbacks')):
        res, out = traced(args, prog, tmp, [bk], name='f%d' % i)
        s, _ = session_of(res, out, any_status=True)  # some programs exit non-zero
        want_path = os.path.join(tmp, 'want%d.folded' % i)
        run_ok([args.recorderd, 'report', s, '--format', 'folded', '--weight', 'lines',
                '-o', want_path], tmp)
        want = read_folded(want_path)
        got = read_folded(os.path.join(s, 'luabk.folded'))
        check(got == want, '%s: stacks differ:\n%s' % (prog, corpus.diff('lines', want, got)))
        odir = os.path.join(tmp, 'odir%d' % i)
        os.mkdir(odir)
        run_ok([args.recorderd, 'report', s, '--backend', 'lua:' + bk, '-o', odir], tmp)
        check(read_folded(os.path.join(odir, 'luabk.folded')) == want, 'report -o DIR differs')
        print('ok: %s: %d stacks' % (os.path.basename(prog), len(want)))

# }======================================================================


# {======================================================================
# error, syntax

def case_error(args, tmp):
    prog = programs(args, 'errors_pcall')[0]
    hits_bk = os.path.join(args.root, 'scripts', 'backends', 'linehits.lua')
    fail_bk = os.path.join(TESTBK, 'failing.lua')
    plain = run([args.lua, os.path.basename(prog)], os.path.dirname(os.path.abspath(prog)))
    res, out = traced(args, prog, tmp, [fail_bk, hits_bk], formats='folded,callgrind')
    check(res.status == plain.status and res.out == plain.out,
          'the program ran differently: %s vs %s' % (res.status, plain.status))
    err = res.err.decode('utf-8', 'replace')
    check(res.err.startswith(plain.err), 'program stderr changed:\n%s' % err)
    err = err[len(plain.err.decode('utf-8', 'replace')):]
    check(re.search(r'^recorderd: backend lua:\S*failing\.lua: \S*failing\.lua:5: exploding '
                    r'on record 50 ', err, re.M), 'no error message:\n%s' % err)
    check('stack traceback:' in err and "in function 'explode'" in err
          and "in function <" in err, 'no traceback:\n%s' % err)
    check(err.count('recorderd: backend') == 1, 'reported more than once:\n%s' % err)
    s = harness.find_session(out)
    with open(os.path.join(s, 'session.json')) as f:
        j = json.load(f)
    check(j['status'] == 'complete', 'session %s' % j['status'])
    check('failing.lua' in j['error'] and 'exploding on record 50' in j['error'],
          'session.json error: %r' % j['error'])
    for name in ('profile.txt', 'stacks.folded', 'coverage.lcov', 'callgrind.out', 'trace.ltr'):
        check(os.path.getsize(os.path.join(s, name)) > 0, name + ' missing')
    want = os.path.join(tmp, 'want.folded')
    run_ok([args.recorderd, 'report', s, '--format', 'folded', '-o', want], tmp)
    check(read_folded(want) == read_folded(os.path.join(s, 'stacks.folded')),
          'stacks.folded differs from its trace')
    check(linehits(os.path.join(s, 'linehits.txt'), j['cwd'])
          == lcov_hits(os.path.join(s, 'coverage.lcov'), j['cwd']), 'the other backend is wrong')
    rep = run([args.recorderd, 'report', s, '--backend', 'lua:' + fail_bk], tmp)
    rerr = rep.err.decode('utf-8', 'replace')
    check(rep.status == 1 and 'stack traceback:' in rerr and 'disabled by an error' in rerr,
          'report: status %s:\n%s' % (rep.status, rerr))
    print('ok: error in record(): session complete, traceback, other backend written')


def case_syntax(args, tmp):
    prog = os.path.join(tmp, 'marker.lua')
    with open(prog, 'w') as f:
        f.write('io.open("ran", "w"):close() print("hello")\n')
    bad, notable = os.path.join(TESTBK, 'syntax.lua'), os.path.join(TESTBK, 'notable.lua')
    res, out = traced(args, prog, tmp, [bad])
    err = res.err.decode('utf-8', 'replace')
    check(res.status == 2 and not os.path.exists(os.path.join(tmp, 'ran')),
          'run with a bad backend: status %s, program ran: %s'
          % (res.status, os.path.exists(os.path.join(tmp, 'ran'))))
    check(re.search(r"^recorderd: backend lua:\S*syntax\.lua: \S*syntax\.lua:4: '\)' expected",
                    err, re.M), 'message: %s' % err)
    trace = os.path.join(tmp, 'good')
    res, _ = traced(args, prog, tmp, [notable], name='good', formats='folded')
    s, j = harness.find_session(trace), None
    with open(os.path.join(s, 'session.json')) as f:
        j = json.load(f)
    err = res.err.decode('utf-8', 'replace')
    check(res.status == 0 and res.out == b'hello\n' and j['status'] == 'complete',
          'a backend returning no table stopped the session: %s %r' % (res.status, j))
    check('returned number, not a table' in j['error'] and 'not a table' in err,
          'session error %r, stderr %s' % (j['error'], err))
    check(os.path.getsize(os.path.join(s, 'stacks.folded')) > 0, 'no stacks.folded')
    for b, what in ((bad, "syntax.lua:4: ')' expected"), (notable, 'returned number')):
        rep = run([args.recorderd, 'report', s, '--backend', 'lua:' + b], tmp)
        rerr = rep.err.decode('utf-8', 'replace')
        check(rep.status == 2 and what in rerr, 'report: %s %s' % (rep.status, rerr))
    print('ok: bad backends refused')

# }======================================================================


# {======================================================================
# sequence

# tests/integration/luabk/seq.lua, run as `lua5.1 seq.lua`, seen by
# records.lua from the main chunk's call on ("N" is record(N, time): time
# spent on line N, written when the stretch on that line ends).
SEQUENCE = [
    ('> seq.lua 0 0', 'the main chunk is called (linedefined 0)'),
    ('1', 'local function leaf ...'),
    ('2', 'local function tail ...'),
    ('3', 'local function bad ...'),
    ('4', 'local ok = pcall(bad): its time until the call'),
    ('P', 'pcall begins a protected call...'),
    ('> [C] 0 0', '...and is called, a C function'),
    ('> seq.lua 3 3', 'pcall calls bad'),
    ('3', 'bad runs line 3 until it calls error'),
    ('> [C] 0 0', 'error is called'),
    ('E', 'error is unwound by its own error'),
    ('E', 'and so is bad; no time runs on line 3 in between'),
    ('<', 'pcall returns false: caught'),
    ('4', 'line 4 goes on after pcall returned'),
    ('5', 'local co = coroutine.create(function() ...'),
    ('7', '... end): Lua 5.1 puts the closure on its last line'),
    ('5', 'back to line 5 for the call'),
    ('> [C] 0 0', 'coroutine.create'),
    ('<', 'returns'),
    ('5', 'line 5 goes on (the assignment)'),
    ('8', 'coroutine.resume(co)'),
    ('> [C] 0 0', 'coroutine.resume is called'),
    ('R', 'and resumes the coroutine (its id follows)'),
    ('> seq.lua 5 7', 'the coroutine body starts (lines 5-7)'),
    ('6', 'coroutine.yield()'),
    ('> [C] 0 0', 'coroutine.yield is called'),
    ('Y', 'control goes back to the resumer'),
    ('<', 'where resume returns'),
    ('8', 'line 8 goes on'),
    ('9', 'coroutine.resume(co) again'),
    ('> [C] 0 0', 'coroutine.resume'),
    ('R', 'resumes the same coroutine'),
    ('<', 'where yield returns'),
    ('6', 'line 6 goes on'),
    ('7', 'the body ends on its end'),
    ('<', 'the body returns: the coroutine is dead'),
    ('Y', 'control goes back to the resumer'),
    ('<', 'resume returns true'),
    ('9', 'line 9 goes on'),
    ('10', 'tail()'),
    ('> seq.lua 2 2', 'tail is called'),
    ('2', 'return leaf(): a tail call'),
    ('T seq.lua 1 1', 'leaf replaces tail (no < for tail)'),
    ('1', 'return 1'),
    ('<', 'leaf returns, for both'),
    ('10', 'line 10 goes on'),
    ('<', 'the main chunk returns'),
    ('<', "the interpreter's C entry leaves when tracing stops at exit"),
]


def case_sequence(args, tmp):
    prog = os.path.join(tmp, 'seq.lua')
    shutil.copy(os.path.join(TESTBK, 'seq.lua'), prog)
    res, out = traced(args, prog, tmp, [os.path.join(TESTBK, 'records.lua')])
    s, _ = session_of(res, out)
    with open(os.path.join(s, 'records.txt')) as f:
        got = f.read().splitlines()
    check('> seq.lua 0 0' in got, 'no call of the main chunk:\n%s' % '\n'.join(got))
    got = got[got.index('> seq.lua 0 0'):]
    ids = set()
    norm = []
    for g in got:
        if g.startswith('R '):
            ids.add(g[2:])
            g = 'R'
        norm.append(g[:-3] if g.endswith(' ns') else g)
    check(len(ids) == 1, 'R with ids %r: one coroutine expected' % ids)
    want = [w for w, _ in SEQUENCE]
    check(norm == want, 'record() sequence:\n%s' % '\n'.join(
        '%-3s %-20s %s' % ('' if a == b else '!=', a, b)
        for a, b in zip(norm + [''] * len(want), want + [''] * len(norm))
        if a or b))
    print('ok: %d records as expected' % len(norm))


def main(argv):
    return harness.tmp_case_main(
        argv, cases(globals()), 'luatrace-luabk-',
        lambda ap: ap.add_argument('--root', required=True, help='the source tree'),
        (ValueError, KeyError, OSError))

# }======================================================================


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
