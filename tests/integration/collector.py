#!/usr/bin/env python3
"""Behaviour of the collector and recorderd around the trace itself.

  collector.py CASE --recorderd PATH --cpath DIR [--lua lua5.1]

Each case starts real processes (a `recorderd listen` daemon on a socket in
a temporary directory, lua5.1 with luatrace.so from DIR) and cleans up its
daemon, socket and shm segments even when it fails. Cases:
  tron        tron()/troff() trace only the region between them
  tronname    tron() with no name: the session is named after the script
  coroutine   a coroutine created before tron() is traced once resumed
  restart     troff() then tron(): threads keep their tracks, stacks are
              whole (checked against debug.getinfo)
  longpath    two modules under a 360-byte directory path keep their whole
              paths: their functions and coverage never merge
  longchunk   two chunks loaded with '@' names over 4095 bytes sharing their
              first 4096: two sources, each cut with its name's hash
  dbghook     the program's own debug.sethook/gethook work as untraced;
              tracing resumes, with whole stacks, when it removes its hook
  heapquiet   the program's own collectgarbage("count") untouched by the
              collector's ids of closures, coroutines and wraps (5.1 and
              5.4; default and --lines exact)
  spawn0      LUATRACE_SPAWN=0 with nobody listening: a clear message
  userdir     run -o . beside the script's own package directory: the
              user's directories are never moved aside or removed
  discard     LUATRACE_SINK=discard past the ring's end: no crash, output
              unchanged (lua5.1, luajit, lua5.4)
  fsizelimit  a file-size limit below the ring: a clear message, the
              program runs untraced (not killed by SIGXFSZ)
  killed      recorderd killed with SIGKILL mid-run: the program finishes
              with unchanged output and says once that tracing stopped
  signalled   a program killed by a signal: its records never published
              are read once it is gone
  profile     lua5.1 -lluatrace.profile: summary at exit, reports written
  manyfuncs   2600 functions: profile.txt's tables list 2000 each, the
              rest summed up in one row
  cnames      C functions no global reaches: package.loaders[N],
              luaopen_lfs, FILE*:read, lfs's directory iterator; never
              function#N
  jitcnames   the library's iterators and a wrap generator under LuaJIT
  summary     run's summary: traced time, events, the top 10 by self time
              as profile.txt has them, the report.html to open
  requirenames  require "a" and package.loaders[2] "a": a frame per module
              loaded, its time as the program's own clock weighs it
  labels      name (file:line), relative to the program's working directory,
              in every output people read; folded stacks whole
  badtrace    recorderd report refuses a non-trace and a truncated trace
  exit        os.exit inside nested calls: session complete, exit code kept
  badring     LUATRACE_RING values that are not a power of two in range:
              a clear message, the program runs untraced
  overflow    stack overflows (Lua and C recursion limits) caught in the
              main thread and in a coroutine: stacks before, at 20 000
              deep and after are debug.getinfo's, those deeper than 1000
              frames printed cut as recorderd prints them; reports stay
              small
  invisible   under recorderd run the program finds no collector in
              package.loaded or _G; require "luatrace" gives the API
  ownframes   LUA_INIT's chunk, require and luaopen_luatrace are in no
              profile; a script that fails to load leaves no session
  dashl       lua5.1 -lluatrace app.lua traces with no LUATRACE_SHM; no
              recorderd: one line; recorderd env
  staleshm    a ring left in /dev/shm by a program killed while it made it
              (only its pid written) or before recorderd took it (whole): the
              next program of that name removes it and takes the name; one
              whose producer lives is left, the program gets NAME.PID
  staleshmsweep  listen removes every such ring as it starts, whatever
              its name
  closedstd   a program started with stdin, stdout or stderr closed, traced by
              listen, by a private recorder and by run: its reads and writes
              there fail as untraced (none waits on or writes into
              recorderd's socket), its status is kept, a session is written
"""

import gzip
import json
import re
import os
import shutil
import signal
import struct
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corpus import plain_trace, trace_body  # noqa: E402
import harness  # noqa: E402
from harness import Failure, base_env, cases, expect, need_luajit, run, wait_file  # noqa: E402

def same_output(a, b):
    expect(a.out == b.out, 'stdout differs:\n%r\n%r' % (a.out[:300], b.out[:300]))
    expect(a.status == b.status, 'exit status %d, untraced %d' % (b.status, a.status))


TRON = '''
local function before() local x = 0 for i = 1, 10 do x = x + i end return x end
local function inside() local x = 0 for i = 1, 10 do x = x + i end return x end
local function after() local x = 0 for i = 1, 10 do x = x + i end return x end
print(before())
local luatrace = require "luatrace"
print(luatrace.tron{shm = "region"})
print(inside())
luatrace.troff()
print(after(), luatrace.tracing())
'''


def case_tron(c):
    prog = c.write('tron.lua', TRON)
    plain = c.lua(prog, c.env(LUATRACE_SPAWN='0'))
    c.start_daemon()
    traced = c.lua(prog, c.env(LUATRACE_SOCKET=c.sock))
    c.stop_daemon()
    expect(plain.out.decode().splitlines()[1] == 'false', 'untraced tron() should say false')
    lines = traced.out.decode().splitlines()
    expect(lines[1] == 'true', 'tron() returned %r' % lines[1])
    expect(lines[0] == plain.out.decode().splitlines()[0], 'output changed')
    rows = c.folded(c.session('region'))
    text = '\n'.join(rows)
    expect('inside@tron.lua:3' in text, 'the traced region is missing:\n' + text)
    expect('before@' not in text and 'after@' not in text, 'code outside tron/troff traced:\n' + text)
    # one line event entering inside(), one per backward jump of its loop
    expect(rows.get('lua5.1@[C];main chunk@tron.lua:0;inside@tron.lua:3') == 11,
           'inside() should have 11 line events: %s' % rows)


def case_tronname(c):
    """tron() with no name (no settings.shm, no LUATRACE_SHM) names the
    session after the script, as run does (it was 'lua' for every
    program)."""
    prog = c.write('myscript.lua', 'local lt = require "luatrace"\nprint(lt.tron())\n'
                   'local function f() return 1 end\nprint(f())\nlt.troff()\n')
    c.start_daemon()
    r = c.lua(prog, c.env(LUATRACE_SOCKET=c.sock))
    c.stop_daemon()
    expect(r.status == 0 and r.out == b'true\n1\n', 'tron: %d %r %r' % (r.status, r.out, r.err))
    expect(os.listdir(c.out) == ['myscript'], 'sessions: %s' % os.listdir(c.out))


COROUTINE = '''
local luatrace = require "luatrace"
local gen = coroutine.create(function()
  for i = 1, 3 do
    coroutine.yield(i)
  end
end)
print(coroutine.resume(gen))
luatrace.tron{shm = "late"}
print(coroutine.resume(gen))
print(coroutine.resume(gen))
luatrace.troff()
'''


def case_coroutine(c):
    prog = c.write('late.lua', COROUTINE)
    c.start_daemon()
    r = c.lua(prog, c.env(LUATRACE_SOCKET=c.sock))
    c.stop_daemon()
    expect(r.status == 0 and r.out.decode().count('true') == 3, 'program failed: %r' % r.err)
    rows = c.folded(c.session('late'))
    body = [s for s in rows if s.endswith('@late.lua:3')]
    expect(body, 'the pre-existing coroutine was not traced:\n' + '\n'.join(rows))
    expect(all('coroutine.resume@[C];' in s for s in body),
           'coroutine not under its resumer: %s' % body)
    # lines 4 and 5 run twice after tron: 4 line events in the coroutine
    expect(sum(rows[s] for s in body) == 4, 'line events in coroutine: %s' % rows)


# The truth of the restart, dbghook and overflow programs: where() is the
# stack of its caller, root first, as folded stacks name frames after their
# '@' (SRC:LINEDEFINED, [C]), however deep (linear: a stack overflow's is
# 15 000 frames); drive(co) resumes co and returns what resume does, and a
# probe in co prefixes its own stack with the resumer's (resumer;[C] for
# coroutine.resume).
WHERE = harness.LUA_FOLDED + '''
local function where()
  local s = folded(3)
  return s
end
local resumer = ""
local function drive(co)
  resumer = where()
  return coroutine.resume(co)
end
'''

RESTART = WHERE + '''
local luatrace = require "luatrace"
local function probe()
  local s = where()
  if coroutine.running() then s = resumer .. ";[C];" .. s end
  if luatrace.tracing() then print("TRUTH " .. s) end
end
local function body()
  for i = 1, 4 do
    probe()
    coroutine.yield(i)
  end
end
local function make() return coroutine.create(function() body() end) end
local a, b = make(), make()
drive(a); drive(b); probe()
luatrace.troff()
drive(a)           -- a runs untraced: it unhooks itself; b does not run
local d = make()   -- made untraced
probe()
luatrace.tron()
drive(a); drive(b); drive(d); probe()
drive(b); drive(d)
print(luatrace.tracing())
'''


def track_names(c, session):
    """The session's timeline tracks (report --format chrome), in order."""
    tracks = os.path.join(c.tmp, 'tracks.json')
    r = run([c.args.recorderd, 'report', session, '--format', 'chrome', '-o', tracks], c.tmp,
            base_env())
    expect(r.status == 0, 'report --format chrome: %s' % r.err.decode())
    with open(tracks) as f:
        return [e['args']['name'] for e in json.load(f)['traceEvents']
                if e.get('ph') == 'M' and e.get('name') == 'thread_name']


def truths(lines, prefix='TRUTH '):
    """{stack: count} of the program's lines that start with prefix."""
    t = {}
    for line in lines:
        if line.startswith(prefix):
            t[line[len(prefix):]] = t.get(line[len(prefix):], 0) + 1
    return t


def expect_probe_stacks(c, session, truth):
    """The calls of probe() in the session, by stack (frames after their
    '@'), are the program's own truth {stack: count} exactly."""
    got = {}
    for stack, n in c.folded(session, 'calls').items():
        frames = stack.split(';')
        if frames[-1].startswith('probe@'):
            key = ';'.join(f.rpartition('@')[2] for f in frames)
            got[key] = got.get(key, 0) + n
    expect(got == truth, 'calls of probe by stack:\n%s\nwant (debug.getinfo):\n%s'
           % (json.dumps(got, indent=1), json.dumps(truth, indent=1)))


OVERFLOW = WHERE + '''
local function probe()
  local s = where()
  if coroutine.running() then s = resumer .. ";[C];" .. s end
  print("TRUTH " .. s)
end
local function rec(n)
  if n == 500 or n % 2500 == 0 then probe() end
  return 1 + rec(n + 1)
end
print(pcall(rec, 1))
local function via_c(n)
  local ok, e = pcall(via_c, n + 1)
  if not ok then error(e, 0) end
  return e
end
print(pcall(via_c, 1))
print(drive(coroutine.create(function() local r = rec(1) return r end)))
local function after() probe() end
after()
'''


REC_LINE = OVERFLOW.split('\n').index('  return 1 + rec(n + 1)') + 1  # where it overflows


def cut_frames(stack):
    """A stack as recorderd's path writers print it (rd_path.h)."""
    frames = stack.split(';')
    if len(frames) > 1000:
        frames = frames[:100] + ['[...]'] + frames[len(frames) - 899:]
    return ';'.join(frames)


def case_overflow(c):
    """Stack overflows: stacks against debug.getinfo, reports bounded."""
    prog = c.write('overflow.lua', OVERFLOW)
    c.start_daemon(extra=('--format', 'folded,speedscope,pprof'))
    r = c.lua(prog, c.env(LUATRACE_SOCKET=c.sock, LUATRACE_SHM='overflow'), traced=True)
    c.stop_daemon()
    plain = c.lua(prog, c.env())
    expect(r.status == 0 and r.out == plain.out, 'traced output differs: %r %r' % (r.out[-300:],
                                                                                 r.err))
    out = r.out.decode().splitlines()
    said = [line for line in out if not line.startswith('TRUTH ')]
    expect(len(said) == 3 and said[1] == 'false\tC stack overflow'
           and all(said[k].startswith('false\toverflow.lua:%d: stack overflow' % REC_LINE)
                   for k in (0, 2)),
           'the overflows: %r' % said)
    truth = {}
    for line in out:
        if line.startswith('TRUTH '):
            key = cut_frames(line[6:])
            truth[key] = truth.get(key, 0) + 1
    # per thread at 500 deep and every 2500 until the overflow (15 000 here)
    deep = sum(n for key, n in truth.items() if '[...]' in key)
    expect(sum(truth.values()) >= 9 and deep >= 6, 'the program probed %d times, %d deep'
           % (sum(truth.values()), deep))
    session = c.session('overflow')
    expect_probe_stacks(c, session, truth)
    with open(os.path.join(session, 'session.json')) as f:
        meta = json.load(f)
    expect(meta['bad_records'] == 0 and meta['status'] == 'complete', 'session %s' % meta)
    for name in ('stacks.folded', 'profile.speedscope.json', 'profile.pb.gz'):
        size = os.path.getsize(os.path.join(session, name))
        expect(size < 64 << 20, '%s is %d bytes' % (name, size))
    with open(os.path.join(session, 'stacks.folded')) as f:
        deepest = max(line.count(';') + 1 for line in f)
    expect(deepest == 1000, 'the deepest folded stack has %d frames' % deepest)


def case_restart(c):
    """troff() then tron(): the threads known before keep their ids and
    tracks, and every stack after tron() is the one debug.getinfo sees,
    whether the thread ran in between (unhooked) or not (still hooked)."""
    prog = c.write('restart.lua', RESTART)
    c.start_daemon()
    r = c.lua(prog, c.env(LUATRACE_SOCKET=c.sock, LUATRACE_SHM='restart'), traced=True)
    c.stop_daemon()
    out = r.out.decode().splitlines()
    expect(r.status == 0 and out[-1] == 'true', 'program failed: %r %r' % (out, r.err))
    truth = truths(out)
    expect(sum(truth.values()) == 9, 'the program saw %d traced probes, want 9'
           % sum(truth.values()))
    session = c.session('restart')
    expect_probe_stacks(c, session, truth)
    with open(os.path.join(session, 'session.json')) as f:
        meta = json.load(f)
    expect(meta['bad_records'] == 0 and meta['unwinds'] == 0, 'session %s' % meta)
    names = track_names(c, session)
    # main once, a, b, d: the same thread keeps its track across troff/tron
    expect(len(names) == 4 and names.count('main') == 1, 'tracks: %s' % names)


# tron() in a coroutine b that coroutine a resumed, a created before b:
# main and a, b's resumers, are traced from there on, with their stacks;
# old, suspended before, from its next resume. prefixes: each running
# thread's resumers' stacks, from main.
TRONCO = WHERE + '''
local luatrace = require "luatrace"
local prefixes = {}
local function full(s)
  if coroutine.running() then return prefixes[#prefixes] .. ";[C];" .. s end
  return s
end
local function run(co)
  prefixes[#prefixes + 1] = full(where())
  local ok, e = coroutine.resume(co)
  prefixes[#prefixes] = nil
  assert(ok, e)
end
local function probe() print("TRUTH " .. full(where())) end
local function work() probe() end
local b = coroutine.create(function()
  assert(not luatrace.tracing() and luatrace.tron({shm = "tronco"}))
  work()
  coroutine.yield()
  work()
end)
local old = coroutine.create(function() coroutine.yield() work() end)
run(old)
local a = coroutine.create(function()
  run(b)
  work()
  coroutine.yield()
  work()
  run(b)
  work()
end)
run(a)
work()
run(a)
run(old)
work()
print(luatrace.tracing())
'''


def check_tronco(c, r):
    """tronco's run r: its probes' stacks are debug.getinfo's, main first."""
    out = r.out.decode().splitlines()
    expect(r.status == 0 and out[-1] == 'true', 'program failed: %r %r' % (out, r.err))
    truth = truths(out)
    expect(sum(truth.values()) == 8, 'want 8 traced probes: %s' % truth)
    session = c.session('tronco')
    expect_probe_stacks(c, session, truth)
    with open(os.path.join(session, 'session.json')) as f:
        meta = json.load(f)
    expect(meta['bad_records'] == 0, 'session %s' % meta)
    names = track_names(c, session)
    expect(names and names[0] == 'main' and names.count('main') == 1, 'tracks: %s' % names)


def case_tronco(c):
    """tron() in a coroutine resumed by another: every later stack of the
    main thread, of that coroutine, of the one between and of one
    suspended before is debug.getinfo's; main is the first track."""
    prog = c.write('tronco.lua', TRONCO)
    c.start_daemon()
    r = c.lua(prog, c.env(LUATRACE_SOCKET=c.sock))
    c.stop_daemon()
    check_tronco(c, r)


def case_tronco54(c):
    """tronco under Lua 5.4 (whose coroutine.running() also answers in
    the main thread: the probe asks its second result). 5.4's collector
    cannot walk 5.1's thread list: the resumers are found from the main
    thread down through each coroutine.resume and wrap call with the
    API. Before, only the coroutine that called tron() was traced, its
    stack from its own body: main, its resumer and the coroutine
    suspended before never had a hook (2 of the 8 probes seen)."""
    lua54 = lua54_installed()
    prog = c.write('tronco.lua', TRONCO.replace(
        'if coroutine.running() then', 'if not select(2, coroutine.running()) then'))
    c.start_daemon()
    r = run([lua54, prog], c.tmp, c.env(LUATRACE_SOCKET=c.sock,
                                        LUA_CPATH_5_4=c.args.cpath + '/lua54/?.so;;'))
    c.stop_daemon()
    check_tronco(c, r)


def case_troncojit(c):
    """tronco under LuaJIT, which has neither 5.1's thread list nor 5.4's
    registry entry of the main thread: the collector notes the main thread
    when it runs there (the program's require). Before, tron() in the
    coroutine found no main thread to follow the resumers from: the probes
    of the coroutine and of its resumer until they next switched hung
    under their own bodies (tronco.lua:39;..., tronco.lua:47;...)."""
    need_luajit()
    prog = c.write('tronco.lua', TRONCO)
    c.start_daemon()
    r = run(['luajit', prog], c.tmp, c.env(LUATRACE_SOCKET=c.sock))
    c.stop_daemon()
    check_tronco(c, r)


def in_trace_event(label, call):
    """Lua: `call` made once inside a jit.attach handler (a trace event,
    where LuaJIT runs no hook) while a hot loop gets compiled, its results
    printed after label and the event; then "hot" and the loop's sum."""
    return """local said = false
local function handler(what)
  if not said then said = true print("%s", what, %s) end
end
jit.attach(handler, "trace")
local function hot(x) return x + 1 end
local h = 0
for i = 1, 200000 do h = hot(h) end
jit.attach(handler)
print("hot", h)
""" % (label, call)


TRONGC = """local lt = require "luatrace"
local function work(n) local s = 0 for i = 1, n do s = s + i end return s end
""" + in_trace_event('attach tron', 'lt.tron({shm = "trongc"})') + """local p = newproxy(true)
getmetatable(p).__gc = function()
  print("gc tron", lt.tron({shm = "trongc"}))
  print("gc work", work(10))
end
p = nil
collectgarbage() collectgarbage()
print("tracing", lt.tracing())
print("tron", lt.tron({shm = "trongc"}))
print("work", work(20))
lt.troff()
"""


TRONHOOK = """
local lt = require "luatrace"
local said
debug.sethook(function()
  if said == nil then said = lt.tron({shm = "tronhook"}) end
end, "c")
local function work(n) local s = 0 for i = 1, n do s = s + i end return s end
print("work", work(10))
debug.sethook()
print("in hook", said)
print("after", lt.tron({shm = "tronhook"}), work(20))
lt.troff()
"""


def case_tronhookjit(c):
    """tron() inside the program's own debug hook under LuaJIT, which runs
    no hook there: it refuses as in a finalizer, and says where it is
    (it named a __gc finalizer and a jit.attach handler, places the
    program had none of); a tron() after the hook is removed traces."""
    need_luajit()
    prog = c.write('tronhook.lua', TRONHOOK)
    c.start_daemon()
    r = run(['luajit', prog], c.tmp, c.env(LUATRACE_SOCKET=c.sock))
    c.stop_daemon()
    expect(r.status == 0 and r.out == b'work\t55\nin hook\tfalse\nafter\ttrue\t210\n',
           'program: %d %r %r' % (r.status, r.out, r.err))
    lines = r.err.decode().splitlines()
    expect(lines[:1] == ['luatrace: tron: LuaJIT runs no hook inside a debug hook (the program\'s '
                         'own, debug.sethook); tracing not begun'] and
           all(ln.startswith('luatrace: LuaJIT: the JIT compiler is off') for ln in lines[1:]),
           'stderr: %r' % r.err)
    calls = {stack.split(';')[-1]: n for stack, n in c.folded(c.session('tronhook'), 'calls').items()}
    expect(calls.get('work@tronhook.lua:7') == 1, 'work after tron(): %s' % calls)


def case_trongcjit(c):
    """tron() where LuaJIT runs no hook, a jit.attach handler (a trace
    event) and a __gc finalizer: it could not trace there, nor turn the
    compiler off (the calibration's and co_jit_prepare's setmode), so it
    says so and returns false; the program goes on, and a tron() after it
    traces. Before, in the finalizer setmode raised 'bad action while in
    __gc metamethod' out of tron(), and in the handler the flush crashed
    LuaJIT (SIGSEGV), with a daemon or without."""
    need_luajit()
    prog = c.write('trongc.lua', TRONGC)
    c.start_daemon()
    r = run(['luajit', prog], c.tmp, c.env(LUATRACE_SOCKET=c.sock))
    c.stop_daemon()
    expect(r.status == 0 and r.out == b'attach tron\tstart\tfalse\nhot\t200000\n'
           b'gc tron\tfalse\ngc work\t55\ntracing\tfalse\ntron\ttrue\nwork\t210\n',
           'program: %d %r %r' % (r.status, r.out, r.err))
    expect(r.err.count(b'tron: LuaJIT runs no hook here') == 2,
           'no word of the refusals: %r' % r.err)
    calls = {stack.split(';')[-1]: n for stack, n in c.folded(c.session('trongc'), 'calls').items()}
    expect(calls.get('work@trongc.lua:2') == 1, 'work after tron(): %s' % calls)


LISTENGC = """local lt = require "luatrace"
""" + in_trace_event('attach listen', 'lt.listen()') + """local p = newproxy(true)
getmetatable(p).__gc = function() print("gc listen", lt.listen()) end
p = nil
collectgarbage() collectgarbage()
print("listen", lt.listen())
"""


def case_listengcjit(c):
    """listen() where LuaJIT runs no hook, a jit.attach handler and a __gc
    finalizer: nil and why (its calibration would flush the compiled code
    there, as tron()'s: trongcjit); a listen() after them listens. Before,
    LuaJIT crashed in the handler, and setmode raised out of listen() in
    the finalizer."""
    need_luajit()
    prog = c.write('listengc.lua', LISTENGC)
    r = run(['luajit', prog], c.tmp, c.env())
    why = b'LuaJIT runs no hook here (a __gc finalizer, a jit.attach handler): call listen() from other code'
    expect(r.status == 0 and r.out == b'attach listen\tstart\tnil\t' + why + b'\nhot\t200000\n'
           b'gc listen\tnil\t' + why + b'\nlisten\ttrue\n',
           'program: %d %r %r' % (r.status, r.out, r.err))


REQUIREGC = """local p = newproxy(true)
getmetatable(p).__gc = function()
  local lt = require "luatrace"
  print("gc require", type(lt), lt.tracing())
end
p = nil
collectgarbage() collectgarbage()
print("end")
"""


def case_requiregcjit(c):
    """require "luatrace" with LUATRACE_SHM set, first made inside a __gc
    finalizer under LuaJIT: the module loads untraced and says so (the
    compiler cannot be turned off there: trongcjit); the program goes on.
    Before, setmode raised out of require and the program died."""
    need_luajit()
    prog = c.write('requiregc.lua', REQUIREGC)
    c.start_daemon()
    r = run(['luajit', prog], c.tmp, c.env(LUATRACE_SOCKET=c.sock, LUATRACE_SHM='requiregc'))
    c.stop_daemon()
    expect(r.status == 0 and r.out == b'gc require\ttable\tfalse\nend\n',
           'program: %d %r %r' % (r.status, r.out, r.err))
    expect(b'require: LuaJIT runs no hook here' in r.err, 'no word of it: %r' % r.err)


DBGHOOK = WHERE + '''
-- the program's own debug hooks while it is traced: every probe is traced,
-- the program's hook on its thread (hooked) or not (traced)
local function probe(how)
  local s = where()
  if coroutine.running() then s = resumer .. ";[C];" .. s end
  print("TRUTH " .. how .. " " .. s)
end
local function work(n) local s = 0 for i = 1, n do s = s + i end return s end
print("gethook", debug.gethook())
probe("traced")
local lines, calls, counts = 0, 0, 0
debug.sethook(function(ev, line) lines = lines + 1 end, "l")
print("gethook", type((debug.gethook())), select(2, debug.gethook()))
work(10); probe("hooked")
debug.sethook()
print("lines", lines, "gethook", debug.gethook())
work(20); probe("traced")
debug.sethook(function() counts = counts + 1 end, "", 100)
work(1000); probe("hooked")
debug.sethook()
print("counts", counts)
local co = coroutine.create(function()
  probe("traced")
  coroutine.yield()
  probe("hooked")
  coroutine.yield()
  probe("traced")
  work(5)
end)
drive(co)
debug.sethook(co, function(ev) calls = calls + 1 end, "cr")
print("gethook co", type((debug.gethook(co))), select(2, debug.gethook(co)))
drive(co)
debug.sethook(co)
drive(co)
debug.sethook()   -- nothing of the program's to remove
probe("traced")
print("calls", calls, "gethook", debug.gethook())
-- what the program's hooks see around debug.sethook/gethook themselves
local rets, both, cnt = 0, 0, 0
debug.sethook(function() rets = rets + 1 end, "r")
work(3)
debug.sethook()
debug.sethook(function() both = both + 1 end, "cr")
work(3); print("gethook", select(2, debug.gethook()))
debug.sethook(function() both = both + 1 end, "crl")
tostring(1)
debug.sethook()
debug.sethook(function() cnt = cnt + 1 end, "r", 7)
work(30)
debug.sethook()
print("rets", rets, "both", both, "cnt", cnt)
probe("traced")
-- hooked by the program before its first resume (no id of its own yet),
-- it removes the hook itself: traced from there on
local co2 = coroutine.create(function()
  debug.sethook()
  probe("traced")
  coroutine.yield()
  probe("traced")
end)
debug.sethook(co2, function() end, "l")
drive(co2)
drive(co2)
-- a sandbox: an instruction budget whose count hook raises out of the
-- sandboxed call; the stacks after the error are whole
local function sandboxed(f, budget)
  local used = 0
  debug.sethook(function()
    used = used + 1
    if used > budget then error("budget", 0) end
  end, "", 100)
  local ok, r = pcall(f)
  debug.sethook()
  return ok, r, used
end
print(sandboxed(function() probe("hooked") return work(50) end, 1000))
print(sandboxed(function() probe("hooked") while true do work(3) end end, 20))
probe("traced")
-- a mask that installs nothing keeps its function; removing forgets it
local nothing = function() end
debug.sethook(nothing, "")
print("empty", debug.gethook() == nothing, select(2, debug.gethook()))
debug.sethook()
print("removed", debug.gethook())
-- a count hook that asks for line events gets none at that instruction
local seen = {}
debug.sethook(function(ev)
  seen[#seen + 1] = ev
  if ev == "count" then debug.sethook(function(e) seen[#seen + 1] = e end, "l") end
end, "", 10)
work(5)
debug.sethook()
print("swap", table.concat(seen, ","))
-- hooked by the program while tracing is off, its hook replaced once it
-- is on again: traced from there, with its whole stack
local luatrace = require "luatrace"
local traced = luatrace.tracing()
local function f2() probe("traced") coroutine.yield() probe("hooked") coroutine.yield()
  probe("traced") end
local X = coroutine.create(function() f2() end)
drive(X)
if traced then luatrace.troff() end
debug.sethook(X, function() end, "c")
if traced then luatrace.tron() end
debug.sethook(X, function() end, "r")
drive(X)
debug.sethook(X)
drive(X)
-- a count hook counts on across troff, where its thread is given back
-- (untraced, a C function in its place: the same Lua instructions)
local troff = traced and luatrace.troff or os.clock
local ticks = 0
debug.sethook(function() ticks = ticks + 1 end, "", 7)
work(30)
troff()
work(30)
debug.sethook()
print("ticks", ticks)
'''


def case_dbghook(c):
    """The program's own debug.sethook/gethook work as without tracing (same
    output: what gethook says, how often the program's hooks run, a count
    hook that raises out of a sandbox), and its hooked stretches are traced
    too, with whole stacks (every probe checked against debug.getinfo)."""
    prog = c.write('dbghook.lua', DBGHOOK)
    plain = c.lua(prog, c.env(LUATRACE_SPAWN='0'))
    c.start_daemon()
    traced = c.lua(prog, c.env(LUATRACE_SOCKET=c.sock, LUATRACE_SHM='dbghook'), traced=True)
    c.stop_daemon()
    expect(plain.status == 0, 'untraced run failed: %r' % plain.err)
    same_output(plain, traced)
    truth = {}
    for how, n in truths(plain.out.decode().splitlines(), 'TRUTH ').items():
        stack = how.split(' ', 1)[1]  # without traced/hooked
        truth[stack] = truth.get(stack, 0) + n
    expect(sum(truth.values()) == 17, 'want 17 probes: %s' % truth)
    session = c.session('dbghook')
    expect_probe_stacks(c, session, truth)
    # the wrapper calls the library's sethook as plain C: no frame under it
    calls = c.folded(session, 'calls')
    under = [k for k in calls if 'debug.sethook@[C];' in k]
    expect(not under and [k for k in calls if k.endswith(';debug.sethook@[C]')],
           'debug.sethook: frames under it, or no traced call: %s' % under)
    with open(os.path.join(session, 'session.json')) as f:
        meta = json.load(f)
    expect(meta['status'] == 'complete' and meta['bad_records'] == 0, 'session %s' % meta)


def lua54_installed():
    """lua5.4's path; a failure without it (scripts/setup installs it)."""
    lua54 = shutil.which('lua5.4')
    if not lua54:
        raise Failure('lua5.4 is not installed (scripts/setup installs it)')
    return lua54


def case_dbghook54(c):
    """Lua 5.4's debug.gethook under tracing answers as untraced: a lone
    fail where the program set no hook (5.1 gives nil, "", 0), also after
    a mask that installed nothing and for another thread; the program's
    line and count hooks run as often, in the main thread and in a
    coroutine; under run's default (lines by sample: the tick's probes
    are count hooks) and with --lines exact."""
    lua54 = lua54_installed()
    prog = os.path.join(c.args.corpus, '..', 'lua54', 'hooks54.lua')
    plain = run([lua54, prog], c.tmp, c.env())
    expect(plain.status == 0 and plain.out.startswith(b'none\t1\tnil\n'),
           'untraced: %d %r %r' % (plain.status, plain.out, plain.err))
    for how in ([], ['--lines', 'exact']):
        r = run([c.args.recorderd, 'run', '-q', '--out', c.out] + how + ['--', lua54, prog],
                c.tmp, c.env(LUATRACE_TICK_US='100'))
        expect(r.status == 0 and r.out == plain.out,
               'run %s: %d %r %r' % (' '.join(how), r.status, r.out, r.err))


HEAP_QUIET = '''if jit then jit.off() end -- as traced: compiled code allocates too
local load = loadstring or load
collectgarbage("collect")
collectgarbage("stop")
local fs = {}
for i = 1, 100 do fs[i] = load("return function(x) return x + " .. i .. " end")() end
local cos = {}
for i = 1, 50 do cos[i] = coroutine.create(function() coroutine.yield() end) end
local gens = {}
for i = 1, 20 do gens[i] = coroutine.wrap(function() coroutine.yield(i) end) end
local a = collectgarbage("count")
for i = 1, 100 do fs[i](i) end
local b = collectgarbage("count")
for i = 1, 50 do coroutine.resume(cos[i]) end
local c = collectgarbage("count")
for i = 1, 20 do gens[i]() end
local d = collectgarbage("count")
print(string.format("new closures %.0f bytes, new coroutines %.0f bytes, new wraps %.0f bytes",
                    (b - a) * 1024, (c - b) * 1024, (d - c) * 1024))
collectgarbage("restart")
'''


def case_heapquiet(c):
    """The program's own memory count is its own under tracing: the
    collector keeps what it knows of functions and coroutines outside the
    program's heap (Lua 5.1: by their structures; LuaJIT and Lua 5.4: a
    map in C, forgotten at each free), so first calls of new closures and
    first resumes of new coroutines and wraps allocate nothing the program
    sees (its GC stopped: exact counts). Under 5.4 the weak tables that
    held them were the program's: 3072 bytes for 100 new closures. lua5.1
    and lua5.4; run's default and --lines exact. Not LuaJIT, which keeps
    the tables (co_jit_begin: the map's lighter hook made the calibration's
    debit too large)."""
    prog = c.write('heap.lua', HEAP_QUIET)
    luas = [c.args.lua, lua54_installed()]
    for lua in luas:
        plain = run([lua, prog], c.tmp, c.env())
        expect(plain.status == 0 and plain.out.startswith(b'new closures'),
               '%s untraced: %d %r %r' % (lua, plain.status, plain.out, plain.err))
        for how in ([], ['--lines', 'exact']):
            r = run([c.args.recorderd, 'run', '-q', '--out', c.out] + how + ['--', lua, prog],
                    c.tmp, c.env())
            expect(r.status == 0 and r.out == plain.out, '%s run %s: %r, untraced %r'
                   % (lua, ' '.join(how), r.out, plain.out))


DEEP54 = '''local calls = {forever = 0, down = 0}
local function forever(n) calls.forever = calls.forever + 1 return 1 + forever(n + 1) end
local ok, e = pcall(forever, 0)
print(ok, (tostring(e):gsub("^.-:%d+: ", "")))
local function down(n) calls.down = calls.down + 1 if n == 0 then return 0 end return 1 + down(n - 1) end
print(down(100000))
print(calls.forever, calls.down)
'''


def case_deep54(c):
    """Lua 5.4: a recursion stopped by the stack's limit and caught by
    pcall, then one 100 000 deep: the run ends (walking every CallInfo at
    every event, it took 487 s), its output unchanged, every call
    counted; deep54.lua (the corpus) checks the depths."""
    lua54 = lua54_installed()
    prog = c.write('deep54.lua', DEEP54)
    plain = run([lua54, prog], c.tmp, c.env())
    r = run([c.args.recorderd, 'run', '-q', '--out', c.out, '-f', 'profile', '--', lua54, prog],
            c.tmp, c.env())
    # Lua's hook needs stack room of its own: any hook makes the stack
    # overflow a few frames earlier, so the counts are the traced run's
    expect(plain.status == 0 and plain.out.startswith(b'false\tstack overflow\n') and
           r.status == 0 and r.out.splitlines()[:2] == plain.out.splitlines()[:2],
           'run: %d %r %r, untraced %r' % (r.status, r.out, r.err, plain.out))
    calls = {int(k.rsplit(':', 1)[1].rstrip(')')): n  # forever is on line 2, down on 5
             for k, n in harness.calls_of(c.session('deep54')).items() if 'deep54.lua:' in k}
    counted = [int(x) for x in r.out.split()[-2:]]
    expect([calls.get(2), calls.get(5)] == counted,
           'calls %s, the program counted forever %d, down %d' % (calls, *counted))


def case_longpath(c):
    """Two modules in a directory whose path is longer than Lua's short_src
    (and than any fixed buffer but the protocol's 4096): each keeps its whole
    path, so their functions and coverage never merge."""
    deep = os.path.join(c.tmp, *(ch * 120 for ch in 'def'))
    os.makedirs(deep)
    for name, inc in (('moda', 1), ('modb', 2)):
        with open(os.path.join(deep, name + '.lua'), 'w') as f:
            f.write('local M = {}\nfunction M.f(x)\n  return x + %d\nend\nreturn M\n' % inc)
    prog = c.write('longpath.lua', 'local a = dofile(%r)\nlocal b = dofile(%r)\n'
                   'for i = 1, 5 do a.f(i) end\nfor i = 1, 8 do b.f(i) end\nprint("ok")\n'
                   % (os.path.join(deep, 'moda.lua'), os.path.join(deep, 'modb.lua')))
    c.start_daemon()
    r = c.lua(prog, c.env(LUATRACE_SOCKET=c.sock, LUATRACE_SHM='longpath'), traced=True)
    c.stop_daemon()
    expect(r.status == 0 and r.out == b'ok\n', 'program failed: %r' % r.err)
    session = c.session('longpath')
    calls = c.folded(session, 'calls')
    with open(os.path.join(session, 'session.json')) as f:
        cwd = json.load(f)['cwd'].rstrip('/') + '/'
    for name, n in (('moda', 5), ('modb', 8)):
        src = os.path.join(deep, name + '.lua')
        label = 'f@%s:2' % (src[len(cwd):] if src.startswith(cwd) else src)  # as shown
        got = [k for k in calls if k.endswith(';' + label)]
        expect(len(got) == 1 and calls[got[0]] == n,
               '%s: want one stack ending in %s with %d calls: %s' % (name, label, n, calls))
    with open(os.path.join(session, 'coverage.lcov')) as f:
        sfs = [l[3:].strip() for l in f if l.startswith('SF:')]
    for name in ('moda', 'modb'):  # under the working directory: relative, as luacov writes
        src = os.path.join(deep, name + '.lua')
        expect(src[len(cwd):] in sfs, 'coverage.lcov SF lines: %s' % sfs)


LONGCHUNK = r'''local base = "@/" .. string.rep("d", 5000)
local a = assert(loadstring("local function f(x) return x + 1 end return f", base .. "/a.lua"))()
local b = assert(loadstring("local function f(x) return x + 2 end return f", base .. "/b.lua"))()
local s = 0
for i = 1, 5 do s = s + a(i) end
for i = 1, 8 do s = s + b(i) end
print(s)
'''


def case_longchunk(c):
    """Chunk names longer than a record's string (4096 bytes: only a name
    given to load, as open() takes no path that long) are cut to 4095
    bytes ending in '...#' and their whole name's hash: two names sharing
    their first 4096 bytes stay two sources (not 'main chunk#2' and one
    merged coverage entry) in the stacks and in coverage.txt."""
    prog = c.write('longchunk.lua', LONGCHUNK)
    r = run([c.args.recorderd, 'run', '-q', '--out', c.out, '-f', 'coverage', '--',
             c.args.lua, prog], c.tmp, c.env())
    expect(r.status == 0 and r.out == b'72\n', 'program failed: %r' % r.err)
    session = c.session('longchunk')
    calls = c.folded(session, 'calls')
    srcs = {}
    for k, n in calls.items():
        m = re.search(r';(main chunk|a|b)(#\d+)?@(/d+\.\.\.#[0-9a-f]{16}):(\d)$', k)
        if m:
            expect(m.group(2) is None and len(m.group(3)) == 4095, 'label %s' % k[-60:])
            srcs.setdefault(m.group(3), {})[m.group(1)] = n
    expect(sorted(sorted(v.items()) for v in srcs.values())
           == [[('a', 5), ('main chunk', 1)], [('b', 8), ('main chunk', 1)]],
           'two sources, each with its chunk and function: %s' % [sorted(v.items()) for v in srcs.values()])
    with open(os.path.join(session, 'coverage.txt')) as f:
        text = f.read()
    for src in srcs:
        expect(('  %s: 1 line hit;' % src) in text, 'coverage.txt: %s' % text[-300:])


HOSTRESUME = WHERE + '''
-- run by tests/hosts/resume_host: the host resumes body/bad from C and
-- calls tick by lua_pcall between resumes; no Lua runs on the main thread
-- but tick, so a probe's stack is its own thread's alone
local log = {}
local function probe()
  print("TRUTH " .. where())
end
local function work(n)
  local s = 0
  for i = 1, n do s = s + i end
  probe()
  return s
end
function body(round)
  for i = 1, 3 do coroutine.yield(work(round + i)) end
  local s = work(round)
  return s
end
function bad(round)
  coroutine.yield(work(round))
  error("round " .. round .. " failed", 0)
end
function tick(round)
  log[#log + 1] = work(round)
end
function finish()
  print(table.concat(log, " "))
end
'''


def case_hostresume(c):
    """A host that drives Lua from C with its main thread idle: lua_resume
    of lua_newthread threads, lua_pcall of the main thread between
    resumes. Every probe's stack is what debug.getinfo saw, and the main
    thread is one track (not one per lua_pcall: it neither dies when a
    coroutine it resumed from C runs, nor ends when its stack empties);
    each coroutine, ended or failed, is one track of its own."""
    prog = c.write('hostresume.lua', HOSTRESUME)
    rounds = 6
    plain = run([c.args.resume_host, prog, str(rounds)], c.tmp, c.env())
    c.start_daemon()
    r = run([c.args.resume_host, prog, str(rounds)], c.tmp,
            c.env(LUATRACE_SOCKET=c.sock, LUATRACE_SHM='hostresume'))
    c.stop_daemon()
    expect(plain.status == 0 and r.status == 0 and r.out == plain.out,
           'traced run differs: %r %r / %r' % (r.out[-200:], r.err, plain.err))
    truth = truths(r.out.decode().splitlines())
    expect(sum(truth.values()) == 32, 'want 32 probes: %s' % truth)
    session = c.session('hostresume')
    expect_probe_stacks(c, session, truth)
    with open(os.path.join(session, 'session.json')) as f:
        meta = json.load(f)
    expect(meta['bad_records'] == 0 and meta['status'] == 'complete', 'session %s' % meta)
    names = track_names(c, session)
    expect(len(names) == 1 + rounds and names[0] == 'main' and names.count('main') == 1
           and all(n.startswith(('coroutine %d (body@' % k, 'coroutine %d (bad@' % k))
                   for k, n in enumerate(names[1:], 1)),
           'want main and one track per round: %s' % names)
    # the script run in a thread first: tracing begins there, and the main
    # thread (its hook copied by lua_newthread while the collector waited
    # for a first call) is traced too
    c.start_daemon()
    r = run([c.args.resume_host, prog, str(rounds)], c.tmp,
            c.env(LUATRACE_SOCKET=c.sock, LUATRACE_SHM='hostfirst', RESUME_HOST_THREAD_FIRST='1'))
    c.stop_daemon()
    expect(r.status == 0 and r.out == plain.out, 'thread first: %r %r' % (r.out[-200:], r.err))
    session = c.session('hostfirst')
    expect_probe_stacks(c, session, truths(r.out.decode().splitlines()))
    names = track_names(c, session)
    expect(names.count('main') == 1 and len(names) == 2 + rounds, 'thread first: %s' % names)


MULTISTATE = r'''
local tag, rounds = ...
local lt = require "luatrace"
local traced = os.getenv("LUATRACE_SHM") and { lt.tron(), lt.tracing() }
local work = loadstring([[
  local n, s = ..., 0
  for i = 1, n do s = s + i % 7 end
  return s
]], "=work_" .. tag)
local total, hooks = 0, 0
for k = 1, rounds do
  local co = coroutine.wrap(function(x)
    local f = loadstring("return " .. (k % 50), "=chunk_" .. tag)
    coroutine.yield(work(x))
    return f()
  end)
  total = total + co(300) + co()
  if k % 10 == 0 then -- a hook of the program's, set and removed
    debug.sethook(function() hooks = hooks + 1 end, "", 100)
    total = total + work(50)
    debug.sethook()
  end
end
local on = traced and (" tron " .. tostring(traced[1]) .. " tracing " .. tostring(traced[2])) or ""
return string.format("total %d hooks %d", total, hooks) .. on
'''


def case_multistate(c):
    """A host with a Lua state per OS thread, all loading luatrace at once
    while LUATRACE_SHM is set: the process traces one state, whole, and
    the others run untraced (tron and tracing say false; their debug.sethook
    calls hook none of their threads for the collector) with the same
    results as without tracing; nothing crashes, nothing of theirs lands in
    the trace."""
    prog = c.write('multistate.lua', MULTISTATE)
    states, rounds = 4, 400
    cmd = [c.args.multi_host, prog, str(states), str(rounds)]
    plain = run(cmd, c.tmp, c.env())
    expect(plain.status == 0, 'untraced run failed: %r' % plain.err)
    c.start_daemon()
    r = run(cmd, c.tmp, c.env(LUATRACE_SOCKET=c.sock, LUATRACE_SHM='multistate'))
    c.stop_daemon()
    expect(r.status == 0, 'traced run exited %d: %r' % (r.status, r.err[-300:]))
    lines = r.out.decode().splitlines()
    won = [l[0] for l in lines if l.endswith(' tron true tracing true')]
    lost = [l for l in lines if l.endswith(' tron false tracing false')]
    expect(len(won) == 1 and len(lost) == states - 1, 'want one traced state: %s' % lines)
    bare = [l.split(' tron ')[0] for l in lines]
    expect(bare == plain.out.decode().splitlines(), 'results differ: %s / %s' % (bare, plain.out))
    refused = r.err.decode().count('this process traces another Lua state')
    expect(refused == 2 * (states - 1), 'want each other state refused at require and tron:'
           ' %r' % r.err)
    session = c.session('multistate')
    with open(os.path.join(session, 'session.json')) as f:
        meta = json.load(f)
    expect(meta['bad_records'] == 0 and meta['status'] == 'complete', 'session %s' % meta)
    calls = {}
    for stack, n in c.folded(session, 'calls').items():
        src = stack.rsplit(';', 1)[-1].rpartition('@')[2]  # the leaf's SRC:LINE
        if src.startswith('work_'):
            calls[src] = calls.get(src, 0) + n
    # the work(50) calls too, which run under the program's hook
    want = {'work_%s:0' % won[0]: rounds + rounds // 10}
    expect(calls == want, 'calls of the work chunks %s, want %s' % (calls, want))


def case_untraced(c):
    """recorderd run of a command that loads no collector says so (and why,
    when LUA_INIT kept run from setting it, naming the interpreter given, or
    LUA_INIT_5_4 kept lua5.4 from reading it), with --quiet too; it keeps the
    command's exit status, 125 for one that succeeded."""
    prog = c.write('untraced.lua', 'print("hi") os.exit(3)\n')
    init = c.write('init.lua', 'x = 1\n')
    base = [c.args.recorderd, 'run', '--out', c.out]
    note = b'recorderd: nothing was traced'
    r = run(base + ['--', 'sh', '-c', 'exit 4'], c.tmp, c.env())
    expect(r.status == 4 and note in r.err and b'LUA_INIT' not in r.err, 'sh: %r' % (r.err,))
    r = run(base + ['--', c.args.lua, prog], c.tmp, c.env(LUA_INIT='@' + init))
    expect(r.status == 3 and r.out == b'hi\n' and note in r.err and b'LUA_INIT is set' in r.err,
           'LUA_INIT: %r' % (r.err,))
    # the hint names the interpreter run was given (it said lua5.1 of any),
    # and of a command that is no interpreter, the Lua it starts
    for lua in (c.args.lua, shutil.which('lua5.4'), shutil.which('luajit'), 'sh'):
        if not lua:
            continue
        cmd = [lua, prog] if lua != 'sh' else ['sh', '-c', '%s %s' % (c.args.lua, prog)]
        r = run(base + ['--'] + cmd, c.tmp, c.env(LUA_INIT='@' + init))
        hint = ('add -lluatrace (recorderd run -- %s -lluatrace ...)' % os.path.basename(lua)
                if lua != 'sh' else 'add -lluatrace to the command of each Lua it starts '
                '(lua5.1 -lluatrace ...)')
        expect(r.status == 3 and r.err.decode().endswith('LUA_INIT is set, so run did not set it '
               'to load the collector: %s\n' % hint), 'LUA_INIT, %s: %r' % (lua, r.err))
    # --quiet silences the summary, never this failure; a command that
    # succeeded with nothing traced exits 125
    r = run(base + ['--quiet', '--', c.args.lua, prog], c.tmp, c.env(LUA_INIT='@' + init))
    expect(r.status == 3 and note in r.err and b'LUA_INIT is set' in r.err,
           '--quiet: %r' % (r.err,))
    # lua5.4 reads LUA_INIT_5_4 rather than run's LUA_INIT: the hint names it
    lua54 = shutil.which('lua5.4')
    if lua54:
        r = run(base + ['--', lua54, prog], c.tmp, c.env(LUA_INIT_5_4='@' + init))
        expect(r.status == 3 and r.out == b'hi\n' and note in r.err and
               b'LUA_INIT_5_4 is set' in r.err, 'LUA_INIT_5_4: %r' % (r.err,))
        # lua5.4 -E ignores LUA_INIT and LUA_CPATH: the hint says to drop
        # it (the note alone said "its message above says why", above which
        # nothing was); -E past -e's argument, not that argument
        for opts in (['-E'], ['-e', 'y=2', '-W', '-E']):
            r = run(base + ['--', lua54] + opts + [prog], c.tmp, c.env())
            expect(r.status == 3 and r.out == b'hi\n' and note in r.err and
                   r.err.decode().endswith('recorderd: lua5.4 -E ignores LUA_INIT and LUA_CPATH, '
                                           'which run sets to load the collector: drop -E\n'),
                   'lua5.4 %s: %d %r' % (' '.join(opts), r.status, r.err))
    # which lua5.1 does not read: its failure's own message, no hint
    r = run(base + ['--', c.args.lua, 'nothere.lua'], c.tmp, c.env(LUA_INIT_5_4='x=1'))
    expect(r.status == 1 and b'nothere.lua' in r.err and note not in r.err,
           'lua5.1, LUA_INIT_5_4 set, missing script: %d %r' % (r.status, r.err))
    r = run(base + ['-q', '--', c.args.lua, '-e', 'print(1)'], c.tmp, c.env(LUA_INIT='x=1'))
    expect(r.status == 125 and r.out == b'1\n' and note in r.err and b'125' in r.err,
           '-q, exit 0, nothing traced: %d %r' % (r.status, r.err))
    r = run(base + ['--', 'true'], c.tmp, c.env())
    expect(r.status == 125 and note in r.err, 'true: %d %r' % (r.status, r.err))
    r = run(base + ['--quiet', '--', c.args.lua, prog], c.tmp, c.env())
    expect(r.status == 3 and note not in r.err and os.listdir(c.out) == ['untraced'] and
           b'INCOMPLETE' not in r.err, 'traced: %r' % (r.err,))
    with open(os.path.join(c.out, 'untraced', 'profile.txt')) as f:
        expect('INCOMPLETE' not in f.read(), 'a complete session said INCOMPLETE')
    # a rerun takes the name again and keeps the previous run as NAME.prev,
    # the one before is gone: directories do not pile up
    def pid_of(name):
        with open(os.path.join(c.out, name, 'session.json')) as f:
            return json.load(f)['pid']
    for _ in range(2):
        before = pid_of('untraced')
        r = run(base + ['--', c.args.lua, prog], c.tmp, c.env())
        said = ('previous run: %s/' % os.path.join(c.out, 'untraced.prev')).encode()
        expect(sorted(os.listdir(c.out)) == ['untraced', 'untraced.prev'] and said in r.err
               and pid_of('untraced.prev') == before and pid_of('untraced') != before,
               'rerun: %s %r' % (os.listdir(c.out), r.err[-300:]))
    # each Lua process of a command is named after its own script
    c.write('kid.lua', 'print("kid")\n')
    c.write('parent.lua', 'os.execute("%s kid.lua")\n' % c.args.lua)
    names = os.path.join(c.tmp, 'names')
    r = run([c.args.recorderd, 'run', '--quiet', '--out', names, '--', 'sh', '-c',
             '"$0" parent.lua; "$0" -e "x = 1" kid.lua', c.args.lua], c.tmp, c.env())
    got = sorted(os.listdir(names))  # kid, kid.PID (the second kid), parent
    expect(r.status == 0 and len(got) == 3 and got[0] == 'kid' and got[1].startswith('kid.')
           and got[2] == 'parent', 'session names: %s' % got)
    # one command's sessions never replace each other: the second of a
    # name is NAME.PID, and says so itself
    for name in got:
        with open(os.path.join(names, name, 'session.json')) as f:
            said = json.load(f)['session']
        expect(said == name, 'session %s says it is %s' % (name, said))
    # a process of that name still alive in another recorder: NAME.PID too
    c.write('slow.lua', 'io.read()\n')
    slow = subprocess.Popen([c.args.recorderd, 'run', '--quiet', '--out', names, '--',
                             c.args.lua, 'slow.lua'], cwd=c.tmp, env=c.env(),
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        for _ in range(500):
            if 'slow' in os.listdir(names):
                break
            time.sleep(0.01)
        r = run([c.args.recorderd, 'run', '--quiet', '--out', names, '--', c.args.lua,
                 'slow.lua'], c.tmp, c.env())
    finally:
        slow.communicate(b'\n', timeout=30)
    got = sorted(n for n in os.listdir(names) if n.startswith('slow'))
    expect(len(got) == 2 and got[0] == 'slow' and got[1].startswith('slow.')
           and not got[1].endswith('.prev'), 'a live session replaced: %s' % got)
    # the LUA_INIT run sets loads the collector in Lua 5.1 and LuaJIT only: a
    # Lua 5.2+ that the program starts reads it too (as _VERSION says; played
    # here by lua5.1), and LuaJIT (its jit global) is traced
    r = run(base + ['--quiet', '--', 'sh', '-c', 'printf %s "$LUA_INIT"'], c.tmp, c.env())
    init = r.out.decode()
    # (loaded: luatrace.so is in the registry, where package.loadlib keeps
    # what it opened; package.loaded does not show it, case invisible)
    loaded = ('local n = 0 for k in pairs(debug.getregistry()) do '
              'n = n + (type(k) == "string" and k:find("luatrace.so", 1, true) and 1 or 0) end '
              'print(n > 0)')
    for pre, loads in (('', 'true'), ('_VERSION = "Lua 5.3"', 'false'), ('jit = {}', 'true')):
        r = run([c.args.lua, '-e', pre, '-e', init, '-e', loaded], c.tmp, c.env())
        expect(r.status == 0 and r.out.decode().strip() == loads,
               'LUA_INIT %r after %r: %r %r' % (init, pre, r.out, r.err))


def case_otherlua(c):
    """Lua 5.2 and 5.3 (scripts/setup installs them; 5.4 has its own build,
    corpus54-*): require
    "luatrace" and -lluatrace give a clear refusal, not "undefined symbol";
    under recorderd run each says it runs untraced, naming its script, its
    output unchanged. (LuaJIT 2.1 is traced: case_luajit, corpus-luajit-*.)
    lua5.4 led to the 5.1 build by LUA_CPATH is told where its own is."""
    # every Lua API reference of the module is weak (co_weak.h), or a Lua
    # that lacks the function refuses to load it before it can say why
    nm = subprocess.run(['nm', '-D', '--undefined-only', os.path.join(c.args.cpath, 'luatrace.so')],
                        capture_output=True, text=True)
    strong = [l.split()[-1] for l in nm.stdout.splitlines() if l.split()[-2:-1] == ['U']
              and l.split()[-1].startswith('lua')]
    expect(nm.returncode == 0 and not strong, 'not in co_weak.h: %s' % strong)
    prog = c.write('other.lua', 'io.write("out ", 6 * 7, "\\n") os.exit(5)\n')
    base = [c.args.recorderd, 'run', '--out', c.out, '--']
    for lua, name in (('lua5.2', b'Lua 5.2'), ('lua5.3', b'Lua 5.3')):
        if not shutil.which(lua):
            raise Failure('%s is not installed (scripts/setup installs it)' % lua)
        r = run([lua, '-e', 'print(pcall(require, "luatrace"))'], c.tmp, c.env())
        why = b' is not supported (Lua 5.1, 5.4 and LuaJIT 2.1 are)'
        want = b'false\tluatrace: ' + name + why
        expect(r.status == 0 and r.out.startswith(want), '%s require: %r %r' % (lua, r.out, r.err))
        r = run([lua, '-lluatrace', prog], c.tmp, c.env(LUATRACE_SHM='other'))
        expect(r.status != 0 and why in r.err and b'undefined symbol' not in r.err,
               '%s -lluatrace: %d %r' % (lua, r.status, r.err))
        r = run(base + [lua, prog], c.tmp, c.env())
        # lua5.2's lua.c sets arg after it runs LUA_INIT: no script name
        said = b'a program' if lua == 'lua5.2' else b'other.lua'
        expect(r.status == 5 and r.out == b'out 42\n' and
               b'luatrace: ' + name in r.err and said + b' runs untraced' in r.err,
               '%s under run: %d %r %r' % (lua, r.status, r.out, r.err))
        # the note is left out where the interpreter failed (run's rule for
        # a lua that failed under its LUA_INIT): a script that ends well
        r = run(base + [lua, '-e', 'x = 1'], c.tmp, c.env())
        expect(r.status == 125 and b'nothing was traced' in r.err,
               '%s under run: %d %r' % (lua, r.status, r.err))
    # lua5.4 led to the 5.1 build by a LUA_CPATH set by hand (no
    # LUA_CPATH_5_4): told where 5.4's build is, which then loads
    lua54 = shutil.which('lua5.4')
    if not lua54:
        raise Failure('lua5.4 is not installed (scripts/setup installs it)')
    r = run([lua54, '-e', 'print(pcall(require, "luatrace"))'], c.tmp, c.env())
    its = os.path.join(os.path.realpath(c.args.cpath), 'lua54')
    want = ('false\tluatrace: this luatrace.so is built for Lua 5.1 and LuaJIT; Lua 5.4\'s is '
            '%s/luatrace.so: LUA_CPATH_5_4=\'%s/?.so;;\' lua5.4 ..., or recorderd run\n'
            % (its, its)).encode()
    expect(r.status == 0 and r.out == want, 'lua5.4 require of the 5.1 build: %r %r' % (r.out, r.err))
    r = run([lua54, '-e', 'print(pcall(require, "luatrace"))'], c.tmp,
            c.env(LUA_CPATH_5_4=its + '/?.so;;'))
    expect(r.status == 0 and r.out.startswith(b'true'), 'lua5.4 with its build: %r %r' % (r.out, r.err))


def case_luajit(c):
    """LuaJIT 2.1 is traced: tron() after a loop the JIT compiled turns the
    JIT off and flushes it (one note on stderr), so the loop's calls after
    tron() are all in the profile; the output is plain luajit's. run of a
    missing script prints luajit's error and no note."""
    prog = c.write('hot.lua', '''local function sq(x) return x * x end
local function loop(n) local s = 0 for i = 1, n do s = s + sq(i % 7) end return s end
local s = loop(200000) -- compiled: its trace runs the next calls unless flushed
local lt = require "luatrace"
print(lt.tron())
s = s + loop(300)
lt.troff()
print(s)
''')
    plain = run(['luajit', prog], c.tmp, c.env())
    c.start_daemon()
    r = run(['luajit', prog], c.tmp, c.env(LUATRACE_SOCKET=c.sock))
    c.stop_daemon()
    expect(r.status == 0 and r.out == plain.out.replace(b'false', b'true', 1),
           'luajit tron: %d %r %r' % (r.status, r.out, r.err))
    expect(r.err.count(b'luatrace: LuaJIT: the JIT compiler is off') == 1, repr(r.err))
    names = os.listdir(c.out)
    expect(len(names) == 1, 'sessions: %s' % names)
    calls = None
    for line in open(os.path.join(c.out, names[0], 'profile.txt')):
        if line.rstrip().endswith(' sq (hot.lua:1)'):
            calls = int(line.split()[0])
    expect(calls == 300, 'sq calls after tron(): %r' % calls)
    # a script that is not there: luajit's own error alone, no note of a
    # JIT turned off for a trace that never began
    r = run([c.args.recorderd, 'run', '--out', os.path.join(c.tmp, 'none'), '--', 'luajit',
             'nothere.lua'], c.tmp, c.env())
    expect(r.status == 1 and b'cannot open nothere.lua' in r.err and b'JIT compiler' not in r.err,
           'luajit of a missing script: %d %r' % (r.status, r.err))



def case_jitnolib(c):
    """LuaJIT with package.loaded.jit gone (a sandbox) before -lluatrace:
    the collector cannot ask whether the compiler was on, so the
    calibration leaves it as tracing needs it, off (the program asks
    through jit.status, which it kept), and never turns on a compiler it
    cannot see (a host that never opened the jit library has none set
    up); the hot loop's calls are all counted."""
    need_luajit()
    prog = c.write('nolib.lua', 'local function sq(x) return x * x end\n'
                   'local s = 0 for i = 1, 200000 do s = s + sq(i % 7) end\n'
                   'print(s, (status()))\n')
    c.start_daemon()
    r = run(['luajit', '-e', 'status = jit.status package.loaded.jit = nil jit = nil', '-lluatrace',
             prog], c.tmp, c.env(LUATRACE_SOCKET=c.sock, LUATRACE_SHM='nolib'))
    c.stop_daemon()
    expect(r.status == 0 and r.out == b'2599975\tfalse\n', 'program: %d %r %r' % (r.status, r.out, r.err))
    calls = sum(n for stack, n in c.folded(c.session('nolib'), 'calls').items()
                if stack.split(';')[-1].startswith('sq@'))
    expect(calls == 200000, 'sq calls: %r of 200000' % calls)


def lcov_functions(path):
    with open(path) as f:
        return sorted(l.strip() for l in f if l.startswith(('FN:', 'FNDA:', 'FNF:', 'FNH:')))


def case_luajitcov(c):
    """coverage.lcov's functions are the same whether lua5.1 or luajit ran
    the program: one main chunk (LuaJIT gives its last line as the line
    count + 1, Lua 5.1 as 0, and the two made two functions, one never
    called), each function with its calls."""
    need_luajit()
    prog = c.write('cov.lua', 'local function used(x)\n  return x + 1\nend\n'
                   'local function unused()\n  return 0\nend\n'
                   'local s = 0\nfor i = 1, 3 do s = used(s) end\nprint(s)\n')
    got = {}
    for lua in (c.args.lua, 'luajit'):
        out = os.path.join(c.tmp, os.path.basename(lua))
        r = run([c.args.recorderd, 'run', '--quiet', '--lines', 'exact', '--out', out, '--', lua,
                 prog], c.tmp, c.env())
        expect(r.status == 0 and r.out == b'3\n', '%s: %d %r %r' % (lua, r.status, r.out, r.err))
        got[lua] = lcov_functions(os.path.join(out, 'cov', 'coverage.lcov'))
    expect(got[c.args.lua] == got['luajit'], 'functions differ: %s' % got)
    expect('FNDA:1,main chunk' in got['luajit'] and 'FNF:3' in got['luajit'], '%s' % got)


WALK = '''
local function keys(t)
  local ks = {}
  for k, v in pairs(t) do ks[#ks + 1] = tostring(k) .. ":" .. type(v) end
  table.sort(ks)
  return table.concat(ks, " ")
end
print("loaded", keys(package.loaded))
print("G", keys(_G))
print("preload", keys(package.preload))
for _, m in ipairs({"debug", "coroutine", "package", "string"}) do print(m, keys(_G[m])) end
print("registry luatrace", debug.getregistry().luatrace)
'''

API = '''
local lt = require "luatrace"
local ks = {}
for k, v in pairs(lt) do ks[#ks + 1] = k .. ":" .. type(v) end
table.sort(ks)
print(table.concat(ks, " "), lt.tracing(), package.loaded.luatrace == lt)
'''


def case_invisible(c):
    """A program that never asked for the collector does not find it:
    package.loaded, _G, package.preload and the libraries walk alike traced
    (recorderd run's LUA_INIT) and untraced (busted's insulation copies and
    restores package.loaded entry by entry: an extra entry ran its loops
    once more per test). One that requires luatrace gets the documented
    module, tracing."""
    prog = c.write('walk.lua', WALK)
    base = [c.args.recorderd, 'run', '--quiet', '--out', c.out, '--']
    plain = c.lua(prog, c.env())
    r = run(base + [c.args.lua, prog], c.tmp, c.env())
    same_output(plain, r)
    expect(b'loaded' in r.out and os.path.isdir(c.session('walk')), 'walk.lua: %r' % (r.err,))
    api = c.write('api.lua', API)
    r = run(base + [c.args.lua, api], c.tmp, c.env())
    expect(r.status == 0 and r.out == b'listen:function tracing:function troff:function '
           b'tron:function version:string\ttrue\ttrue\n', 'require "luatrace": %r %r' % (r.out, r.err))


SCRIPT = '''local function f(n) local s = 0 for i = 1, n do s = s + i end return s end
print(f(10))
'''


def case_ownframes(c):
    """The collector's own frames (the LUA_INIT chunk recorderd run sets,
    require, luaopen_luatrace) are in no profile, under run or with
    -lluatrace; a script that fails to load (missing, a syntax error) gives
    Lua's message and exit status, and no session."""
    prog = c.write('own.lua', SCRIPT)
    c.write('bad.lua', 'local x = = 1\n')
    base = [c.args.recorderd, 'run', '--time', 'exact', '--out', c.out, '--']
    r = run(base + [c.args.lua, prog], c.tmp, c.env())
    expect(r.status == 0 and r.out == b'55\n', 'run: %r %r' % (r.out, r.err))
    r = run(base + [c.args.lua, '-lluatrace', c.write('ownrl.lua', SCRIPT)], c.tmp, c.env())
    expect(r.status == 0 and r.out == b'55\n', 'run -lluatrace: %r %r' % (r.out, r.err))
    c.start_daemon()
    r = c.lua(prog, c.env(LUATRACE_SOCKET=c.sock, LUATRACE_SHM='ownl'), traced=True)
    c.stop_daemon()
    expect(r.status == 0 and r.out == b'55\n', '-lluatrace: %r %r' % (r.out, r.err))
    for session, script in (('own', 'own'), ('ownl', 'own'), ('ownrl', 'ownrl')):
        for weight in ('time', 'calls', 'lines'):
            rows = c.folded(c.session(session), weight)
            own = [k for k in rows if 'luaopen' in k or 'require' in k or 'LUA_INIT' in k]
            expect(not own, '%s (%s): the collector\'s frames %s' % (session, weight, own))
            expect([k for k in rows if k.endswith('f@%s.lua:1' % script)],
                   '%s: no f: %s' % (session, rows))
    calls = c.folded(c.session('own'), 'calls')
    main = [n for k, n in calls.items() if k.endswith('main chunk@own.lua:0')]
    expect(main == [1], 'calls of the main chunk: %s' % calls)
    for script, msg in (('missing.lua', b'cannot open missing.lua'), ('bad.lua', b"bad.lua:1: unexpected symbol")):
        plain = run([c.args.lua, script], c.tmp, c.env())
        r = run(base + [c.args.lua, script], c.tmp, c.env())
        expect(r.status == plain.status == 1 and r.err == plain.err and msg in r.err,
               '%s: %d %r (untraced: %d %r)' % (script, r.status, r.err, plain.status, plain.err))
    expect(sorted(os.listdir(c.out)) == ['own', 'ownl', 'ownrl'],
           'sessions: %s' % os.listdir(c.out))


def case_dashl(c):
    """lua5.1 -lluatrace app.lua with no LUATRACE_SHM traces (a session
    named after the script), as people type it; app.lua's own require
    "luatrace" only loads it. With no recorderd listening and none to
    start: one line, the program untraced and unchanged. recorderd env's
    LUA_CPATH finds the build's luatrace.so."""
    prog = c.write('dashl.lua', SCRIPT)
    req = c.write('req.lua', 'local lt = require "luatrace"\nprint(lt.tracing())\n')
    plain = c.lua(prog, c.env())
    c.start_daemon()
    env = c.env(LUATRACE_SOCKET=c.sock)
    r = c.lua(prog, env, traced=True)
    same_output(plain, r)
    r2 = run([c.args.lua, '-l', 'luatrace', req], c.tmp, env)
    r3 = c.lua(req, env)
    c.stop_daemon()
    expect(r2.out == b'true\n' and r3.out == b'false\n' and r3.err == b'',
           'require: -l %r %r, own %r %r' % (r2.out, r2.err, r3.out, r3.err))
    expect(sorted(os.listdir(c.out)) == ['dashl', 'req'], 'sessions: %s' % os.listdir(c.out))
    calls = c.folded(c.session('dashl'), 'calls')
    expect([k for k in calls if k.endswith('f@dashl.lua:1')], 'no f: %s' % calls)
    r = run([c.args.lua, '-lluatrace', prog], c.tmp,
            c.env(LUATRACE_RECORDERD=os.path.join(c.tmp, 'none')))
    same_output(plain, r)
    err = r.err.decode()
    expect(err.count('\n') == 1 and 'no recorderd' in err and 'running untraced' in err,
           'no recorderd: %r' % err)
    # recorderd env: eval'd by a shell, lua5.1 finds the collector
    env = c.env()
    env.pop('LUA_CPATH')
    r = run(['sh', '-c', 'eval "$("$0" env)" && "$1" -e "require \'luatrace\' print(\'ok\')"',
             c.args.recorderd, c.args.lua], c.tmp, env)
    expect(r.status == 0 and r.out == b'ok\n', 'recorderd env: %r %r' % (r.out, r.err))
    r = run([c.args.recorderd, 'env'], c.tmp, env)
    # the build tree's collector by a plain path (it was BUILD/recorderd/../collector)
    want = "export LUA_CPATH='%s/?.so;;'\n" % os.path.join(
        os.path.dirname(os.path.dirname(os.path.realpath(c.args.recorderd))), 'collector')
    expect(want in r.out.decode(), 'recorderd env: %r, want %r' % (r.out, want))
    # and lua5.4 (LUA_CPATH_5_4 first) finds the 5.4 build, where built
    col54 = os.path.join(os.path.dirname(want[len("export LUA_CPATH='"):-len("/?.so;;'\n")]),
                         'collector', 'lua54')
    if os.path.exists(os.path.join(col54, 'luatrace.so')) and shutil.which('lua5.4'):
        expect("export LUA_CPATH_5_4='%s/?.so;;'\n" % col54 in r.out.decode(),
               'recorderd env, no LUA_CPATH_5_4: %r' % r.out)
        r = run(['sh', '-c', 'eval "$("$0" env)" && lua5.4 -e "require \'luatrace\' print(\'ok\')"',
                 c.args.recorderd], c.tmp, env)
        expect(r.status == 0 and r.out == b'ok\n', 'recorderd env, lua5.4: %r %r'
               % (r.out, r.err))
    # and, from a build tree, recorderd and its man pages by name
    env.pop('MANPATH', None)
    r = run(['bash', '-c', 'eval "$("$0" env)" && cd / && command -v recorderd && '
             'man -w recorderd && man -w luatrace && eval "$(recorderd env)" && echo "$PATH" '
             '&& echo "$LUA_CPATH"',
             c.args.recorderd], c.tmp, env)
    lines = r.out.decode().splitlines()
    here = os.path.dirname(os.path.realpath(c.args.recorderd))
    expect(r.status == 0 and len(lines) == 5 and lines[0] == os.path.join(here, 'recorderd')
           and lines[1].endswith('/man/man1/recorderd.1') and lines[2].endswith('luatrace.7')
           and lines[3].split(':').count(here) == 1  # a second eval adds nothing
           and lines[4] + '\n' == want[len("export LUA_CPATH='"):].replace("'", ''),
           'recorderd env, PATH and MANPATH: %d %r %r' % (r.status, r.out, r.err))


def case_shmfull(c):
    """A /dev/shm without room for the ring (a container's small one): the
    collector says so and the program runs untraced, its output and exit
    status unchanged (the ring was sized but sparse: the program died of
    SIGBUS at its first record past what tmpfs could give). Root only: a
    4 MB tmpfs on /dev/shm in a mount namespace of its own."""
    prog = c.write('shmfull.lua', 'local s = 0\nfor i = 1, 3000000 do s = s + i % 7 end\n'
                   'print(s) os.exit(5)\n')
    plain = c.lua(prog, c.env())
    script = ('mount -t tmpfs -o size=4m tmpfs /dev/shm || exit 77; exec "$@"')
    cmd = ['unshare', '-m', 'sh', '-c', script, 'sh', c.args.recorderd, 'run', '--quiet',
           '--ring', '16M', '--out', c.out, '--', c.args.lua, prog]
    r = run(cmd, c.tmp, c.env(LUATRACE_SHM='shmfull'))
    if os.geteuid() != 0 or r.status == 77 or b'unshare failed' in r.err:
        print('skipped: needs root, unshare and a tmpfs mount')
        raise SystemExit(77)
    expect(r.status == plain.status == 5 and r.out == plain.out,
           'program changed: %d %r %r' % (r.status, r.out, r.err))
    expect(b'No space left on device; running untraced' in r.err, 'no message: %r' % r.err)


NOMEM = '''local s, kept = 0, {}
for i = 1, 20000 do
  local f = loadstring("local a = ... return a + " .. i, "=c" .. (i % 5000))
  s = s + f(1)
  local co = coroutine.create(function(x) local y = coroutine.yield(x) return y end)
  coroutine.resume(co, i)
  if i % 3 == 0 then kept[#kept + 1] = co else coroutine.resume(co, 1) end
end
print(s, #kept)
'''


def case_nomem(c):
    """The collector out of memory for its tables (tests/hosts/nomem.c
    fails its own mappings once tracing runs): the program runs on
    unchanged, and the events it could not trace are counted as drops in
    session.json, not lost silently (5000 functions and 13000 live
    coroutines need tables to grow)."""
    if 'libasan' in os.environ.get('LD_PRELOAD', ''):
        print('skipped: under AddressSanitizer the collector allocates with malloc')
        raise SystemExit(77)
    prog = c.write('nomem.lua', NOMEM)
    plain = c.lua(prog, c.env())
    # NOMEM_AFTER counts the collector's mappings up to the trace's tables;
    # the calibration before the trace (co_calib.c) would take its own
    env = c.env(LD_PRELOAD=c.args.nomem, NOMEM_AFTER='8', LUATRACE_COMPENSATE='0')
    r = run([c.args.recorderd, 'run', '--quiet', '--out', c.out, '--', c.args.lua, prog], c.tmp,
            env)
    expect(r.status == 0 and r.out == plain.out, 'program changed: %d %r %r'
           % (r.status, r.out, r.err))
    with open(os.path.join(c.session('nomem'), 'session.json')) as f:
        meta = json.load(f)
    expect(meta['drops'] > 0 and meta['bad_records'] == 0, 'losses not counted: %s' % meta)


def case_runopts(c):
    """Bad options of run are refused with exit 2 before the command runs
    (it would run untraced); unknown options are named; --help is no error;
    serve --fd and a PID are checked."""
    prog = c.write('mark.lua', 'io.open("ran", "w"):close()\n')
    afile = os.path.join(c.tmp, 'afile')
    with open(afile, 'w') as f:
        f.write('data\n')
    rd, lua = c.args.recorderd, c.args.lua
    for opts, what in ((['--ring', '3M'], b'--ring 3M: a power of two'),
                       (['--ring', '-5'], b'--ring -5: a power of two'),
                       (['--out', afile], b'cannot create or write it: Not a directory'),
                       (['--out', '/proc/luatrace-x'], b'--out /proc/luatrace-x: cannot'),
                       (['--out'], b'--out needs a value'),
                       (['--format', 'folded,bogus'], b'recorderd run: unknown format bogus'),
                       (['--format', 'none'], b'recorderd run: unknown format none'),
                       (['--time', 'bogus'], b'recorderd run: --time bogus: exact or sample'),
                       (['--clock', 'cpu2'], b'recorderd run: --clock cpu2: cpu or wall'),
                       (['--bogus'], b'recorderd run: unknown option --bogus')):
        r = run([rd, 'run'] + opts + ['--', lua, prog], c.tmp, c.env())
        expect(r.status == 2 and what in r.err, 'run %s: %d %r' % (opts, r.status, r.err))
        expect(not os.path.exists(os.path.join(c.tmp, 'ran')), 'run %s ran the command' % opts)
    expect(not os.path.exists(os.path.join(c.tmp, '--')) and open(afile).read() == 'data\n',
           'a bad --out was written')
    for cmd in (['listen'], ['status'], ['stop'], ['serve'], ['attach', '1'], ['top', '1']):
        r = run([rd] + cmd + ['--bogus'], c.tmp, c.env())
        expect(r.status == 2 and b'recorderd %s: unknown option --bogus' % cmd[0].encode()
               in r.err, '%s --bogus: %d %r' % (cmd[0], r.status, r.err))
    # numbers are whole numbers, and serve's fd a socket (stdin is /dev/null)
    for cmd, what in ((['serve', '--fd', '0'], b'serve: fd 0 is not a socket'),
                      (['serve', '--fd', 'abc'], b'--fd takes a file descriptor number'),
                      (['attach', '%dabc' % os.getpid()], b'abc is not a process id'),
                      (['dump', '0'], b'0 is not a process id')):
        r = run([rd] + cmd, c.tmp, c.env(), 20)
        expect(r.status == 2 and what in r.err, '%s: %d %r' % (cmd, r.status, r.err))
    r = run([rd, 'run', '--help'], c.tmp, c.env())
    expect(r.status == 0 and b'recorderd run [' in r.out, 'run --help: %d %r' % (r.status, r.err))
    # each command's own --help: a line per option of its own, the formats
    # where it writes reports, an example (run and attach printed one synopsis)
    options = {'run': ['-o, --out', '-q, --quiet', '-f, --format', '--ring', '--mode',
                       '--coverage', '--include', '--exclude', '--time', '--lines', '--clock',
                       '--memory', '--no-trace', '-b, --backend', '--sample'],
               'listen': ['--socket', '-o, --out', '-f, --format', '--coverage', '--include',
                          '--exclude', '--time', '--clock', '--memory', '--no-trace',
                          '-b, --backend', '--hello-timeout', '--http', '--http-token-file'],
               'attach': ['-d, --duration', '-o, --out', '-f, --format', '--coverage',
                          '--include', '--exclude', '--time', '--clock', '--memory',
                          '--no-trace', '--timeout', '-b, --backend', '-q, --quiet'],
               'report': ['-f, --format', '-o, --out', '-w, --weight', '--merge', '--include',
                          '--exclude', '--include-untested', '-b, --backend'],
               'status': ['--socket', '--json'], 'stop': ['--socket'], 'dump': ['--timeout'],
               'top': ['-d, --duration', '--timeout', '--rate', '--stop'],
               'record': ['-d, --duration', '--rate', '--stop', '-o, --out', '-q, --quiet'],
               'serve': ['--fd', '-o, --out', '--summary', '-q, --quiet', '-f, --format',
                         '-b, --backend']}
    texts = set()
    for cmd, opts in options.items():
        r = run([rd, cmd, '--help'], c.tmp, c.env())
        text = r.out.decode()
        # "  -o, --out DIR    what": the option's names, without its value
        got = sorted(' '.join(w for w in line[2:32].split() if w.startswith('-'))
                     for line in text.split('\n') if line.startswith('  -'))
        want = sorted(opts + ['-h, --help'])
        expect(r.status == 0 and text.startswith('usage: recorderd %s ' % cmd)
               and text.replace('\n', ' ').count(' example:   recorderd %s ' % cmd) == 1
               and got == want,
               '%s --help: options %s, want %s:\n%s' % (cmd, got, want, text))
        expect(('\nformats' in text) == (cmd in ('run', 'listen', 'attach', 'serve', 'report')),
               '%s --help: formats' % cmd)
        texts.add(text)
    expect(len(texts) == len(options), 'two commands print the same --help')
    # the same option names everywhere: -o and --out on every command that writes
    r = run([rd, 'run', '-q', '-o', os.path.join(c.tmp, 'out-o'), '--', lua, prog], c.tmp,
            c.env())
    expect(r.status == 0 and os.path.isdir(os.path.join(c.tmp, 'out-o', 'mark')),
           'run -o: %d %r' % (r.status, r.err))
    r = run([rd, 'report', os.path.join(c.tmp, 'out-o', 'mark'), '--format', 'none', '--out',
             os.path.join(c.tmp, 'none.txt')], c.tmp, c.env())
    expect(r.status == 0 and open(os.path.join(c.tmp, 'none.txt')).read().endswith(' events\n'),
           'report --out: %d %r' % (r.status, r.err))
    c.used.add('mark')
    r = run([rd, 'run', '-q', '--ring', '64K', '--out', c.out, '--', lua, prog], c.tmp, c.env())
    expect(r.status == 0 and os.path.exists(os.path.join(c.tmp, 'ran')) and c.session('mark'),
           'a good run: %d %r' % (r.status, r.err))
    # what a person opens by default; the others when asked (--format, by
    # report's names, repeatable), or rendered later from the trace; lines
    # by sample (the default): no coverage.lcov
    default = ['flamegraph.svg', 'profile.txt', 'report.html', 'session.json', 'trace.ltr']
    got = sorted(os.listdir(c.session('mark')))
    expect(got == default, 'default files: %s' % got)
    r = run([rd, 'run', '-q', '--out', c.out, '--format', 'folded,callgrind', '-f', 'pprof',
             '--', lua, prog], c.tmp, c.env())
    got = sorted(os.listdir(c.session('mark')))
    want = sorted(default + ['stacks.folded', 'callgrind.out', 'profile.pb.gz'])
    expect(r.status == 0 and got == want, '--format folded,callgrind -f pprof: %s' % got)
    r = run([rd, 'run', '-q', '--out', c.out, '--format', 'all', '--', lua, prog], c.tmp,
            c.env())
    got = sorted(os.listdir(c.session('mark')))
    want = sorted(default + ['stacks.folded', 'profile.speedscope.json', 'callgrind.out',
                             'profile.pb.gz', 'annotate', 'luacov.stats.out', 'coverage.txt',
                             'coverage.xml', 'coverage.lcov'])  # coverage asked: every line
    expect(r.status == 0 and got == want, '--format all: %s' % got)
    later = os.path.join(c.tmp, 'later.out')
    r = run([rd, 'report', c.session('mark'), '--format', 'callgrind', '-o', later], c.tmp,
            c.env())
    with open(os.path.join(c.session('mark'), 'callgrind.out')) as f, open(later) as g:
        expect(r.status == 0 and f.read() == g.read(), 'callgrind.out rendered later differs')


# Says where it runs, then works until the file GATE exists (60 s at most).
UNTIL_GATE = '''
local f = io.open("info", "w")
f:write(os.getenv("LUATRACE_SOCKET"), "\\n") f:close()
local function work(n) local s = 0 for i = 1, n do s = s + i % 7 end return s end
local t0 = os.time()
repeat work(20000) until io.open(GATE) or os.time() - t0 > 60
print("done")
'''


def start_run(c, prog):
    """recorderd run of prog in a new session (the test signals run
    alone); returns it and its temporary directory, once prog runs."""
    info = os.path.join(c.tmp, 'info')
    if os.path.exists(info):
        os.unlink(info)
    # SIGHUP at its default, whatever the test inherited: run keeps an
    # ignored SIGHUP ignored (nohup), and would then not pass it on
    p = subprocess.Popen([c.args.recorderd, 'run', '-q', '--out', c.out, '--', c.args.lua, prog],
                         cwd=c.tmp, env=c.env(), stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                         preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_DFL))
    deadline = time.monotonic() + 30
    while not (os.path.exists(info) and open(info).read().endswith('\n')):
        expect(time.monotonic() < deadline and p.poll() is None, 'the program did not start')
        time.sleep(0.05)
    return p, os.path.dirname(open(info).read().strip())


def case_runsignals(c):
    """SIGTERM and SIGHUP sent to recorderd run alone go to its command,
    which ends as it would; run writes the reports, exits with its status
    and removes its temporary directory. SIGINT alone is ignored."""
    gate = os.path.join(c.tmp, 'gate')
    prog = c.write('sig.lua', UNTIL_GATE.replace('GATE', repr(gate)))
    procs, tmpdirs = [], []
    try:
        for sig, want in ((signal.SIGTERM, 128 + 15), (signal.SIGHUP, 128 + 1),
                          (signal.SIGINT, 0)):
            shutil.rmtree(c.out, ignore_errors=True)
            p, tmpdir = start_run(c, prog)
            procs.append(p)
            tmpdirs.append(tmpdir)
            expect(tmpdir.startswith('/tmp/luatrace-run-') and os.path.isdir(tmpdir),
                   'temporary directory %s' % tmpdir)
            p.send_signal(sig)
            if sig == signal.SIGINT:
                time.sleep(0.5)
                expect(p.poll() is None, 'run ended on SIGINT: %s' % p.poll())
                open(gate, 'w').close()
            try:
                out, err = p.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                raise Failure('run did not end after %s' % sig.name)
            expect(p.returncode == want, '%s: run exited %d, want %d: %r'
                   % (sig.name, p.returncode, want, err))
            meta = json.load(open(os.path.join(c.session('sig'), 'session.json')))
            expect(meta['status'] == ('complete' if want == 0 else 'truncated'),
                   '%s: session %s' % (sig.name, meta))
            expect(not os.path.exists(tmpdir), '%s: %s left behind' % (sig.name, tmpdir))
            if os.path.exists(gate):
                os.unlink(gate)
    finally:
        open(gate, 'w').close()
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        for d in tmpdirs:  # a run killed here leaves its own
            if d.startswith('/tmp/luatrace-run-'):
                shutil.rmtree(d, ignore_errors=True)


def case_notrace(c):
    """--no-trace (run and listen): every report of the whole run, no
    trace.ltr, session.json says trace none."""
    prog = c.write('notrace.lua', 'local function f(i) return i * 2 end\n'
                   'local s = 0 for i = 1, 5000 do s = s + f(i) end print(s)\n')
    plain = c.lua(prog, c.env())
    r = run([c.args.recorderd, 'run', '--quiet', '--no-trace', '--out', c.out, '--',
             c.args.lua, prog], c.tmp, c.env())
    expect(r.status == 0 and r.out == plain.out, 'run: %d %r' % (r.status, r.err))
    c.start_daemon(extra=['--no-trace'])
    r = c.lua(prog, c.env(LUATRACE_SOCKET=c.sock, LUATRACE_SHM='notrace'), traced=True)
    c.stop_daemon()
    expect(r.status == 0 and r.out == plain.out, 'listen: %d %r' % (r.status, r.err))
    names = sorted(os.listdir(c.out))
    expect(len(names) == 2, 'sessions: %s' % names)
    for name in names:
        session = os.path.join(c.out, name)
        with open(os.path.join(session, 'session.json')) as f:
            meta = json.load(f)
        expect(meta['trace'] == 'none' and meta['status'] == 'complete' and not meta['error'],
               '%s: %s' % (name, meta))
        expect(not os.path.exists(os.path.join(session, 'trace.ltr')), '%s: a trace.ltr' % name)
        for line in open(os.path.join(session, 'profile.txt')):
            if line.rstrip().endswith(' f (notrace.lua:1)'):
                expect(int(line.split()[0]) == 5000, '%s: %s' % (name, line))
                break
        else:
            raise Failure('%s: no f in profile.txt' % name)


def case_names(c):
    """C functions named by their global path: Lua 5.1's compatibility
    aliases (string.gfind, math.mod) never win over string.gmatch and
    math.fmod, though they are as short or shorter; a C function is found by
    its C identity (the iterator pairs returns is next)."""
    prog = c.write('names.lua', 'local n = 0\n'
                   'for i = 1, 3 do local it = string.gmatch("a b", "%a") n = n + #it() end\n'
                   'for i = 1, 4 do n = n + math.fmod(7, 3) + math.mod(9, 4) end\n'
                   'for k in pairs({x = 1}) do n = n + #k end\n'
                   'print(n)\n')
    c.start_daemon()
    r = c.lua(prog, c.env(LUATRACE_SOCKET=c.sock, LUATRACE_SHM='names'), traced=True)
    c.stop_daemon()
    expect(r.status == 0 and r.out == b'12\n', 'program failed: %r %r' % (r.out, r.err))
    calls = c.folded(c.session('names'), 'calls')
    top = {}
    for stack, n in calls.items():
        leaf = stack.split(';')[-1]
        top[leaf] = top.get(leaf, 0) + n
    for label, n in (('string.gmatch@[C]', 3), ('math.fmod@[C]', 8), ('next@[C]', 2)):
        expect(top.get(label) == n, 'want %d calls of %s: %s' % (n, label, sorted(top)))
    expect(not [k for k in top if 'gfind' in k or 'math.mod@' in k],
           'an alias was chosen: %s' % sorted(top))
    # a call through a key that is no constant (handlers[token](s)): Lua
    # 5.1 names it "?", which is no name: the function's own label
    prog = c.write('varkey.lua', 'local h = {}\nh.a = function(x) return x + 1 end\n'
                   'local k, n = "a", 0\nfor i = 1, 5 do n = h[k](n) end\nprint(n)\n')
    r = run([c.args.recorderd, 'run', '-q', '--time', 'exact', '--out', c.out, '--format', 'folded', '--',
             c.args.lua, prog], c.tmp, c.env())
    folded = open(os.path.join(c.session('varkey'), 'stacks.folded')).read()
    expect(r.status == 0 and 'main chunk@varkey.lua:0;function@varkey.lua:2 ' in folded and
           '?@' not in folded, 'a call through a variable key: %r' % folded)


def case_cnames(c):
    """C functions no global reaches are named as a person looks them up:
    require's loaders (package.loaders[N]), a C module's luaopen_ (its
    exported symbol), methods of registry metatables (FILE*:read, lfs's
    directory iterator), lpeg.match also when called as a pattern's
    method, the iterators ipairs, string.gmatch and io.lines return
    (ipairs iterator and so on, where Lua says (for generator)), a
    coroutine.wrap generator by where its body is
    (coroutine.wrap(cnames.lua:9)); never function#N (luacheck's top 20
    had `function#3 [C]`, the Lua loader, before)."""
    c.write('mod_c.lua', 'return {f = function() return 1 end}\n')
    prog = c.write('cnames.lua', 'local lfs, lpeg = require "lfs", require "lpeg"\n'
                   'local m = require "mod_c"\n'
                   'local fh = io.open(arg[0]) local l = fh:read("*l") fh:close()\n'
                   'local n = 0 for _ in lfs.dir(".") do n = n + 1 end\n'
                   'local p = lpeg.C(lpeg.P"a")\n'
                   'for _ in ipairs({1, 2}) do end\n'
                   'for _ in ("a b"):gmatch("%a") do end\n'
                   'for _ in io.lines(arg[0]) do end\n'
                   'for _ in coroutine.wrap(function() coroutine.yield(1) end) do end\n'
                   'io.stdout:write(l, " ", m.f(), " ", lpeg.match(p, "a"), p:match("a"), "\\n")\n')
    c.start_daemon()
    r = c.lua(prog, c.env(LUATRACE_SOCKET=c.sock, LUATRACE_SHM='cnames'), traced=True)
    c.stop_daemon()
    expect(r.status == 0 and r.out.startswith(b'local lfs'), 'program failed: %r %r' % (r.out, r.err))
    calls = c.folded(c.session('cnames'), 'calls')
    top = {}
    for stack, n in calls.items():
        leaf = stack.split(';')[-1]
        top[leaf] = top.get(leaf, 0) + n
    # each loader named by the module it looks for (collector-requirenames)
    loaders = [('package.loaders[%d] "%s"@[C]' % (i, m), 1)
               for i, mods in ((1, ('lfs', 'lpeg', 'mod_c')), (2, ('lfs', 'lpeg', 'mod_c')),
                               (3, ('lfs', 'lpeg'))) for m in mods]
    for label, n in loaders + [('luaopen_lfs@[C]', 1),
                     ('luaopen_lpeg@[C]', 1), ('FILE*:read@[C]', 1), ('FILE*:write@[C]', 1),
                     ('lfs.dir@[C]', 1), ('lpeg.match@[C]', 2), ('ipairs iterator@[C]', 3),
                     ('string.gmatch iterator@[C]', 3), ('io.lines iterator@[C]', 11),
                     ('coroutine.wrap(cnames.lua:9)@[C]', 2)]:
        expect(top.get(label) == n, 'want %d calls of %s: %s' % (n, label, sorted(top)))
    expect(top.get('directory metatable:next@[C]', 0) >= 3, 'lfs.dir\'s iterator: %s' % sorted(top))
    expect(not [k for k in top if re.search(r'^function#\d', k)],
           'a function#N label: %s' % sorted(top))


def case_jitcnames(c):
    """The same names under LuaJIT, whose ipairs iterator is a fast function
    with no C function (known by its one closure), and where a generic
    for's call site is 'for iterator': ipairs iterator (was ipairs
    (upvalue 1)), string.gmatch iterator and io.lines iterator (were (for
    generator)), coroutine.wrap(jitnames.lua:4); every call of a C function
    through the FFI is one function to LuaJIT, 'ffi C call' (it took its
    first call site's name: abs called 'labs')."""
    need_luajit()
    prog = c.write('jitnames.lua', 'for _ in ipairs({1, 2}) do end\n'
                   'for _ in ("a b"):gmatch("%a") do end\n'
                   'for _ in io.lines(arg[0]) do end\n'
                   'for _ in coroutine.wrap(function() coroutine.yield(1) end) do end\n'
                   'local ffi = require "ffi" ffi.cdef "int abs(int); long labs(long);"\n'
                   'local s = ffi.C.labs(-2) for i = 1, 3 do s = s + ffi.C.abs(-i) end\n')
    c.start_daemon()
    r = run(['luajit', '-lluatrace', prog], c.tmp,
            c.env(LUATRACE_SOCKET=c.sock, LUATRACE_SHM='jitnames'))
    c.stop_daemon()
    expect(r.status == 0, 'program failed: %r %r' % (r.out, r.err))
    top = {}
    for stack, n in c.folded(c.session('jitnames'), 'calls').items():
        leaf = stack.split(';')[-1]
        top[leaf] = top.get(leaf, 0) + n
    for label, n in (('ipairs iterator@[C]', 3), ('string.gmatch iterator@[C]', 3),
                     ('io.lines iterator@[C]', 7), ('coroutine.wrap(jitnames.lua:4)@[C]', 2),
                     ('ffi C call@[C]', 4)):
        expect(top.get(label) == n, 'want %d calls of %s: %s' % (n, label, sorted(top)))
    expect(not [k for k in top if k.startswith(('abs@', 'labs@'))], 'an FFI call named after a '
           'call site: %s' % sorted(top))


SUMMARY_HEAD = re.compile(r'^luatrace: traced time: (\d+\.\d{3}) ms   events: (\d+)$')
SUMMARY_ROW = re.compile(r'^ *(\d+\.\d{3}) +(\d+\.\d{2}) +(\d+)  (.+)$')
PROFILE_ROW = re.compile(r'^ *(\d+) +(\d+\.\d{3}) +(\d+\.\d{2}) +\S+ +\S+ +\S+  (.+)$')


def profile_self_rows(session):
    """[(self ms, self%, calls, label)] of profile.txt's self-time table."""
    rows, on = [], False
    for line in open(os.path.join(session, 'profile.txt')):
        if line.startswith('By '):
            on = line.startswith('By self time')
        m = PROFILE_ROW.match(line.rstrip('\n')) if on else None
        if m:
            rows.append((m.group(2), m.group(3), m.group(1), m.group(4)))
    return rows


def case_ringwait(c):
    """A program that waits on its recorder for over a tenth of its run is
    told so in the summary, with what to do, and session.json counts the
    wait (ring_waited_ns); a program whose events fit its ring never waits
    and is told nothing. The recorder is slowed as a busy machine would
    (LUATRACE_TEST_DRAIN_PAUSE_US: a pause after each read) and the ring
    small. It said nothing: a run twice as slow, with no reason given."""
    prog = c.write('busy.lua', 'local s = 0\nfor i = 1, 3000000 do s = s + i % 7 end\n'
                   'print(s)\n')
    env = c.env(LUATRACE_TEST_DRAIN_PAUSE_US='2000')
    r = run([c.args.recorderd, 'run', '--lines', 'exact', '--ring', '64K', '--out', c.out, '--', c.args.lua, prog],
            c.tmp, env)
    meta = json.load(open(os.path.join(c.session('busy'), 'session.json')))
    said = re.search(r'luatrace: the program waited (\d+\.\d\d) s of its (\d+\.\d\d) s for '
                     r'recorderd to make room in the ring: .* give it a free core, a bigger ring '
                     r'\(--ring 64M\), or trace with no clock \(--coverage\)', r.err.decode())
    expect(r.status == 0 and said and meta['ring_waited_ns'] > 0 and
           abs(float(said.group(1)) - meta['ring_waited_ns'] / 1e9) < 0.006 and
           float(said.group(1)) * 10 >= float(said.group(2)),
           'a slow recorder: %d %r, ring_waited_ns %s' % (r.status, r.err[-600:],
                                                          meta['ring_waited_ns']))
    small = c.write('small.lua', 'local s = 0\nfor i = 1, 1000 do s = s + i end\nprint(s)\n')
    r = run([c.args.recorderd, 'run', '--lines', 'exact', '--out', c.out, '--', c.args.lua, small], c.tmp, env)
    meta = json.load(open(os.path.join(c.session('small'), 'session.json')))
    expect(r.status == 0 and b'to make room' not in r.err and meta['ring_waited_ns'] == 0,
           'a program that fits its ring: %r, ring_waited_ns %s' % (r.err[-400:],
                                                                    meta['ring_waited_ns']))


def case_dropcount(c):
    """A drop-mode session's drops are the events it lost: with the events
    it kept, the events of a whole run (3 000 000 line events), within the
    records a resync adds. They passed them: an event whose GAP found no
    room was counted twice (1 996 912 kept and 2 006 594 dropped)."""
    prog = c.write('drops.lua', 'local s = 0\nfor i = 1, 3000000 do s = s + i % 7 end\n'
                   'print(s)\n')
    r = run([c.args.recorderd, 'run', '-q', '--lines', 'exact', '--out', c.out, '--', c.args.lua, prog], c.tmp,
            c.env())
    whole = json.load(open(os.path.join(c.session('drops'), 'session.json')))['events']
    r = run([c.args.recorderd, 'run', '-q', '--lines', 'exact', '--mode', 'drop', '--ring', '64K', '--out', c.out,
             '--', c.args.lua, prog], c.tmp, c.env(LUATRACE_TEST_DRAIN_PAUSE_US='2000'))
    meta = json.load(open(os.path.join(c.session('drops'), 'session.json')))
    kept, lost = meta['events'], meta['drops']
    expect(r.status == 0 and lost > 0 and whole <= kept + lost <= whole * 1.01,
           'drop mode: %d kept + %d dropped, a whole run %d' % (kept, lost, whole))


def case_summary(c):
    """run's summary on stderr: traced time and events (as profile.txt and
    session.json), the top 10 functions by self time (profile.txt's first
    rows, those with self time), and the report.html to open, relative to
    our working directory (--out given whole). It was two 20-row tables
    and the session directory, no page named. A run that counts every line
    says its coverage after it, as coverage.lcov has it (a --coverage run
    listed calls only: its coverage was in the files alone)."""
    prog = c.write('summary.lua', ''.join('local function f%d() return %d end\n' % (i, i)
                                          for i in range(14)) +
                   'for i = 1, 50 do %s end\n' % ' '.join('f%d()' % i for i in range(14)))
    r = run([c.args.recorderd, 'run', '--time', 'exact', '--out', c.out, '--', c.args.lua, prog], c.tmp, c.env())
    expect(r.status == 0, 'run: %d %r' % (r.status, r.err))
    session = c.session('summary')
    lines = r.err.decode().split('\n')
    while lines and not lines[0]:
        lines.pop(0)
    head = SUMMARY_HEAD.match(lines[0]) if lines else None
    expect(head, 'summary head: %r' % lines[:1])
    meta = json.load(open(os.path.join(session, 'session.json')))
    profile = open(os.path.join(session, 'profile.txt')).read()
    expect('traced time: %s ms ' % head.group(1) in profile and
           int(head.group(2)) == meta['events'], 'totals %r: %s' % (lines[0], meta))
    expect(lines[1].split() == ['self', 'ms', 'self%', 'calls', 'function', '(top', '10', 'by',
                                'self', 'time)'], 'table head %r' % lines[1])
    rows = [SUMMARY_ROW.match(l) for l in lines[2:12]]
    expect(all(rows), 'rows: %r' % lines[2:12])
    want = profile_self_rows(session)[:10]  # 15 functions ran, each for some time
    expect([m.groups() for m in rows] == want,
           'summary rows %r, profile.txt %r' % ([m.groups() for m in rows], want))
    page = os.path.join(os.path.relpath(c.out, c.tmp), 'summary', 'report.html')
    # every line counted (exact time): the coverage of coverage.lcov in a line
    sums = {}
    for l in open(os.path.join(session, 'coverage.lcov')):
        key, _, v = l.strip().partition(':')
        if key in ('LF', 'LH', 'FNF', 'FNH'):
            sums[key] = sums.get(key, 0) + int(v)
    cov = 'coverage: %d of %d lines (%.2f%%), %d of %d functions (coverage.lcov)' % (
        sums['LH'], sums['LF'], 100.0 * sums['LH'] / sums['LF'], sums['FNH'], sums['FNF'])
    expect(lines[12:] == ['open: ' + page, cov, ''], 'after the table: %r' % lines[12:])
    r = run([c.args.recorderd, 'run', '--coverage', '--out', c.out, '--', c.args.lua, prog],
            c.tmp, c.env())
    expect(r.status == 0 and ('\nopen: %s\n%s\nprevious run: ' % (page, cov)) in r.err.decode(),
           '--coverage: %d %r' % (r.status, r.err))
    expect(os.path.isfile(os.path.join(c.tmp, page)), 'no %s' % page)


def case_requirenames(c):
    """A frame of require, and of the package loader that finds the module,
    is named by the module it loads (require "a", package.loaders[2] "a"),
    each module its own frame with its own time: a module that works three
    times as long at load weighs more, as the program's own os.clock says;
    a require of something that is no module name keeps the plain name.
    Before, every require was one frame and every file searcher another,
    so a profile said that loading took the time but not whose."""
    work = 'local t0 = os.clock() local s = 0 for i = 1, %d do s = s + i %% 7 end\n' \
           'io.stderr:write("CLOCK ", ..., " ", os.clock() - t0, "\\n")\nreturn {s = s}\n'
    c.write('mod_a.lua', work % 900000)
    c.write('mod_b.lua', work % 300000)
    prog = c.write('req.lua', 'local a = require "mod_a"\nlocal b = require("mod_b")\n'
                   'print(a.s + b.s, pcall(require, 42))\n')
    r = run([c.args.recorderd, 'run', '-q', '--time', 'exact', '--out', c.out, '--format', 'folded', '--',
             c.args.lua, prog], c.tmp, c.env())
    want_sum = sum(i % 7 for i in range(1, 900001)) + sum(i % 7 for i in range(1, 300001))
    expect(r.status == 0 and r.out.startswith(b'%d\tfalse\t' % want_sum),
           'program: %r %r' % (r.out, r.err))
    own = dict(l.split()[1:] for l in r.err.decode().splitlines() if l.startswith('CLOCK '))
    total = {}
    for stack, n in c.folded(c.session('req'), 'time').items():
        for frame in stack.split(';'):
            if frame.startswith('require') or frame.startswith('package.loaders'):
                total[frame] = total.get(frame, 0) + n
    for m in ('mod_a', 'mod_b'):
        expect(total.get('require "%s"@[C]' % m, 0) > 0 and
               'package.loaders[2] "%s"@[C]' % m in total,
               'no frames of %s\'s require and loader: %s' % (m, sorted(total)))
    ratio = total['require "mod_a"@[C]'] / total['require "mod_b"@[C]']
    want = float(own['mod_a']) / float(own['mod_b'])
    expect(ratio > 1.5 and want > 1.5, 'require "mod_a" / "mod_b": %.2f, the program\'s own '
           'clock: %.2f' % (ratio, want))
    expect('require@[C]' in total and 'require "42"@[C]' not in total,
           'require(42) is not the plain require: %s' % sorted(total))


def case_labels(c):
    """Labels people read are `name (file:line)`, a file under the
    program's working directory relative to it: profile.txt, the flame
    graph, report.html, callgrind's function names, pprof's, and `report`
    later on; one under a Lua library root (PREFIX/share/lua/5.1,
    PREFIX/lib/lua/5.1) relative to that root (inspect.lua, pkg/mod.lua),
    unless another source would be shown the same (dup.lua under two
    roots: both as if under no root, here relative to the cwd); any other
    whole. The folded stacks keep
    NAME@SRC:LINE whole (the corpus compares them with the reference
    tracer). The flame graph began each label with the absolute path
    (`/tmp..`), and installed modules were whole."""
    os.makedirs(os.path.join(c.tmp, 'app', 'lib'))
    lt = os.path.join(c.tmp, 'lt')
    for d in ('a/share/lua/5.1', 'b/lib/lua/5.1', 'tree/share/lua/5.1/pkg'):
        os.makedirs(os.path.join(lt, d))
    # each function runs tens of ms: sampled time (4 ms ticks) gives each a share
    dup = 'return {f = function() local s = 0 for i = 1, 6000000 do s = s + i end return s end}\n'
    for d in ('a/share/lua/5.1', 'b/lib/lua/5.1'):
        c.write(os.path.join('lt', d, 'dup.lua'), dup)
    c.write('lt/tree/share/lua/5.1/pkg/mod.lua', 'local M = {}\nfunction M.work() local s = 0 '
            'for i = 1, 8000000 do s = s + i end return s end\nreturn M\n')
    c.write('app/lib/m.lua', 'return {work = function(n) local s = 0\n'
            '  for i = 1, n do s = s + i end return s end}\n')
    prog = c.write('app/main.lua', 'package.path = %r .. ";" .. %r .. ";" .. package.path\n'
                   'local m, inspect = require "m", require "inspect"\n'
                   'print(m.work(8000000), inspect({1}))\n'
                   'local mod = require "pkg.mod"\n'
                   'print(dofile(%r).f(), dofile(%r).f(), mod.work())\n'
                   % (os.path.join(c.tmp, 'app', 'lib', '?.lua'),
                      os.path.join(lt, 'tree/share/lua/5.1/?.lua'),
                      os.path.join(lt, 'a/share/lua/5.1/dup.lua'),
                      os.path.join(lt, 'b/lib/lua/5.1/dup.lua')))
    c.used.add('main')
    r = run([c.args.recorderd, 'run', '--quiet', '--out', c.out, '--format', 'folded,callgrind,pprof',
             '--', c.args.lua, prog], c.tmp, c.env())
    expect(r.status == 0, 'run: %d %r' % (r.status, r.err))
    session = c.session('main')
    folded = open(os.path.join(session, 'stacks.folded')).read()
    whole = 'm.work@%s:1' % os.path.join(c.tmp, 'app', 'lib', 'm.lua')  # as the others show it
    expect('m.work@app/lib/m.lua:1' in folded and whole not in folded and
           'pkg.mod.work@pkg/mod.lua:2' in folded, 'folded stacks: %r' % folded[:400])
    label = 'm.work (app/lib/m.lua:1)'
    text = profile_text(session)
    expect(re.search(r'inspect.inspect \(inspect.lua:\d+\)', text),
           'no inspect.inspect (inspect.lua:N) in profile.txt: %r' % text[:3000])
    expect('pkg.mod.work (pkg/mod.lua:2)' in text, 'no pkg/mod.lua: %r' % text[:3000])
    for d in ('a/share/lua/5.1', 'b/lib/lua/5.1'):  # as if there were no root
        whole = 'f (lt/%s/dup.lua:1)' % d
        expect(whole in text, 'no %s: %r' % (whole, text[:3000]))
    svg = open(os.path.join(session, 'flamegraph.svg')).read()
    page = open(os.path.join(session, 'report.html')).read()
    cg = open(os.path.join(session, 'callgrind.out')).read()
    pb = gzip.open(os.path.join(session, 'profile.pb.gz')).read()
    later = run([c.args.recorderd, 'report', session, '--format', 'profile'], '/', base_env())
    # the same header as the session's own: its name and command
    head = profile_text(session).split('\n')[:2]
    expect(head[0].startswith('luatrace profile: ') and head[1].startswith('command: ') and
           later.out.decode().split('\n')[:2] == head,
           'report --format profile begins %r, profile.txt %r' % (later.out[:200], head))
    for what, text in (('profile.txt', profile_text(session)), ('report --format profile',
                       later.out.decode()), ('callgrind.out', cg), ('pprof', pb.decode('utf-8', 'replace'))):
        expect(label in text and 'main chunk (app/main.lua:0)' in text,
               '%s: no %s: %r' % (what, label, text[:3000]))
    for what, text in (('flamegraph.svg', svg), ('report.html', page)):
        expect('<title>%s (' % label in text and '<title>main chunk (app/main.lua:0) (' in text,
               '%s: no frame %s' % (what, label))
    expect('<td class="l">%s</td>' % label in page, 'report.html: %s not in the top table' % label)
    expect('">app/lib/m.lua</h3>' in page and '">app/lib/m.lua</a>' in page,
           'report.html: the source app/lib/m.lua not named relative to the working directory')
    expect(re.search(r'\nc?fn=\(\d+\) %s\n' % re.escape(label), cg), 'callgrind: fn= %s' % label)


def profile_text(session):
    with open(os.path.join(session, 'profile.txt')) as f:
        return f.read()


def case_badring(c):
    prog = c.write('hello.lua', 'print("hello")\n')
    plain = c.lua(prog, c.env())
    for bad in ('3M', '16', '2G', 'lots'):
        r = c.lua(prog, c.env(LUATRACE_SHM='ring', LUATRACE_RING=bad), traced=True)
        same_output(plain, r)
        err = r.err.decode()
        expect('LUATRACE_RING=%s: expected a power of two from 64K to 1G' % bad in err
               and 'running untraced' in err, 'unclear message for %s: %r' % (bad, err))


def case_fsizelimit(c):
    """A file-size limit (ulimit -f) below the ring: growing the ring would
    raise SIGXFSZ and kill the program; the collector says so and the
    program runs untraced, unchanged."""
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
    prog = c.write('hello.lua', 'print("hello")\n')
    plain = c.lua(prog, c.env())
    r = run([c.args.lua, '-lluatrace', prog], c.tmp, c.env(LUATRACE_SHM='fsize', LUATRACE_SPAWN='0'),
            preexec_fn=limit)
    same_output(plain, r)
    err = r.err.decode()
    expect('File too large' in err and 'running untraced' in err, 'unclear message: %r' % err)


DISCARD = '''local gen = coroutine.wrap(function() local i = 0 while true do i = i + 1 coroutine.yield(i) end end)
local function tiny(x) return x + 1 end
local k = 0
for _ = 1, 200000 do k = tiny(k) + gen() end
print(k)
'''


def case_discard(c):
    """LUATRACE_SINK=discard (scripts/bench's collector column) on a
    program that writes its 64 KB ring many times over: the output is
    plain's. The fill ahead of each publish (lt_ring_fill_ahead) read the
    tail nobody moves and memset past the ring: SIGSEGV once the ring had
    wrapped. lua5.1, luajit and lua5.4, each where installed (the first
    two through LUA_CPATH, 5.4 through LUA_CPATH_5_4)."""
    prog = c.write('discard.lua', DISCARD)
    luas = [c.args.lua] + [lua for lua in (shutil.which('luajit'), shutil.which('lua5.4')) if lua]
    for lua in luas:
        plain = run([lua, prog], c.tmp, c.env())
        env = c.env(LUATRACE_SINK='discard', LUATRACE_RING='64K',
                    LUA_CPATH_5_4=c.args.cpath + '/lua54/?.so;;')
        r = run([lua, '-lluatrace', prog], c.tmp, env)
        expect(r.status == 0 and r.out == plain.out and plain.out.strip().isdigit(),
               '%s discard: status %d, %r (untraced %r) %r' % (lua, r.status, r.out, plain.out,
                                                               r.err[-300:]))


def case_userdir(c):
    """run -o . beside a script's own package directory (app.lua and
    app/util.lua): the directory is the user's, not a session's, so it is
    never moved aside as app.prev nor removed by the rerun after; the
    session takes app.PID. A user's NAME.prev is left alone too. Before,
    the first run renamed app/ to app.prev/ (the program's require failed)
    and the second removed it with everything in it."""
    w = os.path.join(c.tmp, 'proj')
    os.makedirs(os.path.join(w, 'app'))
    with open(os.path.join(w, 'app', 'util.lua'), 'w') as f:
        f.write('return "util ok"\n')
    with open(os.path.join(w, 'app.lua'), 'w') as f:
        f.write('print(require("app.util"))\n')
    c.used.add('app')
    env = c.env()
    env['LUA_PATH'] = './?.lua;;'
    for _ in range(2):
        r = run([c.args.recorderd, 'run', '-q', '-o', '.', '--', c.args.lua, 'app.lua'], w, env)
        expect(r.status == 0 and r.out == b'util ok\n', 'run -o .: %d %r %r'
               % (r.status, r.out, r.err[-300:]))
        expect(os.path.isfile(os.path.join(w, 'app', 'util.lua')) and
               not os.path.exists(os.path.join(w, 'app.prev')),
               'the package directory moved: %s' % sorted(os.listdir(w)))
    sessions = [n for n in os.listdir(w) if n.startswith('app.') and n != 'app.lua']
    expect(len(sessions) == 2 and all(os.path.isfile(os.path.join(w, n, 'session.json'))
                                      for n in sessions), 'sessions: %s' % sorted(os.listdir(w)))
    # a session NAME rerun while the user's NAME.prev holds files
    prog = c.write('foo.lua', 'print("foo")\n')
    out = os.path.join(c.tmp, 'fo')
    base = [c.args.recorderd, 'run', '-q', '-o', out, '--', c.args.lua, prog]
    r = run(base, c.tmp, c.env())
    os.makedirs(os.path.join(out, 'foo.prev'))
    with open(os.path.join(out, 'foo.prev', 'keep'), 'w') as f:
        f.write('mine\n')
    r = run(base, c.tmp, c.env())
    expect(r.status == 0 and os.path.isfile(os.path.join(out, 'foo.prev', 'keep')) and
           os.path.isfile(os.path.join(out, 'foo', 'session.json')) and len(os.listdir(out)) == 3,
           'the user\'s foo.prev: %s %r' % (sorted(os.listdir(out)), r.err[-300:]))


def case_spawn0(c):
    prog = c.write('hello.lua', 'print("hello")\n')
    plain = c.lua(prog, c.env())
    r = c.lua(prog, c.env(LUATRACE_SHM='x', LUATRACE_SPAWN='0'), traced=True)
    same_output(plain, r)
    err = r.err.decode()
    expect('no recorderd is listening' in err and 'running untraced' in err,
           'unclear message: %r' % err)
    expect(err.count('\n') == 1, 'more than one line on stderr: %r' % err)


CLOSEDSTD = '''
local function probe()
  local line, rerr = io.read("*l")
  io.stdout:setvbuf("no")
  local ok, werr = io.stdout:write("out\\n")
  return line, rerr, ok, werr
end
local line, rerr, ok, werr = probe()
io.stderr:setvbuf("no")
io.stderr:write(string.format("read %s %s, write %s %s\\n",
                tostring(line), tostring(rerr), tostring(ok), tostring(werr)))
os.exit(10 + (line and 1 or 0) + (ok and 2 or 0))
'''


def closing(fds):
    """A preexec_fn: the program starts with fds closed (`<&- >&- 2>&-`)."""
    def pre():
        for fd in fds:
            os.close(fd)
    return pre


def case_closedstd(c):
    """A standard descriptor closed at start must stay as good as closed
    for the program: before, the collector's socket took its number (a
    read of stdin waited on it for ever, a write to stdout went into it),
    a private recorder got no socket (fd 3 was the socketpair's end, left
    close-on-exec), and recorderd run aborted in libuv (exit 134)."""
    prog = c.write('closedstd.lua', CLOSEDSTD)
    c.start_daemon()
    for k, fds in enumerate(((0,), (1,), (2,), (0, 1, 2))):
        plain = run([c.args.lua, prog], c.tmp, c.env(), preexec_fn=closing(fds))
        expect(plain.status in range(10, 14), 'untraced %s: %r' % (fds, plain.err))
        listen = run([c.args.lua, '-lluatrace', prog], c.tmp,
                     c.env(LUATRACE_SOCKET=c.sock, LUATRACE_SHM='closedstd%d' % k),
                     timeout=30, preexec_fn=closing(fds))
        private = run([c.args.lua, '-lluatrace', prog], c.tmp,
                      c.env(LUATRACE_SHM='closedstd', LUATRACE_OUT=c.out + '-private'),
                      timeout=30, preexec_fn=closing(fds))
        ran = run([c.args.recorderd, 'run', '-q', '--out', c.out + '-run', '--', c.args.lua, prog],
                  c.tmp, c.env(), timeout=30, preexec_fn=closing(fds))
        for how, r in (('listen', listen), ('private', private), ('run', ran)):
            same_output(plain, r)
            expect(r.err == plain.err, '%s, %s closed: stderr %r, untraced %r'
                   % (how, fds, r.err, plain.err))
        wait_file(os.path.join(c.out, 'closedstd%d' % k, 'session.json'), 'listen', c.daemon)
        for session in ('%s/closedstd%d' % (c.out, k), c.out + '-private/closedstd',
                        c.out + '-run/closedstd'):
            meta = json.load(open(os.path.join(session, 'session.json')))
            expect(meta['status'] == 'complete', '%s, %s closed: session %s' % (session, fds, meta))
        shutil.rmtree(c.out + '-private')
        shutil.rmtree(c.out + '-run')


def stale_segment(c, name, pid, whole):
    """/dev/shm/luatrace-NAME as a program killed while it made its ring
    (its pid alone) or before recorderd took it (whole) leaves it."""
    c.used.add(name)
    head = struct.pack('<QIIQII', 0x31474e4952544c, 1, 4096, 65536, pid, 0) if whole else \
        bytes(24) + struct.pack('<I', pid)
    with open(os.path.join(harness.SHM_DIR, 'luatrace-' + name), 'xb') as f:
        f.write(head.ljust(4096 + 65536 if whole else 0, b'\0'))
    os.chmod(f.name, 0o600)


def case_staleshm(c):
    gone = subprocess.Popen(['true'])
    gone.wait()
    prog = c.write('hello.lua', 'print("hello")\n')
    plain = c.lua(prog, c.env())
    live = os.path.join(harness.SHM_DIR, 'luatrace-stalelive')
    c.start_daemon()
    try:
        stale_segment(c, 'stalecut', gone.pid, False)
        stale_segment(c, 'stalewhole', gone.pid, True)
        stale_segment(c, 'stalelive', os.getpid(), False)
        for name in ('stalecut', 'stalewhole', 'stalelive'):
            r = c.lua(prog, c.env(LUATRACE_SOCKET=c.sock, LUATRACE_SHM=name), traced=True)
            same_output(plain, r)
        for name in ('stalecut', 'stalewhole'):
            wait_file(os.path.join(c.out, name, 'session.json'), name, c.daemon)
            expect(not os.path.exists(os.path.join(harness.SHM_DIR, 'luatrace-' + name)),
                   '%s: the leftover segment is still there' % name)
        expect(os.path.exists(live), "a live producer's segment was removed")
        names = sorted(os.listdir(c.out))
        expect(len(names) == 3 and names[0] == 'stalecut' and names[1].startswith('stalelive.')
               and names[2] == 'stalewhole', 'sessions %s' % names)
    finally:
        if os.path.exists(live):
            os.unlink(live)


def case_staleshmsweep(c):
    """recorderd listen removes, as it starts, every ring a killed program
    left (its producer dead), whatever its name: a NAME.PID session's is
    never asked for again. A live producer's stays, and a segment that is
    not private to its user."""
    gone = subprocess.Popen(['true'])
    gone.wait()
    left = {}
    try:
        for name, pid, whole in (('sweepcut.%d' % gone.pid, gone.pid, False),
                                 ('sweepwhole.%d' % gone.pid, gone.pid, True),
                                 ('sweeplive', os.getpid(), False),
                                 ('sweepshared', gone.pid, True)):
            stale_segment(c, name, pid, whole)
            left[name] = os.path.join(harness.SHM_DIR, 'luatrace-' + name)
        os.chmod(left['sweepshared'], 0o640)
        c.start_daemon()
        c.stop_daemon()
        for name, path in left.items():
            keep = name in ('sweeplive', 'sweepshared')
            expect(os.path.exists(path) == keep, '%s: %s' % (name, 'removed' if keep else 'left'))
    finally:
        for path in left.values():
            if os.path.exists(path):
                os.unlink(path)


SLOW = '''
local function work(n) local s = 0 for i = 1, n do s = s + i % 7 end return s end
local t = 0
for round = 1, 300 do t = t + work(100000) end
print(t)
'''


def case_killed(c):
    prog = c.write('slow.lua', SLOW)
    plain = c.lua(prog, c.env())
    c.start_daemon()
    env = c.env(LUATRACE_SOCKET=c.sock, LUATRACE_SHM='slow', LUATRACE_RING='64K')
    proc = subprocess.Popen([c.args.lua, '-lluatrace', prog], cwd=c.tmp, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    time.sleep(0.3)
    expect(proc.poll() is None, 'the program ended before recorderd was killed')
    c.kill_daemon()
    try:
        out, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise Failure('the traced program hung after recorderd was killed')
    expect(out == plain.out and proc.returncode == plain.status,
           'output or status changed: %r %d' % (out, proc.returncode))
    msg = err.decode()
    expect(msg.count('tracing stopped') == 1, 'expected one message, got %r' % msg)


def case_profile(c):
    """lua5.1 -lluatrace.profile app.lua: the summary at exit, a session
    named after the script, as run and -lluatrace name it."""
    prog = c.write('hello.lua', 'local function f() return 1 end\nprint(f())\n')
    plain = c.lua(prog, c.env())
    r = run([c.args.lua, '-lluatrace.profile', prog], c.tmp,
            c.env(LUATRACE_OUT=c.out))
    same_output(plain, r)
    err = r.err.decode()
    expect('function (top 10 by self time)' in err and ' f (hello.lua:1)\n' in err,
           'no summary: %r' % err)
    meta = json.load(open(os.path.join(c.session('hello'), 'session.json')))
    expect(meta['status'] == 'complete', 'session %s' % meta)


MANY = '''local s = 0
for i = 1, 2600 do
  s = s + loadstring("local a = ... return a + " .. i, "=c" .. i)(1)
end
print(s)
'''


def profile_tables(session):
    """{'self'|'total'|'calls': [row line]} of profile.txt, rows as written."""
    tables, on = {}, None
    for line in profile_text(session).splitlines():
        if line.startswith('By '):
            on = line.split()[1]
            tables[on] = []
        elif on and line.strip() and not line.lstrip().startswith('calls'):
            tables[on].append(line)
    return tables


def case_manyfuncs(c):
    """A program of 2600 chunks, each called once: profile.txt lists 2000
    functions per table, then one row for the rest (how many, their calls
    and self time together; a total at most the last one's), so the file
    stays small; self times listed and left out add up to the traced
    time. The same in a coverage run's table by calls."""
    prog = c.write('many.lua', MANY)
    plain = c.lua(prog, c.env())
    for mode in ([], ['--coverage']):
        shutil.rmtree(c.out, ignore_errors=True)
        r = run([c.args.recorderd, 'run', '--quiet', '--out', c.out] + mode +
                ['--', c.args.lua, prog], c.tmp, c.env())
        same_output(plain, r)
        session = c.session('many')
        head = profile_text(session).splitlines()
        nfunc = int(re.search(r'functions: (\d+)', '\n'.join(head[:4])).group(1))
        expect(nfunc > 2600, 'functions: %s' % head[:4])
        tables = profile_tables(session)
        expect(set(tables) == ({'calls'} if mode else {'self', 'total'}),
               'tables %s' % list(tables))
        for name, rows in tables.items():
            expect(len(rows) == 2001, '%s: %d rows' % (name, len(rows)))
            more = re.search(r'\((\d+) more functions', rows[-1])
            expect(more and int(more.group(1)) == nfunc - 2000, '%s: %r' % (name, rows[-1]))
        rest = tables.get('self', tables.get('calls'))[-1].split()
        expect(int(rest[0]) == nfunc - 2000, 'the rest are chunks called once: %r' % rest)
        if mode:
            continue
        listed = sum(float(row.split()[1]) for row in tables['self'][:-1]) + float(rest[1])
        traced = float(re.search(r'traced time: ([\d.]+) ms', head[2]).group(1))
        expect(abs(listed - traced) <= 2001 * 0.0005 + 0.001,
               'self times add up to %.3f ms of %.3f' % (listed, traced))


def case_badtrace(c):
    junk = c.write('junk.ltr', 'this is not a trace\n')
    r = run([c.args.recorderd, 'report', junk], c.tmp, base_env())
    expect(r.status == 1 and b'not a luatrace trace file' in r.err, 'junk: %r' % r.err)
    prog = c.write('hello.lua', 'print(1)\n')
    r = run([c.args.recorderd, 'run', '-q', '--out', c.out, '--', c.args.lua, prog], c.tmp,
            c.env())
    expect(r.status == 0, 'run failed: %r' % r.err)
    trace = os.path.join(c.session('hello'), 'trace.ltr')
    data = open(trace, 'rb').read()
    cut = c.write('cut.ltr', '')
    with open(os.path.join(c.tmp, cut), 'wb') as f:
        f.write(data[:len(data) - 3])
    r = run([c.args.recorderd, 'report', cut], c.tmp, base_env())
    expect(r.status == 0 and b'truncated' in r.err, 'truncated: %d %r' % (r.status, r.err))
    r = run([c.args.recorderd, 'report', trace], c.tmp, base_env())
    expect(r.status == 0 and not r.err, 'a whole trace: %d %r' % (r.status, r.err))
    # no end record (STOP): cut at a record boundary before it (a process
    # SIGKILLed, a copy cut short), or the header alone; the records at
    # their offsets: the trace as an uncompressed version 4 file, which is
    # still read
    plain = os.path.join(c.tmp, 'plain.ltr')
    pdata, starts = plain_trace(trace, plain), []
    kinds = [k for k, _ in trace_records(plain, starts)]
    r = run([c.args.recorderd, 'report', plain], c.tmp, base_env())
    expect(r.status == 0 and not r.err, 'a whole version 4 trace: %d %r' % (r.status, r.err))
    for d, end in ((pdata, starts[kinds.index(EV_STOP)]), (pdata, 16), (data, 16)):
        with open(os.path.join(c.tmp, cut), 'wb') as f:
            f.write(d[:end])
        r = run([c.args.recorderd, 'report', cut, '--format', 'none'], c.tmp, base_env())
        expect(r.status == 0 and r.out and b'cut.ltr: no end record: truncated' in r.err,
               'no STOP (%d of %d bytes): %d %r' % (end, len(d), r.status, r.err))
    # a malformed record is placed by its offset in the file, also past the
    # first read of the file (the header, then 256 KiB at a time)
    prog = c.write('loop.lua', 'local function f() return 1 end\nfor i = 1, 100000 do f() end\n')
    r = run([c.args.recorderd, 'run', '-q', '--out', c.out, '--', c.args.lua, prog], c.tmp,
            c.env())
    expect(r.status == 0, 'run failed: %r' % r.err)
    trace = os.path.join(c.session('loop'), 'trace.ltr')
    data, starts = plain_trace(trace, plain), []
    trace_records(plain, starts)
    for at in (16, min(x for x in starts if x > 300000)):
        with open(os.path.join(c.tmp, cut), 'wb') as f:
            f.write(data[:at] + b'\x93\xff\x00' + data[at:])
        r = run([c.args.recorderd, 'report', cut], c.tmp, base_env())
        expect(r.status == 1 and b'malformed record at byte %d of the file' % at in r.err,
               'corrupt at %d: %d %r' % (at, r.status, r.err))
        # the records before it are reported (nothing that could be read is
        # lost), and stderr says so; none when it is the first
        calls = [int(l.split()[0]) for l in r.out.decode().splitlines() if l.endswith(' f (loop.lua:1)')]
        expect((at == 16 and not r.out) or
               (calls and 0 < calls[0] < 100000 and b'the reports hold the records before it' in r.err),
               'corrupt at %d: the report of what came before: %r %r' % (at, r.out[:600], r.err))
    # in a compressed trace, by its offset in the decompressed records
    zbody = subprocess.run(['zstd', '-cq'], input=data[16:at] + b'\x93\xff\x00' + data[at:],
                           stdout=subprocess.PIPE, check=True).stdout
    with open(os.path.join(c.tmp, cut), 'wb') as f:
        f.write(data[:8] + (5).to_bytes(4, 'little') + (1).to_bytes(4, 'little') + zbody)
    r = run([c.args.recorderd, 'report', cut], c.tmp, base_env())
    expect(r.status == 1 and b'malformed record at byte %d of the decompressed records'
           % (at - 16) in r.err, 'corrupt at %d, compressed: %d %r' % (at, r.status, r.err))
    # garbage in the compressed body: an error, never a crash; where the
    # garbage lands inside a block, the block may decode to bad records
    zdata = open(trace, 'rb').read()
    for at in (16, len(zdata) // 2):
        with open(os.path.join(c.tmp, cut), 'wb') as f:
            f.write(zdata[:at] + b'garbage, not zstd' * 8 + zdata[at:])
        r = run([c.args.recorderd, 'report', cut], c.tmp, base_env())
        expect(r.status == 1 and (b'corrupt compressed trace' in r.err or
                                  at > 16 and b'malformed record' in r.err),
               'garbage at %d: %d %r' % (at, r.status, r.err))
        # (what comes before garbage inside a zstd block is that block's,
        # and lost with it: this trace is one block)
    # junk after a whole trace: every record is reported, the junk said
    with open(os.path.join(c.tmp, cut), 'wb') as f:
        f.write(zdata + b'junk after the last frame\n' * 4)
    r = run([c.args.recorderd, 'report', cut], c.tmp, base_env())
    calls = [int(l.split()[0]) for l in r.out.decode().splitlines() if l.endswith(' f (loop.lua:1)')]
    expect(r.status == 1 and set(calls) == {100000} and b'corrupt compressed trace' in r.err,
           'junk after the trace: %d %r %r' % (r.status, calls, r.err))


EXIT = '''
local function deep(n) if n == 0 then io.write("bye\\n") os.exit(7) end return deep(n - 1) + 1 end
deep(5)
'''


def case_exit(c):
    prog = c.write('ex.lua', EXIT)
    plain = c.lua(prog, c.env())
    r = run([c.args.recorderd, 'run', '-q', '--out', c.out, '--', c.args.lua, prog], c.tmp,
            c.env())
    same_output(plain, r)
    expect(r.status == 7, 'exit status %d' % r.status)
    meta = json.load(open(os.path.join(c.session('ex'), 'session.json')))
    expect(meta['status'] == 'complete', 'session %s' % meta)
    rows = c.folded(c.session('ex'), 'calls')
    expect(rows.get('lua5.1@[C];main chunk@ex.lua:0;deep@ex.lua:2;deep@ex.lua:2;deep@ex.lua:2;'
                    'deep@ex.lua:2;deep@ex.lua:2;deep@ex.lua:2;os.exit@[C]') == 1,
           'os.exit call missing: %s' % rows)


SELFKILL = r'''local n, sig = tonumber(arg[1]), arg[2]
local function f(i) return i + 1 end
local s = 0
for _ = 1, n do s = f(s) end
io.write("did ", s, "\n") io.stdout:flush()
local pid = io.open("/proc/self/stat"):read("*l"):match("^(%d+)")
os.execute("kill -" .. sig .. " " .. pid)
while true do end
'''


def case_signalled(c):
    """A program killed by a signal (KILL, TERM, PIPE) before it published
    its last records: recorderd reads them after it is gone, every call of
    f counted, for 10 calls (nothing published) and 3000 (some); under
    lua5.1, luajit and lua5.4 where there. profile.txt and run's summary
    say INCOMPLETE."""
    prog = c.write('sk.lua', SELFKILL)
    luas = [c.args.lua] + [l for l in ('luajit', 'lua5.4') if shutil.which(l)]
    for lua in luas:
        for n, sig in ((10, 'KILL'), (3000, 'TERM'), (10, 'PIPE')):
            out = os.path.join(c.tmp, 'sk-%s-%d-%s' % (os.path.basename(lua), n, sig))
            r = run([c.args.recorderd, 'run', '-q', '--out', out, '--', lua, prog, str(n), sig],
                    c.tmp, c.env())
            want = 128 + getattr(signal, 'SIG' + sig)
            expect(r.status == want and r.out == b'did %d\n' % n, '%s %d %s: %d %r'
                   % (lua, n, sig, r.status, r.out))
            session = harness.find_session(out)
            meta = json.load(open(os.path.join(session, 'session.json')))
            calls = {k.split(' (')[0]: v for k, v in harness.calls_of(session).items()}
            expect(calls.get('f') == n and meta['status'] == 'truncated'
                   and meta['unpublished_bytes'] > 0 and meta['bad_records'] == 0,
                   '%s %d %s: f called %r times, %s' % (lua, n, sig, calls.get('f'), meta))
            # said where people look, not only in session.json
            with open(os.path.join(session, 'profile.txt')) as f:
                head = f.read().split('\n')[:3]
            expect(head[2].startswith('INCOMPLETE: the trace ended early'),
                   '%s %d %s: profile.txt head %r' % (lua, n, sig, head))
    r = run([c.args.recorderd, 'run', '--out', os.path.join(c.tmp, 'sk-summary'), '--',
             c.args.lua, prog, '10', 'KILL'], c.tmp, c.env())
    expect(b'luatrace: INCOMPLETE: the trace ended early' in r.err, 'summary: %r' % r.err)


CPATH_PROG = r'''print(package.cpath)
print(select(2, pcall(require, "no.such.mod")))
local f = io.popen(arg[-1] .. " -e 'print(package.cpath)'")
io.write(f:read("*a"))
f:close()
'''


def case_cpath(c):
    """recorderd run puts the collector's directory in LUA_CPATH; the
    program and the Lua processes it starts still see their own
    package.cpath, so a "module not found" message lists what it lists
    untraced (one more file per name tried, before). With LUA_CPATH unset
    (Lua's default) and set; lua5.1, LuaJIT and lua5.4 (with
    LUA_CPATH_5_4 set too). The program's own require "luatrace" still
    finds the collector."""
    prog = c.write('cp.lua', CPATH_PROG)
    mine = c.write('mine.lua', 'local lt = require "luatrace" print(type(lt.tron))\n')
    cases = [(c.args.lua, cp, None) for cp in (None, '/nowhere/?.so;;', '/nowhere/?.so')]
    cases += [(harness.need_luajit(), cp, None) for cp in (None, '/nowhere/?.so;;')]
    cases += [(harness.need_lua54(), cp, cp54) for cp, cp54 in
              ((None, None), ('/nowhere/?.so;;', None), ('/nowhere/?.so', '/nowhere54/?.so;;'))]
    for lua, cpath, cpath54 in cases:
        env = c.env()
        for k, v in (('LUA_CPATH', cpath), ('LUA_CPATH_5_4', cpath54)):
            env.pop(k, None)
            if v:
                env[k] = v
        plain = run([lua, prog], c.tmp, env)
        shutil.rmtree(c.out, ignore_errors=True)
        r = run([c.args.recorderd, 'run', '-q', '--out', c.out, '--', lua, prog], c.tmp, env)
        expect(b"module 'no.such.mod' not found" in plain.out,
               'plain run: %r' % plain.out)
        same_output(plain, r)
        expect(os.path.isdir(c.session('cp')), '%s: not traced' % lua)
        r = run([c.args.recorderd, 'run', '-q', '--out', c.out, '--', lua, mine], c.tmp, env)
        expect(r.status == 0 and r.out == b'function\n', '%s: require "luatrace": %r %r'
               % (lua, r.out, r.err))


SIGINT_PROG = r'''local pid = io.open("/proc/self/stat"):read("*n")
local function work(n) local s = 0 for i = 1, n do s = s + i end return s end
local function spin()
  io.popen("kill -INT " .. pid)
  for i = 1, 2e7 do work(3) end
end
local ok, e = pcall(spin)
print(ok, tostring(e):match("interrupted!$"))
local after = 0
for i = 1, 1000 do after = after + work(2) end
print(after)
'''


SIGINT_HOOKED = r'''local pid = io.open("/proc/self/stat"):read("*n")
local lines = 0
local function count() lines = lines + 1 end
debug.sethook(count, "l")
local function work(n) local s = 0 for i = 1, n do s = s + i end return s end
local function spin()
  io.popen("kill -INT " .. pid)
  for i = 1, 2e7 do work(3) end
end
local ok, e = pcall(spin)
print(ok, tostring(e):match("interrupted!$"))
local h, mask, n = debug.gethook()
print(h == count, mask, n)
local before, after = lines, 0
for i = 1, 1000 do after = after + work(2) end
print(after, lines - before)
'''


def case_sigint(c):
    """A program that catches lua.c's Ctrl-C error ("interrupted!", raised
    by the hook lua.c's SIGINT handler puts on the main thread) and goes
    on: its output is the untraced one, and what it runs afterwards is
    traced (it ran untraced, the session saying complete)."""
    prog = c.write('sig.lua', SIGINT_PROG)
    # lua.c catches SIGINT anew for each chunk: tracing starts in the
    # first, the -e chunk, and the script's catch is another
    for opts in ([], ['-e', 'x = 1']):
        cmd = [c.args.lua] + opts + [prog]
        plain = run(cmd, c.tmp, c.env())
        expect(plain.out == b'false\tinterrupted!\n3000\n', 'plain run: %r' % plain.out)
        shutil.rmtree(c.out, ignore_errors=True)
        r = run([c.args.recorderd, 'run', '-q', '--out', c.out, '--'] + cmd, c.tmp, c.env())
        same_output(plain, r)
        rows = c.folded(c.session('sig'), 'calls')
        top = 'lua5.1@[C];main chunk@sig.lua:0;'
        expect(rows.get(top + 'work@sig.lua:2') == 1000 and rows.get(top + 'print@[C]') == 2,
               '%s: calls after the interrupt: %s' % (opts, rows))
        spin = top + 'pcall@[C];function@sig.lua:3'
        # the signal may come as soon as io.popen returns: work() 0+ times
        expect(rows.get(spin) == 1
               and all(k.startswith(spin) for k in rows if 'sig.lua:3' in k),
               '%s: spin (under pcall, until interrupted): %s' % (opts, rows))
    # the program's own line hook on the main thread: lua.c's handler
    # takes it off with the collector's (debug.gethook: its function, "",
    # 0), and what runs afterwards is traced
    prog = c.write('sigh.lua', SIGINT_HOOKED)
    plain = run([c.args.lua, prog], c.tmp, c.env())
    expect(plain.out == b'false\tinterrupted!\ntrue\t\t0\n3000\t0\n', 'plain run: %r' % plain.out)
    shutil.rmtree(c.out, ignore_errors=True)
    r = run([c.args.recorderd, 'run', '-q', '--out', c.out, '--', c.args.lua, prog], c.tmp,
            c.env())
    same_output(plain, r)
    rows = c.folded(c.session('sigh'), 'calls')
    top = 'lua5.1@[C];main chunk@sigh.lua:0;'
    expect(rows.get(top + 'work@sigh.lua:5') == 1000 and rows.get(top + 'debug.gethook@[C]') == 1,
           'hooked: calls after the interrupt: %s' % rows)


def case_sigint54(c):
    """sigint's first program under Lua 5.4, whose lua.c puts lstop on the
    main thread with the line mask too (call, return, line and count 1):
    what the program runs after it caught "interrupted!" is traced (the
    collector's handler did not know that mask, and lstop took the hook
    off for good: nothing after the interrupt was traced, the session
    said complete). Under 5.4 the program's own hook is not chained (the
    thread is not traced while it has one): no hooked variant here."""
    lua54 = lua54_installed()
    prog = c.write('sig.lua', SIGINT_PROG)
    env = c.env(LUA_CPATH_5_4=c.args.cpath + '/lua54/?.so;;')
    for opts in ([], ['-e', 'x = 1']):
        cmd = [lua54] + opts + [prog]
        plain = run(cmd, c.tmp, env)
        expect(plain.out == b'false\tinterrupted!\n3000\n', 'plain run: %r' % plain.out)
        for how in ([], ['--lines', 'exact']):
            shutil.rmtree(c.out, ignore_errors=True)
            r = run([c.args.recorderd, 'run', '-q', '--out', c.out] + how + ['--'] + cmd,
                    c.tmp, env)
            same_output(plain, r)
            rows = c.folded(c.session('sig'), 'calls')
            top = 'lua5.4@[C];main chunk@sig.lua:0;'
            expect(rows.get(top + 'work@sig.lua:2') == 1000 and rows.get(top + 'print@[C]') == 2,
                   '%s %s: calls after the interrupt: %s' % (opts, how, rows))
            spin = top + 'pcall@[C];function@sig.lua:3'
            expect(rows.get(spin) == 1
                   and all(k.startswith(spin) for k in rows if 'sig.lua:3' in k),
                   '%s %s: spin (under pcall, until interrupted): %s' % (opts, how, rows))


SIGHOOK_PROG = r'''local sh = require(arg[1])
local SIGUSR1, n = 10, 0
sh.catch(SIGUSR1, function() n = n + 1 end)
local function work() local x = 0 for k = 1, 50 do x = x + k end return x end
local function late() return n end
-- taken six calls deep: the stack after it is deep's
local function deep(k)
  if k > 0 then return deep(k - 1) + 1 end
  sh.raise(SIGUSR1)
  for _ = 1, 400000 do work() end
  return 0
end
local made = 0
for _ = 1, 20000 do work() made = made + 1 end
sh.raise(SIGUSR1)
for _ = 1, 200000 do work() made = made + 1 end
-- taken while a coroutine runs: the main thread's hook goes as it yields back
local co = coroutine.wrap(function() sh.raise(SIGUSR1) coroutine.yield() end)
co()
for _ = 1, 200000 do work() made = made + 1 end
deep(5)
print(late(), made)
'''


def sighook_check(c, cmd, env, top):
    """SIGHOOK_PROG (or a program of its shape) run plain and by run: the
    same output; after each signal, whose hook took every hook off the
    main thread, the main thread is traced again: late() and print once
    each, where the program called them, and work() more than the calls
    before the first signal and half of those after each (the calls
    between a signal and the next tick are not traced: a few ms of CPU,
    some 25 under load), the calls deep() made under it; session.json
    counts the three removals."""
    plain = run(cmd, c.tmp, env)
    expect(plain.out == b'3\t420000\n', 'plain run: %r %r' % (plain.out, plain.err))
    shutil.rmtree(c.out, ignore_errors=True)
    r = run([c.args.recorderd, 'run', '-q', '--out', c.out, '--'] + cmd, c.tmp, env)
    same_output(plain, r)
    session = c.session('sigprog')
    rows = c.folded(session, 'calls')
    work = rows.get(top + 'work@sigprog.lua:4', 0)
    deep = top + ';'.join(['deep@sigprog.lua:7'] * 6) + ';'
    deep_work = rows.get(deep + 'work@sigprog.lua:4', 0)
    expect(rows.get(top + 'late@sigprog.lua:5') == 1 and rows.get(top + 'print@[C]') == 1
           and 220000 < work <= 420000 and 200000 < deep_work <= 400000
           and all(k.startswith(deep) for k in rows if k.endswith('work@sigprog.lua:4')
                   and k != top + 'work@sigprog.lua:4'),
           'calls after the signals: %s' % rows)
    with open(os.path.join(session, 'session.json')) as f:
        meta = json.load(f)
    expect(meta.get('rehooked') == 3 and meta['bad_records'] == 0, 'session: %s' % meta)
    with open(os.path.join(session, 'profile.txt')) as f:
        expect('HOOK TAKEN OFF: 3 times' in f.read(), 'profile.txt says nothing of it')


def case_sighook(c):
    """A C library that runs a Lua function on a signal as luaposix's
    posix.signal does (tests/hosts/sighook.c: its hook takes every hook
    off the main thread first): what the program runs after the signal is
    traced again from the next tick on (it ran untraced for good, the
    session saying complete), also where the signal came while a
    coroutine ran, or six calls deep; under LuaJIT too (its one hook is
    the state's). Then luaposix itself, where it is installed."""
    env = c.env(LUA_CPATH=c.args.sighook + '/?.so;;')
    prog = c.write('sigprog.lua', SIGHOOK_PROG)
    sighook_check(c, [c.args.lua, prog, 'sighook'], env, 'lua5.1@[C];main chunk@sigprog.lua:0;')
    luajit = shutil.which('luajit')
    if not luajit:
        raise Failure('luajit is not installed (scripts/setup installs it)')
    sighook_check(c, [luajit, prog, 'sighook'], env, 'luajit@[C];main chunk@sigprog.lua:0;')
    if run([c.args.lua, '-e', 'require "posix.signal"'], c.tmp, env).status != 0:
        print('luaposix not installed: its run skipped')
        return
    shim = c.write('posixsig.lua', 'local ps = require "posix.signal"\n'
                   'return {catch = function(n, f) ps.signal(n, f) end, raise = ps.raise}\n')
    env = c.env(LUA_PATH=c.tmp + '/?.lua;;')
    sighook_check(c, [c.args.lua, prog, 'posixsig'], env, 'lua5.1@[C];main chunk@sigprog.lua:0;')


FORKCALLS_PROG = r'''local fl = require "forklib"
local function work() local x = 0 for k = 1, 50 do x = x + k end return x end
for _ = 1, 1000 do work() end
local pid = fl.fork()
if pid == 0 then
  for _ = 1, 30000 do work() end
  os.exit(0)
end
print(fl.wait(pid))
'''


def fork_child_calls(c, cmd, env, name):
    """cmd run plain and by run, with sampled and with exact time: the same
    output, and one child session (NAME.PID) whose work() calls are 30000."""
    plain = run(cmd, c.tmp, env)
    for how in ([], ['--time', 'exact']):
        shutil.rmtree(c.out, ignore_errors=True)
        r = run([c.args.recorderd, 'run', '-q', '--out', c.out] + how + ['--'] + cmd, c.tmp, env)
        same_output(plain, r)
        kids = [d for d in os.listdir(c.out) if re.fullmatch(re.escape(name) + r'\.\d+', d)]
        expect(len(kids) == 1, '%s %s: child sessions %r' % (cmd[0], how, os.listdir(c.out)))
        rows = c.folded(os.path.join(c.out, kids[0]), 'calls')
        work = sum(n for k, n in rows.items() if k.endswith(';work@%s.lua:%d'
                                                            % (name, 2 if name == 'forkcalls' else 4)))
        expect(work == 30000, '%s %s: the child\'s work() calls: %d (%s)'
               % (cmd[0], how, work, rows))


def case_forkcalls(c):
    """A fork child traced as its own session counts every call it makes:
    under LuaJIT, which reports no return from fork(), its first event is
    its first call, which went into the stack it began from, uncounted
    (29999 of 30000)."""
    env = c.env(LUA_CPATH=c.args.sighook + '/?.so;;')
    prog = c.write('forkcalls.lua', FORKCALLS_PROG)
    for lua in (c.args.lua, shutil.which('luajit')):
        if not lua:
            raise Failure('luajit is not installed (scripts/setup installs it)')
        fork_child_calls(c, [lua, prog], env, 'forkcalls')


SIGFORK_PROG = r'''local sh, fl = require(arg[1]), require "forklib"
local SIGUSR1, n = 10, 0
sh.catch(SIGUSR1, function() n = n + 1 end)
local function work() local x = 0 for k = 1, 50 do x = x + k end return x end
for _ = 1, 1000 do work() end
sh.raise(SIGUSR1) -- its hook took every hook off the main thread
local pid = fl.fork()
if pid == 0 then
  for _ = 1, 30000 do work() end
  os.exit(0)
end
print(n, fl.wait(pid))
'''


def case_sigfork(c):
    """A child forked after a C library took every hook off the main
    thread (tests/hosts/sighook.c, as luaposix's posix.signal does at each
    signal), before any tick put it back: the child is traced as a session
    of its own, its 30000 calls of work() counted (it had no hook and no
    timer to put one back, and ran untraced, leaving no session; under
    --time exact, every child forked after such a signal did). lua5.1 and
    LuaJIT, sampled time and --time exact."""
    env = c.env(LUA_CPATH=c.args.sighook + '/?.so;;')
    prog = c.write('sigfork.lua', SIGFORK_PROG)
    for lua in (c.args.lua, shutil.which('luajit')):
        if not lua:
            raise Failure('luajit is not installed (scripts/setup installs it)')
        plain = run([lua, prog, 'sighook'], c.tmp, env)
        expect(plain.out == b'1\t0\n', 'plain run: %r %r' % (plain.out, plain.err))
        fork_child_calls(c, [lua, prog, 'sighook'], env, 'sigfork')


def case_sighook54(c):
    """sighook under Lua 5.4 (its default, and --lines exact's probes
    are none)."""
    lua54 = lua54_installed()
    env = c.env(LUA_CPATH_5_4=c.args.cpath + '/lua54/?.so;' + c.args.sighook + '/?.so;;')
    prog = c.write('sigprog.lua', SIGHOOK_PROG)
    sighook_check(c, [lua54, prog, 'sighook54'], env, 'lua5.4@[C];main chunk@sigprog.lua:0;')


def trace_records(path, offsets=None):
    """The records of a trace.ltr as (kind, args) tuples; short forms and
    steps as ('short', byte). Enough of lt_event.h for the tests. Each
    record's offset in the records, plus 16 (its offset in an uncompressed
    file), is appended to the list offsets if given."""
    b = trace_body(path)
    i, recs = 0, []
    starts = offsets if offsets is not None else []

    def uint(i):
        x = b[i]
        if x < 0x80:
            return x, i + 1
        w = {0xcc: 1, 0xcd: 2, 0xce: 4, 0xcf: 8}[x]
        return int.from_bytes(b[i + 1:i + 1 + w], 'big'), i + 1 + w
    while i < len(b):
        x = b[i]
        starts.append(16 + i)
        if x < 0x80 or x >= 0xe0:  # a step or a short form
            _, i = uint(i + 1)
            if 0xe0 <= x <= 0xe1:
                _, i = uint(i)
            recs.append(('short', x))
            continue
        n, kind, i = (x & 0x0f) - 1, b[i + 1], i + 2
        args = []
        for _ in range(n):
            if 0xa0 <= b[i] <= 0xbf or b[i] in (0xd9, 0xda):
                ln, hl = (b[i] & 0x1f, 1) if b[i] < 0xc0 else \
                    (int.from_bytes(b[i + 1:i + (2 if b[i] == 0xd9 else 3)], 'big'),
                     2 if b[i] == 0xd9 else 3)
                args.append(b[i + hl:i + hl + ln])
                i += hl + ln
            else:
                v, i = uint(i)
                args.append(v)
        recs.append((kind, args))
    return recs


EV_STOP, EV_THREAD = 11, 12  # lt_event.h: the kinds in LT_EVENT_LIST order


def case_recycled(c):
    """Coroutines collected while suspended mid-call, new ones at their
    addresses (tests/lua/threads_recycled.lua): the collector gives each
    new one a THREAD record, reusing ids, and recorderd never puts one on a
    dead one's stack (no unwinds: the program's errors end coroutines, they
    unwind nothing in a thread that goes on) and gives each its own track."""
    prog = os.path.join(c.args.corpus, 'threads_recycled.lua')
    plain = run([c.args.lua, prog], c.tmp, c.env(LUATRACE_SPAWN='0'), 120)
    c.start_daemon()
    traced = c.lua(prog, c.env(LUATRACE_SOCKET=c.sock, LUATRACE_SHM='recycled'), traced=True)
    c.stop_daemon()
    same_output(plain, traced)
    session = c.session('recycled')
    with open(os.path.join(session, 'session.json')) as f:
        meta = json.load(f)
    expect(meta['status'] == 'complete' and meta['bad_records'] == 0, 'session %s' % meta)
    threads = [a for k, a in trace_records(os.path.join(session, 'trace.ltr')) if k == EV_THREAD]
    addrs = [a[1] for a in threads]
    ids = [a[0] for a in threads]
    expect(len(threads) == 401, '%d THREAD records, want 401 (main + 400 coroutines)'
           % len(threads))
    if len(set(addrs)) == len(addrs):
        # glibc's malloc hands the freed lua_States out again at once;
        # AddressSanitizer's (scripts/sanitize) does not
        expect('ASAN_OPTIONS' in os.environ,
               'no lua_State address was reused: the case tests nothing')
        print('note: no lua_State address was reused (sanitizer allocator)')
    expect(len(set(ids)) < len(ids) and max(ids) < 128,
           'ids not reused or not small: %d distinct, max %d' % (len(set(ids)), max(ids)))
    # every coroutine errs at once, finishes or stays suspended: a thread
    # that carries on never has frames unwound (a new coroutine put on a
    # collected one's stack would unwind the old frames)
    expect(meta['unwinds'] == 0, 'unwinds %d, want 0' % meta['unwinds'])
    names = track_names(c, session)
    expect(len(names) == 401, '%d tracks, want 401: %s' % (len(names), names[:5]))


CODEID = r'''-- each text is loaded anew every round, under one chunk name, and the
-- garbage collected between rounds (new Protos at old addresses): the
-- truth is string.dump's bytes, equal exactly for the same function
local texts = {
  "return function(x) return x + 1 end",
  "return function(x) return x + 2 end",                      -- a constant
  "return function(x, y) return x + 1 end",                   -- a parameter
  "\nreturn function(x) return x + 1 end",                   -- its lines
  "return function(x) return x .. 'a' end",
  "return function(x) return x .. 'b' end",                   -- a string
  "return function(x) local y = x return y end",
  "return function(x) local z = x return z end",              -- a local's name
  "local u = 1 return function(x) return x + u end",
  "local v = 1 return function(x) return x + v end",          -- an upvalue's
  "return function(x) return x + 1 end, function() end",      -- a nested one
  "return function(x) return x + 1 end -- other source text", -- same code
}
local groups = { main = {}, f = {} }
local function count(kind, fn)
  local d = string.dump(fn)
  groups[kind][d] = (groups[kind][d] or 0) + 1
end
local s = 0
for round = 1, 20 do
  for i, t in ipairs(texts) do
    local chunk = loadstring(t, "=same")
    local f = chunk()
    if round == 1 then count("main", chunk) count("f", f) end
    s = s + #tostring(f((i == 5 or i == 6) and "x" or 1))
  end
  collectgarbage()
end
for _, kind in ipairs { "main", "f" } do
  local n = {}
  for _, c in pairs(groups[kind]) do n[#n + 1] = c * 20 end
  table.sort(n)
  print(kind, table.concat(n, " "))
end
print(s)
'''


def case_codeid(c):
    """A new Proto whose code equals a function's already seen is that
    function again (co_code.c's hash, read from the Proto): texts loaded
    anew each round under one chunk name, equal in string.dump's bytes
    exactly when the profile gives them one function. Calls per function,
    by the program's own string.dump groups."""
    prog = c.write('codeid.lua', CODEID)
    c.start_daemon()
    r = c.lua(prog, c.env(LUATRACE_SOCKET=c.sock, LUATRACE_SHM='codeid'), traced=True)
    c.stop_daemon()
    expect(r.status == 0, 'traced run failed: %r' % r.err)
    want = dict(line.split('\t') for line in r.out.decode().splitlines()[:2])
    got = {'main': [], 'f': []}
    for stack, n in c.folded(c.session('codeid'), 'calls').items():
        m = re.search(r';(main chunk|f)(#\d+)?@same:\d+$', stack)
        if m:
            got['main' if m.group(1) == 'main chunk' else 'f'].append(n)
    for kind in ('main', 'f'):
        have = ' '.join(str(n) for n in sorted(got[kind]))
        expect(have == want[kind], '%s: calls per function %s, string.dump says %s'
               % (kind, have, want[kind]))


ITERPROBE = r'''-- the program's own ipairs and io.lines, Lua functions, before it
-- loads the collector: the collector finds the library's iterators
-- without calling them (it would count)
local called = 0
local lib_ipairs, lib_lines = ipairs, io.lines
ipairs = function(t) called = called + 1 return lib_ipairs(t) end
io.lines = function(...) called = called + 1 return lib_lines(...) end
local lib_wrap = coroutine.wrap
coroutine.wrap = function(f) called = called + 1 return lib_wrap(f) end
require "luatrace"
print("called at load", called)
for _, v in lib_ipairs({1, 2}) do end
for w in ("a b"):gmatch("%a") do end
'''


def case_iterprobe(c):
    """Loaded by the program after it replaced ipairs, io.lines and
    coroutine.wrap with Lua functions of its own, the collector calls none
    of them at load (its probes call C functions only): the program's
    count stays 0, and the library's iterators still have their names."""
    prog = c.write('iterprobe.lua', ITERPROBE)
    c.start_daemon()
    r = run([c.args.lua, prog], c.tmp, c.env(LUATRACE_SOCKET=c.sock, LUATRACE_SHM='iterprobe'))
    c.stop_daemon()
    expect(r.status == 0 and r.out == b'called at load\t0\n', 'program: %r %r' % (r.out, r.err))
    leaves = {}
    for stack, n in c.folded(c.session('iterprobe'), 'calls').items():
        leaves[stack.split(';')[-1]] = leaves.get(stack.split(';')[-1], 0) + n
    expect(leaves.get('string.gmatch iterator@[C]') == 3, 'gmatch iterator: %s' % sorted(leaves))


SUSPENDED_CALL = r'''local uv
local function body()
  uv = require "luv" -- under 5.1 luv keeps this thread: its callbacks run on it
  local got = coroutine.yield("loaded")
  return "done " .. got
end
local co = coroutine.create(function() return body() end)
print(coroutine.resume(co))
local function tick(n) return n * 2 end
local count = 0
local timer = uv.new_timer()
timer:start(1, 1, function()
  count = count + 1
  tick(count)
  if count == 2 then -- made here, it inherits this thread's hook
    local inner = coroutine.wrap(function(a)
      local b = a + 1
      return b * 2
    end)
    inner(count)
  end
  if count == 3 then timer:stop() timer:close() end
end)
uv.run()
print("count", count)
print(coroutine.resume(co, "x"))
'''


def case_suspendedcall(c):
    """C calling Lua on a suspended coroutine's thread (luv, required inside
    a coroutine, keeps that thread under 5.1 and runs its timer callbacks
    on it, while the coroutine stays suspended), traced with every line
    counted: Lua 5.1's VM takes a line hook that returns on a thread of
    status LUA_YIELD for a hook that yielded and leaves the function
    there, so the program broke under the line hook (its callback frames
    piled up until a stack overflow, exit 255). It must run as untraced;
    the callbacks' calls are counted under uv.run, and once the coroutine
    is resumed for real its lines are counted again, and so are those of
    a coroutine a callback made (it inherited the thread's hook). Under
    run's default
    (lines by sample) no tick's probe lands on that thread."""
    probe = run([c.args.lua, '-e', 'require "luv"'], c.tmp, c.env())
    if probe.status != 0:
        print('SKIP: lua5.1 cannot require luv (lua-luv)')
        raise SystemExit(harness.SKIP)
    prog = c.write('susp.lua', SUSPENDED_CALL)
    plain = c.lua(prog, c.env())
    r = run([c.args.recorderd, 'run', '-q', '--lines', 'exact', '--out', c.out, '--',
             c.args.lua, prog], c.tmp, c.env())
    same_output(plain, r)
    expect(r.status == 0, 'exit status %d: %r' % (r.status, r.err[-300:]))
    calls = c.folded(c.session('susp'), 'calls')
    leaves = {}
    for stack, n in calls.items():
        if ';luv.run@[C];' in stack:
            leaf = stack.split(';')[-1]
            leaves[leaf] = leaves.get(leaf, 0) + n
    expect(leaves.get('function@susp.lua:12') == 3 and leaves.get('tick@susp.lua:9') == 3,
           'callbacks under uv.run: %s' % leaves)
    lines = c.folded(c.session('susp'), 'lines')
    resumed = sum(n for stack, n in lines.items()
                  if stack.endswith(';coroutine.resume@[C];body@susp.lua:2'))
    expect(resumed == 3, 'lines of body (3, 4, then 5 after the second resume): %d in %s'
           % (resumed, sorted(lines)))
    # under the callback's wrap call, as the coroutine it resumed
    inner = lines.get('lua5.1@[C];main chunk@susp.lua:0;luv.run@[C];body@susp.lua:2;'
                      'coroutine.yield@[C];function@susp.lua:12;inner@[C];function@susp.lua:16')
    expect(inner == 2, 'lines of the coroutine made in a callback: %s in %s'
           % (inner, sorted(lines)))
    # run's default, lines by sample: a tick's probe, a count hook, must
    # not land on that thread either (the same break, once a tick came
    # while a callback ran: about 0.1 s of callbacks here)
    heavy = c.write('suspheavy.lua', SUSPENDED_CALL.replace(
        'tick(count)', 'tick(count) local s = 0 for i = 1, 1500000 do s = s + i % 7 end'))
    plain = c.lua(heavy, c.env())
    r = run([c.args.recorderd, 'run', '-q', '--out', c.out, '--', c.args.lua, heavy], c.tmp,
            c.env())
    same_output(plain, r)
    expect(r.status == 0, 'lines by sample: exit status %d: %r' % (r.status, r.err[-300:]))


def main(argv):
    def add_args(ap):
        ap.add_argument('--resume-host', help='tests/hosts/resume_host (case hostresume)')
        ap.add_argument('--multi-host', help='tests/hosts/multi_host (case multistate)')
        ap.add_argument('--nomem', help='tests/hosts/nomem.so (case nomem)')
        ap.add_argument('--sighook', help='the directory of tests/hosts/sighook.so (case sighook)')
        ap.add_argument('--corpus', default=os.path.join(os.path.dirname(__file__), '..', 'lua'))
    return harness.case_main(argv, cases(globals()), 'luatrace-collector-', add_args)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
