#!/usr/bin/env python3
"""LuaJIT's sampled mode (recorderd run --sample) and the refusal of the
Lua versions luatrace does not trace.

  jitsample.py CASE --recorderd PATH --cpath DIR

Real recorderd, real luajit / lua5.x processes, as collector.py runs them
(its Case cleans up daemons, sockets and shm segments). Cases:
  hot       run --sample -- luajit: a known hot function dominates
            profile.txt; session.json says sampled and the rate; the JIT
            stays on (jit.status() inside the program); output and exit
            code as plain luajit; every sampled report written, no coverage
  rate      run --sample 250: the rate in session.json and profile.txt;
            --sample 0 and 5000 refused (exit 2); a program that ends
            without os.exit (lua_close) completes its session too; a bad
            LUATRACE_SAMPLE is said, the program runs unsampled
  nosamples run --sample 1 -- luajit of a program too short for one
            sample: the summary says there were no samples and why (it
            showed an empty table)
  lua51     run --sample -- lua5.1: sampled too, from outside (no hook:
            outsample.py has the rest), output unchanged, nothing said
  profile   LUATRACE_SAMPLE with luajit -lluatrace.profile: the summary at
            exit, a sampled session
  refusal   Lua 5.2, 5.3, 5.4: require and -lluatrace give
            "luatrace: Lua 5.x is not supported (Lua 5.1 and LuaJIT 2.1
            are)"; run (with and without --sample) names the script that
            runs untraced and why, output and exit code unchanged
"""

import html
import json
import os
import re
import shutil
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import Failure, cases, expect, run  # noqa: E402
from collector import same_output, profile_self_rows  # noqa: E402

HOT = '''
local function hot(n)
  local s = 0
  for i = 1, n do s = s + (i % 7) * (i % 13) end
  return s
end
local function cold(n)
  local s = 0
  for i = 1, n do s = s + i end
  return s
end
local t = 0
for k = 1, ROUNDS do t = t + hot(1000000) + cold(20000) end
print("jit", jit.status(), jit.version)
print("total", t)
ENDING
'''


def need(lua):
    if not shutil.which(lua):
        raise Failure('%s is not installed (scripts/setup installs it)' % lua)


def sampled_run(c, name, extra, rounds=60, ending='os.exit(7)'):
    prog = c.write(name + '.lua', HOT.replace('ROUNDS', str(rounds)).replace('ENDING', ending))
    plain = run(['luajit', prog], c.tmp, c.env())
    r = run([c.args.recorderd, 'run', '-q', '--out', c.out] + extra + ['--', 'luajit', prog],
            c.tmp, c.env())
    same_output(plain, r)
    expect(r.out.startswith(b'jit\ttrue\t'), 'the JIT is not on: %r' % r.out)
    expect(r.err == b'', 'stderr: %r' % r.err)
    return c.session(name)


def case_hot(c):
    """hot() does about 50 times cold()'s work: it has most of the samples,
    and the stacks are the program's (main chunk, then hot)."""
    need('luajit')
    session = sampled_run(c, 'hot', ['--sample', '--format', 'all'])
    meta = json.load(open(os.path.join(session, 'session.json')))
    expect(meta['status'] == 'complete' and meta['sampled_hz'] == 1000, 'session.json: %s' % meta)
    profile = open(os.path.join(session, 'profile.txt')).read()
    expect('SAMPLED by LuaJIT\'s profiler at 1000 Hz' in profile, 'profile.txt: %s' % profile[:400])
    rows = profile_self_rows(session)
    expect(rows and rows[0][3] == 'hot (hot.lua:2)' and float(rows[0][1]) > 60,
           'hot does not dominate: %r' % rows[:3])
    folded = open(os.path.join(session, 'stacks.folded')).read().split('\n')
    expect(any(l.startswith('main chunk@hot.lua:0;hot@hot.lua:2 ') for l in folded) and
           all(not l or l.startswith('main chunk@hot.lua:0') for l in folded),
           'stacks: %r' % folded[:5])
    have = set(os.listdir(session))
    for f in ('profile.txt', 'stacks.folded', 'flamegraph.svg', 'profile.speedscope.json',
              'profile.pb.gz', 'report.html', 'trace.ltr'):
        expect(f in have, 'no %s in %s' % (f, sorted(have)))
    for f in ('coverage.lcov', 'luacov.stats.out', 'coverage.txt', 'coverage.xml'):
        expect(f not in have, 'coverage of a sampled session: %s' % f)
    page = html.unescape(open(os.path.join(session, 'report.html')).read())
    expect("by LuaJIT's profiler" in page, 'report.html does not say sampled')
    # nor any coverage on the page: a line no sample saw is not 'never run'
    row = re.search(r'<th class="l">coverage</th><td>([^<]*)</td>', page)
    expect(row and row.group(1).startswith('none: samples see some'), 'coverage row: %r' %
           (row and row.group(1)))
    expect('<tr class="miss">' not in page and 'sampled: no coverage' in page,
           'report.html paints lines never sampled as never run')
    # rendered again from the trace: sampled as its session was, no coverage
    r = run([c.args.recorderd, 'report', session, '--format', 'profile'], c.tmp, c.env())
    expect(r.status == 0 and b"SAMPLED by LuaJIT's profiler at 1000 Hz" in r.out,
           'report --format profile: %d %r' % (r.status, r.out[:300]))
    r = run([c.args.recorderd, 'report', session, '--format', 'lcov'], c.tmp, c.env())
    expect(r.status == 1 and not r.out and b'a sampled session (1000 Hz)' in r.err,
           'report --format lcov: %d %r' % (r.status, r.err))


def case_rate(c):
    need('luajit')
    session = sampled_run(c, 'rate', ['--sample', '250'], rounds=20, ending='')
    meta = json.load(open(os.path.join(session, 'session.json')))
    expect(meta['status'] == 'complete' and meta['sampled_hz'] == 250, 'session.json: %s' % meta)
    expect('profiler at 250 Hz' in open(os.path.join(session, 'profile.txt')).read(),
           'profile.txt rate')
    prog = c.write('none.lua', 'print(1)\n')
    for bad in ('0', '5000'):
        r = run([c.args.recorderd, 'run', '--out', c.out, '--sample', bad, '--', 'luajit', prog],
                c.tmp, c.env())
        expect(r.status == 2 and b'--sample takes samples per second, 1 to 1000' in r.err,
               '--sample %s: %d %r' % (bad, r.status, r.err))
    # a bad LUATRACE_SAMPLE of the user's: said, and the program runs as it
    # would (run's LUA_INIT loads the collector: an error would stop it)
    r = run([c.args.recorderd, 'run', '-q', '--out', c.out, '--', 'luajit', prog], c.tmp,
            c.env(LUATRACE_SAMPLE='abc'))
    # (unsampled: not traced at all, so run says so and fails, 125, as for
    # any command that traced nothing)
    expect(r.status == 125 and r.out == b'1\n' and r.err.startswith(b'luatrace: LUATRACE_SAMPLE=abc: '
           b'samples per second, from 1 to 1000; running unsampled\n') and
           b'recorderd: nothing was traced' in r.err,
           'LUATRACE_SAMPLE=abc: %d %r %r' % (r.status, r.out, r.err))


def case_nosamples(c):
    need('luajit')
    prog = c.write('short.lua', 'print(1)\n')
    r = run([c.args.recorderd, 'run', '--out', c.out, '--sample', '1', '--', 'luajit', prog],
            c.tmp, c.env())
    err = r.err.decode()
    expect(r.status == 0 and r.out == b'1\n' and '\nno samples: the program ran less than a '
           'sample period (1/1 s of CPU time)\nopen: ' in err, 'summary: %d %r' % (r.status, err))


def case_lua51(c):
    prog = c.write('five.lua', 'local function f(n) return n * 2 end\n'
                               'local s = 0 for i = 1, 1000 do s = s + f(i) end\n'
                               'print(s) os.exit(4)\n')
    plain = run([c.args.lua, prog], c.tmp, c.env())
    r = run([c.args.recorderd, 'run', '-q', '--sample', '--out', c.out, '--', c.args.lua, prog],
            c.tmp, c.env())
    same_output(plain, r)
    expect(r.err == b'', 'stderr: %r' % r.err)
    meta = json.load(open(os.path.join(c.session('five'), 'session.json')))
    expect(meta['status'] == 'complete' and meta['sampled_hz'] == 1000
           and meta['sampler'] == 'outside', 'not sampled from outside: %s' % meta)


def case_refusal(c):
    prog = c.write('other.lua', 'io.write("out ", 6 * 7, "\\n") os.exit(5)\n')
    for lua, name in (('lua5.2', 'Lua 5.2'), ('lua5.3', 'Lua 5.3'), ('lua5.4', 'Lua 5.4')):
        need(lua)
        want = 'luatrace: %s is not supported (Lua 5.1 and LuaJIT 2.1 are)' % name
        r = run([lua, '-e', 'print(pcall(require, "luatrace"))'], c.tmp, c.env())
        expect(r.status == 0 and r.out == ('false\t%s\n' % want).encode(),
               '%s require: %r %r' % (lua, r.out, r.err))
        r = run([lua, '-lluatrace', prog], c.tmp, c.env(LUATRACE_SHM='other'))
        expect(r.status == 1 and want.encode() in r.err and b'undefined symbol' not in r.err,
               '%s -lluatrace: %d %r' % (lua, r.status, r.err))
        for extra in ([], ['--sample']):
            r = run([c.args.recorderd, 'run', '--out', c.out] + extra + ['--', lua, prog],
                    c.tmp, c.env())
            # lua5.2's lua.c sets arg after it runs LUA_INIT: no script name
            script = 'a program' if lua == 'lua5.2' else 'other.lua'
            line = '%s: %s runs untraced\n' % (want, script)
            expect(r.status == 5 and r.out == b'out 42\n' and r.err.startswith(line.encode()),
                   '%s run %s: %d %r %r' % (lua, extra, r.status, r.out, r.err))


def case_profile(c):
    """LUATRACE_SAMPLE with luajit -lluatrace.profile: a private recorder,
    the summary at exit, a sampled session named after the script."""
    need('luajit')
    prog = c.write('prof.lua', HOT.replace('ROUNDS', '20').replace('ENDING', ''))
    plain = run(['luajit', prog], c.tmp, c.env())
    r = run(['luajit', '-lluatrace.profile', prog], c.tmp,
            c.env(LUATRACE_OUT=c.out, LUATRACE_SAMPLE='500'))
    same_output(plain, r)
    err = r.err.decode()
    expect('function (top 10 by self time)' in err and ' hot (prof.lua:2)\n' in err,
           'no summary: %r' % err)
    expect('\nsampled by LuaJIT\'s profiler at 500 Hz: ' in err,
           'the summary does not say it is sampled: %r' % err)
    meta = json.load(open(os.path.join(c.session('prof'), 'session.json')))
    expect(meta['status'] == 'complete' and meta['sampled_hz'] == 500, 'session %s' % meta)


def main(argv):
    return harness.case_main(argv, cases(globals()), 'luatrace-jitsample-')


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
