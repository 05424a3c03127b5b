#!/usr/bin/env python3
"""Lua 5.1's sampled mode: recorderd run --sample -- lua5.1, sampled from
outside (no hook, no ring: the collector's hello asks for it).

  outsample.py CASE --recorderd PATH --lua lua5.1 --cpath DIR

Real recorderd, real lua5.1 processes, as collector.py runs them (its
Case cleans up daemons, sockets and shm segments). Cases:
  shares    a program timing its two parts itself (os.clock): the sampled
            profile gives each its share within 5 points (the hooks of an
            exact trace weigh on event-dense code; a sampler's reads do
            not); output, exit status unchanged; sampling() true and
            tracing() false inside; session.json says sampled, by outside,
            at 1000 Hz, time "sampled"; no coverage file; the program's
            wait for the sampler is not in the profile (no luatrace.so frame)
  children  sh -c running two lua5.1 programs: a sampled session each,
            named after its script
  rate      --sample 100: the rate in session.json and profile.txt
  short     a program that ends at once: its session, complete, and the
            command's status (0)
  listen    LUATRACE_SAMPLE=1000 lua5.1 -lluatrace under recorderd listen:
            sampled from outside by the daemon
  profile   lua5.1 -lluatrace.profile with LUATRACE_SAMPLE: its private
            recorder may not read it, so it is traced exactly, said once
  options   --sample with --coverage, --time sample or a coverage format
            (cobertura): refused, exit 2, nothing run; -f all and -f
            folded,pprof taken
  lua54     shares under lua5.4 (the 5.4 collector's hello, recorderd's
            reader of 5.4): skipped without lua5.4
  fib54     a Lua 5.4 program (it never loads luatrace) alternating a fast
            recursion (fib) and a flat loop, timing each itself: top of it
            and run --sample give fib its share within 10 and 6 points
            (read frame by frame as it ran, fib's stack was torn under up
            to four reads in five and top gave it 8-19% of 43%);
            session.json counts the dropped samples (sampled_dropped)
  fibco54   top of it with fib inside a coroutine.wrap function: fib's
            share within 10 points (it had 4.7% of 43%)
  fib       fib54's program under lua5.1, on a CPU beside recorderd's (when
            two are ours: the program runs on under each read, as on any
            machine with more than one): top and run --sample give fib its
            share within 10 and 6 points, and drop at most 5% of their
            reads (fib's frames churn faster than a thread is copied: top
            dropped 16-39% of its reads and gave fib 9-34% of 45%)
  fibco     top of it with fib inside a coroutine.wrap function, the same
            bounds (it dropped 16-22% and gave fib 28-34% of 43%)
  reload    a C host that closes its state and makes a new one, 4 times,
            each running the same loop: a session per state, each with
            about a quarter of the time (a session lasting to the
            process's end held 40% in the first)
"""
import json
import os
import re
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import Failure, cases, expect, run  # noqa: E402
from collector import same_output  # noqa: E402

# Many tiny calls (an exact trace's hooks weigh most there) against long
# arithmetic lines.
PARTS = '''
local function tiny(x) return x + 1 end
local function calls(n) local s = 0 for i = 1, n do s = tiny(tiny(s)) end return s end
local function lines(n)
  local a, b = 1.5, 2.5
  for i = 1, n do
    a = (a * 1.0001 + b * 0.9999 + i * 0.25) % 1000 + (b - a) * 0.001 + a * 0.0001
  end
  return a
end
'''

# The two parts, each timed by the program; CALLS_N, LINES_N set.
SHARES = PARTS + '''
local lt = require "luatrace"
local ta, tb = 0, 0
for _ = 1, 10 do
  local t0 = os.clock() calls(CALLS_N)
  local t1 = os.clock() lines(LINES_N)
  local t2 = os.clock()
  ta, tb = ta + (t1 - t0), tb + (t2 - t1)
end
io.stderr:write(string.format("own %.6f %.6f\\n", ta, tb))
print("sampling", lt.sampling(), "tracing", lt.tracing())
os.exit(6)
'''


def counts(c, seconds=0.25, lua=None):
    """Iteration counts giving each part about `seconds` of CPU a round."""
    probe = c.write('probe.lua', PARTS + '''
local function count(f)
  local n = 1000
  while true do
    local t0 = os.clock() f(n) local t = os.clock() - t0
    if t > 0.05 then return math.floor(n * SECONDS / t) end
    n = n * 4
  end
end
print(count(calls), count(lines))
'''.replace('SECONDS', '%f' % (seconds / 10)))
    r = run([lua or c.args.lua, probe], c.tmp, c.env())
    expect(r.status == 0, 'probe: %r' % r.err)
    return r.out.decode().split()


def sample_run(c, prog, extra=(), env=None, lua=None):
    return run([c.args.recorderd, 'run', '-q', '--out', c.out, '--sample'] + list(extra)
               + ['--', lua or c.args.lua, prog], c.tmp, env or c.env())


def part_shares(c, session):
    """Samples (ns) under calls and lines, from the folded stacks."""
    w = {'calls': 0, 'lines': 0}
    for stack, n in c.folded(session, weight='time').items():
        for part in w:
            if any(f.startswith(part + '@') for f in stack.split(';')):
                w[part] += n
    return w


def case_shares(c, lua=None):
    na, nb = counts(c, lua=lua)
    prog = c.write('shares.lua', SHARES.replace('CALLS_N', na).replace('LINES_N', nb))
    r = sample_run(c, prog, lua=lua)
    expect(r.status == 6, 'status %d, stderr %r' % (r.status, r.err))
    expect(r.out == b'sampling\ttrue\ttracing\tfalse\n', 'stdout %r' % r.out)
    own = r.err.decode()
    expect(own.startswith('own ') and own.count('\n') == 1, 'stderr: %r' % own)
    ta, tb = (float(x) for x in own.split()[1:3])
    session = c.session('shares')
    meta = json.load(open(os.path.join(session, 'session.json')))
    expect(meta['sampled_hz'] == 1000 and meta['sampler'] == 'outside'
           and meta['time'] == 'sampled' and meta['status'] == 'complete'
           and meta['sample_clock'] == 'cpu',
           'session.json: %s' % {k: meta.get(k) for k in ('sampled_hz', 'sampler', 'time',
                                                           'status', 'sample_clock')})
    expect(not os.path.exists(os.path.join(session, 'coverage.lcov')),
           'a sampled session wrote coverage')
    w = part_shares(c, session)
    expect(w['calls'] > 0 and w['lines'] > 0, 'parts not sampled: %r' % w)
    own_share = 100 * ta / (ta + tb)
    share = 100 * w['calls'] / (w['calls'] + w['lines'])
    print('calls part: own %.1f%%, sampled %.1f%%' % (own_share, share))
    expect(abs(share - own_share) <= 5, 'share %.1f%% against the program\'s own %.1f%%'
           % (share, own_share))
    prof = open(os.path.join(session, 'profile.txt')).read()
    expect('SAMPLED from outside at 1000 Hz (CPU time)' in prof, 'profile.txt not marked sampled')
    expect('luatrace.so' not in prof, 'the wait for the sampler is in the profile:\n' + prof)


def case_children(c):
    one = c.write('one.lua', 'local s = 0 for i = 1, 3e6 do s = s + i end print("one", s)\n')
    two = c.write('two.lua', 'local s = 0 for i = 1, 3e6 do s = s + i end print("two", s)\n')
    r = run([c.args.recorderd, 'run', '-q', '--out', c.out, '--sample', '--', 'sh', '-c',
             '%s %s && %s %s' % (c.args.lua, one, c.args.lua, two)], c.tmp, c.env())
    expect(r.status == 0 and r.out == b'one\t4500001500000\ntwo\t4500001500000\n',
           'status %d, %r %r' % (r.status, r.out, r.err))
    for name in ('one', 'two'):
        meta = json.load(open(os.path.join(c.session(name), 'session.json')))
        expect(meta['sampler'] == 'outside' and meta['status'] == 'complete',
               '%s: %s' % (name, meta))


def case_rate(c):
    prog = c.write('rate.lua', 'local s = 0 for i = 1, 2e7 do s = s + i % 3 end print(s)\n')
    r = sample_run(c, prog, ['100'])
    expect(r.status == 0 and r.err == b'', 'status %d, %r' % (r.status, r.err))
    session = c.session('rate')
    meta = json.load(open(os.path.join(session, 'session.json')))
    expect(meta['sampled_hz'] == 100, 'rate %s' % meta['sampled_hz'])
    prof = open(os.path.join(session, 'profile.txt')).read()
    expect('SAMPLED from outside at 100 Hz' in prof, 'profile.txt: %s' % prof[:400])


def case_short(c):
    prog = c.write('short.lua', 'print("bye")\n')
    plain = run([c.args.lua, prog], c.tmp, c.env())
    r = sample_run(c, prog)
    same_output(plain, r)
    meta = json.load(open(os.path.join(c.session('short'), 'session.json')))
    expect(meta['status'] == 'complete' and meta['sampler'] == 'outside', 'session %s' % meta)


def case_listen(c):
    c.start_daemon()
    prog = c.write('served.lua', 'local s = 0 for i = 1, 2e7 do s = s + i % 3 end print(s)\n')
    env = c.env(LUATRACE_SOCKET=c.sock, LUATRACE_SAMPLE='1000')
    plain = run([c.args.lua, prog], c.tmp, c.env())
    r = run([c.args.lua, '-lluatrace', prog], c.tmp, env)
    same_output(plain, r)
    c.stop_daemon()
    meta = json.load(open(os.path.join(c.session('served'), 'session.json')))
    expect(meta['sampler'] == 'outside' and meta['sampled_hz'] == 1000
           and meta['events'] > 0, 'session %s' % meta)


def case_profile(c):
    prog = c.write('prof.lua', 'local s = 0 for i = 1, 1000 do s = s + i end print(s)\n')
    r = run([c.args.lua, '-lluatrace.profile', prog], c.tmp,
            c.env(LUATRACE_OUT=c.out, LUATRACE_SAMPLE='1000'))
    expect(r.status == 0 and r.out == b'500500\n', 'status %d, %r' % (r.status, r.out))
    said = b'luatrace: sampling (LUATRACE_SAMPLE) needs recorderd run --sample or listen; ' \
           b'luatrace.profile traces exactly\n'
    expect(r.err.startswith(said) and r.err.count(b'LUATRACE_SAMPLE') == 1,
           'stderr: %r' % r.err)
    meta = json.load(open(os.path.join(c.session('prof'), 'session.json')))
    expect(meta['sampled_hz'] == 0 and meta['events'] > 1000, 'not exact: %s' % meta)


def case_options(c):
    prog = c.write('opts.lua', 'print("ran")\n')
    for extra, said in ((['--coverage'], b'--coverage: a sampler sees no coverage'),
                        (['--time', 'sample'], b'--time: a sampler has its own time'),
                        (['--time', 'exact'], b'--time: a sampler has its own time'),
                        (['-f', 'cobertura'], b'--format: a sampled session has no coverage'),
                        (['-f', 'lcov'], b'--format: a sampled session has no coverage'),
                        (['--include', 'x*'], b'--include, --exclude: they filter coverage'),
                        (['--exclude', 'x*'], b'--include, --exclude: they filter coverage')):
        r = sample_run(c, prog, extra)
        expect(r.status == 2 and r.out == b'' and said in r.err,
               '%s: %d %r %r' % (extra, r.status, r.out, r.err))
    for extra in (['-f', 'all'], ['-f', 'folded,pprof']):
        r = sample_run(c, prog, extra)
        expect(r.status == 0 and r.out == b'ran\n', '%s: %d %r' % (extra, r.status, r.err))


def case_reload(c):
    # each round runs its loop in a chunk named after it, so a session that
    # outlived its state shows the next round's chunk (its state's memory
    # reused by the next state: without the sentinel, the first session
    # showed all four). Times are no test of it: this VM's slow moments
    # make one round of four take 0.37 of the whole under ASan
    c.write('round.lua', 'require "luatrace"\n'
                         'loadstring("local s = 0 for i = 1, 4e7 do s = s + i end", '
                         '"=round" .. ROUND)()\nprint("ROUND", ROUND)\n')
    r = run([c.args.recorderd, 'run', '-q', '--out', c.out, '--sample', '--',
             c.args.reload_plain, 'round.lua', '4'], c.tmp, c.env())
    expect(r.status == 0 and r.out == b''.join(b'ROUND\t%d\n' % i for i in range(4)),
           'status %d, %r %r' % (r.status, r.out, r.err))
    names = sorted(os.listdir(c.out), key=lambda n: (len(n), n))
    expect(len(names) == 4, 'sessions: %s' % names)
    for i, n in enumerate(names):
        text = open(os.path.join(c.out, n, 'profile.txt')).read()
        seen = sorted(set(re.findall(r'round\d', text)))
        print('session %s: %s' % (n, seen))
        expect(seen == ['round%d' % i], 'a session outlived its state: %s saw %s' % (n, seen))


REUSE = r"""
-- Chunk k is loaded, run and dropped, and a full GC frees its Protos,
-- whose addresses chunk k + 1's may take: their sources are as long and
-- their function starts on line k + 1. First a while for the sampler to
-- find the state.
local w = 0 for i = 1, 2e7 do w = w + i end
for k = 1, 10 do
  local src = ("\n"):rep(k) ..
              "local function spin(n) local s = 0 for i = 1, n do s = s + i % 7 end return s end\n" ..
              "return spin(24000000)\n" .. (" "):rep(40 - k)
  local f = assert((loadstring or load)(src, "=chunk" .. k))
  f()
  f = nil
  collectgarbage()
  collectgarbage()
end
print("done")
"""


def case_reuse(c, lua=None):
    """A function is known by its Proto's address only while it lives: the
    functions of 10 chunks loaded and freed one after another, each where
    the last one was, are 10 functions, each on its own line (the reader
    took a later one for the first it saw at its address: 2 of 20 seen
    under 5.4; 5.1's allocator put these elsewhere, and 2 of 30 chunks
    of one shape were seen). Each runs 0.15 s or more (5.1 here): a
    sampler starved by other tests for a while misses none (CI's sanitize
    stage once missed all of chunk 1 when each ran 55 ms: its time went to
    the main chunk, the last stack seen before the sampler's gap)."""
    prog = c.write('reuse.lua', REUSE)
    r = sample_run(c, prog, lua=lua)
    expect(r.status == 0 and r.out == b'done\n', 'status %d, %r %r' % (r.status, r.out, r.err))
    seen = {}
    stacks = c.folded(c.session('reuse'), weight='time')
    for stack in stacks:
        for f in stack.split(';'):
            src, _, line = f.rpartition('@')[2].partition(':')
            if src.startswith('chunk') and line != '0':
                seen.setdefault(int(src[5:]), set()).add(int(line))
    wrong = {k: v for k, v in seen.items() if v != {k + 1}}
    expect(not wrong and sorted(seen) == list(range(1, 11)),
           'functions seen by chunk (want chunk k\'s on line k + 1, all 10): %s; stacks: %s'
           % (seen, stacks))


def case_reuse54(c):
    case_reuse(c, harness.need_lua54())


def case_lua54(c):
    case_shares(c, harness.need_lua54())


# A fast recursion against a flat loop, each timed by the program, in
# rounds until a file named stop exists (ROUNDS at most); CALL_FIB (fib(25),
# or the same inside a coroutine.wrap function) and SPIN_N set.
FIBSPIN = '''
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
local function spin(n) local s = 0 for i = 1, n do s = s + i % 7 end return s end
local ta, tb = 0, 0
io.stdout:write("READY\\n") io.stdout:flush()
for r = 1, ROUNDS do
  local t0 = os.clock() CALL_FIB
  local t1 = os.clock() spin(SPIN_N)
  local t2 = os.clock()
  ta, tb = ta + (t1 - t0), tb + (t2 - t1)
  if r % 4 == 0 and io.open("stop") then break end
end
io.stderr:write(string.format("own %.6f %.6f\\n", ta, tb))
'''


def fibspin(c, lua, rounds, wrap=False):
    call = 'coroutine.wrap(function() fib(25) end)()' if wrap else 'fib(25)'
    return c.write('fibspin.lua', FIBSPIN.replace('ROUNDS', str(rounds))
                   .replace('CALL_FIB', call).replace('SPIN_N', '800000'))


def own_fib(err):
    own = err.decode()
    expect(own.startswith('own ') and own.count('\n') == 1, 'stderr: %r' % own)
    ta, tb = (float(x) for x in own.split()[1:3])
    return 100 * ta / (ta + tb)


# fib and spin by where they are defined (fib may be named at its call
# site, "function" or "fib")
FIBSPIN_AT = {'fibspin.lua:2': 'fib', 'fibspin.lua:3': 'spin'}


def top_fib(out):
    """fib's share of the self samples of fib and spin, over top's tables."""
    n = {'fib': 0, 'spin': 0}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 5 and f[4].strip('()') in FIBSPIN_AT:
            n[FIBSPIN_AT[f[4].strip('()')]] += int(f[2])
    expect(n['fib'] > 0 and n['spin'] > 0, 'parts not sampled: %r\n%s' % (n, out))
    return 100 * n['fib'] / (n['fib'] + n['spin'])


def other_cpus():
    """Two CPUs of ours, the program's and recorderd's, or None: read from
    outside, a program on another CPU than the reader's runs on under each
    read (on the reader's, it waits for the read to end)."""
    cpus = sorted(os.sched_getaffinity(0))
    return cpus[:2] if len(cpus) >= 2 and shutil.which('taskset') else None


def on_cpu(cpus, which):
    """A preexec_fn putting the child on cpus[which] (None: no cpus)."""
    return (lambda: os.sched_setaffinity(0, {cpus[which]})) if cpus else None


def fib_top(c, lua, wrap, cpus=None):
    """top of the fib/spin program (on cpus[0], top on cpus[1]): fib's
    share within 10 points. Returns top's output."""
    prog = fibspin(c, lua, 100000, wrap)
    if os.path.exists(os.path.join(c.tmp, 'stop')):  # an attempt before failed
        os.unlink(os.path.join(c.tmp, 'stop'))
    p = subprocess.Popen([lua, prog], cwd=c.tmp, env=c.env(), stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         preexec_fn=on_cpu(cpus, 0))
    try:
        expect(p.stdout.readline() == b'READY\n', 'the program did not start')
        r = run([c.args.recorderd, 'top', str(p.pid), '--rate', '1000', '--duration', '3'],
                c.tmp, c.env(), preexec_fn=on_cpu(cpus, 1))
        c.write('stop', '')
        _, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    expect(r.status == 0, 'top: %d %r' % (r.status, r.err))
    own, share = own_fib(err), top_fib(r.out.decode())
    print('fib: own %.1f%%, top %.1f%%' % (own, share))
    expect(abs(share - own) <= 10, 'top gave fib %.1f%% against the program\'s own %.1f%%:\n%s'
           % (share, own, r.out.decode()))
    os.unlink(os.path.join(c.tmp, 'stop'))
    return r.out.decode()


def top_kept(out):
    """top's reads dropped (stacks caught mid-change): at most 5% of all."""
    rows = re.findall(r'^(\d+) samples at \d+ Hz in the last interval, \d+ in Lua, '
                      r'(\d+) reads dropped', out, re.M)
    n, dropped = sum(int(k) for k, _ in rows), sum(int(d) for _, d in rows)
    print('top: %d reads dropped, %d kept' % (dropped, n))
    expect(n and dropped <= 0.05 * (n + dropped), 'top dropped %d reads and kept %d'
           % (dropped, n))


def case_fibco54(c):
    fib_top(c, harness.need_lua54(), True)


def fib_run(c, lua, cpus=None):
    """run --sample of the fib/spin program (on cpus[0], recorderd on
    cpus[1]): fib's share within 6 points. Returns session.json."""
    prog = fibspin(c, lua, 80)
    if cpus:
        r = run([c.args.recorderd, 'run', '-q', '--out', c.out, '--sample', '--', 'taskset',
                 '-c', str(cpus[0]), lua, prog], c.tmp, c.env(), preexec_fn=on_cpu(cpus, 1))
    else:
        r = sample_run(c, prog, lua=lua)
    expect(r.status == 0, 'status %d, stderr %r' % (r.status, r.err))
    w = {'fib': 0, 'spin': 0}
    for stack, n in c.folded(c.session('fibspin'), weight='time').items():
        parts = [FIBSPIN_AT[f.rpartition('@')[2]] for f in stack.split(';')
                 if f.rpartition('@')[2] in FIBSPIN_AT]
        if parts:
            w[parts[0]] += n
    meta = json.load(open(os.path.join(c.session('fibspin'), 'session.json')))
    expect(isinstance(meta.get('sampled_dropped'), int), 'session.json: no sampled_dropped')
    own, share = own_fib(r.err), 100 * w['fib'] / max(1, w['fib'] + w['spin'])
    print('fib: own %.1f%%, run --sample %.1f%%' % (own, share))
    expect(abs(share - own) <= 6, 'run --sample gave fib %.1f%% against the program\'s own '
           '%.1f%%' % (share, own))
    return meta


def case_fib54(c):
    lua = harness.need_lua54()
    fib_top(c, lua, False)
    fib_run(c, lua)


def run_kept(meta):
    """run --sample's samples dropped: at most 5% of those taken."""
    taken = meta['traced_ns'] * meta['sampled_hz'] / 1e9  # about
    print('run --sample: %d samples dropped of %d' % (meta['sampled_dropped'], taken))
    expect(meta['sampled_dropped'] <= 0.05 * taken, 'run --sample dropped %d samples of %d'
           % (meta['sampled_dropped'], taken))


# Retried: top counts samples taken at wall-clock moments, and on a
# loaded machine a starved program or reader gives few independent ones
# (once 70% against 43%); a reader that drops fib's reads fails each try.
def case_fib(c):
    cpus = other_cpus()
    harness.retried(lambda _: top_kept(fib_top(c, c.args.lua, False, cpus)))
    harness.retried(lambda _: run_kept(fib_run(c, c.args.lua, cpus)))


def case_fibco(c):
    harness.retried(lambda _: top_kept(fib_top(c, c.args.lua, True, other_cpus())))


def main(argv):
    def add_args(ap):
        ap.add_argument('--reload-plain', help='tests/hosts/reload_plain')
    return harness.case_main(argv, cases(globals()), 'luatrace-outsample-', add_args,
                             paths=('reload_plain',))


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
