#!/usr/bin/env python3
"""Sampled time (recorderd run --time sample): the checks a time source
must pass, with bounds loose enough for a loaded machine.

  ticks.py --recorderd PATH [--lua lua5.1] CASE...

  split   two parts doing the same work 1 and 3 times (one function, the
          same events per unit of work): their time 1:3 (within 35%)
  total   the session's ticks, the program's and the hooks', make up the
          CPU time the traced process reports (os.clock) within 25%, and
          session.json, profile.txt and report.html name the time source
  hook    a part of tiny calls: ticks landed in the collector's hook are
          counted apart (hook_ticks > 0) and not charged to the program,
          whose time is below its traced CPU time
  io      a program that sleeps, reads a pipe and runs a command prints
          what it prints untraced, with the CPU clock and the wall clock
          (SA_RESTART; the wall clock's signal interrupts sleeps)
  wall    --clock wall: a program sleeping 0.6 s after 0.2 s of CPU time
          gets that sleep in its profile (20-95%: a busy machine stretches
          the CPU part), the CPU clock does not count it (under 15%)
  sleepexec  (--luajit, its FFI) waits in C and an execvp: no EINTR, the
          new program runs
  ownsig  (--luajit, through its FFI) a program with a SIGPROF timer of its
          own (setitimer, the signal blocked) still finds it pending, as
          untraced: the ticks come on another signal
  default  plain `recorderd run` (sampled time, lines by sample) of four
          parts that time themselves (tiny Lua calls, long arithmetic
          lines, C string building, short lines): each part's share of the
          profile within 8 points of its share of the plain run's own
          os.clock (the exact time source was 17 off on such parts)
  lines   lines by sample: a line of math.sin calls and a line of additions
          a quarter as long in one function: the first gets at least 75%
          of the function's line time; calls exact (math.sin's count);
          profile.txt, session.json and annotate say lines by sample; no
          coverage.lcov by default
  exactlines  coverage asks for every line: run -f lcov counts each line
          exactly (DA of the loop body = its iterations); --lines sample
          with coverage or --time exact is refused (exit 2, one line)
  sameshape  coroutines, pcall and error, tail calls and a program's own
          count hook (debug.sethook) under the default: the output as
          untraced, every function's calls the same as --time exact's,
          and every sampled stack one of the exact trace's
  cself   a C function's own time (string.rep beside a Lua loop) within 10
          points of its plain share (LuaJIT: it got none)
  samples  a loop of some 0.05 s of CPU gets fewer than 100 samples, and
          says so where its times are read: run's summary on stderr,
          profile.txt and report.html ("few samples, times rough"), and
          session.json's tick.samples (at least one, at most its ticks); the
          same loop 40 times as long has 100 or more and says nothing of it.
          Under --luajit, tiny calls: profile.txt's time line says how many
          ms LuaJIT's debits took off, and the traced time is the rest
  sigreset  (luaposix) a program that, traced, sets every signal back to
          its default (a daemon's start), or takes SIGRTMIN..SIGRTMIN+16
          for handlers of its own: it runs to its end as untraced (the
          tick's signal met the default action: exit 168), its handlers
          get no tick (they got 1000 a second), and the ticks go on, on
          another signal (the time after counts); under --luajit too
  calibhistory  (LuaJIT) the calibration's history: a dear start takes
          the cheaper figures of the last hour's, not another build's, not
          an old one's, not from a file others may write, nor when
          LUATRACE_CALIB_HISTORY=0
  earlytick  (--earlytick, tests/hosts/earlytick.c preloaded) a tick
          landing the moment the timer is armed, as tracing begins, probes
          the main thread before its hook takes its id: the main thread
          keeps its id (one THREAD record for it) and the calls and stacks
          of coroutine.wrap bodies that die and coroutines that yield are
          --time exact's (the main thread got a new id when the first
          coroutine gave back control, its stack under the coroutine's)

A busy machine can skew one run, so split and total try up to 3 times.
Exit status: 0 pass, 1 fail, 77 skipped (no recorderd)."""
import argparse
import json
import os
import re
import shutil
import signal
import sys
import tempfile

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collector  # noqa: E402  (trace_records)
import harness  # noqa: E402

PROGRAMS = {
    'cself.lua': '''
local clock, rep = os.clock, string.rep
local tc, tl = 0, 0
local function lua_part() local n = 0 for i = 1, 1e6 do n = n + i % 3 end return n end
for _ = 1, 20 do
  local t0 = clock() local s = rep("ab", 1e6) tc = tc + clock() - t0
  t0 = clock() lua_part() tl = tl + clock() - t0
end
print("rep", tc, "lua", tl)
''',
    'wrapdie.lua': '''
local function body(n) return n + 1 end
local function gen(n) for i = 1, n do coroutine.yield(i) end end
local function run(n)
  local w = coroutine.wrap(body)
  local co = coroutine.create(gen)
  local _, v = coroutine.resume(co, n)
  return w(n) + v
end
local t = 0
for i = 1, 3 do t = t + run(i) end
print(t)
''',
    'split.lua': '''
local function work(n) local x = 0 for i = 1, n do x = (x + i * 3) % 1000003 end return x end
local function one() local r = work(400000) return r end
local function three() local r = work(1200000) return r end
for _ = 1, 4 do one() three() end
''',
    'parts.lua': '''
local fmt, rep, cat = string.format, string.rep, table.concat
local function tiny(x) return x + 1 end
local parts = {
  calls = function(n) local s = 0 for i = 1, n do s = tiny(tiny(s)) end return s end,
  long = function(n)
    local a, b, c = 1.5, 2.5, 3.5
    for i = 1, n do
      a = (a * 1.0001 + b * 0.9999 - c * 0.5 + i * 0.25) % 1000 + (b - c) * 0.001 + a * 0.0001
    end
    return a
  end,
  cstr = function(n)
    local k, t = 0, {}
    for i = 1, n do
      t[1], t[2], t[3] = fmt("%08d:%s", i, "abc"), rep("xy", 64), fmt("%.3f", i / 7)
      k = k + #cat(t, ",")
    end
    return k
  end,
  short = function(n)
    local x, y = 0, 1
    for i = 1, n do
      x = x + i
      y = y + x % 3
      x = x - y % 5
    end
    return x
  end,
}
local names = {"calls", "long", "cstr", "short"}
-- iterations for about 0.15 s of each part, measured untraced (argument)
local scale = {}
for i, name in ipairs(names) do scale[name] = tonumber(arg[i]) end
if not scale.calls then
  for _, name in ipairs(names) do
    local n = 1000
    while true do
      local t0 = os.clock() parts[name](n) local t = os.clock() - t0
      if t > 0.05 then io.write(math.floor(n * 0.15 / t), " ") break end
      n = n * 4
    end
  end
  print()
  return
end
-- called by local names, which name them in the stacks
local calls, long, cstr, short = parts.calls, parts.long, parts.cstr, parts.short
local spent = {calls = 0, long = 0, cstr = 0, short = 0}
for _ = 1, 4 do
  local t0 = os.clock() calls(math.floor(scale.calls / 4))
  local t1 = os.clock() long(math.floor(scale.long / 4))
  local t2 = os.clock() cstr(math.floor(scale.cstr / 4))
  local t3 = os.clock() short(math.floor(scale.short / 4))
  local t4 = os.clock()
  spent.calls, spent.long = spent.calls + t1 - t0, spent.long + t2 - t1
  spent.cstr, spent.short = spent.cstr + t3 - t2, spent.short + t4 - t3
end
for _, name in ipairs(names) do io.write(name, " ", spent[name], "\\n") end
''',
    'lines.lua': '''
local function slow(n)
  local s = 0
  for i = 1, n do s = s + math.sin(i) end
  for i = 1, n / 4 do s = s + i end
  return s
end
local t = {}
-- 100 rounds: some hundreds of ms, tens of samples of 4 ms on each line
for k = 1, 100 do t[#t + 1] = slow(100000) end
print(#t)
''',
    'shapes.lua': '''
local calls = 0
debug.sethook(function() calls = calls + 1 end, "", 1000)
local function gen(n)
  return coroutine.wrap(function() for i = 1, n do coroutine.yield(i) end end)
end
local function risky(i) if i % 3 == 0 then error("no " .. i) end return i end
local function tail(n) if n == 0 then return 0 end return tail(n - 1) end
local function work(i)
  local s = 0
  for v in gen(50) do s = s + v end
  local ok = pcall(risky, i)
  return s + (ok and 1 or 0) + tail(20)
end
local total = 0
for i = 1, 3000 do total = total + work(i) end
debug.sethook()
print(total, calls > 0)
''',
    'short.lua': '''
local x = 0
for i = 1, 2000000 * (tonumber(arg[1]) or 1) do x = (x + i * 3) % 1000003 end
print(x)
''',
    'busy.lua': '''
local function tiny(x) return x + 1 end
local s = 0
for i = 1, 1500000 do s = tiny(tiny(s)) + i % 7 end
io.write(string.format("%.6f\\n", os.clock()))
''',
    'io.lua': '''
local t0 = os.time()
os.execute("sleep 0.3")
local p = io.popen("printf 'a\\\\nb\\\\n'; sleep 0.2; printf 'c\\\\n'")
local got = p:read("*a")
p:close()
local x = 0
for i = 1, 300000 do x = x + i % 3 end
print(#got, got:gsub("\\n", ","), x, os.time() - t0 < 5)
''',
    'sleepexec.lua': '''
local ffi = require "ffi"
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } lt_ts;
int nanosleep(const lt_ts *req, lt_ts *rem);
int poll(void *fds, unsigned long nfds, int timeout);
int execvp(const char *file, char *const argv[]);
]]
local function spin(n) local s = 0 for i = 1, n do s = s + i % 7 end return s end
local ts, nano, poll = ffi.new("lt_ts", 0, 2000000), 0, 0
for _ = 1, 150 do
  spin(30000) -- CPU time between the waits: ticks come due about them
  if ffi.C.nanosleep(ts, nil) ~= 0 then nano = nano + 1 end
  if ffi.C.poll(nil, 0, 2) ~= 0 then poll = poll + 1 end
end
print("EINTR", nano, poll)
io.stdout:flush()
local argv = ffi.new("char *[4]")
argv[0], argv[1], argv[2] = ffi.cast("char *", "sh"), ffi.cast("char *", "-c"),
                            ffi.cast("char *", "echo exec-ok")
spin(3000000) -- the exec comes with the CPU time running
ffi.C.execvp("sh", argv)
''',
    'ownsig.lua': '''
local ffi = require "ffi"
ffi.cdef[[
typedef struct { long tv_sec; long tv_usec; } lt_tv;
typedef struct { lt_tv it_interval; lt_tv it_value; } lt_itv;
int setitimer(int which, const lt_itv *new, lt_itv *old);
typedef struct { unsigned long val[16]; } lt_sigset;
int sigemptyset(lt_sigset *set);
int sigaddset(lt_sigset *set, int signum);
int sigprocmask(int how, const lt_sigset *set, lt_sigset *old);
int sigpending(lt_sigset *set);
int sigismember(const lt_sigset *set, int signum);
]]
local SIGPROF, ITIMER_PROF, SIG_BLOCK = 27, 2, 0
local set = ffi.new("lt_sigset")
ffi.C.sigemptyset(set)
ffi.C.sigaddset(set, SIGPROF)
assert(ffi.C.sigprocmask(SIG_BLOCK, set, nil) == 0)
local itv = ffi.new("lt_itv")
itv.it_value.tv_usec, itv.it_interval.tv_usec = 2000, 2000
assert(ffi.C.setitimer(ITIMER_PROF, itv, nil) == 0)
local function spin() local t = os.clock() local x = 0 while os.clock() - t < 0.2 do x = x + 1 end return x end
spin()
local pend = ffi.new("lt_sigset")
ffi.C.sigpending(pend)
print("SIGPROF pending", ffi.C.sigismember(pend, SIGPROF) == 1)
''',
    'sigreset.lua': '''
local sig = require "posix.signal"
local function work(n) local s = 0 for i = 1, n do s = s + i % 7 end return s end
work(2e5) -- the ticks have begun
local got = 0
for n = 1, 64 do
  if arg[1] == "default" then pcall(sig.signal, n, sig.SIG_DFL)
  elseif n >= 34 and n <= 50 then -- glibc's SIGRTMIN is 34: the tick's is SIGRTMIN+6
    sig.signal(n, function() got = got + 1 end)
  end
end
work(2e7)
print(arg[1], "handler calls", got)
print(os.clock())
''',
    'sleepy.lua': '''
local function spin() local t = os.clock() while os.clock() - t < 0.2 do end end
local function nap() os.execute("sleep 0.6") end
spin() nap()
''',
}


def run_sampled(args, tmp, prog, extra=(), attempt=0, lua=None, env=None):
    """recorderd run --time sample [extra] -- lua PROG: (stdout, session dir)."""
    out = os.path.join(tmp, 'out%d-%s' % (attempt, '-'.join(extra) or 'cpu'))
    res = harness.run_ok([args.recorderd, 'run', '--quiet', '--time', 'sample'] + list(extra)
                         + ['--format', 'profile,folded', '--out', out, '--', lua or args.lua,
                            prog],
                         tmp, env=env)
    return res.out.decode(), harness.find_session(out)


def session_json(session):
    with open(os.path.join(session, 'session.json')) as f:
        return json.load(f)


def folded_ns(session):
    """{stack: ns} of the session's stacks.folded (weights: ns)."""
    w = {}
    with open(os.path.join(session, 'stacks.folded')) as f:
        for line in f:
            stack, _, n = line.rstrip('\n').rpartition(' ')
            w[stack] = w.get(stack, 0) + int(n)
    return w


def under(w, name):
    return sum(n for s, n in w.items() if any(f.startswith(name + '@') for f in s.split(';')))


def case_split(args, tmp):
    env = harness.base_env()
    if 'libasan' in env.get('LD_PRELOAD', ''):
        # AddressSanitizer's hook takes nearly every tick (charged to
        # nobody): a CI run left one/three 4 ticks of 1 ms, or none; ticks
        # of 0.2 ms give the program's part enough for the same bound,
        # from the task clock (the default POSIX timer fires every 4 ms;
        # this program neither waits nor execs: the task clock is safe)
        env['LUATRACE_TICK_US'] = '200'
        env['LUATRACE_TICK_PERF'] = '1'

    def once(attempt):
        _, session = run_sampled(args, tmp, 'split.lua', attempt=attempt, env=env)
        w = folded_ns(session)
        one, three = under(w, 'one'), under(w, 'three')
        harness.expect(one > 0 and three > 0, 'no time for one/three: %r' % w)
        r = three / one
        print('three/one %.2f (want 3 within 35%%)' % r)
        harness.expect(1.95 <= r <= 4.05, 'three/one %.2f' % r)
    harness.retried(once)


def case_total(args, tmp):
    def once(attempt):
        out, session = run_sampled(args, tmp, 'busy.lua', attempt=attempt)
        cpu = float(out.split()[0]) * 1e9
        j = session_json(session)
        harness.expect(j['time'] == 'sample' and j['tick'] and j['tick']['clock'] == 'cpu',
                       'session.json time %r tick %r' % (j.get('time'), j.get('tick')))
        t = j['tick']
        ticks_ns = t['ns'] + t['hook_ns']  # the first ticks are shorter
        print('ticks %.3f s (program %d, hooks %d), os.clock %.3f s'
              % (ticks_ns / 1e9, t['ticks'], t['hook_ticks'], cpu / 1e9))
        harness.expect(abs(ticks_ns - cpu) <= 0.25 * cpu,
                       'ticks %.3f s against CPU %.3f s' % (ticks_ns / 1e9, cpu / 1e9))
        with open(os.path.join(session, 'profile.txt')) as f:
            harness.expect('time: sampled CPU time' in f.read(), 'profile.txt: no time source')
        with open(os.path.join(session, 'report.html')) as f:
            harness.expect('time source' in f.read(), 'report.html: no time source row')
    harness.retried(once)


def case_hook(args, tmp):
    out, session = run_sampled(args, tmp, 'busy.lua')
    cpu = float(out.split()[0]) * 1e9
    j = session_json(session)
    t = j['tick']
    print('program %.3f s, hooks %d ticks, traced CPU %.3f s'
          % (j['traced_ns'] / 1e9, t['hook_ticks'], cpu / 1e9))
    harness.expect(t['hook_ticks'] > 0, 'no tick counted in the hook')
    harness.expect(j['traced_ns'] < 0.85 * cpu,
                   'the program got %.3f s of %.3f s traced CPU: the hooks charged to it'
                   % (j['traced_ns'] / 1e9, cpu / 1e9))


FEW = 'few samples, times rough'


def samples_run(args, tmp, prog, arg=(), attempt=0):
    """recorderd run (the default, summary on) -- lua PROG ARG: (stderr,
    session.json's tick, profile.txt, report.html)."""
    out = os.path.join(tmp, 'samples%d-%s' % (attempt, '-'.join(arg)))
    res = harness.run_ok([args.recorderd, 'run', '--out', out, '--', args.lua, prog] + list(arg),
                         tmp)
    session = harness.find_session(out)
    texts = []
    for name in ('profile.txt', 'report.html'):
        with open(os.path.join(session, name)) as f:
            texts.append(f.read())
    return res.err.decode(), session_json(session)['tick'], texts[0], texts[1]


def jit_debits(args, tmp):
    """LuaJIT's debits: profile.txt's time line says how many of the
    program's ms they took off, and the traced time is the rest."""
    out = os.path.join(tmp, 'samples-jit')
    harness.run_ok([args.recorderd, 'run', '--quiet', '--out', out, '--', args.luajit, 'busy.lua'],
                   tmp)
    with open(os.path.join(harness.find_session(out), 'profile.txt')) as f:
        text = f.read()
    traced = re.search(r'traced time: ([\d.]+) ms', text)
    ticks = re.search(r'([\d.]+) ms where the program was, in \d+ samples; ([\d.]+) ms of them '
                      r'taken off', text)
    harness.expect(traced and ticks, 'luajit: no debits said: %r' % text[:600])
    rest = float(ticks.group(1)) - float(ticks.group(2))
    print('luajit: %s ms of ticks, %s taken off, traced %s' % (ticks.group(1), ticks.group(2),
                                                               traced.group(1)))
    harness.expect(abs(rest - float(traced.group(1))) <= 0.15,
                   'luajit: ticks less debits %.1f ms, traced %s ms' % (rest, traced.group(1)))


def case_samples(args, tmp):
    err, tick, profile, page = samples_run(args, tmp, 'short.lua')
    print('short: %d samples, %d ticks' % (tick['samples'], tick['ticks']))
    harness.expect(0 < tick['samples'] < 100 and tick['samples'] <= tick['ticks'],
                   'short: session.json tick %r' % tick)
    for where, text in (('the summary', err), ('profile.txt', profile), ('report.html', page)):
        harness.expect(FEW in text, 'short: %s does not say %r' % (where, FEW))
    harness.expect('%d samples' % tick['samples'] in profile, 'profile.txt: no sample count')
    harness.expect('taken off' not in profile, 'Lua 5.1 (no debits): %r' % profile[:400])
    if args.luajit and shutil.which(args.luajit):
        jit_debits(args, tmp)

    def once(attempt):
        err, tick, profile, page = samples_run(args, tmp, 'short.lua', ['40'], attempt)
        print('short x40: %d samples, %d ticks' % (tick['samples'], tick['ticks']))
        harness.expect(100 <= tick['samples'] <= tick['ticks'], 'short x40: session.json tick %r'
                       % tick)
        for where, text in (('the summary', err), ('profile.txt', profile), ('report.html', page)):
            harness.expect(FEW not in text, 'short x40: %s says %r' % (where, FEW))
    harness.retried(once)


def case_io(args, tmp):
    plain = harness.run_ok([args.lua, 'io.lua'], tmp).out.decode()
    for extra in ((), ('--clock', 'wall')):
        out, session = run_sampled(args, tmp, 'io.lua', extra)
        harness.expect(out == plain, '%s: output %r, untraced %r' % (extra, out, plain))
        harness.expect(session_json(session)['status'] == 'complete', 'incomplete session')


def case_wall(args, tmp):
    for extra, lo, hi in ((('--clock', 'wall'), 0.2, 0.95), ((), 0.0, 0.15)):
        harness.retried(lambda attempt: wall_once(args, tmp, extra, lo, hi, attempt))


def wall_once(args, tmp, extra, lo, hi, attempt):
    """One run of sleepy.lua with the clock of extra: the sleep's share."""
    _, session = run_sampled(args, tmp, 'sleepy.lua', extra, attempt)
    w = folded_ns(session)
    spin, nap = under(w, 'spin'), under(w, 'nap')
    share = nap / max(1, spin + nap)
    print('%s: nap %.0f%% of spin + nap' % (extra or 'cpu', 100 * share))
    harness.expect(lo <= share <= hi, '%s: the sleep is %.0f%% (want %.0f-%.0f%%)'
                   % (extra or 'cpu', 100 * share, 100 * lo, 100 * hi))
    harness.expect(session_json(session)['tick']['clock'] == (extra[1] if extra else 'cpu'),
                   'session.json names another clock')


def case_ownsig(args, tmp):
    if not args.luajit or not shutil.which(args.luajit):
        print('SKIP: no luajit (--luajit)')
        raise SystemExit(harness.SKIP)
    plain = harness.run_ok([args.luajit, 'ownsig.lua'], tmp).out.decode()
    out, session = run_sampled(args, tmp, 'ownsig.lua', lua=args.luajit)
    harness.expect(plain == out == 'SIGPROF pending\ttrue\n',
                   'traced %r, untraced %r' % (out, plain))
    harness.expect(session_json(session)['tick']['ticks'] > 0, 'no tick counted')


def case_sleepexec(args, tmp):
    """A program (LuaJIT's FFI) that sleeps in C (nanosleep, poll) between
    bits of CPU time, then replaces itself with execvp: traced with sampled
    CPU time, no wait returns EINTR and the new program runs, as untraced.
    The task clock's signal (perf_event_open, the default before) broke
    waits as the thread left the CPU, and one queued by execve killed the
    new program ('Real-time signal 6')."""
    if not args.luajit or not shutil.which(args.luajit):
        print('SKIP: no luajit (--luajit)')
        raise SystemExit(harness.SKIP)
    plain = harness.run_ok([args.luajit, 'sleepexec.lua'], tmp).out.decode()
    harness.expect(plain == 'EINTR\t0\t0\nexec-ok\n', 'untraced: %r' % plain)
    for k in range(3):
        out, _ = run_sampled(args, tmp, 'sleepexec.lua', lua=args.luajit, attempt=k)
        harness.expect(out == plain, 'traced (run %d): %r, untraced %r' % (k, out, plain))


def case_sigreset(args, tmp):
    if harness.run([args.lua, '-e', 'require "posix.signal"'], tmp, None).status != 0:
        print('SKIP: luaposix is not installed')
        raise SystemExit(harness.SKIP)
    luas = [args.lua] + ([args.luajit] if args.luajit and shutil.which(args.luajit) else [])
    for lua in luas:
        for mode in ('default', 'own'):
            plain = harness.run_ok([lua, 'sigreset.lua', mode], tmp).out.decode()
            out = os.path.join(tmp, 'sigreset-%s-%s' % (os.path.basename(lua), mode))
            r = harness.run([args.recorderd, 'run', '--quiet', '--out', out, '--', lua,
                             'sigreset.lua', mode], tmp, None)
            traced = r.out.decode()
            harness.expect(r.status == 0 and traced.split('\n')[0] == plain.split('\n')[0],
                           '%s %s: status %d, output %r, untraced %r'
                           % (lua, mode, r.status, traced, plain))
            j = session_json(harness.find_session(out))
            cpu = float(traced.split('\n')[1])
            ticked = (j['tick']['ns'] + j['tick']['hook_ns']) / 1e9
            print('%s %s: %.3f s of ticks, %.3f s of CPU' % (lua, mode, ticked, cpu))
            harness.expect(j['status'] == 'complete' and ticked >= 0.5 * cpu,
                           '%s %s: the ticks stopped (%.3f s of %.3f s of CPU): %s'
                           % (lua, mode, ticked, cpu, j))


def plain_parts(args, tmp, scale=None):
    """parts.lua untraced: {part: os.clock seconds} (scale: the iterations)."""
    out = harness.run_ok([args.lua, 'parts.lua'] + list(scale or []), tmp).out.decode()
    return dict((k, float(v)) for k, v in (line.split() for line in out.splitlines()))


def case_default(args, tmp):
    scale = harness.run_ok([args.lua, 'parts.lua'], tmp).out.decode().split()

    def once(attempt):
        truth = plain_parts(args, tmp, scale)
        out = os.path.join(tmp, 'default%d' % attempt)
        harness.run_ok([args.recorderd, 'run', '--quiet', '--format', 'folded', '--out', out, '--',
                        args.lua, 'parts.lua'] + scale, tmp)
        session = harness.find_session(out)
        j = session_json(session)
        harness.expect(j['time'] == 'sample' and j['lines'] == 'sample',
                       'the default: time %r, lines %r' % (j['time'], j.get('lines')))
        w = folded_ns(session)
        got = {k: under(w, k) for k in truth}
        tt, tg = sum(truth.values()), max(1, sum(got.values()))
        worst = 0
        for k in sorted(truth):
            p, q = 100 * truth[k] / tt, 100 * got[k] / tg
            print('%-6s plain %5.1f%%  profile %5.1f%%  %+5.1f' % (k, p, q, q - p))
            worst = max(worst, abs(q - p))
        harness.expect(worst <= 8, 'a part %.1f points off its plain share' % worst)
    harness.retried(once)


def case_lines(args, tmp):
    """Lines by sample: a tick lands on the program's current line. The
    math.sin line is about 95% of the two lines' own time plain; its own
    time is what is left after 10M C calls' debits, so a dear calibration
    on a loaded machine can take a fair part of it: retried, as a bias
    would fail every attempt."""
    def once(attempt):
        out = os.path.join(tmp, 'lines%d' % attempt)
        harness.run_ok([args.recorderd, 'run', '--quiet', '--format', 'annotate', '--out', out,
                        '--', args.lua, 'lines.lua'], tmp)
        session = harness.find_session(out)
        info = session_json(session)
        harness.expect(info['lines'] == 'sample', 'session.json: lines not sample')
        harness.expect(not os.path.exists(os.path.join(session, 'coverage.lcov')),
                       'coverage.lcov written for lines by sample')
        with open(os.path.join(session, 'profile.txt')) as f:
            prof = f.read()
        harness.expect('lines by sample' in prof, 'profile.txt does not say lines by sample')
        sin = [ln for ln in prof.splitlines() if ln.rstrip().endswith('math.sin [C]')]
        harness.expect(sin and sin[0].split()[0] == '10000000', 'math.sin calls: %r' % sin[:1])
        with open(os.path.join(session, 'annotate', 'lines.lua.txt')) as f:
            ann = f.read()
        harness.expect('samples that saw the line' in ann, 'annotate: hits not called samples')
        ms = {}
        for ln in ann.splitlines():
            f = ln.split()
            if len(f) >= 3 and f[2] in ('4', '5') and f[0].isdigit():
                ms[f[2]] = float(f[1])
        print('line 4 %.1f ms, line 5 %.1f ms' % (ms.get('4', 0), ms.get('5', 0)))
        heavy, light = ms.get('4', 0), ms.get('5', 0)
        harness.expect(heavy > 0 and heavy >= 0.75 * (heavy + light),
                       'the math.sin line got %.1f of %.1f ms (bias_ns %r)'
                       % (heavy, heavy + light, info.get('bias_ns')))
    harness.retried(once)


def case_exactlines(args, tmp):
    out = os.path.join(tmp, 'lcov')
    harness.run_ok([args.recorderd, 'run', '--quiet', '--format', 'lcov', '--out', out, '--',
                    args.lua, 'lines.lua'], tmp)
    session = harness.find_session(out)
    harness.expect(session_json(session)['lines'] == 'exact', 'run -f lcov: lines not exact')
    with open(os.path.join(session, 'coverage.lcov')) as f:
        da = dict(ln[3:].split(',')[:2] for ln in f.read().splitlines() if ln.startswith('DA:'))
    # line 5's loop body: 25000 iterations of 100 calls, and the loop's end
    harness.expect(da.get('5') == str(100 * 25001), 'DA of line 5: %r' % da.get('5'))
    for extra in (['--lines', 'sample', '--format', 'lcov'], ['--lines', 'sample', '--coverage'],
                  ['--lines', 'sample', '--time', 'exact']):
        r = harness.run([args.recorderd, 'run'] + extra + ['--', args.lua, 'lines.lua'], tmp,
                        harness.base_env())
        err = r.err.decode()
        harness.expect(r.status == 2 and err.count('\n') == 1 and '--lines sample' in err,
                       '%s: exit %d, %r' % (' '.join(extra), r.status, err))


def self_ns(w, name):
    """ns of the stacks that end in a frame of name."""
    return sum(n for s, n in w.items() if s.split(';')[-1].startswith(name + '@'))


def case_cself(args, tmp):
    """A C function's own time: string.rep of 2 MB beside a Lua loop, each
    timed by the program itself; under run's default string.rep's self time
    is within 10 points of its plain share. Under LuaJIT, which reports no
    C return, the tick's frame was closed before the tick was charged, and
    string.rep got 0 (co_tick_pending_c)."""
    def once(attempt):
        plain = harness.run_ok(lua_cmd(args.lua) + ['cself.lua'], tmp).out.decode().split()
        truth = 100 * float(plain[1]) / (float(plain[1]) + float(plain[3]))
        out = os.path.join(tmp, 'cself%d' % attempt)
        harness.run_ok([args.recorderd, 'run', '--quiet', '--format', 'folded', '--out', out, '--',
                        args.lua, 'cself.lua'], tmp)
        session = harness.find_session(out)
        if 'luajit' in os.path.basename(args.lua):
            # the dispatch calibration, our hook's residue with it (co_calib.c)
            b = session_json(session).get('bias_ns') or {}
            harness.expect(b.get('lua_call', 0) > 0 and b.get('c_call', 0) > 0,
                           'LuaJIT: no calibration: bias_ns %r' % b)
        w = folded_ns(session)
        c, lua = self_ns(w, 'string.rep'), under(w, 'lua_part')
        got = 100 * c / max(1, c + lua)
        print('string.rep: plain %.1f%%, profile %.1f%%' % (truth, got))
        harness.expect(abs(got - truth) <= 10, 'string.rep %.1f%% of the profile, %.1f%% plain'
                       % (got, truth))
    harness.retried(once)


def lua_cmd(lua):
    return [lua, '-joff'] if 'luajit' in os.path.basename(lua) else [lua]


def case_sameshape(args, tmp):
    plain = harness.run_ok([args.lua, 'shapes.lua'], tmp).out.decode()
    sessions = {}
    for how in ('default', 'exact'):
        out = os.path.join(tmp, 'shape-' + how)
        extra = ['--time', 'exact'] if how == 'exact' else []
        r = harness.run_ok([args.recorderd, 'run', '--quiet', '--format', 'profile,folded'] + extra
                           + ['--out', out, '--', args.lua, 'shapes.lua'], tmp)
        harness.expect(r.out.decode() == plain, '%s: output %r, untraced %r'
                       % (how, r.out.decode(), plain))
        sessions[how] = harness.find_session(out)
    a, b = harness.calls_of(sessions['default']), harness.calls_of(sessions['exact'])
    harness.expect(a == b, 'calls differ: %r' % {k: (a.get(k), b.get(k)) for k in set(a) | set(b)
                                                 if a.get(k) != b.get(k)})
    sampled, exact = folded_ns(sessions['default']), folded_ns(sessions['exact'])
    strip = lambda st: ';'.join(f.rsplit(':', 1)[0] for f in st.split(';'))
    known = set(strip(st) for st in exact)
    odd = [st for st in sampled if strip(st) not in known]
    print('%d functions, %d sampled stacks, %d exact' % (len(a), len(sampled), len(exact)))
    harness.expect(len(a) >= 8 and sampled and not odd, 'stacks the exact trace has not: %r'
                   % odd[:5])


def case_earlytick(args, tmp):
    if not args.earlytick:
        print('skipped: no --earlytick')
        return
    plain = harness.run_ok([args.lua, 'wrapdie.lua'], tmp).out.decode()
    env = harness.base_env()  # after AddressSanitizer's runtime, if preloaded
    env['LD_PRELOAD'] = ':'.join(x for x in (env.get('LD_PRELOAD'), args.earlytick) if x)
    folded = {}
    for how in ('default', 'exact'):
        out = os.path.join(tmp, 'early-' + how)
        extra = ['--time', 'exact'] if how == 'exact' else []
        r = harness.run([args.recorderd, 'run', '--quiet'] + extra + ['--out', out, '--',
                         args.lua, 'wrapdie.lua'], tmp, env)
        harness.expect(r.status == 0 and r.out.decode() == plain, '%s: status %d, output %r,'
                       ' untraced %r' % (how, r.status, r.out.decode(), plain))
        session = harness.find_session(out)
        path = os.path.join(tmp, 'early-%s.folded' % how)
        harness.run_ok([args.recorderd, 'report', session, '--format', 'folded', '--weight',
                        'calls', '-o', path], tmp)
        with open(path) as f:
            folded[how] = dict((st, int(n)) for st, _, n in
                               (ln.rstrip('\n').rpartition(' ') for ln in f))
        if how == 'default':  # the tick came: the program alone gets none (a few ms)
            j = session_json(session)
            harness.expect(j['traced_ns'] > 0 and j['bad_records'] == 0,
                           'no early tick, or bad records: %s' % j)
            # THREAD records' addresses, the main thread's first
            addrs = [a[1] for k, a in collector.trace_records(os.path.join(session, 'trace.ltr'))
                     if k == collector.EV_THREAD]
            harness.expect(addrs.count(addrs[0]) == 1, 'the main thread got %d ids'
                           % addrs.count(addrs[0]))
    a, b = folded['default'], folded['exact']
    harness.expect(a == b and len(a) >= 8, 'calls by stack differ from --time exact\'s: %r'
                   % {k: (a.get(k), b.get(k)) for k in set(a) | set(b) if a.get(k) != b.get(k)})
    print('%d stacks, as --time exact' % len(a))


def calib_run(args, tmp, hist, k):
    """A short LuaJIT run under the default with LUATRACE_CALIB_HISTORY
    = hist: session.json's bias_ns."""
    out = os.path.join(tmp, 'calib%d' % k)
    harness.run_ok([args.recorderd, 'run', '--quiet', '--out', out, '--', args.lua, 'split.lua'],
                   tmp, env=dict(harness.base_env(), LUATRACE_CALIB_HISTORY=hist))
    j = session_json(harness.find_session(out))
    harness.expect(j['time'] == 'sample' and j['bias_ns'], 'no calibration: %r' % j.get('bias_ns'))
    return j['bias_ns']


def history(path):
    with open(path) as f:
        return [line.split() for line in f]


def write_history(path, rows, mode=0o600):
    with open(path, 'w') as f:
        f.writelines(' '.join(r) + '\n' for r in rows)
    os.chmod(path, mode)


def case_calibhistory(args, tmp):
    """(LuaJIT) each calibration's figures go to the history file, with
    the binary's and the collector's identity; a start that calibrates
    dearer by a fifth than the cheaper quarter of the last hour's (three
    at least) takes those: seeded at 1, 0.5 and 0.06 ns, the next run's
    bias_ns says 1, 0.5, 0.1; a call's figure cheaper than half of theirs
    takes it too (seeded at 200 ns). Not taken: LUATRACE_CALIB_HISTORY=0 (nothing
    written either), entries of another build or older than an hour, a
    file others may write."""
    hist = os.path.join(tmp, 'calib')
    for k in range(3):
        calib_run(args, tmp, hist, k)
    rows = history(hist)
    harness.expect(len(rows) == 3 and all(len(r) == 7 and r[0] == '1' for r in rows) and
                   len({(r[2], r[3]) for r in rows}) == 1, 'the history: %r' % rows)
    harness.expect(os.stat(hist).st_mode & 0o077 == 0, 'the history is open to others')
    measured = [int(r[4]) for r in rows]
    harness.expect(all(m > 2 * 16 for m in measured), 'a Lua call measured at %r' % measured)
    # a switch's figure below any measured (0.06 ns): a measured one is
    # cheaper than 3 ns at times, and then rightly kept
    cheap = [r[:4] + ['16', '8', '1'] for r in rows]
    write_history(hist, cheap)
    b = calib_run(args, tmp, hist, 3)
    harness.expect((b['lua_call'], b['c_call'], b['switch']) == (1.0, 0.5, 0.1),
                   'the history\'s cheaper figures not taken: %r' % b)
    harness.expect(len(history(hist)) == 4 and int(history(hist)[3][4]) > 32,
                   'the run\'s own figures not kept: %r' % history(hist))
    # a call's figure far cheaper than the history's (a start once measured
    # 1.8 ns against 4.1 to 5.9): the cheaper quarter's, 200 ns here, as
    # no start measures 100; a switch's cheap figure may stay
    dear = [r[:4] + ['3200', '3200', '16'] for r in rows + rows[:1]]
    write_history(hist, dear)
    b = calib_run(args, tmp, hist, 9)
    harness.expect((b['lua_call'], b['c_call']) == (200.0, 200.0),
                   'a call\'s figure far below the history\'s kept: %r' % b)
    write_history(hist, cheap)
    b = calib_run(args, tmp, '0', 4)
    harness.expect(b['lua_call'] > 2, 'LUATRACE_CALIB_HISTORY=0 took the history: %r' % b)
    harness.expect(len(history(hist)) == 3, 'LUATRACE_CALIB_HISTORY=0 wrote it')
    other = [r[:3] + ['%x' % (int(r[3], 16) ^ 1)] + r[4:] for r in cheap]
    old = [[r[0], str(int(r[1]) - 7200)] + r[2:] for r in cheap]
    for k, (rows, mode, what) in enumerate(((other, 0o600, 'another build\'s'), (old, 0o600, 'old'),
                                            (cheap, 0o622, 'a file others may write'))):
        write_history(hist, rows, mode)
        b = calib_run(args, tmp, hist, 5 + k)
        harness.expect(b['lua_call'] > 2, '%s entries taken: %r' % (what, b))
    print('history taken when seeded cheaper; not from another build, old entries, '
          'a file open to others, nor with LUATRACE_CALIB_HISTORY=0')


CASES = {'default': case_default, 'calibhistory': case_calibhistory, 'lines': case_lines, 'exactlines': case_exactlines,
         'sameshape': case_sameshape, 'split': case_split, 'total': case_total, 'hook': case_hook, 'io': case_io,
         'wall': case_wall, 'ownsig': case_ownsig, 'sleepexec': case_sleepexec, 'cself': case_cself,
         'earlytick': case_earlytick, 'samples': case_samples, 'sigreset': case_sigreset}


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--recorderd', required=True)
    p.add_argument('--lua', default='lua5.1')
    p.add_argument('--luajit', help='ownsig: LuaJIT, whose FFI sets the timer')
    p.add_argument('--earlytick', help='earlytick: tests/hosts/earlytick.so')
    p.add_argument('cases', nargs='+', choices=sorted(CASES))
    args = p.parse_args(argv)
    if not harness.have_recorderd(args.recorderd):
        return harness.SKIP
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    tmp = tempfile.mkdtemp(prefix='luatrace-ticks-')
    try:
        for name, text in PROGRAMS.items():
            with open(os.path.join(tmp, name), 'w') as f:
                f.write(text)
        for case in args.cases:
            print('== %s' % case)
            CASES[case](args, tmp)
    except harness.Failure as e:
        print('FAIL: %s' % e)
        return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print('PASS')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
