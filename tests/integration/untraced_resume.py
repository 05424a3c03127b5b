#!/usr/bin/env python3
"""Coroutines resumed where Lua runs no hooks: inside the program's own
debug hook (debug.sethook) and inside a __gc finalizer. Lua turns hooks
off there (L->allowhook), but the coroutine runs with its own hook, so its
events are traced: its stacks must hang under the resumer's real stack
(the hook or the finalizer, coroutine.resume), and the resumer's traced
events after it must find their own stack, with nothing left behind.

  untraced_resume.py CASE --recorderd PATH --cpath DIR [--lua lua5.1]

The truth is read inside the program (the reference tracer is itself a
debug hook, blind inside hooks): every probe prints its stack as
debug.getinfo sees it, a coroutine's prefixed with its resumer's (where()
called where the resume is). Cases:
  hookphantom the hooked thread's next record after its hook resumed a
              coroutine is a call: its stacks and lines after it stay its own
  hookresume  line, call, return and count hooks of the program's that
              resume a coroutine (or a wrap function), in turn, on the
              main thread and on a coroutine
  hooktime    a hook's and a finalizer's time after the coroutine they
              resumed yielded back is theirs
  hookunchained  the same where the program's hook cannot be chained
              (LUATRACE_ALLOC=plain): the documented shape, one id per thread
  edges       more programs of the kind (errors, yields across pcall, nested
              hooks and finalizers, dead coroutines), each checked so
  gcresume    finalizers that resume coroutines, during collectgarbage
              and during an allocation, two in one cycle
"""

import json
import os
import shutil
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import cases, expect  # noqa: E402
from collector import (EV_THREAD, expect_probe_stacks, same_output,  # noqa: E402
                       trace_records, truths)

# A probe's stack, root first, frames named as folded stacks name them
# after their '@' (SRC:LINEDEFINED, [C]); a coroutine's is prefixed with
# the stack that resumed it ([C]: coroutine.resume or the wrap function),
# which resume_from(co) notes where the resume is (drive, a hook, a
# finalizer).
PROBE = harness.LUA_FOLDED + '''
local function stack(level)
  local co = coroutine.running()
  return (co and resumer_of[co] .. ";[C];" or "") .. folded(level + 1)
end
resumer_of = setmetatable({}, {__mode = "k"})
local function resume_from(co) resumer_of[co] = stack(3) end
local function drive(co) resume_from(co) return coroutine.resume(co) end
local function probe() print("TRUTH " .. stack(2)) end
local function work(n) local s = 0 for i = 1, n do s = s + i end probe() return s end
local function body() while true do probe() work(2) coroutine.yield() end end
'''

HOOKRESUME = PROBE + '''
local co = coroutine.create(body)
drive(co)
-- a line hook resumes co once; the line it ran at calls a function next
local armed = true
local function on_line()
  if armed then armed = false resume_from(co) coroutine.resume(co) end
end
debug.sethook(on_line, "l")
local x = tostring(1)
debug.sethook()
probe()
-- three sections in turn, each hooked, each resuming from its hook
local function section(i)
  armed = true
  debug.sethook(on_line, "l")
  local y = tostring(i)
  debug.sethook()
  probe()
  return y
end
for i = 1, 3 do section(i) end
probe()
-- a call hook resumes at the call of target: target's stack and its call
local function target() local r = 1 probe() return r end
armed = true
debug.sethook(function()
  if armed then armed = false resume_from(co) coroutine.resume(co) end
end, "c")
target()
debug.sethook()
target()
probe()
-- a return hook resumes at work's return
local function ret_hook()
  if armed then armed = false resume_from(co) coroutine.resume(co) end
end
local function inner() armed = true local r = work(4) return r end
debug.sethook(ret_hook, "r")
inner()
debug.sethook()
probe()
-- a count hook drives a wrap function, a scheduler's way
local pending
local w = coroutine.wrap(function()
  while true do resumer_of[coroutine.running()] = pending probe() coroutine.yield() end
end)
local ticks = 0
debug.sethook(function()
  ticks = ticks + 1
  if ticks <= 3 then pending = stack(2) w() end
end, "", 50)
work(100)
debug.sethook()
probe()
-- a coroutine's own hook resumes another coroutine, twice, from two hooks
local other = coroutine.create(body)
local outer = coroutine.create(function()
  probe()
  armed = true
  debug.sethook(on_line, "l")
  local z = tostring(2)
  armed = true
  local z2 = tostring(3)
  debug.sethook()
  probe()
end)
co = other
drive(outer)
probe()
print("done", x, ticks)
'''

GCRESUME = PROBE + '''
local co1, co2 = coroutine.create(body), coroutine.create(body)
drive(co1)
local function fin1() resume_from(co1) coroutine.resume(co1) end
local function fin2()
  resume_from(co2) coroutine.resume(co2)
  resume_from(co1) coroutine.resume(co1)
end
local function mk(f) local u = newproxy(true) getmetatable(u).__gc = f return u end
local function full()
  mk(fin1)
  collectgarbage()
  probe()
end
full()
probe()
-- two finalizers of one cycle, the second resuming two coroutines
local function two()
  mk(fin1) mk(fin2)
  collectgarbage()
  probe()
end
two()
-- a finalizer run by an allocation's GC step, not by collectgarbage
local fin_ran = false
local function fin3() fin_ran = true resume_from(co1) coroutine.resume(co1) end
local function alloc()
  collectgarbage("collect")
  mk(fin3)
  local t = {}
  while not fin_ran do t[#t + 1] = {} if #t > 1e6 then break end end
  probe()
end
alloc()
probe()
print("done", fin_ran)
'''


# The hooked thread's next record after its hook resumed a coroutine is a
# call (tostring): its stack must stay its own. Lines 6-8 run in the main
# chunk, once each.
PHANTOM = '''local co = coroutine.create(function() coroutine.yield() coroutine.yield() end)
coroutine.resume(co)
debug.sethook(function(e, l) if l == 5 then coroutine.resume(co) end end, "l")
-- padding so that the hooked line is line 5
local x = tostring(1)
debug.sethook()
local y = 2
print(x, y)
'''


# Work done in a hook and a finalizer after the coroutine they resumed
# yielded back: their time, not the suspended coroutine's.
HOOKTIME = '''local co = coroutine.create(function() while true do coroutine.yield() end end)
local function busy() local s = 0 for i = 1, 2e6 do s = s + i end return s end
local armed = true
local function hook() if armed then armed = false coroutine.resume(co) busy() end end -- timed
debug.sethook(hook, "l")
local x = tostring(1)
debug.sethook()
local function fin() coroutine.resume(co) busy() end -- timed
local function run() local u = newproxy(true) getmetatable(u).__gc = fin u = nil collectgarbage() end
run()
-- a hook resumes a coroutine whose own hook resumes another: both hooks
local armed2 = true
local outer = coroutine.create(function()
  debug.sethook(function() if armed2 then armed2 = false coroutine.resume(co) busy() end end, "l") -- timed
  local z = tostring(1)
  debug.sethook()
  coroutine.yield()
end)
armed = true
debug.sethook(function() if armed then armed = false coroutine.resume(outer) busy() end end, "l") -- timed
local y = tostring(2)
debug.sethook()
print(x, y)
'''


# A hook of the program's that the collector cannot chain (its allocator
# watch off): the thread is not traced while hooked, a coroutine it resumes
# hangs under its debug.sethook call (README).
UNCHAINED = '''local co = coroutine.create(function() while true do coroutine.yield() end end)
coroutine.resume(co)
local n = 0
debug.sethook(function() n = n + 1 if n < 3 then coroutine.resume(co) end end, "l")
local x = tostring(1)
local y = tostring(2)
debug.sethook()
print(x, y, n)
'''


# More programs of the same kind, from a hunt for more of these bugs: the
# collector before this file's fixes got their stacks wrong too.
EDGES = {
    # a hook resumes a coroutine whose own hook raises, then raises itself
    'hookerr2': PROBE + '''local co = coroutine.create(function()
  probe()
  debug.sethook(function(e, l) error("in co hook", 0) end, "l")
  local a = 1
  probe()
end)
local armed = false
local function f()
  armed = true
  local a = tostring(1)
  return a
end
debug.sethook(function()
  if armed then armed = false resume_from(co) print(coroutine.resume(co)) error("boom", 0) end
end, "l")
print(pcall(f))
debug.sethook()
probe()
''',
    # a hook resumes a coroutine whose finalizer resumes another
    'nested': PROBE + '''local co2 = coroutine.create(body)
local function fin() resume_from(co2) coroutine.resume(co2) end
local co1 = coroutine.create(function()
  while true do
    probe()
    local u = newproxy(true) getmetatable(u).__gc = fin u = nil
    collectgarbage()
    probe()
    coroutine.yield()
  end
end)
local armed = true
debug.sethook(function() if armed then armed = false resume_from(co1) coroutine.resume(co1) end end, "l")
local x = tostring(1)
debug.sethook()
probe()
drive(co1)
probe()
''',
    # a finalizer calls a wrap function that raises out of collectgarbage
    'gcerr': PROBE + '''local pending
local w = coroutine.wrap(function()
  resumer_of[coroutine.running()] = pending probe() error("in wrap", 0)
end)
local function fin() pending = stack(2) w() end
local function run()
  local u = newproxy(true) getmetatable(u).__gc = fin u = nil
  print(pcall(collectgarbage))
  probe()
end
run()
probe()
''',
    # a finalizer resumes a coroutine that dies, one that ends; a finalizer in a coroutine
    'gcdie': PROBE + '''local co1 = coroutine.create(function() probe() error("x") end)
local co2 = coroutine.create(function() probe() return 1 end)
local function fin() resume_from(co1) coroutine.resume(co1) resume_from(co2) coroutine.resume(co2) end
local function run() local u = newproxy(true) getmetatable(u).__gc = fin u = nil collectgarbage() probe() end
run()
probe()
local co3 = coroutine.create(body)
local function fin2() resume_from(co3) coroutine.resume(co3) end
local function inco()
  local u = newproxy(true) getmetatable(u).__gc = fin2 u = nil collectgarbage() probe()
end
local cc = coroutine.create(inco)
drive(cc)
probe()
''',
    # a hook resumes a coroutine that yields across pcall (an error in 5.1)
    'hookpcallyield': PROBE + '''local co = coroutine.create(function()
  for i = 1, 3 do
    probe()
    local ok, e = pcall(coroutine.yield)
    print(ok, e)
    probe()
    coroutine.yield()
  end
end)
drive(co)
local armed = 0
debug.sethook(function() if armed < 2 then armed = armed + 1 resume_from(co) coroutine.resume(co) end end, "l")
local x = tostring(1)
local y = tostring(2)
debug.sethook()
probe()
''',
    # a coroutine resumed from a hook hooks itself, and is resumed again from it
    'selfhook': PROBE + '''local seen = 0
local co = coroutine.create(function()
  probe()
  debug.sethook(function() seen = seen + 1 end, "l")
  coroutine.yield()
  probe()
  coroutine.yield()
  debug.sethook()
  probe()
end)
local n = 0
debug.sethook(function() n = n + 1 if n <= 3 then resume_from(co) coroutine.resume(co) end end, "l")
local a = tostring(1)
local b = tostring(2)
local c = tostring(3)
debug.sethook()
probe()
print(seen > 0)
''',
    # a line hook calls a wrap function that resumes a coroutine
    'wrapinhook': PROBE + '''local pending
local w = coroutine.wrap(function()
  while true do resumer_of[coroutine.running()] = pending probe() local c = coroutine.create(body) resume_from(c) coroutine.resume(c) coroutine.yield() end
end)
local n = 0
debug.sethook(function() n = n + 1 if n % 2 == 0 and n < 8 then pending = stack(2) w() end end, "l")
local a = 1
local b = tostring(a)
local c = tostring(b)
local d = 4
debug.sethook()
probe()
''',
    # a hook resumes a coroutine that ends, one that raises, a dead one
    'deadresume': PROBE + '''local co = coroutine.create(function() probe() end)
local co2 = coroutine.create(function() probe() error("x") end)
local n = 0
debug.sethook(function()
  n = n + 1
  if n == 1 then resume_from(co) coroutine.resume(co) end
  if n == 2 then resume_from(co2) print(coroutine.resume(co2)) end
  if n == 3 then print(coroutine.resume(co)) end
end, "l")
local a = tostring(1)
local b = tostring(2)
local c = tostring(3)
debug.sethook()
probe()
''',
}


def no_unknown(c, session):
    """No frame label of the session lacks a name or a source."""
    bad = [k for k in c.folded(session, 'lines') if '?@?' in k or '?@[unknown' in k]
    expect(not bad, 'unknown frames: %s' % bad)


def check(c, name, prog_text, nprobes):
    """Runs prog untraced and traced: the same output, every probe's stack
    the one debug.getinfo saw, no unknown frame, no bad record."""
    prog = c.write(name + '.lua', prog_text)
    plain = c.lua(prog, c.env(LUATRACE_SPAWN='0'))
    c.start_daemon()
    traced = c.lua(prog, c.env(LUATRACE_SOCKET=c.sock, LUATRACE_SHM=name), traced=True)
    c.stop_daemon()
    expect(plain.status == 0, 'untraced run failed: %r' % plain.err)
    same_output(plain, traced)
    truth = truths(plain.out.decode().splitlines())
    expect(sum(truth.values()) == nprobes, 'want %d probes: %s' % (nprobes, truth))
    session = c.session(name)
    expect_probe_stacks(c, session, truth)
    no_unknown(c, session)
    with open(os.path.join(session, 'session.json')) as f:
        meta = json.load(f)
    expect(meta['status'] == 'complete' and meta['bad_records'] == 0, 'session %s' % meta)
    return session


def case_hookphantom(c):
    """The thread whose hook resumed a coroutine keeps its own stack when
    its next record is a call: no frame of an unknown function under which
    the rest of its run lands, its lines counted where they ran."""
    session = check(c, 'hookphantom', PHANTOM, 0)
    main = [n for k, n in c.folded(session, 'lines').items()
            if k.endswith('main chunk@hookphantom.lua:0')]
    expect(main == [7], 'line events of the main chunk: %s, want [7]' % main)
    with open(os.path.join(session, 'coverage.lcov')) as f:
        hits = [l.strip() for l in f if l.startswith('DA:')]
    for line in (5, 6, 7, 8):
        expect('DA:%d,1' % line in hits, 'line %d not hit once: %s' % (line, hits))


def case_hookresume(c):
    """Coroutines resumed from the program's hooks: their stacks hang under
    the hook and coroutine.resume, and the hooked thread's own stacks after
    the hook are whole (no phantom frame)."""
    session = check(c, 'hookresume', HOOKRESUME, 36)
    line = HOOKRESUME.splitlines().index(
        'local function target() local r = 1 probe() return r end') + 1
    calls = [n for k, n in c.folded(session, 'calls').items()
             if k.endswith(';target@hookresume.lua:%d' % line)]
    expect(calls == [2], 'calls of target: %s, want [2]' % calls)


def case_gcresume(c):
    """Coroutines resumed from __gc finalizers: their stacks hang under the
    finalizer and coroutine.resume, the resumer's stacks after it are
    whole."""
    check(c, 'gcresume', GCRESUME, 17)


# LuaJIT runs a finalizer with its hooks off, whatever thread it resumes:
# a coroutine seen before that a finalizer resumes runs unseen, and yields
# from other frames (g and h, where f was); its next events, traced, must
# find those frames, not f's. Probes inside the finalizer's run say
# nothing (nothing is traced there).
JITGC = harness.LUA_FOLDED + """
local resumer_of = setmetatable({}, {__mode = "k"})
local in_gc, gen_thread, pending = false, nil, nil
local function stack(level)
  local co = coroutine.running()
  local pre = co and (co == gen_thread and pending or resumer_of[co])
  return (pre and pre .. ";[C];" or "") .. folded(level + 1)
end
local function resume_from(co) resumer_of[co] = stack(3) end
local function drive(co) resume_from(co) local ok, v = coroutine.resume(co) return v end
local function probe() if not in_gc then print("TRUTH " .. stack(2)) end end
local function f(n) probe() local v = coroutine.yield("f" .. n) probe() return v end
local function h(n) probe() local v = coroutine.yield("h" .. n) probe() return v end
local function g(n) local r = h(n) probe() return r end
local function body()
  f(1)
  g(2) -- reached in the finalizer: g and h unseen, h yields
  f(3)
  g(4)
  return "end"
end
local co = coroutine.create(body)
print(drive(co))
local gen = coroutine.wrap(function()
  gen_thread = coroutine.running()
  while true do f(5) g(6) end
end)
local function drive_gen() pending = stack(2) local v = gen() return v end
print(drive_gen())
local function mk(fn) local u = newproxy(true) getmetatable(u).__gc = fn return u end
mk(function()
  in_gc = true
  resume_from(co) coroutine.resume(co)
  gen() -- f returns, g(6) and h unseen
  in_gc = false
end)
collectgarbage()
probe()
print(drive(co))
print(drive(co))
print(drive(co))
print(drive(co))
print(drive_gen(), drive_gen())
"""


def case_jitgcresume(c):
    """LuaJIT: a coroutine and a wrap generator seen before, resumed by a
    __gc finalizer (hooks off) into other frames, then resumed traced:
    every probe's stack after it is the one debug.getinfo sees, no
    unknown frame."""
    luajit = shutil.which('luajit')
    if not luajit:
        print('skip: no luajit')
        return harness.SKIP
    c.args.lua = luajit
    check(c, 'jitgcresume', JITGC, 15)


def case_hooktime(c):
    """The time a hook or a finalizer spends after the coroutine it resumed
    yielded back is its own (with busy(), its callee, whose calls are
    untraced): it went to the suspended coroutine's coroutine.yield. Also
    for a hook whose coroutine's own hook resumed another (an episode in
    an episode)."""
    session = check(c, 'hooktime', HOOKTIME, 0)
    t = c.folded(session, 'time')
    timed = ['function@hooktime.lua:%d' % (i + 1)
             for i, line in enumerate(HOOKTIME.splitlines()) if line.endswith('-- timed')]
    expect(len(timed) == 4, 'timed functions: %s' % timed)
    for fn in timed:
        own = sum(n for k, n in t.items() if k.endswith(';' + fn))
        under = sum(n for k, n in t.items()
                    if ';%s;' % fn in k and k.endswith(';coroutine.yield@[C]'))
        expect(own > 10 * under, '%s: %d ticks of its own, %d in yields under it: %s'
               % (fn, own, under, json.dumps(t, indent=1)))


def case_hookunchained(c):
    """LUATRACE_ALLOC=plain: the main thread the program's hook has alone
    (untraced) resumes a coroutine from it twice: the coroutine hangs
    under main's debug.sethook call, and main keeps its one thread id
    (each resume gave it a new one, a THREAD record at its address)."""
    prog = c.write('hookunchained.lua', UNCHAINED)
    c.start_daemon()
    r = c.lua(prog, c.env(LUATRACE_SOCKET=c.sock, LUATRACE_SHM='hookunchained',
                          LUATRACE_ALLOC='plain'), traced=True)
    c.stop_daemon()
    expect(r.status == 0 and r.out == b'1\t2\t3\n', 'traced run: %r %r' % (r.out, r.err))
    session = c.session('hookunchained')
    threads = [a for k, a in trace_records(os.path.join(session, 'trace.ltr'))
               if k == EV_THREAD]
    expect(len(threads) == 2, 'THREAD records: %s, want main and co' % threads)
    under = [k for k in c.folded(session, 'lines') if ';debug.sethook@[C];function@' in k]
    expect(under, 'the coroutine is not under debug.sethook: %s' % c.folded(session, 'lines'))


def case_edges(c):
    """The programs of EDGES: each as check() runs it."""
    for name, prog in sorted(EDGES.items()):
        plain = c.lua(c.write(name + '.lua', prog), c.env(LUATRACE_SPAWN='0'))
        check(c, name, prog, sum(truths(plain.out.decode().splitlines()).values()))


def main(argv):
    return harness.case_main(argv, cases(globals()), 'luatrace-untraced-')


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
