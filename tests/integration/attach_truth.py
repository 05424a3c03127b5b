#!/usr/bin/env python3
"""Live attach starts from the real stack.

  attach_truth.py CASE --recorderd PATH --cpath DIR [--lua lua5.1]

Each case runs a real lua5.1 with a dormant collector (LUATRACE_ATTACH=1)
that reaches a chosen situation and waits there for `recorderd attach`
(or `dump`). The program itself records the truth at the moment tracing
begins: its own stack from debug.getinfo (the same frames debug.traceback
prints). The session's folded stacks must hold exactly that stack; the
stacks after it must be the program's real ones (nothing left over from
frames that were unwound, nothing past the detach). Cases:
  sampled     attach's default: sampled time and lines by sample, the shares
              of a pair of parts near the plain run's
  recursion   attach 60 calls deep
  ticksig     (luajit) a program's own disposition of the tick signal, set
              between two attaches, stays; the second attach has ticks
  detachhook  the program's own hook on a coroutine sees every event across
              four attaches (a detach swallowed one)
  killedco    an attach killed mid-trace, another at once: served on a
              coroutine, the main thread hooked too (5.4 answered no more)
  stopdumps   top --stop and record --stop beside dumps: all end well
  recordfull  record whose reports do not fit: stderr says what was not written
  unwinding   attach inside an xpcall message handler, while an error is
              on its way out of three frames
  coroutine   attach while a coroutine runs (main is suspended in resume)
  hookedmain  the attach arrives while the main thread has the program's own
              hook: it starts when the program removes it
  diedwaiting the process dies (in C) while an attach waits: recorderd says so
              at once, exit 1
  sigreset    (luaposix) a dormant program that set every signal back to its
              default (a daemon's start), the attach signal with them: attach
              refuses, saying why (exit 1), and dump and top read it from
              outside (dump: in work or in the loop's io.open, main chunk
              below); the program runs on to its end (the attach signal
              ended it: 'Real-time signal 7')
  sigstorm    (luaposix) attach to a program whose signal handler (posix.signal)
              takes every hook off the main thread at each signal, 1000 a
              second: the ticks put the hook back (a signal during the
              attach's start left the thread without the id the re-hook
              looked for: it stayed off, the detach waited out its grace)
  idlewait    attach to a program idle in C (a server between requests)
              that runs no Lua until --timeout: the failure says it answers
              at its next Lua event and that --timeout waits longer (it
              said only "did not answer within 1000 ms"); top -d 1 of it
              ends after its second, saying so (it waited out --timeout)
  conested    attach in a coroutine resumed by one that a coroutine called as
              a wrap function, resumed by main: the resumers' stacks in
              their order
  coroutine54, conested54  the same two under Lua 5.4 (per-thread hooks:
              the handler hooks the threads main resumes, not main alone)
  closing54   an attach while coroutine.close runs the __close of a coroutine
              suspended before it (Lua 5.4): the signal handler follows
              coroutine.close as it follows a resume, so the attach begins
              at once (it waited until the __close returned), the stack
              under main's coroutine.close
  close54     coroutine.close under Lua 5.4 of a coroutine suspended and of
              one dead of an error before the attach, each with a
              to-be-closed variable pending: its __close runs on that
              coroutine, which had no hook (its calls went unseen); each
              call traced under coroutine.close, as the program saw it
  inc         attach while the program sits in C (os.execute "sleep")
  hangup      SIGHUP (a lost terminal) ends attach, record and top as
              SIGTERM does: sessions complete (it killed them, a trace.ltr
              alone left)
  topidle     top of a program working in bursts between waits in C: its
              function listed (every table said 0 events)
  interrupted attach interrupted before the program answered: a line says
              so (exit 1, nothing said); the program runs on untraced
  killedidle  an attach killed (SIGKILL) while tracing a program that runs
              few events, then attach and dump, 5.1 and 5.4: answered at
              once (they waited until the ring filled, hours)
  idledetach  attach -d 1 of a program running a few events every 0.2 s (a
              server waiting for requests), twice, 5.1 and 5.4: each ends
              in time, complete, with the calls (it waited its 5 s grace
              for a detach read once per 4 KiB of records: 0 events, and
              the next attach was not answered)
  dump        dump while in C (os.execute "sleep 1"): answered by the signal
              handler (DUMP_NOW) or, if slower, when it returns to Lua; the
              stack exact either way
  dumpco      dump of a program with coroutines suspended mid-call: every
              coroutine's stack exact, none hooked afterwards; one that died
              of an error (its frames still in memory) is not shown
  hostattach  attach to a host driving Lua from C, its main thread idle
              (tests/hosts/resume_host): the main thread, with no frame when
              tracing begins, is `main` and the only track running tick; a
              coroutine that died of an error before the attach is not sent
              as a suspended one (no track open from the attach to the end)
  dumpblocked dump of a program blocked in C for good (io.read on a pipe,
              inside a coroutine.wrap function resumed by a coroutine
              resumed by main; another coroutine suspended mid-call): the
              signal handler answers (DUMP_NOW); every thread's stack exact
              to the line, the C function on top; unblocked afterwards, the
              program's output and exit code are an untraced run's and no
              thread has a hook
  dumphost    the same of a C host (tests/hosts/block_host) whose script
              waits in C, in poll() on stdin with no timeout: its stack (and a
              suspended coroutine's) exact, its output unchanged
  dumpdeep    the same 3000 calls deep, with two coroutines suspended 9000
              calls deep: more frames than the handler sends (16384); the
              dump says it is cut short, the running thread's stack is whole
              and exact, and the program runs on unchanged
  dumpstorm   DUMP then DUMP_NOW, hundreds of times, at a program running
              busy Lua code and coroutines (the handler reads stacks caught
              mid-update): it must neither crash nor change its output; every
              dump message that arrives is well formed
  dumpstormc  the same at the C host of attach.py (libuv, coroutines made
              and resumed from C)
  outside     dumpblocked of a plain lua5.1 that never loaded the collector:
              read from outside (ptrace stop, process_vm_readv), as exact
  outsidehost dumphost read from outside
  twoinject   two attaches at once of a plain lua5.1: one loads luatrace.so
              and traces, the other is refused having loaded nothing (both
              loaded it)
  tracedbyrun attach, dump, top of a lua5.1 recorderd run traces: attach
              refuses at once, dump and top read it from outside (all
              waited until --timeout)
  rootother   as root, dump and top of another user's lua5.1 read it from
              outside, as record does (they refused); attach refuses
  kthread     dump, top, record, heap of a kernel thread: said so (it said
              a debugger or Yama refused)
  outsidemanyco  dump of 1500 suspended coroutines, 5.1 and 5.4: cut short,
              said (5.4 said nothing)
  dormant54blocked  dumpblocked of a lua5.4 with a dormant collector, whose
              signal handler reads nothing: read from outside at once (it
              waited until --timeout and failed)
  dormantstopped  dump of a dormant lua5.1 stopped with SIGSTOP: read from
              outside at once, left stopped (T again after the instant of R
              ptrace's detach gives it, never S, its request signal still
              pending: it ran none of its code), its output unchanged (it
              waited until --timeout and failed)
  busy        dump, top and attach of a process another attach traces:
              refused in words, exit 1; both go on unhurt
  dumpgen     dump of two coroutine.wrap generators, one running the other in
              a generic for: each named by its body's place,
              coroutine.wrap(prog.lua:LINE), as the trace names it
  outsidegen  the same read from outside
  outsidestopped  outside with every walk of the GC list as the program
              runs failing: the walk redone while it is stopped finds the
              suspended coroutine; no message, exit 0
  outsidebusy 40 dumps from outside of a program busy in Lua and coroutines:
              each well formed, its Lua frames the program's lines; the
              program's output unchanged
  outsidetear a dump whose stopped reads catch the running thread halfway
              through a call reads it again at the next stop
  outsidegarbage  a dead pid, a process that is not Lua, and processes that
              exit while they are read: a one-line error, never a crash
  outsidetop  top of a program that never loaded the collector: samples
              read from outside; the busiest function on top; SIGTERM and
              the program's exit end it; its output unchanged
  outsiderecordlive  record read as the program runs: no stack cut short,
              none with a frame from another moment than the frame below
  outsiderecordlivec  the same with work short and a C function run in its
              slot between its calls
  outsiderecorddeep  record of two deep recursions (600 to 2200 calls,
              past the snapshot) that never call each other, live and
              --stop: no stack joins them
  outsiderecordshapes  record, live and --stop, of a tail recursion, a
              wrap generator and a function with 3000 varargs: no stack
              caught halfway through a tail call, no C function named by
              another moment's call, the vararg function sampled
  outsiderecordnames  record, live and --stop, of methods found through
              two __index levels, each called on the line after another
              call in the same register (Derived.new(i):scaledK(2)): no
              function is ever named by another call (live: its name or
              function; --stop: its name)
  outsiderecord  record of a program that never loaded the collector, hot
              in a coroutine: a sampled session whose heaviest stack is
              the real one, replayable, with no coverage
  otherthread  attach to a C host (tests/hosts/thread_host) whose Lua
              thread blocks the attach signal in C while its other thread,
              allocating without pause, never does: that thread takes the
              signal and must not touch Lua (whose GC may be freeing what
              a walk reads) but send it on to the Lua thread, where it
              waits, pending, with no thread hooked; unblocked, the attach
              begins there and the session is exact
  otherthreaddump  the same for dump, the Lua thread still in C: DUMP and
              DUMP_NOW go on to it, which reads its stack (exact, the C
              function on top); the host's output unchanged, no hook left
  luajit      luajit (skipped if absent) with a loop compiled before the
              attach (jit.util sees its trace), attached 20 calls deep: the
              stacks are the program's; while traced the JIT is off and its
              traces flushed; after the detach it is on again and compiles;
              output and exit code are an untraced run's
  luajitoff   the same with the program's own jit.off(): it stays off
  luajitco, luajitconested  coroutine and conested under luajit: with no
              thread list, the resumers are found from the main thread on
  luajitoutside  attach, dump, top, record of a luajit that never loaded
              luatrace: a message that says it is LuaJIT and what to do
  otherlua    attach, heap of a plain lua5.4, and those, dump, top and
              record of a plain lua5.3 / lua5.2: a line that names the Lua
              it runs (and for 5.4 how to trace it); dump, top and record
              of the lua5.4 read it (its busy frames the program's, fib
              the busiest); nothing loaded, output unchanged
  outside54   outside with a plain lua5.4 (Debian's 5.4.4): every thread's
              stack exact to the line, the names as 5.1's dump gives them
  outside54lines  dump of a plain lua5.4 stopped in functions whose lines
              need abslineinfo (a gap of over 127 lines, over 128
              instructions): each frame's line the program's currentline
  outside54gen  outsidegen with a plain lua5.4
  outside54busy  outsidebusy with a plain lua5.4
  outside54top  outsidetop with a plain lua5.4
  outside54record  outsiderecord with a plain lua5.4
  outside54recordlivec  outsiderecordlivec with a plain lua5.4, whose
              CallInfos are read one by one: a C function's slot read after
              its callee returned (string.rep where work had called fib)
              must not join two moments (1 to 2% of the samples had fib
              above string.rep or io.open)
  outside54names  dump of a plain lua5.4 with coroutines suspended in a
              metamethod (add, index, lt, concat, close), a Lua function a
              generic for calls, a module function called through a global
              alias and a shorter module name, a field of a global table:
              each named as recorderd run's trace of the same program names
              it (they were "function", J.f, J.longer_name, GT.gtf)
  dumpfinalizer  dump of a dormant lua5.1 and lua5.4 running Lua in a __gc
              finalizer (where Lua calls no hook): answered (they waited
              until --timeout and failed), the finalizer named __gc under
              5.4, as the trace names it; the same of a plain lua5.4
  outside54renamed  top and record of a plain lua5.4 first seen in a
              function it tail called (no name), then in the same function
              called by its name: named by it from then on, as the trace
              names it by its first call (it stayed "function" for the whole
              view and session)
  outside54require  dump and record of a plain lua5.4 waiting in the main
              chunk of a module that a module's main chunk requires: each
              call of require named by its module, require "a.b", as the
              trace names them (both were "require")
  outside54iterators  dump of a plain lua5.4 inside the iterators of
              ipairs (under an __index it calls), io.lines and string.gmatch:
              each named as the trace names it, "ipairs iterator" and so on
              (they were "lua5.4", the interpreter's file, and its entry
              then "lua5.4#2")
  outside54searcher  dump of a plain lua5.4 whose require waits in
              package.searchers[2] (the module's file a FIFO no one writes
              yet): named package.searchers[2] "c", as the trace names it
              (it was "lua5.4#2", the interpreter's entry's file)
  outsidereload  record of a lua5.1 and a lua5.4 loading one module three
              times (package.loaded.m = nil), its main chunk waiting each
              time: one function, as in the trace (each load was another:
              main chunk#2, main chunk#3)
  outside54misfit  dump of a plain lua5.4 whose memory-error message the
              test changed in its heap (a layout check's known value): a
              one-line refusal that names Lua 5.4 and how to start it,
              exit 1; the program runs on unchanged
  luajitdump  dump of a dormant luajit host busy in Lua: answered from the
              hook, every frame the program's; the JIT left on
  zombie      attach, dump, top, record of an exited, unreaped lua5.1:
              'process N exited'
  sweepsock   the PID.sock a killed recorderd left (its process gone, no
              listener) goes at the next attach; others stay
  killedfirst  a request that lands while the collector serves one whose
              recorderd was killed (no ack) is served, not lost
  badout      an --out where no session can be made: refused before the
              process is asked anything; one removed while the attach
              waits ends it at the refused hello
  proghook    coroutines with the program's own count hook (debug.sethook),
              one across the attach and the detach, one made while traced:
              each counts what it counts untraced and keeps its hook
"""

import ctypes
import glob
import json
import os
import re
import shutil
import select
import signal
import socket
import subprocess
import threading
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import base_env, Case, cases, expect, Failure, need_luajit  # noqa: E402
from collector import HOSTRESUME, track_names  # noqa: E402

PRELUDE = harness.LUA_STACK + '''
local luatrace = require "luatrace"
local function busy(n) local s = 0 for i = 1, n or 300 do s = s + i % 3 end return s end
-- Frames from `level` down to the root, as "SRC:LINEDEFINED" or "[C]"
-- (a level of the caller's: stack runs one deeper, a coroutine's is its own).
local function frames(level, co)
  local s = stack(co and level or level + 1, co, "linedefined")
  return s
end
local function ready() io.stdout:write("READY\\n") io.stdout:flush() end
local function detached() while luatrace.tracing() do busy() end end
local truth
local function wait()
  ready()
  while not luatrace.tracing() do busy() end
  truth = frames(2)
  for i = 1, 3000 do busy() end
end
'''

RECURSION = PRELUDE + '''
local function rec(n) if n == 0 then wait() else rec(n - 1) end return n end
rec(60)
detached()
io.stderr:write("TRUTH wait ", truth, "\\n")
'''

UNWINDING = PRELUDE + '''
local function handler(msg) wait() return msg end
local function g() error("boom") end
local function f() g() return 1 end
local function after() for i = 1, 3000 do busy() end end
local function outer()
  local ok = xpcall(f, handler)
  after()
  return ok
end
outer()
detached()
io.stderr:write("TRUTH wait ", truth, "\\n")
io.stderr:write("TRUTH after prog.lua:", debug.getinfo(after, "S").linedefined, " prog.lua:",
                debug.getinfo(outer, "S").linedefined, " prog.lua:0 [C]\\n")
'''

COROUTINE = PRELUDE + '''
local function inner() wait() return 1 end
local function body() inner() coroutine.yield() end
local function after() for i = 1, 3000 do busy() end end
local co = coroutine.create(body)
coroutine.resume(co)
after()
io.stdout:write("AFTER\\n") io.stdout:flush()
detached()
io.stderr:write("TRUTH wait ", truth, "\\n")
io.stderr:write("TRUTH after prog.lua:", debug.getinfo(after, "S").linedefined,
                " prog.lua:0 [C]\\n")
'''

CONESTED = PRELUDE + '''
-- attached in c, resumed by b, called as a wrap function by a, resumed
-- by main: the chain of resumers, taken while c runs
local A, B, chain
local function inner() wait() return 1 end
local function c_body()
  inner()
  chain = frames(0, B) .. " " .. frames(0, A)
  coroutine.yield()
end
local function b_body()
  B = coroutine.running()
  coroutine.resume(coroutine.create(c_body))
  coroutine.yield()
end
local wrapped
local function a_body() wrapped() coroutine.yield() end
A = coroutine.create(a_body) -- before B: the GC's list is in neither order
wrapped = coroutine.wrap(b_body)
coroutine.resume(A)
detached()
io.stderr:write("TRUTH wait ", truth, " ", chain, " [C] prog.lua:0 [C]\\n")
'''

# coroutine.close (5.4) of two coroutines left before the attach with a
# to-be-closed variable pending: its __close runs on that coroutine
CLOSE54 = PRELUDE + '''
local closes, seen = 0, {}
local function onclose() closes = closes + 1 seen[#seen + 1] = frames(2) end
local function closer() return setmetatable({}, {__close = function() onclose() end}) end
local function leaf() coroutine.yield() end
local function mid() local x <close> = closer() leaf() end
local function failing() local x <close> = closer() error("boom") end
local A = coroutine.create(mid)
coroutine.resume(A)
local E = coroutine.create(failing)
coroutine.resume(E)
local function closing()
  wait()
  coroutine.close(A)
  coroutine.close(E)
  local below = frames(2)
  io.stdout:write("CLOSED\\n") io.stdout:flush()
  detached()
  for _, s in ipairs(seen) do io.stderr:write("TRUTH close ", s, " [C] ", below, "\\n") end
  io.stderr:write("CLOSES ", closes, "\\n")
end
closing()
'''

# an attach while coroutine.close runs a __close on a coroutine that was
# suspended before it
CLOSING54 = PRELUDE + '''
local function inner() wait() return 1 end
local function mid() local x <close> = setmetatable({}, {__close = function() inner() end}) coroutine.yield() end
local A = coroutine.create(mid)
coroutine.resume(A)
local function closing()
  coroutine.close(A)
  local below = frames(2)
  detached()
  io.stderr:write("TRUTH wait ", truth, " [C] ", below, "\\n")
end
closing()
'''

HOOKEDMAIN = PRELUDE + '''
-- the attach arrives while the main thread has the program's own hook (the
-- signal handler leaves it alone); the program removes it 0.5 s later
debug.sethook(function() end, "", 1000)
ready()
local t0 = os.clock()
while os.clock() - t0 < 0.5 do busy() end
debug.sethook()
t0 = os.clock()
while not luatrace.tracing() and os.clock() - t0 < 10 do busy() end
io.stderr:write("TRACING ", tostring(luatrace.tracing()), "\\n")
truth = frames(1)
for i = 1, 3000 do busy() end
detached()
io.stderr:write("TRUTH main ", truth, "\\n")
'''

# LuaJIT: a loop compiled before the attach; the program says whether its
# traces exist (jit.util.traceinfo) and whether the JIT is on, before the
# attach, while traced and after; LJ_UNTRACED=1 runs it without waiting.
LUAJIT = PRELUDE + '''
local jutil = require "jit.util"
local untraced = os.getenv("LJ_UNTRACED") == "1"
if os.getenv("LJ_OFF") == "1" then jit.off() end
local function compiled() return jutil.traceinfo(1) ~= nil end
local function hot() local s = 0 for i = 1, 2000 do s = s + busy(50) end return s end
io.stdout:write("hot ", hot(), " compiled ", tostring(compiled()), "\\n")
local function lwait()
  ready()
  if untraced then return end
  while not luatrace.tracing() do hot() end
  truth = frames(2)
  io.stderr:write("TRACED jit ", tostring(jit.status()), " compiled ", tostring(compiled()),
                  "\\n")
  for i = 1, 20 do hot() end
end
local function rec(n) if n == 0 then lwait() else rec(n - 1) end return n end
rec(17)
if not untraced then detached() end
io.stdout:write("after jit ", tostring(jit.status()), " hot ", hot(), " compiled ",
                tostring(compiled()), "\\n")
if truth then io.stderr:write("TRUTH wait ", truth, "\\n") end
os.exit(3)
'''

LUAJITDUMP = PRELUDE + '''
local function hot() local s = 0 for i = 1, 2000 do s = s + busy(50) end return s end
local function spin()
  ready()
  local f = io.open("go")
  -- "looping": past ready()'s return, so that the dump lands in the loop
  io.open("looping", "w"):close()
  while not f do hot() f = io.open("go") end
  f:close()
end
local function rec(n) if n == 0 then spin() else rec(n - 1) end return n end
rec(3)
io.stdout:write("after jit ", tostring(jit.status()), "\\n")
'''

INC = PRELUDE + '''
local function blocked()
  ready()
  os.execute("sleep 1")
  truth = frames(1)
  io.stderr:write("TRACING ", tostring(luatrace.tracing()), "\\n")
  for i = 1, 3000 do busy() end
end
blocked()
detached()
io.stderr:write("TRUTH blocked ", truth, "\\n")
'''

NOFD = '''
local lt = package.loaded.luatrace
local function tracing() if lt then return lt.tracing() end return debug.gethook() ~= nil end
local function busy() local s = 0 for i = 1, 300 do s = s + i % 3 end return s end
io.stdout:write("READY\\n") io.stdout:flush()
while not tracing() do busy() end
for i = 1, 3000 do busy() end
while tracing() do busy() end
io.stdout:write("DETACHED\\n") io.stdout:flush()
io.read()
io.stdout:write("bye\\n")
'''

PROGHOOK = PRELUDE + '''
-- coroutines with the program's own count hook, one across the attach and
-- the detach, one made while traced: each hook counts what it counts
-- untraced (ref), and keeps its hook
local function worker()
  for r = 1, 6 do
    local s = 0
    for i = 1, 400 do s = s + i end
    coroutine.yield(s)
  end
end
local function hooked()
  local co, n = coroutine.create(worker), {0}
  debug.sethook(co, function() n[1] = n[1] + 1 end, "", 50)
  return co, n
end
local function finish(co)
  while coroutine.status(co) ~= "dead" do coroutine.resume(co) end
end
local ref, nref = hooked()
finish(ref)
local live, nlive = hooked()
coroutine.resume(live)
wait()
coroutine.resume(live)
local during, nduring = hooked()
finish(during)
-- the main thread has a line hook of the program's when the detach lands
local lines = 0
local function counted() local s = 0 for i = 1, 50 do s = s + i end return s end
debug.sethook(function() lines = lines + 1 end, "l")
counted()
local lref = lines
detached()
lines = 0
counted()
debug.sethook()
io.stderr:write("MAINLINES ", lref, " ", lines, "\\n")
finish(live)
io.stderr:write("HITS ", nref[1], " ", nlive[1], " ", nduring[1], "\\n")
io.stderr:write("GETHOOK ", type((debug.gethook(live))), " [", select(2, debug.gethook(live)), "] ",
                select(3, debug.gethook(live)), "\\n")
'''

DUMPCO = PRELUDE + '''
local function deep(n) if n == 0 then coroutine.yield() else deep(n - 1) end end
local cos, text = {}, {}
for i = 1, 3 do
  cos[i] = coroutine.create(function() deep(i * 2) end)
  coroutine.resume(cos[i])
  text[i] = frames(0, cos[i])
end
-- died of an error: its frames stay in memory, but it is dead, not suspended
local function fail(n) if n == 0 then error("dead") else fail(n - 1) end end
local dead = coroutine.create(function() fail(2) end)
coroutine.resume(dead)
-- runs until the test has dumped it (a file named stop), not for a fixed
-- count: a slow dump (an ASan build on a loaded machine) came after its end
local function stopped() local f = io.open("stop") if f then f:close() end return f end
local function spin()
  ready()
  local limit = os.time() + 60
  repeat for _ = 1, 100 do busy() end until stopped() or os.time() > limit
end
io.stderr:write("SPIN ", frames(1), "\\n")
spin()
for i = 1, 3 do io.stderr:write("CO ", text[i], " HOOK ", tostring(debug.gethook(cos[i])), "\\n") end
'''


# Frames as "SRC:CURRENTLINE" ("[C]" for C), top first, from `level` (of the
# caller of `where` when 2), or of coroutine co from its level 0.
WHERE = harness.LUA_STACK + '''
local function where(level, co)
  local s = stack(co and level or level + 1, co, "currentline")
  return s
end
local function truth(k, s) io.stderr:write("TRUTH ", k, " ", s, "\\n") io.stderr:flush() end
'''

# Each truth is taken on the line of the call the thread is in at the dump.
BLOCKED = WHERE + '''
local function deep(n) if n == 0 then coroutine.yield() else deep(n - 1) end end
local D = coroutine.create(function() deep(3) end)
coroutine.resume(D)
truth("D", where(0, D))
local function readline()
  truth("B", where(2)) io.stdout:write("READY\\n") io.stdout:flush() return io.read("*l")
end
local runB = coroutine.wrap(function() local l = readline() coroutine.yield(l) end)
local A = coroutine.create(function() truth("A", where(2)) local l = runB() return l end)
local function main()
  truth("main", where(2)) local ok, l = coroutine.resume(A)
  return l
end
local l = main()
io.stdout:write("got ", tostring(l), "\\n")
io.stdout:write("hooks ", tostring(debug.gethook()), " ", tostring(debug.gethook(D)), " ",
                tostring(debug.gethook(A)), "\\n")
os.exit(3)
'''

HOST = WHERE + '''
local function deep(n) if n == 0 then coroutine.yield() else deep(n - 1) end end
local D = coroutine.create(function() deep(2) end)
coroutine.resume(D)
truth("D", where(0, D))
local function serve()
  truth("serve", where(2)) io.stdout:write("READY\\n") io.stdout:flush() local l = host.wait()
  return l
end
local l = serve()
io.stdout:write("got ", tostring(l), "\\n")
io.stdout:write("hooks ", tostring(debug.gethook()), " ", tostring(debug.gethook(D)), "\\n")
io.stderr:write("EINTR ", host.eintr(), "\\n")
'''

DEEP = WHERE + '''
local function deep(n) if n == 0 then coroutine.yield() else deep(n - 1) end end
local cos = {}
for i = 1, 2 do cos[i] = coroutine.create(function() deep(9000) end) coroutine.resume(cos[i]) end
local function rec(n)
  if n == 0 then truth("B", where(2)) io.stdout:write("READY\\n") io.stdout:flush() return io.read("*l") end
  local r = rec(n - 1)
  return r
end
io.stdout:write("got ", rec(3000), "\\n")
io.stdout:write("hooks ", tostring(debug.gethook()), " ", tostring(debug.gethook(cos[1])), " ",
                tostring(debug.gethook(cos[2])), "\\n")
'''

# Busy Lua code, coroutines made and finished, garbage: the same work each
# round, until the file "stop" exists; any round that differs is reported.
STORM = '''
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
local function round()
  local acc, junk = 0, {}
  local gen = coroutine.wrap(function() for i = 1, 200 do coroutine.yield(i) end end)
  for i = 1, 40 do
    local co = coroutine.create(function(a)
      local s = 0
      for j = 1, a do s = s + fib(8) + coroutine.yield(j) end
      return s
    end)
    local ok, v = coroutine.resume(co, 5)
    while coroutine.status(co) ~= "dead" do ok, v = coroutine.resume(co, gen()) end
    acc = acc + v
    junk[#junk + 1] = string.rep("x", i) .. tostring(v)
  end
  -- time in C, as real programs spend it, with no Lua event: a window in
  -- which a DUMP is still pending when its DUMP_NOW arrives
  local pad = string.rep("y", 2^17)
  return acc + #table.concat(junk) + #pad
end
io.stdout:write("READY\\n") io.stdout:flush()
local first, rounds, bad = round(), 1, 0
while rounds < 3 or not io.open("stop") do
  if round() ~= first then bad = bad + 1 end
  rounds = rounds + 1
end
io.stdout:write("result ", first, " mismatches ", bad, "\\n")
'''


# thread_host: stretches with the attach signal blocked on the Lua thread
# (host.blocked), between stretches of Lua making garbage and coroutines
# for the GC to free.
OTHERTHREAD = PRELUDE + '''
local function garbage(n) local t = {} for i = 1, n do t[i] = {tostring(i)} end return #t end
local function churn()
  for i = 1, 20 do coroutine.wrap(function() return garbage(20) end)() end
end
local function cobody() while true do coroutine.yield(garbage(50)) end end
local co = coroutine.create(cobody)
coroutine.resume(co)
churn()
local function stretch()
  local pending, main, cohook = host.blocked(co)
  io.stderr:write("BLOCKED ", tostring(pending), " ", tostring(main), " ", tostring(cohook), "\\n")
end
stretch()
while not luatrace.tracing() do churn() end
local function after()
  for i = 1, 300 do churn() coroutine.resume(co) end
  truth = frames(1)
end
after()
io.stdout:write("DONE\\n") io.stdout:flush()
detached()
io.stderr:write("TRUTH after ", truth, "\\n")
'''

OTHERTHREADDUMP = WHERE + '''
local function deep(n) if n == 0 then coroutine.yield() else deep(n - 1) end end
local D = coroutine.create(function() deep(2) end)
coroutine.resume(D)
truth("D", where(0, D))
local function serve()
  truth("serve", where(2)) local pending, main, cohook = host.blocked(D, true)
  return pending, main, cohook
end
local pending, main, cohook = serve()
io.stderr:write("BLOCKED ", tostring(pending), " ", tostring(main), " ", tostring(cohook), "\\n")
io.stdout:write("hooks ", tostring(debug.gethook()), " ", tostring(debug.gethook(D)), "\\n")
'''


def label_frame(label):
    """'name@SRC:LINE' -> 'SRC:LINE'; 'name@[C]' -> '[C]'."""
    return label.rsplit('@', 1)[1]


def start(c, text, env_extra=None, whole_path=False, lua=None):
    """The program text as prog.lua, run from c.tmp (whole_path: by its
    absolute path, so that its chunk name is that path) by lua (default:
    --lua)."""
    c.write('prog.lua', text)
    c.used.add('attach')
    env = c.env(LUATRACE_ATTACH='1', **(env_extra or {}))
    prog = os.path.join(c.tmp, 'prog.lua') if whole_path else 'prog.lua'
    p = subprocess.Popen([lua or c.args.lua, '-lluatrace', prog], cwd=c.tmp, env=env,
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True)
    c.procs.append(p)
    line = p.stdout.readline()
    if line != b'READY\n':
        raise Failure('the program did not get ready: %r %r' % (line, p.stderr.read()))
    return p


def recorderd(c, *args, timeout=60, env=None):
    return subprocess.run([c.args.recorderd] + list(args), cwd=c.tmp, env=dict(base_env(), **(env or {})),
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)


def attach(c, p, duration='0.5', until=None):
    """Attaches to p for duration, or with until (a line p writes on stdout
    once what the case needs is traced) until p says so: a case that needs
    the trace to reach a point never depends on the machine's speed. With
    --time exact: every stack the trace went through has time of its own,
    so the stacks by time are all of them (sampled time, attach's default,
    gives none to a stack no tick landed in; case_sampled checks it)."""
    if until is None:
        r = recorderd(c, 'attach', str(p.pid), '--time', 'exact', '--duration', duration,
                      '--out', c.out)
        expect(r.returncode == 0, 'attach failed: %r' % r.stderr)
    else:
        a = subprocess.Popen([c.args.recorderd, 'attach', str(p.pid), '--time', 'exact',
                              '--out', c.out],
                             cwd=c.tmp, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        c.procs.append(a)
        line = p.stdout.readline()
        expect(line == until, 'the program said %r, not %r' % (line, until))
        a.send_signal(signal.SIGTERM)  # detach
        _, aerr = a.communicate(timeout=60)
        expect(a.returncode == 0, 'attach failed: %r' % aerr)
    out, err = p.communicate(timeout=60)
    expect(p.returncode == 0, 'the program failed (%d): %r' % (p.returncode, err))
    truths = {}
    for line in err.decode().splitlines():
        if line.startswith('TRUTH '):
            _, key, rest = line.split(' ', 2)
            truths[key] = list(reversed(rest.split()))  # root first, as folded stacks
    session = c.session('attach.%d' % p.pid)
    meta = c.meta(session)
    expect(meta['status'] == 'complete' and meta['bad_records'] == 0,
           'session not clean: %r' % meta)
    stacks = [[label_frame(f) for f in s.split(';')] for s in c.folded(session, 'time')]
    return truths, stacks, err.decode()


def leaf_stacks(stacks, leaf):
    return [s for s in stacks if s[-1] == leaf]


def expect_only(stacks, truth, what, allowed_prefixes=((),)):
    found = leaf_stacks(stacks, truth[-1])
    expect(found, 'no stack ends in %s (%s); stacks: %s' % (truth[-1], what, stacks))
    for s in found:
        expect(any(s == list(p) + truth for p in allowed_prefixes),
               '%s: stack %s, the program saw %s' % (what, s, truth))


# the pair of parts, in the attached program and in its plain twin
SAMPLED_PARTS = '''
local function tiny(x) return x + 1 end
local function calls(n) local s = 0 for i = 1, n do s = tiny(tiny(s)) end return s end
local function lines(n)
  local a = 1.5
  for i = 1, n do a = (a * 1.0001 + i * 0.25) % 1000 + a * 0.0001 - (a - i) * 0.00001 end
  return a
end
'''

SAMPLED = PRELUDE + SAMPLED_PARTS + '''
local function rec(n) if n == 0 then wait() else rec(n - 1) end return n end
rec(3)
local ta, tb = 0, 0
while luatrace.tracing() do
  local t0 = os.clock() calls(20000) local t1 = os.clock() lines(20000)
  ta, tb = ta + (t1 - t0), tb + (os.clock() - t1)
end
io.stderr:write("TRUTH wait ", truth, "\\n")
'''


def case_sampled(c):
    """attach's default time is run's: sampled CPU time, lines by sample
    (session.json says so; no coverage report); the stacks it shows are
    the program's, from its root; a part of tiny calls gets its share of
    the plain program's time within 10 points (exact time with every line
    hooked gave 25% of a pair that is 35% plain: the bound catches that)."""
    prog = c.write('plain.lua', SAMPLED_PARTS + '''
local ta, tb = 0, 0
for _ = 1, 40 do
  local t0 = os.clock() calls(20000) local t1 = os.clock() lines(20000)
  ta, tb = ta + (t1 - t0), tb + (os.clock() - t1)
end
print(string.format("%.3f", 100 * ta / (ta + tb)))
''')
    plain = harness.run([c.args.lua, prog], c.tmp, base_env())
    expect(plain.status == 0, 'plain run: %r' % plain.err)
    own = float(plain.out)
    # the share is a sample of some 350 ticks of 4 ms (fewer of them the
    # program's under AddressSanitizer, whose hook takes most)
    def once(attempt):
        for q in c.procs:  # a failed attempt's program: not beside this one
            if q.poll() is None:
                q.kill()
                q.wait()
        sampled_share(c, own)

    harness.retried(once)


def sampled_share(c, own):
    p = start(c, SAMPLED)
    r = recorderd(c, 'attach', str(p.pid), '--duration', '1.5', '--out', c.out)
    expect(r.returncode == 0, 'attach failed: %r' % r.stderr)
    out, err = p.communicate(timeout=60)
    expect(p.returncode == 0, 'the program failed (%d): %r' % (p.returncode, err))
    session = c.session('attach.%d' % p.pid)
    meta = c.meta(session)
    expect(meta['status'] == 'complete' and meta['time'] == 'sample' and
           meta['lines'] == 'sample' and meta['bad_records'] == 0,
           'session: %r' % {k: meta.get(k) for k in ('status', 'time', 'lines', 'bad_records')})
    expect(not os.path.exists(os.path.join(session, 'coverage.lcov')), 'coverage.lcov written')
    folded = c.folded(session, 'time')
    w = {'calls': 0, 'lines': 0}

    def defined(name):
        at = SAMPLED.split('\n').index([l for l in SAMPLED.split('\n')
                                        if l.startswith('local function %s(' % name)][0])
        return 'prog.lua:%d' % (at + 1)

    for stack, n in folded.items():
        frames = [label_frame(f) for f in stack.split(';')]
        expect(frames[:2] == ['[C]', 'prog.lua:0'], 'a stack off the root: %s' % stack)
        for part in w:
            if defined(part) in frames:
                w[part] += n
    expect(w['calls'] > 0 and w['lines'] > 0, 'parts not timed: %r' % w)
    share = 100.0 * w['calls'] / (w['calls'] + w['lines'])
    print('calls part: plain %.1f%%, attach %.1f%%' % (own, share))
    expect(abs(share - own) <= 10, 'share %.1f%% against the plain run\'s %.1f%%' % (share, own))


def case_recursion(c):
    p = start(c, RECURSION)
    truths, stacks, _ = attach(c, p)
    # [C] root, main chunk, rec(60) .. rec(0), wait
    expect(len(truths['wait']) == 64, 'truth has %d frames' % len(truths['wait']))
    expect_only(stacks, truths['wait'], 'attached 60 deep')
    for s in stacks:  # every stack stands on the real root
        expect(s[:2] == truths['wait'][:2], 'a stack off the root: %s' % s)


def case_unwinding(c):
    p = start(c, UNWINDING)
    truths, stacks, _ = attach(c, p)
    expect('[C]' in truths['wait'][3:], 'the truth lacks error/xpcall: %s' % truths['wait'])
    expect_only(stacks, truths['wait'], 'attached in the message handler')
    expect_only(stacks, truths['after'], 'after the error unwound')


def lua54_env(c):
    """The environment that finds the 5.4 build of the collector."""
    return {'LUA_CPATH_5_4': os.path.join(c.args.cpath, 'lua54', '?.so') + ';;'}


def case_coroutine(c, lua=None, env_extra=None):
    p = start(c, COROUTINE, lua=lua, env_extra=env_extra)
    truths, stacks, _ = attach(c, p, until=b'AFTER\n')
    # Code in a coroutine hangs under its resumer's stack (the main chunk in
    # coroutine.resume): the collector sends the resume chain at attach.
    resumer = ['[C]', 'prog.lua:0', '[C]']
    expect_only(stacks, truths['wait'], 'attached inside a coroutine', (resumer,))
    expect_only(stacks, truths['after'], 'after the coroutine yielded')


def case_conested(c, lua=None, env_extra=None):
    p = start(c, CONESTED, lua=lua, env_extra=env_extra)
    truths, stacks, _ = attach(c, p)
    expect(truths['wait'].count('[C]') == 4, 'the truth: %s' % truths['wait'])
    expect_only(stacks, truths['wait'], 'attached three coroutines deep')


def case_coroutine54(c):
    """coroutine under Lua 5.4, whose hooks are per thread: the signal
    handler hooks the main thread and the threads it resumes, read from
    its coroutine.resume or wrap frame (it hooked main alone, which sat in
    coroutine.resume while the coroutine ran on: no event came, and the
    attach gave up after its --timeout)."""
    need_lua54(c)
    case_coroutine(c, env_extra=lua54_env(c))


def case_conested54(c):
    """conested under Lua 5.4: the chain of three resumers (a resume, a
    wrap call, a resume) followed from the main thread by the handler."""
    need_lua54(c)
    case_conested(c, env_extra=lua54_env(c))


def case_close54(c):
    need_lua54(c)
    p = start(c, CLOSE54, env_extra=lua54_env(c))
    truths, stacks, err = attach(c, p, until=b'CLOSED\n')
    expect('CLOSES 2' in err, 'the closers did not run twice: %r' % err)
    calls = c.folded(c.session('attach.%d' % p.pid), 'calls')
    leaf = truths['close'][-1]  # onclose, which each __close calls
    got = sum(n for s, n in calls.items() if label_frame(s.split(';')[-1]) == leaf)
    expect(got == 2, 'calls of the __close handler traced: %d of 2 (%s)' % (got, calls))
    expect_only(stacks, truths['close'], 'a __close run by coroutine.close')


def case_closing54(c):
    need_lua54(c)
    p = start(c, CLOSING54, env_extra=lua54_env(c))
    truths, stacks, _ = attach(c, p)
    expect_only(stacks, truths['wait'], 'attached in a __close that coroutine.close runs')


def case_hookedmain(c):
    """An attach that finds the main thread with the program's own hook
    starts when the program removes it (co_attach_rearm)."""
    p = start(c, HOOKEDMAIN)
    truths, stacks, err = attach(c, p, duration='1')
    expect('TRACING true' in err, 'the attach never started: %r' % err)
    expect_only(stacks, truths['main'], 'attached once the program removed its hook')


def case_diedwaiting(c):
    """A process that dies while an attach waits for it (it sat in C):
    recorderd says so and fails, rather than waiting out its --timeout."""
    # READY comes from inside os.execute: an attach sent after it cannot
    # find the program still in Lua (ready() then os.execute raced it)
    p = start(c, PRELUDE + 'os.execute("echo READY; exec sleep 30")\n')
    r = subprocess.Popen([c.args.recorderd, 'attach', str(p.pid), '--timeout', '60',
                          '--out', c.out], cwd=c.tmp, env=base_env(),
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    try:
        # listening: its checks of the process are done and the request is
        # on its way (killed before, it is a zombie: 'process N exited')
        wait_listening(r, p.pid)
        os.killpg(p.pid, signal.SIGKILL)  # lua5.1 and its sleep; left unreaped
        _, err = r.communicate(timeout=50)
    finally:
        if r.poll() is None:
            r.kill()
            r.wait()
    expect(r.returncode == 1 and b'process %d exited before it answered' % p.pid in err,
           'recorderd attach to a process that died: %d %r' % (r.returncode, err))


def case_idlewait(c):
    c.write('prog.lua', 'io.stdout:write("READY\\n") io.stdout:flush()\nio.read()\n')
    p = start_dormant(c)
    harness.wait_blocked(p.pid, 'the program')  # in read()
    r = recorderd(c, 'attach', str(p.pid), '--duration', '1', '--timeout', '1', '--out', c.out)
    want = (b'recorderd: process %d did not answer within 1000 ms: it ran no Lua meanwhile, '
            b'and answers at its next Lua event; --timeout SECONDS waits longer\n' % p.pid)
    expect(r.returncode == 1 and r.stderr.endswith(want),
           'attach to an idle program: %d %r' % (r.returncode, r.stderr))
    t0 = time.monotonic()
    r = recorderd(c, 'top', str(p.pid), '--duration', '1', '--timeout', '20')
    took = time.monotonic() - t0
    want = (b'recorderd: process %d ran no Lua in the 1.0 s of --duration: nothing to show '
            b'(it answers at its next Lua event)\n' % p.pid)
    expect(r.returncode == 1 and r.stderr.endswith(want) and took < 10,
           'top -d 1 of an idle program: %d after %.1f s %r' % (r.returncode, took, r.stderr))
    p.communicate(b'\n', timeout=30)


WINDOW = '''
local function work(i) return i * 2 end
io.stdout:write("READY\\n") io.stdout:flush()
io.read()
for i = 1, 100 do work(i) end
io.read()
'''


def case_window(c):
    """attach -d of a server idle between requests watches for the whole
    duration from the command, the wait for its first Lua event included
    (it gave up at --timeout's 10 s, though the operator asked for 14): a
    program idle for 11 s, then 100 calls, is traced with them, exit 0.
    One idle for the whole window ends with 'ran no Lua in the 2.0 s of
    --duration', exit 1."""
    c.write('prog.lua', WINDOW)
    p = start_dormant(c)
    harness.wait_blocked(p.pid, 'the program')  # in read()
    r = recorderd(c, 'attach', str(p.pid), '-d', '2', '-q', '--out', c.out)
    want = (b'recorderd: process %d ran no Lua in the 2.0 s of --duration: nothing to trace '
            b'(it answers at its next Lua event)\n' % p.pid)
    expect(r.returncode == 1 and r.stderr.endswith(want),
           'attach -d 2 of an idle program: %d %r' % (r.returncode, r.stderr))
    a = subprocess.Popen([c.args.recorderd, 'attach', str(p.pid), '-d', '14', '-q', '--out',
                          c.out], cwd=c.tmp, env=base_env(), stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    c.procs.append(a)
    time.sleep(11)  # past --timeout's default: the window is the duration
    p.stdin.write(b'\n')
    p.stdin.flush()
    _, err = a.communicate(timeout=60)
    expect(a.returncode == 0, 'attach -d 14: exit %d %r' % (a.returncode, err))
    calls = c.folded(c.session('attach.%d' % p.pid), 'calls')
    got = sum(n for k, n in calls.items() if k.endswith('work@prog.lua:2'))
    expect(got == 100, 'work calls in the window: %d (%s) %r' % (got, calls, err))
    p.communicate(b'\n', timeout=30)


def case_inc(c):
    p = start(c, INC)
    harness.wait_blocked(p.pid, 'the program')  # inside os.execute("sleep 1")
    truths, stacks, err = attach(c, p, duration='2')
    expect('TRACING true' in err, 'not tracing once back from C: %r' % err)
    expect_only(stacks, truths['blocked'], 'attached while in C')


# A server waiting for requests: a few events every 0.2 s, in C between.
IDLE = '''
local function handle(i) io.stdout:write("req ", i, "\\n") io.stdout:flush() end
io.stdout:write("READY\\n") io.stdout:flush()
for i = 1, tonumber(arg[1]) do os.execute("sleep 0.2") handle(i) end
io.stdout:write("done\\n")
'''


def case_idledetach(c):
    """attach -d 1 of a dormant program that runs a few events every 0.2 s
    (a server waiting for requests), twice in a row, Lua 5.1 and 5.4: each
    ends within a second of its duration, a complete session with the
    requests' calls of handle, and the program's output unchanged. The
    collector read the detach only on its slow path, once per 4 KiB of
    records (a minute of this program): the attach waited its 5 s grace,
    'has not run Lua since the detach request', and gave a truncated
    session of 0 events; the next attach then 'did not answer'."""
    rounds = 40
    want = b''.join(b'req %d\n' % i for i in range(1, rounds + 1)) + b'done\n'
    for lua in (c.args.lua, harness.need_lua54()):
        p = start(c, IDLE.replace("arg[1]", str(rounds)), lua=lua, env_extra={
            'LUA_CPATH_5_4': os.path.join(c.args.cpath, 'lua54', '?.so') + ';;'})
        for k in range(2):
            t0 = time.monotonic()
            r = recorderd(c, 'attach', str(p.pid), '--duration', '1', '--out',
                          os.path.join(c.tmp, 'o%d' % k))
            took = time.monotonic() - t0
            err = r.stderr.decode()
            expect(r.returncode == 0 and 'has not run Lua' not in err,
                   '%s attach %d: %d %r' % (lua, k, r.returncode, err))
            meta = c.meta(os.path.join(c.tmp, 'o%d' % k, 'attach.%d' % p.pid))
            calls = harness.calls_of(os.path.join(c.tmp, 'o%d' % k, 'attach.%d' % p.pid))
            handled = sum(n for f, n in calls.items() if f.startswith('handle '))
            print('%s attach %d: %.2f s, %d events, handle called %d times'
                  % (lua, k, took, meta['events'], handled))
            expect(meta['status'] == 'complete' and handled >= 2,
                   '%s attach %d: %r, handle called %d times' % (lua, k, meta, handled))
            expect(took < 3.5, '%s attach %d took %.1f s' % (lua, k, took))
        out, perr = p.communicate(timeout=60)
        expect(p.returncode == 0 and b'READY\n' + out == b'READY\n' + want,
               '%s: the program changed: %d %r %r' % (lua, p.returncode, out, perr))


BURST = '''
local function burst() local s = 0 for i = 1, 3e6 do s = s + i % 7 end return s end
io.stdout:write("READY\\n") io.stdout:flush()
for i = 1, 30 do burst() os.execute("sleep 0.3") end
io.stdout:write("done\\n")
'''


def case_topidle(c):
    """top -d 4 (no terminal: a table a second) of a dormant program that
    works in bursts between waits in C, few events each: its burst function
    is listed with its time and calls within the 4 s. The records were
    published once per 4 KiB, a minute of this program: every table said
    0 events; now top asks for them (the attach signal, LT_ATTACH_FLUSH)
    after a second with none."""
    p = start(c, BURST)
    r = recorderd(c, 'top', str(p.pid), '-d', '4')
    out = r.stdout.decode()
    rows = re.findall(r'\n +[\d.]+ +[\d.]+ +[\d.]+ +(\d+)  burst \(prog\.lua:2\)\n', out)
    print('burst rows: %r' % rows)
    expect(r.returncode == 0 and rows and sum(int(n) for n in rows) >= 2,
           'top of a program working in bursts: %d %r %r' % (r.returncode, out, r.stderr))
    os.killpg(p.pid, signal.SIGKILL)
    p.wait()


def case_interrupted(c):
    """attach and dump interrupted (SIGTERM, SIGINT) before the program,
    blocked in io.read, answered: exit 1 with a line saying so (it was
    exit 1 and not a word); the program, unblocked, runs on untraced, its
    output unchanged, no hook left."""
    c.write('prog.lua', 'io.stdout:write("READY\\n") io.stdout:flush()\n'
                        'local l = io.read()\n'
                        'io.stdout:write(l, " ", tostring(debug.gethook()), "\\n")\n')
    c.used.add('attach')
    p = start_dormant(c)
    harness.wait_blocked(p.pid, 'the program')
    for cmd, sig in (('attach', signal.SIGTERM), ('attach', signal.SIGINT)):
        a = subprocess.Popen([c.args.recorderd, cmd, str(p.pid), '--out', c.out], cwd=c.tmp,
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, start_new_session=True)
        c.procs.append(a)
        time.sleep(0.5)
        a.send_signal(sig)
        _, err = a.communicate(timeout=30)
        expect(a.returncode == 1 and
               err.decode().endswith('recorderd: interrupted before process %d answered: '
                                     'nothing traced\n' % p.pid),
               '%s interrupted: %d %r' % (cmd, a.returncode, err))
    out, err = p.communicate(b'go\n', timeout=30)
    expect(p.returncode == 0 and out == b'go nil\n', 'the program changed: %d %r %r'
           % (p.returncode, out, err))


def case_killedidle(c):
    """An attach killed (SIGKILL: a lost terminal) while it traces a program
    that runs a few events every 0.2 s, then attach -d 1 and dump, Lua 5.1
    and 5.4: both answered within --timeout, the session complete, the
    program's output unchanged. The collector found its recorderd gone only once the
    ring (8 MB) filled, hours later for such a program: every attach and
    dump meanwhile 'did not answer within 10000 ms'."""
    rounds = 40
    want = b''.join(b'req %d\n' % i for i in range(1, rounds + 1)) + b'done\n'
    for lua in (c.args.lua, harness.need_lua54()):
        p = start(c, IDLE.replace("arg[1]", str(rounds)), lua=lua, env_extra={
            'LUA_CPATH_5_4': os.path.join(c.args.cpath, 'lua54', '?.so') + ';;'})
        first = subprocess.Popen([c.args.recorderd, 'attach', str(p.pid), '--out',
                                  os.path.join(c.tmp, 'first')],
                                 cwd=c.tmp, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, start_new_session=True)
        c.procs.append(first)
        session = os.path.join(c.tmp, 'first', 'attach.%d' % p.pid)
        harness.wait_file(session, 'the first attach', first)
        time.sleep(0.5)  # traced: the hello was acked (the session is made at it)
        first.kill()
        first.wait()
        t0 = time.monotonic()
        r = recorderd(c, 'attach', str(p.pid), '--duration', '1', '--out',
                      os.path.join(c.tmp, 'second'), '--timeout', '5')
        took = time.monotonic() - t0
        print('%s: the second attach (--duration 1) took %.1f s' % (lua, took))
        expect(r.returncode == 0, '%s: attach after a killed one: %d %r'
               % (lua, r.returncode, r.stderr))
        meta = c.meta(os.path.join(c.tmp, 'second', 'attach.%d' % p.pid))
        # answered within --timeout (5 s, half the old wait): the time the
        # attach took is no bound (its reports' share of it grows under
        # AddressSanitizer: 4.0 s there in a loaded CI stage, 1.3 s here)
        expect(meta['status'] == 'complete' and meta['events'] > 0,
               '%s: %.1f s, %r' % (lua, took, meta))
        r = recorderd(c, 'dump', str(p.pid), '--timeout', '5')
        expect(r.returncode == 0 and (b'handle' in r.stdout or b'os.execute' in r.stdout),
               '%s: dump: %d %r %r' % (lua, r.returncode, r.stdout, r.stderr))
        out, perr = p.communicate(timeout=60)
        expect(p.returncode == 0 and out == want and not perr,
               '%s: the program changed: %d %r %r' % (lua, p.returncode, out, perr))


SPIN = '''
local function work(n) local s = 0 for i = 1, n do s = s + i % 7 end return s end
io.stdout:write("READY\\n") io.stdout:flush()
while not io.open("stop") do work(1000) end
io.stdout:write("done\\n")
'''


def case_hangup(c):
    """SIGHUP (the terminal of recorderd lost: an ssh session gone) ends
    attach and record as SIGTERM does: exit 0, the session complete with
    its reports; top ends at once; the program answers a dump afterwards
    and its output is unchanged. SIGHUP killed them (status 129), the
    session directory left with a trace.ltr alone and, for attach, the
    program tracing into a ring nobody read."""
    p = start(c, SPIN)
    for cmd in ('attach', 'record', 'top'):
        out = os.path.join(c.tmp, 'hup-' + cmd)
        argv = [c.args.recorderd, cmd, str(p.pid)] + (['--out', out] if cmd != 'top' else [])
        a = subprocess.Popen(argv, cwd=c.tmp, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, start_new_session=True)
        c.procs.append(a)
        time.sleep(1.5)
        a.send_signal(signal.SIGHUP)
        _, err = a.communicate(timeout=60)
        expect(a.returncode == 0, '%s on SIGHUP: %d %r' % (cmd, a.returncode, err))
        if cmd != 'top':
            session = [os.path.join(out, d) for d in os.listdir(out)]
            expect(len(session) == 1, '%s: sessions %r' % (cmd, session))
            meta = c.meta(session[0])
            expect(meta['status'] == 'complete' and meta['events'] > 0 and
                   os.path.exists(os.path.join(session[0], 'report.html')),
                   '%s on SIGHUP: %r %r' % (cmd, meta, os.listdir(session[0])))
    r = recorderd(c, 'dump', str(p.pid), '--timeout', '10')
    expect(r.returncode == 0 and b'main chunk (prog.lua:' in r.stdout, 'dump after: %d %r %r'
           % (r.returncode, r.stdout, r.stderr))
    open(os.path.join(c.tmp, 'stop'), 'w').close()
    out, err = p.communicate(timeout=60)
    expect(p.returncode == 0 and out == b'done\n' and not err,
           'the program changed: %d %r %r' % (p.returncode, out, err))


def case_dump(c):
    """dump while the program sits in C; the program runs by its absolute
    path, which dump shows relative to the program's working directory
    (prog.lua:N), as every label people read (rd_label.h)."""
    p = start(c, INC, whole_path=True)
    harness.wait_blocked(p.pid, 'the program')  # inside os.execute("sleep 1")
    t0 = time.monotonic()
    r = recorderd(c, 'dump', str(p.pid), '--timeout', '20')
    waited = time.monotonic() - t0
    out = r.stdout.decode()
    expect(r.returncode == 0, 'dump failed: %r' % r.stderr)
    expect('waiting for process' in r.stderr.decode() or waited < 1,
           'no word about the wait: %r' % r.stderr)
    lines = [l.strip() for l in out.splitlines()]
    i = lines.index(next(l for l in lines if l.startswith('Thread ')))
    expect(lines[i + 1] == 'os.execute [C]', 'top of the dump: %r' % out)
    expect(lines[i + 2].startswith('blocked (prog.lua:') and
           lines[i + 3].startswith('main chunk (prog.lua:'), 'dump: %r' % out)
    p.communicate(timeout=60)


def case_attachstale(c):
    """attach to a program while a ring of its name (attach.PID) is left in
    /dev/shm, as a program killed between making that ring and recorderd's
    reading it leaves one (its pid then reused), or a request served after
    its client went: the program takes the stale name back and is traced,
    and no ring of its name is left after the attach."""
    p = start(c, FIBPROG)
    stale = '/dev/shm/luatrace-attach.%d' % p.pid
    with open(stale, 'wb') as f:
        f.write(b'\0' * 4096)
    try:
        r = recorderd(c, 'attach', str(p.pid), '--duration', '0.3', '--out', c.out,
                      '--timeout', '20')
        expect(r.returncode == 0, 'attach with a stale ring name: %d %r'
               % (r.returncode, r.stderr))
        expect(not os.path.exists(stale), 'the ring name is left: %s' % stale)
    finally:
        if os.path.exists(stale):
            os.unlink(stale)
        with open(os.path.join(c.tmp, 'stop'), 'w'):
            pass
        p.communicate(timeout=60)
    calls = c.folded(c.session('attach.%d' % p.pid), 'calls')
    expect(any(k.endswith(';fib@prog.lua:1') for k in calls), 'no fib traced: %r' % calls)


def case_sweep(c):
    """Markers of processes that no longer run (killed by a signal, a
    dormant collector cannot remove its own) are removed by the next
    attach, dump or top, whatever its target: one of a dead pid and one
    whose start time is not its pid's go; a live dormant program's stays."""
    p = start(c, FIBPROG)
    d = '/tmp/luatrace-%d/attach' % os.getuid()
    live = open(os.path.join(d, str(p.pid))).read()
    dead = subprocess.Popen(['true'])
    dead.wait()
    stale = {dead.pid: live.replace('pid %d\n' % p.pid, 'pid %d\n' % dead.pid),
             os.getpid(): re.sub(r'start \d+', 'start 1', live.replace('pid %d\n' % p.pid,
                                                                    'pid %d\n' % os.getpid()))}
    try:
        for pid, text in stale.items():
            with open(os.path.join(d, str(pid)), 'w') as f:
                f.write(text)
        r = recorderd(c, 'dump', str(dead.pid), '--timeout', '5')
        expect(r.returncode == 1 and b'no process' in r.stderr, 'dump: %r' % r.stderr)
        left = [pid for pid in stale if os.path.exists(os.path.join(d, str(pid)))]
        expect(not left, 'stale markers left: %s' % left)
        expect(os.path.exists(os.path.join(d, str(p.pid))), 'the live program\'s marker is gone')
    finally:
        for pid in stale:
            if os.path.exists(os.path.join(d, str(pid))):
                os.unlink(os.path.join(d, str(pid)))
        with open(os.path.join(c.tmp, 'stop'), 'w'):
            pass
        p.communicate(timeout=60)


def stop_all(c, *procs):
    """Asks FIBPROG-like programs to end (the stop file): each must say done
    and exit 0, with nothing on stderr."""
    with open(os.path.join(c.tmp, 'stop'), 'w'):
        pass
    for p in procs:
        out, err = p.communicate(timeout=60)
        expect(p.returncode == 0 and out == b'done\n' and not err,
               'the program %s: %d %r %r' % (p.args, p.returncode, out, err))


def case_busy(c):
    """dump, top and attach of a process another recorderd attach is
    tracing: refused at once in words (exit 1), not with the socket's path;
    the first attach and the program go on unhurt."""
    p = start(c, FIBPROG)
    first = subprocess.Popen([c.args.recorderd, 'attach', str(p.pid), '--duration', '60',
                              '--out', c.out], cwd=c.tmp, env=base_env(),
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, start_new_session=True)
    c.procs.append(first)
    sock = attach_sock(p.pid)
    for _ in range(3000):
        if os.path.exists(sock):
            break
        time.sleep(0.01)
    else:
        raise Failure('the first attach never listened')
    for cmd in ('dump', 'attach', 'top'):
        r = recorderd(c, cmd, str(p.pid), *{'dump': []}.get(cmd, ['--duration', '0.3']))
        err = r.stderr.decode()
        expect(r.returncode == 1 and 'process %d is being traced or dumped by another '
               'recorderd' % p.pid in err and sock not in err,
               '%s while attached: %d %r' % (cmd, r.returncode, err))
    first.send_signal(signal.SIGINT)  # Ctrl-C detaches
    out, err = first.communicate(timeout=60)
    expect(first.returncode == 0, 'the first attach: %d %r' % (first.returncode, err))
    stop_all(c, p)


def case_zombie(c):
    """attach, dump, top and record of a lua5.1 that exited and was not
    reaped yet (a zombie: /proc still lists it): 'process N exited', exit 1
    (before, attach said it exported no Lua 5.1 API, or was not Lua)."""
    p = subprocess.Popen([c.args.lua, '-e', 'os.exit(0)'], cwd=c.tmp, env=c.env(),
                         stdin=subprocess.DEVNULL, start_new_session=True)
    c.procs.append(p)
    for _ in range(1000):
        with open('/proc/%d/stat' % p.pid) as f:
            if f.read().rpartition(')')[2].split()[0] == 'Z':
                break
        time.sleep(0.01)
    else:
        raise Failure('lua5.1 did not exit')
    for cmd in ('attach', 'dump', 'top', 'record'):
        r = recorderd(c, cmd, str(p.pid), *{'dump': []}.get(cmd, ['--duration', '0.3']))
        expect(r.returncode == 1 and b'process %d exited' % p.pid in r.stderr,
               '%s of a zombie: %d %r' % (cmd, r.returncode, r.stderr))
    p.wait()


def case_sweepsock(c):
    """The PID.sock of a recorderd killed (SIGKILL) while attached to a
    process that then ended, nobody listening on it, goes at the next
    attach, dump or top; one a recorderd still listens on, and one of a
    live process, stay."""
    d = '/tmp/luatrace-%d/attach' % os.getuid()
    os.makedirs(d, mode=0o700, exist_ok=True)
    gone = []
    for _ in range(2):
        q = subprocess.Popen(['true'])
        q.wait()
        gone.append(q.pid)
    stale, listened, live = ['%s/%d.sock' % (d, pid) for pid in gone + [os.getpid()]]
    socks = []
    for path in (stale, listened, live):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.socks.append((s, path))
        s.bind(path)
        socks.append(s)
    socks[1].listen(4)
    socks[0].close()  # as a killed recorderd leaves it: the file, no listener
    socks[2].close()
    r = recorderd(c, 'dump', str(gone[0]), '--timeout', '5')
    expect(r.returncode == 1 and b'no process' in r.stderr, 'dump: %r' % r.stderr)
    expect(not os.path.exists(stale), 'the stale socket is left: %s' % stale)
    expect(os.path.exists(listened) and os.path.exists(live),
           'a socket with a listener, or of a live process, was removed')


def signal_delivered(pid, sig):
    """Waits (up to 10 s) until sig is no longer pending in process pid."""
    bit = 1 << (sig - 1)
    for _ in range(1000):
        with open('/proc/%d/status' % pid) as f:
            pend = [int(l.split()[1], 16) for l in f if l.startswith(('SigPnd:', 'ShdPnd:'))]
        if not any(p & bit for p in pend):
            return
        time.sleep(0.01)
    raise Failure('signal %d still pending in %d' % (sig, pid))


def case_killedfirst(c):
    """A request that lands while the collector serves one whose recorderd
    went away (killed with SIGKILL, so that its hello gets no ack) is
    served at the program's next Lua event: the failed one's clean-up must
    not take the new request's hooks. The two recorderds are sockets of
    ours at the attach path, so that the second request is never sent
    again; before the fix it was lost and the second attach timed out."""
    p = start(c, FIBPROG)
    sig, path = attach_sig(p.pid), attach_sock(p.pid)
    first = listen_as_recorderd(c, path, 4, 20)
    sigqueue(p.pid, sig, 1)  # TRACE
    conn, _ = first.accept()  # the collector now waits for the ack
    c.socks.append((conn, path))
    sigqueue(p.pid, sig, 1)  # the next recorderd's request
    signal_delivered(p.pid, sig)
    first.close()
    os.unlink(path)
    second = listen_as_recorderd(c, path, 4, 20)
    conn.close()  # killed: no ack, the first request fails
    try:
        conn2, _ = second.accept()
    except socket.timeout:
        raise Failure('the request that came during a failed one was lost')
    conn2.close()  # this one fails too: the program stays dormant
    stop_all(c, p)


HOOKEDCO = '''io.stdout:write("READY\\n") io.stdout:flush()
local function f(i) return i * 2 end
local function g() for i = 1, 1000 do f(i) coroutine.yield() end end
local rounds, bad = 0, 0
while not io.open("stop") do
  rounds = rounds + 1
  local n = 0
  local co = coroutine.create(g)
  debug.sethook(co, function() n = n + 1 end, "cr")
  while coroutine.resume(co) do end
  if n ~= 4002 then bad = bad + 1 io.stderr:write("round ", rounds, ": ", n, " events\\n") end
end
print("done", bad)
'''


def case_detachhook(c):
    """A coroutine with the program's own call/return hook, attached to and
    detached from four times: the hook sees every one of its events, the
    one during which a detach happened included (Lua 5.1 lost it: the
    detach gave the thread its hook back, and the event went to nobody)."""
    p = start(c, HOOKEDCO)
    for _ in range(4):
        r = recorderd(c, 'attach', str(p.pid), '-d', '0.3', '-q', '--no-trace', '--out', c.out)
        expect(r.returncode == 0, 'attach: %d %r' % (r.returncode, r.stderr))
        shutil.rmtree(c.out, ignore_errors=True)
    open(os.path.join(c.tmp, 'stop'), 'w').close()
    out, err = p.communicate(timeout=60)
    expect(p.returncode == 0 and out == b'done\t0\n' and not err,
           'the program\'s hook: %d %r %r' % (p.returncode, out, err))


TICKSIG = '''local ffi = require "ffi"
ffi.cdef[[
int __libc_current_sigrtmin(void);
typedef void (*lt_handler)(int);
lt_handler signal(int sig, lt_handler h);
]]
io.stdout:write("READY\\n") io.stdout:flush()
local function tiny(x) return x + 1 end
local function work() local s = 0 for i = 1, 20000 do s = tiny(s) end return s end
local sig = ffi.C.__libc_current_sigrtmin() + 6
while not io.open("ignore") do work() end
ffi.C.signal(sig, ffi.cast("lt_handler", 1)) -- SIG_IGN: the program's own
io.stdout:write("IGNORED\\n") io.stdout:flush()
while not io.open("stop") do work() end
local was = ffi.C.signal(sig, ffi.cast("lt_handler", 0))
print("done", ffi.cast("intptr_t", was) == 1)
'''


def case_ticksig(c):
    """The tick signal after a detach: its handler stays, and a program
    that puts its own disposition there before the next attach keeps it;
    that attach's timer takes another signal, and its session has ticks.
    (The signal was reused: the program's handler got every tick, or, as
    here, the ignored ticks left the session without time.) LuaJIT started
    with LUATRACE_TIMING=sample, so that its attaches take sampled time."""
    lj = need_luajit()
    p = start(c, TICKSIG, lua=lj, env_extra={'LUATRACE_TIMING': 'sample'})
    for k, then in ((0, 'ignore'), (1, 'stop')):
        out = os.path.join(c.tmp, 'o%d' % k)
        r = recorderd(c, 'attach', str(p.pid), '-d', '0.5', '-q', '--out', out)
        expect(r.returncode == 0, 'attach %d: %d %r' % (k, r.returncode, r.stderr))
        meta = c.meta(os.path.join(out, 'attach.%d' % p.pid))
        expect(meta['time'] == 'sample' and (meta.get('tick') or {}).get('ticks', 0) > 0,
               'attach %d: no ticks: %r' % (k, {x: meta.get(x) for x in ('time', 'tick')}))
        open(os.path.join(c.tmp, then), 'w').close()
        if k == 0:
            expect(p.stdout.readline() == b'IGNORED\n', 'the program did not ignore the signal')
    out, err = p.communicate(timeout=60)
    expect(p.returncode == 0 and out == b'done\ttrue\n', 'the program: %d %r %r'
           % (p.returncode, out, err))


def need_luaposix(c):
    """Skips the case where luaposix is not installed."""
    if subprocess.run([c.args.lua, '-e', 'require "posix.signal"'],
                      capture_output=True).returncode != 0:
        print('SKIP: luaposix is not installed')
        raise SystemExit(harness.SKIP)


SIGRESET = '''local sig = require "posix.signal"
for n = 1, 64 do pcall(sig.signal, n, sig.SIG_DFL) end
io.stdout:write("READY\\n") io.stdout:flush()
local function work() local s = 0 for i = 1, 20000 do s = s + i % 7 end return s end
while not io.open("stop") do work() end
print("done")
'''


def case_sigreset(c):
    need_luaposix(c)
    p = start(c, SIGRESET)
    r = recorderd(c, 'attach', str(p.pid), '-d', '0.5', '-q', '--out', c.out)
    want = b'recorderd: process %d no longer handles signal ' % p.pid
    expect(r.returncode == 1 and r.stderr.startswith(want) and b'nothing sent' in r.stderr,
           'attach: %d %r' % (r.returncode, r.stderr))
    r = recorderd(c, 'dump', str(p.pid))
    # one moment of the loop: in work (98% of its time), or in io.open (a
    # sanitize stage's dump caught it there once)
    frames = [ln.strip() for ln in r.stdout.decode().splitlines()[3:]]
    expect(r.returncode == 0 and frames[:1] in (['work (prog.lua:4)'], ['io.open [C]']) and
           frames[1:] == ['main chunk (prog.lua:5)', 'lua5.1 [C]'],
           'dump: %d %r %r' % (r.returncode, r.stdout, r.stderr))
    r = recorderd(c, 'top', str(p.pid), '-d', '0.5')
    expect(r.returncode == 0 and b'work (prog.lua:4)' in r.stdout,
           'top: %d %r %r' % (r.returncode, r.stdout, r.stderr))
    open(os.path.join(c.tmp, 'stop'), 'w').close()
    out, err = p.communicate(timeout=60)
    expect(p.returncode == 0 and out == b'done\n', 'the program: %d %r %r'
           % (p.returncode, out, err))


SIGSTORM = '''local sig = require "posix.signal"
local u, pt = require "posix.unistd", require "posix.time"
local n = 0
sig.signal(sig.SIGUSR1, function() n = n + 1 end)
local parent = u.getpid()
local child = u.fork()
if child == 0 then -- a signal every ms while the parent lives
  while sig.kill(parent, sig.SIGUSR1) == 0 do pt.nanosleep({tv_sec = 0, tv_nsec = 1000000}) end
  u._exit(0)
end
io.stdout:write("READY\\n") io.stdout:flush()
local function work() local s = 0 for i = 1, 30 do s = s + i end return s end
while not io.open("stop") do work() end
-- no signal after lua_close: luaposix leaves its handler on as it is unloaded
sig.kill(child, sig.SIGKILL)
require("posix.sys.wait").wait(child)
sig.signal(sig.SIGUSR1, sig.SIG_IGN)
print("done", n > 0)
'''


def case_sigstorm(c):
    need_luaposix(c)
    p = start(c, SIGSTORM)
    r = recorderd(c, 'attach', str(p.pid), '-d', '1', '-q', '--out', c.out)
    expect(r.returncode == 0 and b'has not run Lua' not in r.stderr,
           'attach: %d %r' % (r.returncode, r.stderr))
    open(os.path.join(c.tmp, 'stop'), 'w').close()
    out, err = p.communicate(timeout=60)
    expect(p.returncode == 0 and out == b'done\ttrue\n', 'the program: %d %r %r'
           % (p.returncode, out, err))
    session = c.session('attach.%d' % p.pid)
    meta = c.meta(session)
    work = sum(n for k, n in c.folded(session, 'calls').items() if k.endswith('work@prog.lua:12'))
    print('%d work() calls, %d re-hooks' % (work, meta.get('rehooked', 0)))
    expect(meta['status'] == 'complete' and meta.get('rehooked', 0) >= 5 and work > 10000,
           'session: %d work() calls, %r' % (work, meta))


COWRAPS = '''io.stdout:write("READY\\n") io.stdout:flush()
local function f(i) return i + 1 end
while not io.open("stop") do
  local co = coroutine.wrap(function() local s = 0 for i = 1, 20000 do s = f(s) end return s end)
  co()
end
print("done")
'''


def case_killedco(c):
    """An attach killed (SIGKILL) while it traces, and a second attach at
    once: the second request lands while the first trace still runs into
    a ring nobody reads (64K here: full at once), and is served when the
    collector finds its recorderd gone, at a hook event of whatever thread
    runs, nearly always a short-lived coroutine. Under Lua 5.4 (no walk of
    every thread) the main thread stayed unhooked after that detach: the
    second session got a few thousand events, then the process answered
    no attach or dump for good (a helper's hunt: 2 of 3 tries). Three
    rounds: each second session whole, and a dump answered after it."""
    for lua in (harness.need_lua54(), c.args.lua):
        for k in range(3):
            p = start(c, COWRAPS, lua=lua, env_extra={
                'LUATRACE_RING': '64K',
                'LUA_CPATH_5_4': os.path.join(c.args.cpath, 'lua54', '?.so') + ';;'})
            first = subprocess.Popen([c.args.recorderd, 'attach', str(p.pid), '--time', 'exact',
                                      '-q', '--out', os.path.join(c.tmp, 'o1')], cwd=c.tmp,
                                     env=base_env(), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            c.procs.append(first)
            began = os.path.join(c.tmp, 'o1', 'attach.%d' % p.pid)
            for _ in range(1000):  # the first trace runs: its session began
                if os.path.exists(began):
                    break
                time.sleep(0.01)
            expect(os.path.exists(began), '%s: the first attach did not begin' % lua)
            time.sleep(0.1)
            first.kill()
            first.wait()
            out2 = os.path.join(c.tmp, 'o2-%d' % k)
            r = recorderd(c, 'attach', str(p.pid), '-d', '0.5', '-q', '--out', out2)
            sess = os.path.join(out2, 'attach.%d' % p.pid)
            meta = c.meta(sess) if os.path.exists(os.path.join(sess, 'session.json')) else {}
            d = recorderd(c, 'dump', str(p.pid), '--timeout', '5')
            stop_all(c, p)
            os.unlink(os.path.join(c.tmp, 'stop'))
            expect(r.returncode == 0 and not r.stderr and meta.get('status') == 'complete'
                   and meta.get('events', 0) > 100000,
                   '%s round %d, the second attach: %d %r %r' % (lua, k, r.returncode, r.stderr,
                                                               {x: meta.get(x) for x in
                                                                ('status', 'events')}))
            expect(d.returncode == 0,
                   '%s round %d, dump after it: %d %r' % (lua, k, d.returncode, d.stderr[:300]))


BLOCKREAD = '''io.stdout:write("READY\\n") io.stdout:flush()
local l = io.read("*l")
local function f(i) return i end
while not io.open("stop2") do f(1) end
io.stdout:write("got ", l, "\\n")
'''


def case_badout(c):
    """attach with an --out where no session can be made: refused at once
    (exit 1, why), before the process is asked anything, whether it has a
    dormant collector or not (then luatrace.so is not loaded into it), also
    a directory that opens but is read-only (root: a read-only mount). An
    --out removed while the attach waits: the process's hello is refused,
    and the attach ends at once, not at --timeout."""
    afile = os.path.join(c.tmp, 'afile')
    open(afile, 'w').close()
    bad = os.path.join(afile, 'out')
    dormant = start(c, FIBPROG)
    plain = subprocess.Popen([c.args.lua, 'prog.lua'], cwd=c.tmp, env=c.env(),
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, start_new_session=True)
    c.procs.append(plain)
    expect(plain.stdout.readline() == b'READY\n', 'the plain program did not get ready')
    for p in (dormant, plain):
        r = recorderd(c, 'attach', str(p.pid), '--out', bad, '--timeout', '30')
        err = r.stderr.decode()
        expect(r.returncode == 1 and 'cannot create a session directory in %s' % bad in err
               and 'did not answer' not in err and 'loaded into it' not in err,
               'attach with --out under a file: %d %r' % (r.returncode, err))
    # a directory that opens but takes no file (a read-only mount, in a
    # mount namespace of its own: root only): refused before the load too
    ro = os.path.join(c.tmp, 'ro')
    os.makedirs(ro)
    script = 'mount -t tmpfs -o ro,size=16k tmpfs "$1" || exit 77; shift; exec "$@"'
    r = subprocess.run(['unshare', '-m', 'sh', '-c', script, 'sh', ro, c.args.recorderd, 'attach',
                        str(plain.pid), '--out', ro, '--timeout', '30'], cwd=c.tmp,
                       env=base_env(), stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    if os.geteuid() == 0 and r.returncode != 77 and b'unshare failed' not in r.stderr:
        err = r.stderr.decode()
        expect(r.returncode == 1 and 'cannot create a session directory in %s: Read-only file '
               'system' % ro in err and 'loaded into it' not in err,
               'attach with a read-only --out: %d %r' % (r.returncode, err))
    maps = open('/proc/%d/maps' % plain.pid).read()
    expect('luatrace' not in maps, 'luatrace.so was loaded for an attach that could not write')
    stop_all(c, dormant, plain)
    gone_out_dir(c)


def gone_out_dir(c):
    """badout's second half: the --out removed while the attach waits."""
    c.write('read.lua', BLOCKREAD)
    p = start_dormant(c, 'read.lua')
    # in io.read, not on its way there: a request that came before would be
    # served by a Lua event before the --out is removed
    harness.wait_blocked(p.pid, 'the program')
    out = os.path.join(c.tmp, 'gone')
    a = subprocess.Popen([c.args.recorderd, 'attach', str(p.pid), '--out', out, '--timeout',
                          '30'], cwd=c.tmp, env=base_env(), stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    c.procs.append(a)
    sock = attach_sock(p.pid)
    for _ in range(1000):  # listening: --out is open, the request sent
        if os.path.exists(sock) or a.poll() is not None:
            break
        time.sleep(0.01)
    shutil.rmtree(out)
    p.stdin.write(b'line\n')  # Lua runs: the hello
    p.stdin.flush()
    _, aerr = a.communicate(timeout=60)
    aerr = aerr.decode()
    with open(os.path.join(c.tmp, 'stop2'), 'w'):
        pass
    rest, perr = p.communicate(timeout=60)
    expect(a.returncode == 1 and 'refused: cannot create a session directory' in aerr
           and 'did not answer' not in aerr, 'attach whose --out went: %d %r'
           % (a.returncode, aerr))
    expect(p.returncode == 0 and rest == b'got line\n' and not perr,
           'the program: %d %r %r' % (p.returncode, rest, perr))


RELOAD = '''local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
io.stdout:write("READY ", ROUND, "\\n") io.stdout:flush()
while not io.open("next" .. ROUND) do fib(12) end
io.stdout:write("round ", ROUND, " hook ", tostring(debug.gethook()), "\\n")
'''


def case_reload(c):
    """A C host that closes its Lua state and makes another, round after
    round (a server reloading its scripts), listening on each
    (tests/hosts/reload_host) or never linking luatrace (reload_plain,
    attached by injection): every round's attach is served, and traces
    that round's state. Before, the collector kept the closed state: the
    second round's attach waited for good (listen said 0, a third listen
    'listens on another Lua state'), and an injected host was never
    injected again."""
    c.write('prog.lua', RELOAD)
    c.used.add('attach')
    for host, env in ((c.args.reload_host, {'LUATRACE_ATTACH': '1'}), (c.args.reload_plain, {})):
        for f in glob.glob(os.path.join(c.tmp, 'next*')):
            os.unlink(f)
        p = subprocess.Popen([host, 'prog.lua', '3'], cwd=c.tmp, env=c.env(**env),
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, start_new_session=True)
        c.procs.append(p)
        for r in range(3):
            line = p.stdout.readline()
            expect(line == b'READY %d\n' % r, '%s said %r' % (host, line))
            a = recorderd(c, 'attach', str(p.pid), '--duration', '0.2', '--timeout', '10',
                          '--out', c.out)
            expect(a.returncode == 0, '%s round %d: attach %d %r'
                   % (os.path.basename(host), r, a.returncode, a.stderr))
            session = c.session('attach.%d' % p.pid)
            calls = c.folded(session, 'calls')
            expect(any(k.endswith(';fib@prog.lua:1') for k in calls),
                   'round %d: no fib traced: %r' % (r, calls))
            shutil.rmtree(session)
            open(os.path.join(c.tmp, 'next%d' % r), 'w').close()
            line = p.stdout.readline()
            expect(line == b'round %d hook nil\n' % r, '%s said %r' % (host, line))
        rest, err = p.communicate(timeout=60)
        expect(p.returncode == 0 and not err and not rest,
               '%s: %d %r %r' % (host, p.returncode, rest, err))


def luajit_start(c, off):
    """prog.lua (LUAJIT) under luajit, dormant; and its untraced run."""
    lj = need_luajit()
    c.write('prog.lua', LUAJIT)
    c.used.add('attach')
    off = {'LJ_OFF': '1'} if off else {}
    plain = subprocess.run([lj, 'prog.lua'], cwd=c.tmp, env=c.env(LJ_UNTRACED='1', **off),
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
    p = subprocess.Popen([lj, '-lluatrace', 'prog.lua'], cwd=c.tmp,
                         env=c.env(LUATRACE_ATTACH='1', **off), stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    c.procs.append(p)
    first = p.stdout.readline()
    ready = p.stdout.readline()
    expect(ready == b'READY\n', 'the program did not get ready: %r %r' % (ready, first))
    return plain, first, p


def luajit_case(c, off):
    plain, first, p = luajit_start(c, off)
    expect(first.endswith(b' compiled %s\n' % (b'false' if off else b'true')),
           'the loop before the attach: %r' % first)
    r = recorderd(c, 'attach', str(p.pid), '--duration', '0.5', '--out', c.out)
    expect(r.returncode == 0, 'attach failed: %r' % r.stderr)
    out, err = p.communicate(timeout=120)
    err = err.decode()
    expect(p.returncode == plain.returncode == 3,
           'exit code %d, untraced %d: %r' % (p.returncode, plain.returncode, err))
    expect(first + b'READY\n' + out == plain.stdout,
           'output %r, untraced %r' % (first + out, plain.stdout))
    want = b'after jit %s' % (b'false' if off else b'true')
    expect(out.startswith(want) and out.endswith(b' compiled %s\n' % want[10:]),
           'after the detach: %r' % out)
    expect('TRACED jit false compiled false' in err, 'while traced: %r' % err)
    truth = next(list(reversed(l.split()[2:])) for l in err.splitlines()
                 if l.startswith('TRUTH wait '))
    expect(len(truth) == 21, 'the truth: %s' % truth)  # [C], main, rec x18, lwait
    session = c.session('attach.%d' % p.pid)
    meta = c.meta(session)
    expect(meta['status'] == 'complete' and meta['bad_records'] == 0,
           'session not clean: %r' % meta)
    stacks = [[label_frame(f) for f in s.split(';')] for s in c.folded(session, 'time')]
    # every stack through lwait, cut there: lwait's own time is a few
    # lines between 20 calls of hot(), and with the JIT off the debit of
    # those calls can leave it none, so no stack need end in it
    through = [s[:s.index(truth[-1]) + 1] for s in stacks if truth[-1] in s]
    expect(through, 'no stack through %s; stacks: %s' % (truth[-1], stacks))
    for s in through:
        expect(s == truth, 'attached 18 calls deep under luajit: stack %s, the program saw %s'
               % (s, truth))
    for s in stacks:  # every stack stands on the real root
        expect(s[:2] == truth[:2], 'a stack off the root: %s' % s)


def case_luajit(c):
    luajit_case(c, False)


def case_luajitoff(c):
    luajit_case(c, True)


def case_luajitco(c):
    case_coroutine(c, need_luajit())


def case_luajitconested(c):
    case_conested(c, need_luajit())


def case_luajitoutside(c):
    """attach, dump, top and record of a luajit that never loaded luatrace:
    each says it runs LuaJIT and how to start it, exit 1, nothing loaded
    into it and its output unchanged (before: 'no Lua 5.1 state', after
    attach had stopped it to look for one)."""
    lj = need_luajit()
    c.write('prog.lua', FIBPROG)
    p = subprocess.Popen([lj, 'prog.lua'], cwd=c.tmp, env=c.env(), stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    c.procs.append(p)
    expect(p.stdout.readline() == b'READY\n', 'luajit did not get ready')
    for cmd in ('attach', 'dump', 'top', 'record'):
        r = recorderd(c, cmd, str(p.pid), *{'dump': []}.get(cmd, ['--duration', '0.3']))
        err = r.stderr.decode()
        expect(r.returncode == 1 and 'process %d runs LuaJIT' % p.pid in err and
               'LUATRACE_ATTACH=1 luajit -lluatrace' in err and err.count('\n') == 1,
               '%s of a plain luajit: %d %r' % (cmd, r.returncode, err))
    expect('luatrace' not in open('/proc/%d/maps' % p.pid).read(), 'luatrace.so loaded')
    stop_all(c, p)


def case_otherlua(c):
    """attach and heap of a plain lua5.4, and those, dump, top and record of
    a plain lua5.3 and lua5.2 (where installed), that never loaded luatrace:
    each says which Lua it runs and, for 5.4, how to start it to be traced,
    exit 1, in one line; dump of the lua5.4 reads it from outside (its
    frames those of the program's busy loop, on their lines), top samples
    it (fib, where the loop spends its time, first), record makes a
    session of it; nothing
    loaded into any, its output unchanged (before: 'no Lua 5.1 state', or
    'exports no Lua 5.1 API')."""
    luas = [l for l in ('lua5.4', 'lua5.3', 'lua5.2') if shutil.which(l)]
    if not luas:
        print('SKIP: no lua5.4 nor lua5.3 nor lua5.2')
        raise SystemExit(harness.SKIP)
    c.write('prog.lua', FIBPROG)
    for lua in luas:
        p = subprocess.Popen([shutil.which(lua), 'prog.lua'], cwd=c.tmp, env=c.env(),
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, start_new_session=True)
        c.procs.append(p)
        expect(p.stdout.readline() == b'READY\n', '%s did not get ready' % lua)
        for cmd in ('attach', 'dump', 'top', 'record', 'heap'):
            # top of 5.4 read stopped, for 1 s: read as it runs, a deep fib
            # moving under the walk is dropped more often than io.open, and
            # a CI run under ASan left 3 samples, one each
            opts = [] if cmd in ('dump', 'heap') else ['--duration', '0.3']
            if lua == 'lua5.4' and cmd == 'top':
                opts = ['--duration', '1', '--stop']
            r = recorderd(c, cmd, str(p.pid), *opts)
            err = r.stderr.decode()
            if lua == 'lua5.4' and cmd == 'dump':
                fib_dump54(p, r)
                continue
            if lua == 'lua5.4' and cmd == 'record':
                expect(r.returncode == 0, 'record of a plain lua5.4: %d %r' % (r.returncode, r.stderr))
                continue
            if lua == 'lua5.4' and cmd == 'top':
                rows = top_rows(r.stdout.decode().split('luatrace top: ')[-1])
                expect(r.returncode == 0 and rows and rows[0].split()[3:] == ['fib', '(prog.lua:1)'],
                       'top of a plain lua5.4: %d %r %r' % (r.returncode, r.stdout, r.stderr))
                continue
            want = 'process %d runs Lua %s' % (p.pid, lua[3:])
            expect(r.returncode == 1 and want in err and err.count('\n') == 1 and
                   (lua != 'lua5.4' or 'LUATRACE_ATTACH=1 lua5.4 -lluatrace' in err),
                   '%s of a plain %s: %d %r' % (cmd, lua, r.returncode, err))
        expect('luatrace' not in open('/proc/%d/maps' % p.pid).read(), 'luatrace.so loaded')
        stop_all(c, p)
        os.unlink(os.path.join(c.tmp, 'stop'))


def fib_dump54(p, r):
    """A dump of FIBPROG under lua5.4, read from outside: one thread, from
    the bottom lua.c's entry, the main chunk on its loop's line (4), then
    work on its line (2) and fib's calls (line 1), maybe a C function
    (io.open) on top."""
    out = r.stdout.decode()
    blocks = dump_blocks(out)
    expect(r.returncode == 0 and not r.stderr and 'read from outside' in out and
           len(blocks) == 1 and blocks[0][0].endswith('(running):'),
           'dump of a plain lua5.4: %d %r %r' % (r.returncode, out, r.stderr))
    frames = blocks[0][1][::-1]
    expect(frames[:2] == ['lua5.4 [C]', 'main chunk (prog.lua:4)'], 'its base: %r' % out)
    rest = frames[2:]
    if rest and rest[-1].endswith(' [C]'):
        rest = rest[:-1]
    expect(all(f == ('work (prog.lua:2)' if i == 0 else 'fib (prog.lua:1)')
               for i, f in enumerate(rest)), 'its Lua frames: %r' % out)


def case_luajitdump(c):
    lj = need_luajit()
    c.write('prog.lua', LUAJITDUMP)
    c.used.add('attach')
    p = subprocess.Popen([lj, '-lluatrace', 'prog.lua'], cwd=c.tmp,
                         env=c.env(LUATRACE_ATTACH='1'), stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    c.procs.append(p)
    expect(p.stdout.readline() == b'READY\n', 'the program did not get ready')
    harness.wait_file(os.path.join(c.tmp, 'looping'), 'the loop', p)
    r = recorderd(c, 'dump', str(p.pid), '--timeout', '60')
    c.write('go', '')
    out, err = p.communicate(timeout=120)
    expect(r.returncode == 0, 'dump failed: %r' % r.stderr)
    lines = [l.strip() for l in r.stdout.decode().splitlines()]
    i = next((k for k, l in enumerate(lines) if l.startswith('spin (prog.lua:')), None)
    expect(i is not None, 'no spin frame in the dump: %r' % lines)
    expect([frame_where(l).split(':')[0] for l in lines[i:]] ==
           ['prog.lua'] * 6 + ['[C]'] and lines[i + 5].startswith('main chunk ('),
           'dump below spin: %r' % lines[i:])
    expect(all(l.endswith('[C]') or l.startswith('hot (prog.lua:') or
               l.startswith('busy (prog.lua:') for l in lines[2:i]),
           'dump above spin: %r' % lines)
    expect(p.returncode == 0 and out == b'after jit true\n',
           'the program after the dump: %d %r %r' % (p.returncode, out, err))


def fds(pid):
    """pid's open descriptors: number -> what it is."""
    d = '/proc/%d/fd' % pid
    return {n: os.readlink(os.path.join(d, n)) for n in os.listdir(d)}


def nofd_after_detach(c, dormant):
    """An attach and its detach leave the program no descriptor of ours
    (the collector's /proc/thread-self/schedstat stayed open: co_preempt)."""
    c.write('prog.lua', NOFD)
    env = c.env(LUATRACE_ATTACH='1') if dormant else c.env()
    argv = [c.args.lua] + (['-lluatrace'] if dormant else []) + ['prog.lua']
    p = subprocess.Popen(argv, cwd=c.tmp, env=env, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    c.procs.append(p)
    expect(p.stdout.readline() == b'READY\n', 'the program did not get ready')
    before = fds(p.pid)
    r = recorderd(c, 'attach', str(p.pid), '--duration', '0.3', '--out', c.out)
    expect(r.returncode == 0, 'attach failed: %r' % r.stderr)
    expect(p.stdout.readline() == b'DETACHED\n', 'the program was not detached')
    after = fds(p.pid)
    out, err = p.communicate(b'\n', timeout=60)
    expect(p.returncode == 0 and out == b'bye\n' and not err,
           'the program: %d %r %r' % (p.returncode, out, err))
    left = {n: f for n, f in after.items() if before.get(n) != f}
    expect(not left, 'descriptors left open after the detach: %s' % left)


def case_nofd(c):
    nofd_after_detach(c, dormant=True)


def case_nofdinject(c):
    nofd_after_detach(c, dormant=False)


def case_attachquiet(c):
    """attach -q, as run -q and record -q: the session's reports, no summary
    on stderr (attach refused -q as an unknown option)."""
    attach_nofd(c, ['-q'])


def case_attachnotrace(c):
    """attach --no-trace, as run and listen take it: the reports and no
    trace.ltr, session.json's trace "none" (attach refused the option)."""
    session = attach_nofd(c, ['-q', '--no-trace'])
    expect(not os.path.exists(os.path.join(session, 'trace.ltr')), 'trace.ltr written')
    expect(c.meta(session)['trace'] == 'none', 'session.json: %r' % c.meta(session))


def attach_nofd(c, opts):
    """NOFD attached to with opts for 0.3 s: checks that the attach exits 0,
    prints no summary, and the program goes on and ends as untraced, its
    session complete with a report.html. Returns the session directory."""
    c.write('prog.lua', NOFD)
    c.used.add('attach')
    p = start_dormant(c)
    r = recorderd(c, 'attach', str(p.pid), *opts, '--duration', '0.3', '--out', c.out)
    expect(r.returncode == 0, 'attach %s failed (%d): %r' % (opts, r.returncode, r.stderr))
    expect(b'traced time' not in r.stderr and b'open:' not in r.stderr,
           'attach -q printed a summary: %r' % r.stderr)
    expect(p.stdout.readline() == b'DETACHED\n', 'the program was not detached')
    out, err = p.communicate(b'\n', timeout=60)
    expect(p.returncode == 0 and out == b'bye\n' and not err,
           'the program: %d %r %r' % (p.returncode, out, err))
    session = c.session('attach.%d' % p.pid)
    expect(c.meta(session)['status'] == 'complete', 'session: %r' % c.meta(session))
    expect(os.path.exists(os.path.join(session, 'report.html')), 'no report.html')
    return session


def case_proghook(c):
    """Attach and detach leave the program's own hooks alone (co_dbghook.c)."""
    p = start(c, PROGHOOK)
    truths, stacks, err = attach(c, p)
    hits = [l.split()[1:] for l in err.splitlines() if l.startswith('HITS ')]
    expect(hits and hits[0][0] != '0' and len(set(hits[0])) == 1,
           'count hooks of the program: %s (untraced, across the attach, while traced)' % hits)
    expect('GETHOOK function [] 50' in err, 'the program\'s hook after detach: %r' % err)
    mainlines = [l.split()[1:] for l in err.splitlines() if l.startswith('MAINLINES ')]
    expect(mainlines and mainlines[0][0] != '0' and len(set(mainlines[0])) == 1,
           'the main thread\'s line hook before and after the detach: %s' % mainlines)
    expect(stacks, 'nothing traced')


def dump_frames(block):
    """'name (SRC:LINE)' lines of a dump -> SRC, '[C]' for C frames."""
    return ['[C]' if l.endswith('[C]') else l.rsplit('(', 1)[1].split(':')[0] for l in block]


def case_dumpco(c):
    p = start(c, DUMPCO)
    r = recorderd(c, 'dump', str(p.pid), '--timeout', '20')
    open(os.path.join(c.tmp, 'stop'), 'w').close()
    expect(r.returncode == 0, 'dump failed: %r' % r.stderr)
    out, err = p.communicate(timeout=60)
    blocks, cur = [], None
    for line in r.stdout.decode().splitlines():
        if line.startswith(('Thread ', 'Coroutine ')):
            cur = [line]
            blocks.append(cur)
        elif cur is not None:
            cur.append(line.strip())
    cos = [b for b in blocks if b[0].endswith('(suspended):')]
    expect(len(cos) == 3, 'expected 3 suspended coroutines: %r' % r.stdout)
    truth = sorted(l.split(' HOOK ')[0].split()[1:] for l in err.decode().splitlines()
                   if l.startswith('CO '))
    # the dump shows each frame's current line, the truth its linedefined:
    # compare the sources and the depth, frame by frame
    seen = sorted(dump_frames(b[1:]) for b in cos)
    want = sorted([f if f == '[C]' else f.split(':')[0] for f in t] for t in truth)
    expect(seen == want, 'coroutine stacks %s, the program saw %s' % (seen, want))
    hooks = [l for l in err.decode().splitlines() if l.startswith('CO ')]
    expect(all(l.endswith('HOOK nil') for l in hooks), 'a hook left behind: %s' % hooks)


def dump_blocks(text):
    """The dump's threads: [(header, [frame lines])], in order."""
    blocks = []
    for line in text.splitlines():
        if line.startswith(('Thread ', 'Coroutine ')):
            blocks.append((line, []))
        elif blocks and line.startswith('    '):
            blocks[-1][1].append(line.strip())
    return blocks


def frame_where(line):
    """'name (SRC:LINE)' -> 'SRC:LINE'; 'name [C]' -> '[C]'."""
    return '[C]' if line.endswith(' [C]') else line.rsplit('(', 1)[1][:-1]


def untraced(c, prog, stdin):
    r = subprocess.run([c.args.lua, prog], cwd=c.tmp, env=c.env(), input=stdin,
                       capture_output=True, timeout=120)
    return r.returncode, r.stdout


def dump_while_blocked(c, argv, want, hooks, outside=False, dump_env=None, note=None,
                       env_extra=None):
    """Starts argv (dormant collector; with outside, none: the dump reads it
    from outside) and waits for its READY; dumps it while it sits in C;
    unblocks it with "go". Its output and status must be want's (the
    untraced run's) and its hook report `hooks`. Returns the dump's text,
    the program's TRUTH lines by name, the dump's thread blocks and the
    program's stderr."""
    want_rc, want_out = want
    c.used.add('attach')
    env = c.env(**(env_extra or {})) if outside else c.env(LUATRACE_ATTACH='1',
                                                           **(env_extra or {}))
    p = subprocess.Popen(argv, cwd=c.tmp, env=env, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    c.procs.append(p)
    expect(p.stdout.readline() == b'READY\n', 'the program did not get ready')
    harness.wait_blocked(p.pid, 'the program')  # inside the blocking call
    r = recorderd(c, 'dump', str(p.pid), '--timeout', '20', env=dump_env)
    out = r.stdout.decode()
    expect(r.returncode == 0 and not r.stderr, 'dump failed: %r %r' % (r.stdout, r.stderr))
    note = note or ('read from outside' if outside else 'blocked in C')
    expect(note in out.splitlines()[1], 'no word that it was %s: %r' % (note, out))
    rest, err = p.communicate(b'go\n', timeout=60)
    expect(p.returncode == want_rc and b'READY\n' + rest == want_out,
           'traced run: %d %r, untraced: %d %r' % (p.returncode, rest, want_rc, want_out))
    expect(hooks in rest, 'a hook left behind: %r' % rest)
    truths = dict(l.split(' ', 2)[1:] for l in err.decode().splitlines()
                  if l.startswith('TRUTH '))
    return out, truths, dump_blocks(out), err


def case_dumpblocked(c, outside=False, dump_env=None):
    c.write('prog.lua', BLOCKED)
    want_rc, want_out = untraced(c, 'prog.lua', b'go\n')
    expect(want_rc == 3 and b'got go' in want_out, 'untraced run: %d %r' % (want_rc, want_out))
    argv = [c.args.lua, 'prog.lua'] if outside else [c.args.lua, '-lluatrace', 'prog.lua']
    out, truths, blocks, _ = dump_while_blocked(c, argv, (want_rc, want_out), b'hooks nil nil nil',
                                                outside, dump_env)
    heads = [h.split(' (', 1)[1] for h, _ in blocks]
    expect(heads == ['running):', 'resumed another):', 'resumed another):', 'suspended):'] and
           blocks[2][0].startswith('Thread '), 'threads of the dump: %r' % out)
    seen = [[frame_where(f) for f in fr] for _, fr in blocks]
    want = [['[C]'] + truths['B'].split(), ['[C]'] + truths['A'].split(),
            ['[C]'] + truths['main'].split(), truths['D'].split()]
    expect(seen == want, 'dump %s, the program saw %s' % (seen, want))
    names = [fr[0].split(' ')[0] for _, fr in blocks]
    expect(names == ['io.read', 'runB', 'coroutine.resume', 'coroutine.yield'] and
           blocks[0][1][1].startswith('readline (') and blocks[3][1][1].startswith('deep ('),
           'names in the dump: %r' % out)
    # lua.c's pmain, static: named after the interpreter's file
    exe = os.path.basename(os.path.realpath(c.args.lua))
    expect(blocks[2][1][-1] == exe + ' [C]', 'the main thread\'s base: %r' % blocks[2][1])


# Two generators, one running the other in a generic for, blocked in C.
GENERATORS = WHERE + '''
local function readline()
  io.stdout:write("READY\\n") io.stdout:flush() return io.read("*l")
end
local inner = function() coroutine.yield(readline()) end
local outer = function()
  for l in coroutine.wrap(inner) do coroutine.yield(l) end
end
truth("inner", debug.getinfo(inner, "S").linedefined)
truth("outer", debug.getinfo(outer, "S").linedefined)
local got
for l in coroutine.wrap(outer) do got = l end
io.stdout:write("got ", tostring(got), "\\n")
io.stdout:write("hooks ", tostring(debug.gethook()), "\\n")
'''


def case_dumpgen(c, outside=False):
    c.write('prog.lua', GENERATORS)
    want_rc, want_out = untraced(c, 'prog.lua', b'go\n')
    expect(want_rc == 0 and b'got go' in want_out, 'untraced run: %d %r' % (want_rc, want_out))
    argv = [c.args.lua, 'prog.lua'] if outside else [c.args.lua, '-lluatrace', 'prog.lua']
    out, truths, blocks, _ = dump_while_blocked(c, argv, (want_rc, want_out), b'hooks nil',
                                                outside)
    tops = [fr[0] for _, fr in blocks]
    want = ['io.read [C]', 'coroutine.wrap(prog.lua:%s) [C]' % truths['inner'],
            'coroutine.wrap(prog.lua:%s) [C]' % truths['outer']]
    expect(tops == want, 'the dump\'s top frames %r, want %r: %r' % (tops, want, out))


def case_outsidegen(c):
    case_dumpgen(c, outside=True)


def case_dumphost(c, outside=False):
    c.write('host.lua', HOST)
    r = subprocess.run([c.args.block_host, 'host.lua'], cwd=c.tmp, env=c.env(), input=b'go\n',
                       capture_output=True, timeout=120)
    want_rc, want_out = r.returncode, r.stdout
    expect(want_rc == 0 and b'got go' in want_out, 'untraced run: %d %r' % (want_rc, want_out))
    out, truths, blocks, err = dump_while_blocked(c, [c.args.block_host, 'host.lua'],
                                                  (want_rc, want_out), b'hooks nil nil', outside)
    heads = [h.split(' (', 1)[1] for h, _ in blocks]
    expect(heads == ['running):', 'suspended):'] and blocks[0][0].startswith('Thread '),
           'threads of the dump: %r' % out)
    seen = [[frame_where(f) for f in fr] for _, fr in blocks]
    want = [['[C]'] + truths['serve'].split(), truths['D'].split()]
    expect(seen == want, 'dump %s, the host saw %s' % (seen, want))
    expect(blocks[0][1][0] == 'host.wait [C]' and blocks[0][1][1].startswith('serve ('),
           'names in the dump: %r' % out)
    # poll() returns EINTR after any handler, SA_RESTART or not: the host
    # retries; how often it saw one is printed for the record
    eintr = [l for l in err.decode().splitlines() if l.startswith('EINTR')]
    print(eintr)
    # a ptrace stop is no signal: the host's poll() never saw one
    expect(not outside or eintr == ['EINTR 0'], 'poll() interrupted by the read: %r' % eintr)


def case_outside(c):
    case_dumpblocked(c, outside=True)


def need_lua54(c):
    """Runs the case with lua5.4 as its Lua, or skips it."""
    c.args.lua = harness.need_lua54()


def case_outside54(c):
    need_lua54(c)
    case_dumpblocked(c, outside=True)


MANYCO = '''
local cos = {}
for i = 1, 1500 do
  cos[i] = coroutine.create(function() coroutine.yield() end) coroutine.resume(cos[i])
end
io.stdout:write("READY\\n") io.stdout:flush()
io.read()
io.stdout:write(#cos, "\\n")
'''


def kernel_thread():
    """A kernel thread's pid (PF_KTHREAD in its stat flags), or None."""
    for d in sorted((d for d in os.listdir('/proc') if d.isdigit()), key=int):
        try:
            with open('/proc/%s/stat' % d) as f:
                flags = int(f.read().rpartition(')')[2].split()[6])
        except (OSError, ValueError, IndexError):
            continue
        if flags & 0x00200000:
            return int(d)
    return None


def case_twoinject(c):
    """Two attaches at once of a plain lua5.1 (never loaded luatrace), eight
    rounds: one loads luatrace.so and traces, the other is refused ('being
    traced or dumped by another recorderd') having loaded nothing; the
    program's output unchanged. Both loaded it (each said so, the second
    stopping the process and calling into it again) before the second found
    the first one's socket."""
    c.write('spin.lua', SPIN)
    for k in range(8):
        stop = os.path.join(c.tmp, 'stop')
        if os.path.exists(stop):
            os.unlink(stop)
        p = subprocess.Popen([c.args.lua, 'spin.lua'], cwd=c.tmp, env=c.env(),
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, start_new_session=True)
        c.procs.append(p)
        expect(p.stdout.readline() == b'READY\n', 'the program did not get ready')
        two = [subprocess.Popen([c.args.recorderd, 'attach', str(p.pid), '-d', '1', '-q',
                                 '--out', os.path.join(c.tmp, 'o%d%d' % (k, i))], cwd=c.tmp,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)
               for i in range(2)]
        c.procs.extend(two)
        res = [(a.wait(timeout=60), a.stderr.read().decode()) for a in two]
        loaded = [err for _, err in res if 'luatrace.so is loaded into it now' in err]
        refused = [err for rc, err in res if rc == 1 and 'being traced or dumped by another' in err]
        expect(len(loaded) == 1 and len(refused) == 1 and sorted(rc for rc, _ in res) == [0, 1],
               'round %d: %r' % (k, res))
        open(stop, 'w').close()
        out, err = p.communicate(timeout=60)
        expect(p.returncode == 0 and out == b'done\n' and not err,
               'round %d: the program changed: %d %r %r' % (k, p.returncode, out, err))


def case_tracedbyrun(c):
    """attach, dump and top of a lua5.1 that recorderd run traces: attach
    says at once that it is traced already (by the recorder of its ring)
    and does nothing; dump and top read it from outside; the run's session
    is complete and the program's output unchanged. attach said luatrace.so
    'listens again', then that it waited for Lua to run (it was running)
    until --timeout, and dump and top did not answer either."""
    c.write('spin.lua', SPIN)
    run = subprocess.Popen([c.args.recorderd, 'run', '-q', '-o', os.path.join(c.tmp, 'runout'),
                            '--', c.args.lua, 'spin.lua'], cwd=c.tmp, env=c.env(),
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, start_new_session=True)
    c.procs.append(run)
    expect(run.stdout.readline() == b'READY\n', 'the program did not get ready')
    lua = [int(t) for t in open('/proc/%d/task/%d/children' % (run.pid, run.pid)).read().split()]
    expect(len(lua) == 1, 'the run\'s children: %r' % lua)
    pid = lua[0]
    t0 = time.monotonic()
    r = recorderd(c, 'attach', str(pid), '-d', '1', '--out', c.out, '--timeout', '5')
    took = time.monotonic() - t0
    expect(r.returncode == 1 and r.stderr.decode() ==
           'recorderd: process %d is traced already, by the recorder of its ring spin '
           '(recorderd run or listen): its session has every event; attach works on a process '
           'whose collector is dormant\n' % pid and took < 2,
           'attach of a traced process: %d %r in %.1f s' % (r.returncode, r.stderr, took))
    r = recorderd(c, 'dump', str(pid), '--timeout', '5')
    expect(r.returncode == 0 and 'read from outside' in r.stdout.decode() and
           'main chunk (spin.lua:' in r.stdout.decode(),
           'dump of a traced process: %d %r %r' % (r.returncode, r.stdout, r.stderr))
    r = recorderd(c, 'top', str(pid), '-d', '1', '--timeout', '5')
    expect(r.returncode == 0 and 'read from outside' in r.stdout.decode(),
           'top of a traced process: %d %r %r' % (r.returncode, r.stdout, r.stderr))
    open(os.path.join(c.tmp, 'stop'), 'w').close()
    out, err = run.communicate(timeout=60)
    expect(run.returncode == 0 and out == b'done\n', 'the run: %d %r %r'
           % (run.returncode, out, err))
    meta = c.meta(os.path.join(c.tmp, 'runout', 'spin'))
    expect(meta['status'] == 'complete', 'the run\'s session: %r' % meta)


def case_rootother(c):
    """As root, dump and top of another user's lua5.1 (nobody's, one that
    never loaded luatrace) read it from outside, as record and heap do, and
    as their refusal to a user advises ("or run recorderd as root"); attach
    still refuses it. dump and top said "attach only to your own
    processes", as root too. Root only (else skipped)."""
    if os.geteuid() != 0 or not shutil.which('setpriv'):
        print('skipped: needs root and setpriv')
        raise SystemExit(harness.SKIP)
    c.write('prog.lua', 'local function wait() io.stdout:write("READY\\n") io.stdout:flush() '
                        'return io.read() end\nwait()\n')
    os.chmod(c.tmp, 0o755)
    os.chmod(os.path.join(c.tmp, 'prog.lua'), 0o644)
    p = subprocess.Popen(['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups',
                          c.args.lua, 'prog.lua'], cwd=c.tmp, env=c.env(), stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    c.procs.append(p)
    expect(p.stdout.readline() == b'READY\n', 'the program did not get ready')
    harness.wait_blocked(p.pid, 'the program')
    r = recorderd(c, 'dump', str(p.pid))
    expect(r.returncode == 0 and 'read from outside' in r.stdout.decode() and
           re.search(r'\n    io.read \[C\]\n    wait \(prog.lua:1\)\n', r.stdout.decode()),
           'dump as root: %d %r %r' % (r.returncode, r.stdout, r.stderr))
    r = recorderd(c, 'top', str(p.pid), '-d', '1')
    expect(r.returncode == 0 and 'read from outside' in r.stdout.decode(),
           'top as root: %d %r %r' % (r.returncode, r.stdout, r.stderr))
    r = recorderd(c, 'attach', str(p.pid), '-d', '1', '--out', c.out)
    expect(r.returncode == 1 and b'attach only to your own processes' in r.stderr,
           'attach as root: %d %r' % (r.returncode, r.stderr))
    out, _ = p.communicate(b'\n', timeout=30)
    expect(p.returncode == 0, 'the program failed: %d' % p.returncode)


def case_kthread(c):
    """dump, top, record and heap of a kernel thread (a mistyped pid): "is
    a kernel thread", exit 1. They said the kernel refused ptrace because
    another debugger may be attached or Yama restricts it."""
    pid = kernel_thread()
    if pid is None:
        print('skipped: no kernel thread in sight')
        raise SystemExit(harness.SKIP)
    for cmd in (['dump'], ['top', '-d', '1'], ['record', '-d', '1', '-o', c.out], ['heap']):
        r = recorderd(c, cmd[0], str(pid), *cmd[1:])
        err = r.stderr.decode()
        expect(r.returncode == 1 and err == 'recorderd: process %d is a kernel thread: it runs '
               'no Lua\n' % pid, '%s of kernel thread %d: %d %r' % (cmd[0], pid, r.returncode, err))


def case_dumpfull(c):
    """dump and heap of a program, their output saved to a full disk
    (> /dev/full): exit 1 and a line saying the output was not written,
    where they exited 0 with nothing saved; to a pipe whose reader had
    enough (| head -1) they still exit 0, and to a file they write it all.
    The program is not touched."""
    prog = c.write('full.lua', 'print("READY")\nio.stdout:flush()\nlocal l = io.read()\nprint("got", l)\n')
    p = subprocess.Popen([c.args.lua, prog], cwd=c.tmp, env=c.env(), stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    c.procs.append(p)
    expect(p.stdout.readline() == b'READY\n', 'the program did not get ready')
    harness.wait_blocked(p.pid, 'full.lua')
    for cmd in ('dump', 'heap'):
        with open('/dev/full', 'w') as full:
            r = subprocess.run([c.args.recorderd, cmd, str(p.pid)], cwd=c.tmp, env=base_env(),
                               stdin=subprocess.DEVNULL, stdout=full, stderr=subprocess.PIPE,
                               timeout=60)
        expect(r.returncode == 1 and b'recorderd: cannot write the output on stdout' in r.stderr,
               '%s > /dev/full: %d %r' % (cmd, r.returncode, r.stderr))
    d = subprocess.Popen([c.args.recorderd, 'dump', str(p.pid)], cwd=c.tmp, env=base_env(),
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = d.stdout.readline()
    d.stdout.close()  # the reader had enough
    err = d.stderr.read()
    expect(d.wait(timeout=60) == 0 and first.startswith(b'Process %d' % p.pid),
           'dump | head -1: %d %r %r' % (d.returncode, first, err))
    with open(os.path.join(c.tmp, 'dump.txt'), 'w') as f:
        r = subprocess.run([c.args.recorderd, 'dump', str(p.pid)], cwd=c.tmp, env=base_env(),
                           stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.PIPE, timeout=60)
    with open(os.path.join(c.tmp, 'dump.txt'), 'rb') as f:
        saved = f.read()
    expect(r.returncode == 0 and b'io.read' in saved, 'dump > file: %d %r %r'
           % (r.returncode, r.stderr, saved[:300]))
    out, err = p.communicate(b'line\n', timeout=30)
    expect(p.returncode == 0 and out == b'got\tline\n' and not err,
           'the program: %d %r %r' % (p.returncode, out, err))


def case_outsidemanyco(c):
    """dump from outside of a program with 1500 coroutines suspended, more
    than a dump shows (1024 threads), lua5.1 and lua5.4: the dump says it
    is cut short; 5.4's showed 1023 of them and said nothing."""
    c.write('prog.lua', MANYCO)
    for lua in (c.args.lua, harness.need_lua54()):
        p = subprocess.Popen([lua, 'prog.lua'], cwd=c.tmp, env=c.env(), stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             start_new_session=True)
        c.procs.append(p)
        expect(p.stdout.readline() == b'READY\n', 'the program did not get ready')
        r = recorderd(c, 'dump', str(p.pid))
        out = r.stdout.decode()
        shown = len([ln for ln in out.splitlines() if ln.startswith('Coroutine ')])
        print('%s: %d coroutines shown; %s' % (lua, shown, out.splitlines()[1]))
        expect(r.returncode == 0 and 'cut short' in out.splitlines()[1] and 1000 < shown < 1500,
               '%s: %d, %d coroutines shown, %r' % (lua, r.returncode, shown, out[:300]))
        rest, _ = p.communicate(b'\n', timeout=60)
        expect(p.returncode == 0 and rest == b'1500\n', '%s: the program changed: %r' % (lua, rest))


def case_dormant54blocked(c):
    """dumpblocked of a lua5.4 with a dormant collector, whose signal
    handler reads no stacks (DUMP_NOW goes unanswered): read from outside,
    as exact, at once. It waited until --timeout (20 s here) and failed,
    where the same program without the collector is dumped."""
    need_lua54(c)
    c.write('prog.lua', BLOCKED)
    want = untraced(c, 'prog.lua', b'go\n')
    t0 = time.monotonic()
    out, truths, blocks, _ = dump_while_blocked(
        c, [c.args.lua, '-lluatrace', 'prog.lua'], want, b'got go', note='read from outside',
        env_extra={'LUA_CPATH_5_4': os.path.join(c.args.cpath, 'lua54', '?.so') + ';;'})
    seen = [[frame_where(f) for f in fr] for _, fr in blocks]
    wantst = [['[C]'] + truths['B'].split(), ['[C]'] + truths['A'].split(),
              ['[C]'] + truths['main'].split(), truths['D'].split()]
    expect(seen == wantst, 'dump %s, the program saw %s' % (seen, wantst))
    print('dumped and unblocked in %.2f s' % (time.monotonic() - t0))


def shared_pending(pid):
    """The process-wide pending signals of pid (ShdPnd of /proc/PID/status),
    a set of signal numbers."""
    with open('/proc/%d/status' % pid) as f:
        for ln in f:
            if ln.startswith('ShdPnd:'):
                mask = int(ln.split()[1], 16)
                return {n for n in range(1, 65) if mask >> (n - 1) & 1}
    return set()


def held_stopped(pid, request, timeout=30):
    """That process pid, found stopped by SIGSTOP and read from outside, was
    left stopped: it ran none of its own code. Returns the states it went
    through. recorderd's PTRACE_DETACH of a task in group stop wakes it so
    that it goes back into that stop inside the kernel (ptrace(2)): until
    the scheduler runs it, /proc says R (a read right after the dump did in
    4 runs of 40, 7 of 30 beside a busy loop). What holds: its collector's request signal (caught, not
    blocked), which recorderd queued before it read from outside, is still
    pending (a process that returns to its own code takes it first, and
    nothing queues it again); every state seen is T or that R, never S (back
    in its read); and T comes. Waited for at most timeout seconds."""
    deadline = time.monotonic() + timeout
    states = []
    while True:
        st = harness.proc_state(pid)
        if not states or states[-1] != st:
            states.append(st)
        expect(st in ('T', 't', 'R'), 'the process was let go: %s' % ' '.join(map(str, states)))
        if st in ('T', 't'):
            break
        expect(time.monotonic() < deadline, 'the process never stopped again: %s after %d s'
               % (' '.join(states), timeout))
        time.sleep(0.001)
    expect(request in shared_pending(pid), 'the process ran: its request signal %d was taken '
           '(pending %s; states %s)' % (request, sorted(shared_pending(pid)), ' '.join(states)))
    return states


def case_dormantstopped(c):
    """dump of a lua5.1 with a dormant collector held stopped (SIGSTOP: a
    hung server stopped to look at it): read from outside, at once, the
    process left stopped; continued, its output is an untraced run's. It
    waited until --timeout and failed ("is stopped ... waiting")."""
    c.write('prog.lua', BLOCKED)
    want_rc, want_out = untraced(c, 'prog.lua', b'go\n')
    c.used.add('attach')
    p = start_dormant(c)
    harness.wait_blocked(p.pid, 'the program')
    os.kill(p.pid, signal.SIGSTOP)
    t0 = time.monotonic()
    r = recorderd(c, 'dump', str(p.pid), '--timeout', '20')
    took = time.monotonic() - t0
    out = r.stdout.decode()
    expect(r.returncode == 0 and not r.stderr and 'read from outside' in out.splitlines()[1],
           'dump of the stopped process: %d %r %r' % (r.returncode, out, r.stderr))
    expect(took < 10, 'the dump took %.1f s' % took)
    blocks = dump_blocks(out)
    expect([fr[0] for _, fr in blocks][:1] == ['io.read [C]'], 'its stack: %r' % out)
    states = held_stopped(p.pid, signal.SIGRTMIN + 7)
    print('after the dump: %s' % ' '.join(states))
    os.kill(p.pid, signal.SIGCONT)
    rest, err = p.communicate(b'go\n', timeout=60)
    expect(p.returncode == want_rc and b'READY\n' + rest == want_out,
           'traced run: %d %r, untraced: %d %r' % (p.returncode, rest, want_rc, want_out))


# Lines that lineinfo's deltas cannot carry: a gap of 300 lines (a delta
# is a signed byte) and a function of over 128 instructions (an absolute
# line every 128), each frame blocked on the call the truth was taken on.
LINES54 = WHERE + '''
local function long(n)
  local t = {}
''' + ''.join('  t[%d] = n + %d\n' % (k, k) for k in range(1, 80)) + '''
  truth("L", where(2)) io.stdout:write("READY\\n") io.stdout:flush() return io.read("l")
end
local function gap()
  local x = 1
''' + '\n' * 300 + '''
  local l = long(x)
  return l
end
local l = gap()
io.stdout:write("got ", tostring(l), "\\n")
io.stdout:write("hooks ", tostring(debug.gethook()), "\\n")
'''


NAMES54_JMOD = '''local M = {}
function M.f(note) note() end
function M.longer_name(note) note() end
return M
'''

NAMES54_KMOD = '''local M = {}
M.s = require("jmod").longer_name
return M
'''

# Coroutines suspended (in note) inside functions named only by how they
# are called or kept; each one's TRUTH: its place (currentline, then
# linedefined) and the name Lua's debug.getinfo gives it. Unblocked, each
# runs to its end.
NAMES54 = '''local kmod = require "kmod"
J = require "jmod"
GT = {}
local function note()
  local i = debug.getinfo(2, "nSl")
  io.stderr:write("TRUTH ", i.short_src:gsub("^%./", ""), ":", i.currentline, " ",
                  i.linedefined, " ", tostring(i.name), "\\n")
  coroutine.yield()
end
function GT.gtf() note() end
local V = setmetatable({}, {
  __add = function(a, b) note() return 0 end,
  __index = function(t, k) note() end,
  __lt = function(a, b) note() return false end,
  __concat = function(a, b) note() return "" end,
  __close = function() note() end})
local function it() note() end
local bodies = {
  function() J.f(note) end,
  function() kmod.s(note) end,
  function() GT.gtf() end,
  function() local _ = V + 1 end,
  function() local _ = V.x end,
  function() local _ = V < V end,
  function() local _ = V .. "x" end,
  function() do local c <close> = V end end,
  function() for _ in it do break end end,
}
local cos = {}
for i, b in ipairs(bodies) do cos[i] = coroutine.create(b) assert(coroutine.resume(cos[i])) end
io.stdout:write("READY\\n") io.stdout:flush()
io.read()
for _, co in ipairs(cos) do assert(coroutine.resume(co)) assert(coroutine.status(co) == "dead") end
io.stdout:write("done\\n")
'''


def profile_names(path):
    """{'SRC:LINEDEFINED': name} of profile.txt's first table."""
    names = {}
    for line in open(path):
        m = re.match(r'^\s*\d+(?:\s+[\d.]+){5}\s+(.+) \(([^()]+:\d+)\)$', line)
        if m:
            names.setdefault(m.group(2), m.group(1))
    return names


def case_outside54names(c):
    need_lua54(c)
    c.write('jmod.lua', NAMES54_JMOD)
    c.write('kmod.lua', NAMES54_KMOD)
    c.write('prog.lua', NAMES54)
    r = subprocess.run([c.args.recorderd, 'run', '-q', '-o', 'traced', '--', c.args.lua,
                        'prog.lua'], cwd=c.tmp, env=c.env(), input=b'go\n', capture_output=True,
                       timeout=120)
    expect(r.returncode == 0 and r.stdout == b'READY\ndone\n', 'recorderd run: %d %r %r'
           % (r.returncode, r.stdout, r.stderr))
    traced = profile_names(os.path.join(c.tmp, 'traced', 'prog', 'profile.txt'))
    want = untraced(c, 'prog.lua', b'go\n')
    out, _, blocks, err = dump_while_blocked(c, [c.args.lua, 'prog.lua'], want, b'done',
                                             outside=True)
    truth = {}  # 'SRC:CURRENTLINE' -> ('SRC:LINEDEFINED', Lua's name)
    for line in err.decode().splitlines():
        if not line.startswith('TRUTH '):
            continue
        _, at, linedef, name = line.split(' ', 3)
        truth[at] = (at.rsplit(':', 1)[0] + ':' + linedef, name)
    seen = {}
    for head, fr in blocks:
        if not head.startswith('Coroutine '):
            continue
        expect(len(fr) >= 3 and fr[0] == 'coroutine.yield [C]' and fr[1].startswith('note ('),
               'a coroutine\'s stack: %r' % fr)
        name, at = fr[2].rsplit(' (', 1)
        expect(at[:-1] in truth, '%r is no place the program noted: %r' % (fr[2], truth))
        place, lua_name = truth[at[:-1]]
        seen[place] = name
        print('%-14s dump %-14s trace %-14s debug.getinfo %s'
              % (place, name, traced.get(place), lua_name))
    expect(len(seen) == len(truth) == 9, 'coroutines: %r, noted: %r' % (seen, truth))
    wrong = {p: (n, traced.get(p)) for p, n in seen.items() if n != traced.get(p)}
    expect(not wrong, 'named otherwise than the trace (dump, trace): %r' % wrong)
    # the trace's names are Lua's own for those it names by their call
    for at, (place, lua_name) in truth.items():
        if place.startswith('prog.lua'):
            expect(seen[place] == lua_name, '%s: dump %r, debug.getinfo %r'
                   % (place, seen[place], lua_name))


# A finalizer running Lua for good: Lua calls no hook in it, so a dormant
# collector's request is never served by an event.
FINALIZER = '''local function spin() local x = 0 while true do x = x + 1 end end
local function fin() io.stdout:write("READY\\n") io.stdout:flush() spin() end
%s
collectgarbage()
'''


def case_dumpfinalizer(c):
    runs = [('lua5.1', c.args.lua, 'local p = newproxy(true) getmetatable(p).__gc = fin p = nil',
             True)]
    if shutil.which('lua5.4') and os.path.exists(os.path.join(c.args.cpath, 'lua54',
                                                              'luatrace.so')):
        runs += [('lua5.4', 'lua5.4', 'setmetatable({}, {__gc = fin})', True),
                 ('lua5.4', 'lua5.4', 'setmetatable({}, {__gc = fin})', False)]
    for which, lua, make, dormant in runs:
        c.write('prog.lua', FINALIZER % make)
        env = c.env(LUATRACE_ATTACH='1', LUA_CPATH_5_4=os.path.join(c.args.cpath, 'lua54', '?.so')
                    + ';;') if dormant else c.env()
        c.used.add('attach')
        p = subprocess.Popen([lua] + (['-lluatrace'] if dormant else []) + ['prog.lua'],
                             cwd=c.tmp, env=env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             start_new_session=True)
        c.procs.append(p)
        expect(p.stdout.readline() == b'READY\n', 'the program did not get ready')
        r = recorderd(c, 'dump', str(p.pid), '--timeout', '20')
        out = r.stdout.decode()
        print(which, 'dormant' if dormant else 'plain', out)
        expect(r.returncode == 0, 'dump of %s in a finalizer: %d %r %r'
               % (which, r.returncode, out, r.stderr))
        frames = dump_blocks(out)[0][1]
        fin = '__gc' if which == 'lua5.4' else 'function'
        expect(frames[0].startswith('spin (prog.lua:') and frames[1].startswith(fin + ' (prog.lua:')
               and 'collectgarbage [C]' in frames, 'its stack: %r' % frames)
        c.kill_programs([p])


def case_outside54require(c):
    need_lua54(c)
    os.makedirs(os.path.join(c.tmp, 'a'))
    c.write('a/b.lua', 'local c = require "c"\nreturn {c = c}\n')
    c.write('c.lua', 'io.stdout:write("READY\\n") io.stdout:flush()\nreturn io.read("l")\n')
    c.write('prog.lua', 'local ab = require "a.b"\nio.stdout:write(ab.c, "\\n")\n')
    r = subprocess.run([c.args.recorderd, 'run', '-q', '-o', 'traced', '--', c.args.lua,
                        'prog.lua'], cwd=c.tmp, env=c.env(), input=b'go\n', capture_output=True,
                       timeout=120)
    expect(r.returncode == 0 and r.stdout == b'READY\ngo\n', 'recorderd run: %d %r %r'
           % (r.returncode, r.stdout, r.stderr))
    text = open(os.path.join(c.tmp, 'traced', 'prog', 'profile.txt')).read()
    want = ['require "c" [C]', 'require "a.b" [C]']
    expect(all(w in text for w in want), 'the trace names %r: %r' % (want, text))
    p = subprocess.Popen([c.args.lua, 'prog.lua'], cwd=c.tmp, env=c.env(), stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    c.procs.append(p)
    expect(p.stdout.readline() == b'READY\n', 'the program did not get ready')
    harness.wait_blocked(p.pid, 'the program')
    # a duration, not SIGTERM: one that came before sampling began ended
    # record with nothing ("given up before sampling began")
    rec = subprocess.Popen([c.args.recorderd, 'record', str(p.pid), '-q', '-o', 'rec', '--rate',
                            '1000', '--duration', '1'], cwd=c.tmp, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    c.procs.append(rec)
    d = recorderd(c, 'dump', str(p.pid))
    frames = dump_blocks(d.stdout.decode())[0][1]
    expect(d.returncode == 0 and frames[0] == 'io.read [C]' and frames[2] == want[0] and
           frames[4] == want[1], 'dump: %r %r' % (d.stdout, d.stderr))
    _, rerr = rec.communicate(timeout=60)
    expect(rec.returncode == 0, 'record: %d %r' % (rec.returncode, rerr))
    prof = open(os.path.join(c.tmp, 'rec', 'prog', 'profile.txt')).read()
    if 'io.read [C]' in prof:  # a sample was taken
        expect(all(w in prof for w in want) and 'require [C]' not in prof, 'record: %r' % prof)
    else:
        print('record took no sample: its names not checked')
    out, err = p.communicate(b'go\n', timeout=60)
    expect(p.returncode == 0 and out == b'go\n', 'the program: %d %r %r' % (p.returncode, out, err))


# The library's iterators: ipairs's waiting under an __index it calls,
# io.lines's waiting for a line, string.gmatch's in a match of n^2 steps.
ITERATORS54 = '''local n = tonumber(arg[1])
local t = setmetatable({}, {__index = function(_, i)
  if i == 2 then io.stdout:write("READY\\n") io.stdout:flush() io.read("l") end
  if i <= 2 then return i end
end})
for _, v in ipairs(t) do end
io.stdout:write("LINES\\n") io.stdout:flush()
for l in io.lines() do end
io.stdout:write("GMATCH\\n") io.stdout:flush()
for w in string.rep("a", n):gmatch("a-b") do end
io.stdout:write("done\\n")
'''


def case_outside54iterators(c):
    need_lua54(c)
    c.write('prog.lua', ITERATORS54)
    r = subprocess.run([c.args.recorderd, 'run', '-q', '-o', 'traced', '--', c.args.lua,
                        'prog.lua', '10'], cwd=c.tmp, env=c.env(), input=b'x\nl1\nl2\n',
                       capture_output=True, timeout=120)
    text = open(os.path.join(c.tmp, 'traced', 'prog', 'profile.txt')).read()
    want = ['ipairs iterator [C]', 'io.lines iterator [C]', 'string.gmatch iterator [C]']
    expect(r.returncode == 0 and all(w in text for w in want), 'the trace: %d %r %r'
           % (r.returncode, text, r.stderr))
    p = subprocess.Popen([c.args.lua, 'prog.lua', '200000'], cwd=c.tmp, env=c.env(),
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True)
    c.procs.append(p)
    exe = os.path.basename(os.path.realpath(c.args.lua))

    def frames():
        d = recorderd(c, 'dump', str(p.pid))
        expect(d.returncode == 0, 'dump: %r %r' % (d.stdout, d.stderr))
        return dump_blocks(d.stdout.decode())[0][1]

    expect(p.stdout.readline() == b'READY\n', 'the program did not get ready')
    harness.wait_blocked(p.pid, 'the program')
    fr = frames()
    expect(fr[2:4] == [want[0], 'main chunk (prog.lua:6)'] and fr[-1] == exe + ' [C]',
           'in ipairs\'s iterator: %r' % fr)
    p.stdin.write(b'x\n')
    p.stdin.flush()
    expect(p.stdout.readline() == b'LINES\n', 'the program did not go on')
    harness.wait_blocked(p.pid, 'the program')
    fr = frames()
    expect(fr == [want[1], 'main chunk (prog.lua:8)', exe + ' [C]'], 'in io.lines\'s: %r' % fr)
    p.stdin.close()
    expect(p.stdout.readline() == b'GMATCH\n', 'the program did not go on')
    for _ in range(100):  # until the read lands in the match, not string.rep or the call
        fr = frames()
        if fr[1:] == ['main chunk (prog.lua:10)', exe + ' [C]'] and fr[0] not in (
                'string.rep [C]', 'string.gmatch [C]'):
            break
    expect(fr[0] == want[2], 'in string.gmatch\'s: %r' % fr)


def case_outside54searcher(c):
    need_lua54(c)
    c.write('c.lua', 'return 7\n')
    c.write('prog.lua', 'io.stdout:write("READY\\n") io.stdout:flush()\n'
                        'io.stdout:write(require "c", "\\n")\n')
    r = subprocess.run([c.args.recorderd, 'run', '-q', '-o', 'traced', '--', c.args.lua,
                        'prog.lua'], cwd=c.tmp, env=c.env(), capture_output=True, timeout=120)
    text = open(os.path.join(c.tmp, 'traced', 'prog', 'profile.txt')).read()
    want = 'package.searchers[2] "c" [C]'
    expect(r.returncode == 0 and want in text, 'the trace: %d %r %r' % (r.returncode, text, r.stderr))
    fifo = os.path.join(c.tmp, 'c.lua')
    os.unlink(fifo)
    os.mkfifo(fifo)
    p = subprocess.Popen([c.args.lua, 'prog.lua'], cwd=c.tmp, env=c.env(), stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    c.procs.append(p)
    expect(p.stdout.readline() == b'READY\n', 'the program did not get ready')
    harness.wait_blocked(p.pid, 'the program')  # in fopen of the FIFO, in the Lua searcher
    d = recorderd(c, 'dump', str(p.pid))
    frames = dump_blocks(d.stdout.decode())[0][1]
    exe = os.path.basename(os.path.realpath(c.args.lua))
    expect(d.returncode == 0 and frames == [want, 'require "c" [C]', 'main chunk (prog.lua:2)',
                                            exe + ' [C]'], 'dump: %r %r' % (d.stdout, d.stderr))
    for text in (b'', b'return 7\n'):  # the searcher's test of the file, then its load
        # each open pairs with one of the program's: wait for it in the
        # open of the FIFO (else the load's open found the test's still
        # open, took the text, and the load's own waited for good)
        for _ in range(6000):
            try:
                with open('/proc/%d/wchan' % p.pid) as w:
                    if w.read() == 'wait_for_partner':
                        break
            except OSError:
                pass
            time.sleep(0.005)
        with open(fifo, 'wb') as f:
            f.write(text)
    out, err = p.communicate(timeout=60)
    expect(p.returncode == 0 and out == b'7\n', 'the program: %d %r %r' % (p.returncode, out, err))


RELOAD_MOD = '''for i = 1, 3 do
  package.loaded.m = nil
  require "m"
end
io.stdout:write("done\\n")
'''


def case_outsidereload(c):
    luas = [c.args.lua] + ([shutil.which('lua5.4')] if shutil.which('lua5.4') else [])
    c.write('m.lua', 'io.stdout:write("READY\\n") io.stdout:flush()\nio.read("*l")\nreturn {}\n')
    c.write('prog.lua', RELOAD_MOD)
    for lua in luas:
        r = subprocess.run([c.args.recorderd, 'run', '-q', '-o', 'traced', '--', lua, 'prog.lua'],
                           cwd=c.tmp, env=c.env(), input=b'a\nb\nc\n', capture_output=True,
                           timeout=120)
        traced = profile_names(os.path.join(c.tmp, 'traced', 'prog', 'profile.txt'))
        expect(r.returncode == 0 and traced.get('m.lua:0') == 'main chunk', 'the trace: %d %r %r'
               % (r.returncode, traced, r.stderr))
        p = subprocess.Popen([lua, 'prog.lua'], cwd=c.tmp, env=c.env(), stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        c.procs.append(p)
        expect(p.stdout.readline() == b'READY\n', 'the program did not get ready')
        rec = subprocess.Popen([c.args.recorderd, 'record', str(p.pid), '-q', '-o', 'rec',
                                '--rate', '1000'], cwd=c.tmp, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        c.procs.append(rec)
        for k in range(3):
            if k:
                expect(p.stdout.readline() == b'READY\n', 'the program did not load it again')
            harness.wait_blocked(p.pid, 'the program')
            time.sleep(0.5)  # samples of this load (checked below: not assumed)
            p.stdin.write(b'x\n')
            p.stdin.flush()
        expect(p.stdout.readline() == b'done\n', 'the program did not end')
        _, rerr = rec.communicate(timeout=60)
        expect(rec.returncode == 0, 'record: %d %r' % (rec.returncode, rerr))
        text = open(os.path.join(c.tmp, 'rec', 'prog', 'profile.txt')).read()
        rows = [l for l in text.splitlines() if '(m.lua:0)' in l]
        print(lua, rows)
        expect(rows and all(l.split()[-2] == 'chunk' for l in rows), 'each load apart: %r' % rows)
        # each load the samples saw is a call of it (the first: in the first sample's stack)
        seen = int(rows[0].split()[0])
        expect(seen <= 2, 'calls: %r' % rows)
        if seen < 2:
            print('the samples saw %d of the loads after the first' % seen)
        p.communicate(timeout=60)


def case_outside54lines(c):
    need_lua54(c)
    c.write('prog.lua', LINES54)
    want = untraced(c, 'prog.lua', b'go\n')
    expect(want[0] == 0 and b'got go' in want[1], 'untraced run: %r' % (want,))
    out, truths, blocks, _ = dump_while_blocked(c, [c.args.lua, 'prog.lua'], want,
                                                b'hooks nil', outside=True)
    expect(len(blocks) == 1, 'threads of the dump: %r' % out)
    seen = [frame_where(f) for f in blocks[0][1]]
    expect(seen == ['[C]'] + truths['L'].split(), 'dump %s, the program saw %s' % (seen, truths['L']))
    names = [f.split(' (')[0] for f in blocks[0][1]]
    expect(names[:5] == ['io.read [C]', 'long', 'gap', 'main chunk', 'lua5.4 [C]'],
           'names in the dump: %r' % out)


def case_outside54top(c):
    need_lua54(c)
    case_outsidetop(c)


def case_outside54gen(c):
    need_lua54(c)
    case_dumpgen(c, outside=True)


def case_outside54busy(c):
    need_lua54(c)
    case_outsidebusy(c)


def case_outside54record(c):
    need_lua54(c)
    case_outsiderecord(c)


# A stack deeper than a sample keeps, blocked in io.read: DEPTH set.
DEEPREAD = '''
local function deep(d)
  if d == 0 then
    io.stdout:write("READY\\n") io.stdout:flush()
    return io.read(LINE)
  end
  local r = deep(d - 1)
  return r
end
print(deep(DEPTH))
'''


def deep_record(c, depth):
    """record of a program blocked in io.read under depth calls of deep:
    every sample whole at both ends, the main chunk at the bottom and
    io.read on top (a sample keeps the bottom frames and the top ones, a
    "[...]" frame between, named in profile.txt)."""
    line = '"l"' if '5.4' in os.path.basename(c.args.lua) else '"*l"'
    c.write('prog.lua', DEEPREAD.replace('DEPTH', str(depth)).replace('LINE', line))
    p = subprocess.Popen([c.args.lua, 'prog.lua'], cwd=c.tmp, env=c.env(), stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    c.procs.append(p)
    expect(p.stdout.readline() == b'READY\n', 'the program did not get ready')
    out = os.path.join(c.tmp, 'out')
    r = recorderd(c, 'record', str(p.pid), '--duration', '1', '--rate', '100', '-o', out, '-q')
    expect(r.returncode == 0, 'record: %d %r' % (r.returncode, r.stderr))
    session = os.path.join(out, 'prog')
    folded = os.path.join(c.tmp, 'deep.folded')
    r = recorderd(c, 'report', session, '--format', 'folded', '-o', folded)
    expect(r.returncode == 0, 'report --format folded: %r' % r.stderr)
    w = folded_weights(folded)
    base = os.path.basename(os.path.realpath(c.args.lua)) + '@[C]'
    expect(w and all(s.startswith(base + ';main chunk@prog.lua:0;deep@prog.lua:2') and
                     s.endswith(';deep@prog.lua:2;io.read@[C]') for s in w),
           'stacks: %r' % {s[:80] + ' ... ' + s[-80:]: v for s, v in w.items()})
    prof = open(os.path.join(session, 'profile.txt')).read()
    expect('[...] [C]' in prof, 'no "[...]" frame in profile.txt')
    print('depth %d: %d samples\' stacks whole at both ends' % (depth, len(w)))
    p.stdin.close()


def case_outsidedeeprecord(c):
    deep_record(c, 6000)


def case_outside54deeprecord(c):
    need_lua54(c)
    deep_record(c, 20000)


def overwrite_heap(pid, old, new):
    """Replaces each copy of old in pid's heap and anonymous private
    memory with new (same length), through /proc/PID/mem: how many."""
    n = 0
    with open('/proc/%d/maps' % pid) as maps, open('/proc/%d/mem' % pid, 'r+b', 0) as mem:
        for line in maps:
            f = line.split()
            if f[1] != 'rw-p' or (len(f) > 5 and f[5] != '[heap]'):
                continue
            lo, hi = (int(x, 16) for x in f[0].split('-'))
            mem.seek(lo)
            try:
                data = mem.read(min(hi - lo, 64 << 20))
            except OSError:
                continue
            at = data.find(old)
            while at >= 0:
                mem.seek(lo + at)
                mem.write(new)
                n += 1
                at = data.find(old, at + 1)
    return n


def case_outside54misfit(c):
    need_lua54(c)
    c.write('prog.lua', FIBPROG)
    p = subprocess.Popen([c.args.lua, 'prog.lua'], cwd=c.tmp, env=c.env(), stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    c.procs.append(p)
    expect(p.stdout.readline() == b'READY\n', 'lua5.4 did not get ready')
    r = recorderd(c, 'dump', str(p.pid))
    expect(r.returncode == 0, 'dump before the change: %d %r' % (r.returncode, r.stderr))
    expect(overwrite_heap(p.pid, b'not enough memory', b'NOT ENOUGH MEMORY') >= 1,
           'no memory-error message in the heap of lua5.4')
    r = recorderd(c, 'dump', str(p.pid))
    err = r.stderr.decode()
    expect(r.returncode == 1 and not r.stdout and err.count('\n') == 1 and
           'process %d runs Lua 5.4' % p.pid in err and "layout" in err and
           'LUATRACE_ATTACH=1 lua5.4 -lluatrace' in err,
           'dump of a lua5.4 laid out otherwise: %d %r %r' % (r.returncode, r.stdout, err))
    stop_all(c, p)


def case_outsidestopped(c):
    # every walk of the GC list as the program runs failing (as when it
    # frees objects faster than a loaded machine lets recorderd read): the
    # walk redone while it is stopped still finds the suspended coroutine
    case_dumpblocked(c, outside=True, dump_env={'LUATRACE_TEST_GCWALK_TRIES': '0'})


def case_outsidehost(c):
    case_dumphost(c, outside=True)


def outside_dump(c, pid):
    r = recorderd(c, 'dump', str(pid), '--timeout', '20')
    expect(r.returncode in (0, 1) and b'Traceback' not in r.stderr,
           'dump of %d: exit %d %r' % (pid, r.returncode, r.stderr))
    return r


def storm_plain(c):
    """STORM run by plain --lua (no collector), ready."""
    c.write('prog.lua', STORM)
    p = subprocess.Popen([c.args.lua, 'prog.lua'], cwd=c.tmp, env=c.env(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    c.procs.append(p)
    expect(p.stdout.readline() == b'READY\n', 'the program did not get ready')
    return p


def storm_end(c, p):
    """Stops STORM: its output an untraced run's."""
    open(os.path.join(c.tmp, 'stop'), 'w').close()
    out, err = p.communicate(timeout=120)
    expect(p.returncode == 0 and out.endswith(b' mismatches 0\n'), 'the program: %d %r %r' % (p.returncode, out, err))


def case_outsidebusy(c):
    """Dumps from outside, one after the other, of a program running busy Lua
    and coroutines: each a well-formed dump whose Lua frames are the
    program's own lines; the program's output is an untraced run's."""
    p = storm_plain(c)
    nlines = STORM.count('\n') + 1
    for i in range(40):
        r = outside_dump(c, p.pid)
        out = r.stdout.decode()
        expect(r.returncode == 0 and 'read from outside' in out, 'dump %d: %r %r' % (i, out, r.stderr))
        blocks = dump_blocks(out)
        expect(blocks and blocks[0][0].endswith('(running):'), 'dump %d: %r' % (i, out))
        for _, frames in blocks:
            for f in frames:
                w = frame_where(f)
                expect(w == '[C]' or (w.startswith('prog.lua:') and
                                      0 < int(w.split(':')[1]) <= nlines), 'frame %r in %r' % (f, out))
    storm_end(c, p)


def case_outsidetear(c):
    """A dump whose stopped reads catch the running thread halfway through a
    call (LUATRACE_TEST_TEAR=N: the first N reads count as such) reads it
    again at the next stop: the running thread's frames are the program's;
    with every read torn, the dump still ends, after a few stops, and the
    program runs on unchanged."""
    p = storm_plain(c)
    for tear in ('1', '3', '1000'):
        r = recorderd(c, 'dump', str(p.pid), '--timeout', '20', env={'LUATRACE_TEST_TEAR': tear})
        out = r.stdout.decode()
        expect(r.returncode == 0 and 'read from outside' in out, 'dump, tear %s: %r %r' % (tear, out, r.stderr))
        blocks = dump_blocks(out)
        said = 'a thread caught mid-call at every stop' in out
        if tear == '1000':  # never read whole: said so
            expect(said and blocks, 'dump, tear %s: %r' % (tear, out))
            continue
        expect(not said and blocks and blocks[0][0].endswith('(running):') and
               any(frame_where(f).startswith('prog.lua:') for f in blocks[0][1]),
               'dump, tear %s: the running thread %r' % (tear, out))
    storm_end(c, p)


HOT = '''
local function hot(n) local s = 0 for i = 1, n do s = s + i % 7 end return s end
local function cold() return #tostring(os.time()) end
io.stdout:write("READY\\n") io.stdout:flush()
local rounds = 0
while not io.open("stop") do hot(2e5) cold() rounds = rounds + 1 end
io.stdout:write("rounds ", rounds > 0 and "some" or "none", "\\n")
'''


def read_until(fd, mark, seconds):
    """The bytes read from fd until they hold mark (or the time is up)."""
    got, end = b'', time.monotonic() + seconds
    while mark not in got and time.monotonic() < end:
        ready, _, _ = select.select([fd], [], [], max(0.0, end - time.monotonic()))
        chunk = os.read(fd, 4096) if ready else b''
        if ready and not chunk:
            break
        got += chunk
    return got


def top_rows(table):
    """The rows of one table of top's, after its column heads."""
    lines = table.splitlines()
    head = [i for i, l in enumerate(lines) if l.split()[:2] == ['%self', '%total']]
    return [l for l in lines[head[0] + 1 if head else 0:] if l.strip()]


# work is called by its name first (the trace names it so), then waits
# in io.read tail called (no name to read: 5.4's getinfo gives none), then
# called by its name again, under phase2.
RENAMED54 = '''local M = {}
function M.work(n, tag)
  if tag then io.stdout:write(tag, "\\n") io.stdout:flush() return io.read("l") end
  return n
end
local function viatail(tag) return M.work(0, tag) end
local function phase2(tag) local r = M.work(0, tag) return r end
M.work(1)
viatail("READY")
phase2("PHASE2")
'''


def top_tables(fd, until, seconds=60):
    """top's tables read from fd until one holds until: (all text, that table)."""
    got, end = b'', time.monotonic() + seconds
    while time.monotonic() < end:
        got += read_until(fd, b'luatrace top: ', max(0.0, end - time.monotonic()))
        tables = got.decode(errors='replace').split('luatrace top: ')
        done = [t for t in tables[1:-1] if until in t]  # whole ones: another began after
        if done:
            return got, done[0]
    raise Failure('no table of top with %r: %r' % (until, got))


def case_outside54renamed(c):
    need_lua54(c)
    c.write('prog.lua', RENAMED54)
    r = subprocess.run([c.args.recorderd, 'run', '-q', '-o', 'traced', '--', c.args.lua,
                        'prog.lua'], cwd=c.tmp, env=c.env(), input=b'a\nb\n', capture_output=True,
                       timeout=120)
    traced = profile_names(os.path.join(c.tmp, 'traced', 'prog', 'profile.txt'))
    expect(r.returncode == 0 and traced.get('prog.lua:2') == 'work', 'the trace: %d %r %r'
           % (r.returncode, traced, r.stderr))
    p = subprocess.Popen([c.args.lua, 'prog.lua'], cwd=c.tmp, env=c.env(), stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    c.procs.append(p)
    expect(p.stdout.readline() == b'READY\n', 'the program did not get ready')
    top = subprocess.Popen([c.args.recorderd, 'top', str(p.pid)], cwd=c.tmp,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    c.procs.append(top)
    rec = subprocess.Popen([c.args.recorderd, 'record', str(p.pid), '-q', '-o', 'rec'], cwd=c.tmp,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    c.procs.append(rec)
    _, first = top_tables(top.stdout.fileno(), '(prog.lua:2)')
    rows = [l.split(None, 3)[3] for l in top_rows(first)]
    expect('function (prog.lua:2)' in rows, 'tail called, work has no name yet: %r' % first)
    p.stdin.write(b'a\n')
    p.stdin.flush()
    expect(p.stdout.readline() == b'PHASE2\n', 'the program did not go on')
    _, later = top_tables(top.stdout.fileno(), 'phase2 (prog.lua:')
    rows = [l.split(None, 3)[3] for l in top_rows(later)]
    print(later)
    expect('work (prog.lua:2)' in rows and 'function (prog.lua:2)' not in rows,
           'work called by its name, top: %r' % later)
    top.send_signal(signal.SIGTERM)
    top.communicate(timeout=30)
    rec.send_signal(signal.SIGTERM)
    _, rerr = rec.communicate(timeout=60)
    began = b'before sampling began' not in rerr  # a machine too loaded: no sample
    expect(rec.returncode == 0 or not began, 'record: %d %r' % (rec.returncode, rerr))
    names = profile_names(os.path.join(c.tmp, 'rec', 'prog', 'profile.txt')) if began else {}
    print(names)
    if 'phase2' in names.values():  # a sample of record's saw the named call
        expect(names.get('prog.lua:2') == 'work', 'record named work %r' % names.get('prog.lua:2'))
    else:
        print('record took no sample of phase2: its names not checked')
    p.stdin.write(b'b\n')
    p.stdin.flush()
    out, err = p.communicate(timeout=60)
    expect(p.returncode == 0, 'the program: %d %r' % (p.returncode, err))


def case_toppipe(c):
    """top | head: once nobody reads its tables (EPIPE: SIGPIPE is ignored),
    top ends by itself, read from outside and attached; the attached
    process is detached (dump attaches again) and both programs go on."""
    for dormant in (False, True):
        if dormant:
            p = start(c, HOT)
        else:
            c.write('prog.lua', HOT)
            p = subprocess.Popen([c.args.lua, 'prog.lua'], cwd=c.tmp, env=c.env(),
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 start_new_session=True)
            c.procs.append(p)
            expect(p.stdout.readline() == b'READY\n', 'the program did not get ready')
        top = subprocess.Popen([c.args.recorderd, 'top', str(p.pid)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        c.procs.append(top)
        first = read_until(top.stdout.fileno(), b'luatrace top: ', 30)
        top.stdout.close()  # as head does after its lines
        try:
            top.wait(timeout=30)
        except subprocess.TimeoutExpired:
            raise Failure('top (%s) still runs 30 s after its reader left'
                          % ('attached' if dormant else 'outside'))
        expect(b'luatrace top: ' in first, 'no table: %r' % first)
        if dormant:
            r = recorderd(c, 'dump', str(p.pid))
            expect(r.returncode == 0 and r.stdout.startswith(b'Process %d: ' % p.pid),
                   'dump after top: %d %r %r' % (r.returncode, r.stdout, r.stderr))
        c.write('stop', '')
        out, _ = p.communicate(timeout=60)
        os.unlink(os.path.join(c.tmp, 'stop'))
        expect(p.returncode == 0 and out == b'rounds some\n', 'the program: %d %r'
               % (p.returncode, out))


# A server that runs a little Lua for each line of its stdin, and is
# blocked in C (read) the rest of the time.
SERVER_STDIN = r'''
local function handle(l) io.write("got:", l, "\n") io.flush() end
print("READY") io.flush()
for l in io.lines() do handle(l) end
'''


def case_blockedend(c):
    """attach -d and top -d of a dormant server that answers, runs a little
    Lua, then blocks in C again: each ends after its duration and the
    grace (5 s), attach with its session written (it waited forever, its
    session unwritten); the server detaches at its next Lua event and
    goes on."""
    c.write('prog.lua', SERVER_STDIN)
    c.used.add('attach')
    for cmd in ('attach', 'top'):
        p = start_dormant(c, what='the server')
        out = os.path.join(c.tmp, 'out-' + cmd)
        argv = [c.args.recorderd, cmd, str(p.pid), '-d', '1'] + (['-o', out] if cmd == 'attach' else [])
        a = subprocess.Popen(argv, cwd=c.tmp, env=base_env(), stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        c.procs.append(a)
        time.sleep(0.5)  # the request is there: the line's Lua answers it
        p.stdin.write(b'one\n')
        p.stdin.flush()
        expect(p.stdout.readline() == b'got:one\n', 'the server did not answer')
        try:
            a_out, a_err = a.communicate(timeout=40)
        except subprocess.TimeoutExpired:
            raise Failure('%s -d 1 still runs 40 s on, its process blocked in C' % cmd)
        expect(a.returncode == 0 and b'has not run Lua since the detach request' in a_err,
               '%s: %d %r' % (cmd, a.returncode, a_err))
        if cmd == 'attach':
            sessions = os.listdir(out)
            expect(len(sessions) == 1 and os.path.exists(os.path.join(out, sessions[0],
                                                                      'session.json')),
                   'attach wrote no session: %r' % sessions)
        else:
            expect(a_out.count(b'luatrace top: ') >= 1, 'top printed no table: %r' % a_out)
        p.stdin.write(b'two\n')
        p.stdin.close()
        p.wait(timeout=60)
        rest, err = p.stdout.read(), p.stderr.read()
        expect(p.returncode == 0 and rest == b'got:two\n', 'the server after %s: %d %r %r'
               % (cmd, p.returncode, rest, err))


def traced_by(pid):
    """The TracerPid of process pid (0: none)."""
    try:
        with open('/proc/%d/status' % pid) as f:
            for line in f:
                if line.startswith('TracerPid:'):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def case_earlysignal(c):
    """Ctrl-C or SIGTERM while attach loads the collector into a process
    (ptrace): it waits for attach's own handler, which ends the attach at
    once, exit 0 or 1; it killed recorderd (exit 130 or 143, no word)
    mid-injection, or was swallowed by the server's handlers before them.
    The program runs on unchanged."""
    c.write('prog.lua', HOT)
    progs = []
    for sig in (signal.SIGINT, signal.SIGTERM):  # a program each: loaded once, never again
        p = subprocess.Popen([c.args.lua, 'prog.lua'], cwd=c.tmp, env=c.env(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             start_new_session=True)
        c.procs.append(p)
        progs.append(p)
        expect(p.stdout.readline() == b'READY\n', 'the program did not get ready')
        a = subprocess.Popen([c.args.recorderd, 'attach', str(p.pid), '-d', '60', '-q', '-o',
                              os.path.join(c.tmp, 'out-early')], cwd=c.tmp, env=base_env(),
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, preexec_fn=lambda: signal.signal(
                                 signal.SIGINT, signal.SIG_DFL))
        c.procs.append(a)
        t0 = time.time()
        while time.time() - t0 < 10 and traced_by(p.pid) != a.pid and a.poll() is None:
            time.sleep(0.0002)
        a.send_signal(sig)
        try:
            _, err = a.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            raise Failure('attach -d 60 still runs 30 s after %s' % signal.Signals(sig).name)
        expect(a.returncode in (0, 1), 'attach after %s while it loads the collector: %d %r'
               % (signal.Signals(sig).name, a.returncode, err))
    c.write('stop', '')
    for p in progs:
        out, _ = p.communicate(timeout=60)
        expect(p.returncode == 0 and out == b'rounds some\n', 'the program: %d %r'
               % (p.returncode, out))


def case_outsidetop(c):
    """top of a program that never loaded the collector: samples read from
    outside, on a pipe no terminal codes; the busiest function is on top;
    SIGTERM ends it with a last table; the program's output unchanged; a
    process that exits under it ends it with exit 0 and says so."""
    c.write('prog.lua', HOT)
    p = subprocess.Popen([c.args.lua, 'prog.lua'], cwd=c.tmp, env=c.env(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    c.procs.append(p)
    expect(p.stdout.readline() == b'READY\n', 'the program did not get ready')
    r = recorderd(c, 'top', str(p.pid), '--duration', '1.5', '--rate', '200')
    out = r.stdout.decode()
    expect(r.returncode == 0 and '\x1b' not in out, 'top: %d %r %r' % (r.returncode, out, r.stderr))
    tables = [t for t in out.split('luatrace top: ')[1:]]
    expect(len(tables) >= 1 and 'samples at 200 Hz' in tables[0] and 'read from outside' in tables[0],
           'top: %r' % out)
    for t in tables:
        rows = top_rows(t)
        expect(rows and rows[0].split()[3:] == ['hot', '(prog.lua:2)'] and float(rows[0].split()[0]) > 50,
               'the busiest function is not hot: %r' % t)
    # --stop: each read holds the process stopped, and the view says how long
    r = recorderd(c, 'top', str(p.pid), '--duration', '1.2', '--stop')
    out = r.stdout.decode()
    expect(r.returncode == 0 and 'the process held stopped' in out and
           top_rows(out.split('luatrace top: ')[1])[0].split()[3:] == ['hot', '(prog.lua:2)'],
           'top --stop: %d %r %r' % (r.returncode, out, r.stderr))
    top = subprocess.Popen([c.args.recorderd, 'top', str(p.pid)], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    # SIGTERM once the first table is out (after a fixed 1.3 s, under ASan
    # on a loaded machine, there was none yet); read from the pipe itself, not
    # its buffered file, so that communicate() finds all that is left
    first = read_until(top.stdout.fileno(), b'luatrace top: ', 30)
    time.sleep(0.5)  # samples for the last table, which SIGTERM prints
    top.send_signal(signal.SIGTERM)
    tout, terr = top.communicate(timeout=30)
    tout = first + tout
    expect(top.returncode == 0 and tout.count(b'luatrace top: ') >= 2, 'top after SIGTERM: %d %r %r'
           % (top.returncode, tout, terr))
    top = subprocess.Popen([c.args.recorderd, 'top', str(p.pid)], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    time.sleep(0.5)
    open(os.path.join(c.tmp, 'stop'), 'w').close()
    out, err = p.communicate(timeout=60)
    expect(p.returncode == 0 and out == b'rounds some\n', 'the program: %d %r %r' % (p.returncode, out, err))
    tout, terr = top.communicate(timeout=30)
    expect(top.returncode == 0 and b'exited' in terr, 'top of a process that exits: %d %r'
           % (top.returncode, terr))
    r = recorderd(c, 'top', '1', '--rate', '0')
    expect(r.returncode == 2 and b'--rate' in r.stderr, 'top --rate 0: %r' % r.stderr)


HOTCO = '''
local function hot(n) local s = 0 for i = 1, n do s = s + i % 7 end return s end
local body = coroutine.wrap(function() while true do hot(2e5) coroutine.yield() end end)
io.stdout:write("READY\\n") io.stdout:flush()
local rounds = 0
while not io.open("stop") do body() rounds = rounds + 1 end
io.stdout:write("rounds ", rounds > 0 and "some" or "none", "\\n")
'''


def folded_weights(path):
    w = {}
    for line in open(path, encoding='utf-8'):
        stack, n = line.rstrip('\n').rsplit(' ', 1)
        w[stack] = w.get(stack, 0) + int(n)
    return w


def case_recordsummary(c):
    """record's summary says the session is sampled and at what rate (its
    times are sample periods, its calls the entries the samples saw); it
    read as an exact trace's before."""
    c.write('prog.lua', HOTCO)
    p = subprocess.Popen([c.args.lua, 'prog.lua'], cwd=c.tmp, env=c.env(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    c.procs.append(p)
    expect(p.stdout.readline() == b'READY\n', 'the program did not get ready')
    r = recorderd(c, 'record', str(p.pid), '--duration', '0.5', '--rate', '50', '-o', c.out)
    err = r.stderr.decode()
    expect(r.returncode == 0 and '\nluatrace: traced time: ' in err, 'record: %d %r'
           % (r.returncode, err))
    expect('\nsampled from outside at 50 Hz: times are samples; calls count the entries the '
           'samples saw\n' in err, 'the summary does not say it is sampled: %r' % err)
    open(os.path.join(c.tmp, 'stop'), 'w').close()
    out, perr = p.communicate(timeout=60)
    expect(p.returncode == 0 and out == b'rounds some\n', 'the program: %d %r %r'
           % (p.returncode, out, perr))


def case_recordfull(c):
    """record whose reports do not fit (a full disk: a 16 KB tmpfs as -o,
    in a mount namespace of its own; root only): stderr names what it
    could not write and why, as a listening server does; it said nothing,
    its summary pointing at a directory without them."""
    c.write('prog.lua', HOTCO)
    p = subprocess.Popen([c.args.lua, 'prog.lua'], cwd=c.tmp, env=c.env(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    c.procs.append(p)
    expect(p.stdout.readline() == b'READY\n', 'the program did not get ready')
    os.makedirs(c.out, exist_ok=True)
    script = 'mount -t tmpfs -o size=16k tmpfs "$1" || exit 77; shift; exec "$@"'
    r = subprocess.run(['unshare', '-m', 'sh', '-c', script, 'sh', c.out, c.args.recorderd,
                        'record', str(p.pid), '--duration', '0.5', '-o',
                        c.out], cwd=c.tmp, env=base_env(), stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=60)
    open(os.path.join(c.tmp, 'stop'), 'w').close()
    out, perr = p.communicate(timeout=60)
    if os.geteuid() != 0 or r.returncode == 77 or b'unshare failed' in r.stderr:
        print('SKIP: needs root, unshare and a tmpfs mount')
        raise SystemExit(77)
    err = r.stderr.decode()
    expect(re.search(r'\nrecorderd: session prog \(pid %d\): .*cannot write .*'
                     r'No space left on device' % p.pid, err), 'record: %d %r' % (r.returncode, err))
    expect(p.returncode == 0 and out == b'rounds some\n', 'the program: %d %r %r'
           % (p.returncode, out, perr))


def case_stopdumps(c):
    """top --stop and record --stop of a program read from outside while
    dumps of it come and go: each stop meets the other reader's for a
    moment only, and waits it out (or skips that sample); all of them end
    well. top and record exited 1, 'being traced by process N', and some
    dumps were refused (a helper's hunt)."""
    c.write('prog.lua', HOTCO)
    p = subprocess.Popen([c.args.lua, 'prog.lua'], cwd=c.tmp, env=c.env(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    c.procs.append(p)
    expect(p.stdout.readline() == b'READY\n', 'the program did not get ready')
    for cmd in (['top', str(p.pid), '-d', '2', '--stop'],
                ['record', str(p.pid), '-d', '2', '--stop', '-q', '-o', c.out]):
        long = subprocess.Popen([c.args.recorderd] + cmd, cwd=c.tmp, env=base_env(),
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        c.procs.append(long)
        time.sleep(0.3)
        dumps = [recorderd(c, 'dump', str(p.pid)) for _ in range(8)]
        _, err = long.communicate(timeout=60)
        expect(long.returncode == 0, '%s beside dumps: %d %r' % (cmd[0], long.returncode, err))
        bad = [(d.returncode, d.stderr[:200]) for d in dumps if d.returncode != 0]
        expect(not bad, 'dumps beside %s: %r' % (cmd[0], bad))
    open(os.path.join(c.tmp, 'stop'), 'w').close()
    out, perr = p.communicate(timeout=60)
    expect(p.returncode == 0 and out == b'rounds some\n', 'the program: %d %r %r'
           % (p.returncode, out, perr))


def case_outsiderecord(c):
    """record of a program that never loaded the collector, hot inside a
    coroutine.wrap function: a session like a traced one, marked sampled,
    with no coverage; its heaviest stack is main chunk, the wrap function,
    the coroutine's body and hot; every stack starts at the main chunk;
    the trace replays to the same stacks; the program's exit ends it."""
    c.write('prog.lua', HOTCO)
    p = subprocess.Popen([c.args.lua, 'prog.lua'], cwd=c.tmp, env=c.env(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    c.procs.append(p)
    expect(p.stdout.readline() == b'READY\n', 'the program did not get ready')
    out = os.path.join(c.tmp, 'out')
    r = recorderd(c, 'record', str(p.pid), '--duration', '1.5', '--rate', '200', '--stop', '-o', out,
                  '-q')
    expect(r.returncode == 0 and r.stderr == b'', 'record: %d %r' % (r.returncode, r.stderr))
    session = os.path.join(out, 'prog')
    meta = c.meta(session)
    expect(meta['sampled_hz'] == 200 and meta['status'] == 'complete' and meta['pid'] == p.pid,
           'session.json: %r' % meta)
    files = set(os.listdir(session))
    expect({'profile.txt', 'report.html', 'flamegraph.svg', 'trace.ltr'} <= files
           and not files & {'coverage.lcov', 'coverage.xml', 'coverage.txt'}, 'files: %s' % files)
    expect('SAMPLED from outside at 200 Hz' in open(os.path.join(session, 'profile.txt')).read(),
           'profile.txt does not say it is sampled')
    r = recorderd(c, 'report', session, '--format', 'profile')
    expect(r.returncode == 0 and b'SAMPLED from outside at 200 Hz' in r.stdout,
           'report --format profile of the sampled session: %r' % r.stdout[:300])
    folded = os.path.join(c.tmp, 'first.folded')
    r = recorderd(c, 'report', session, '--format', 'folded', '-o', folded)
    expect(r.returncode == 0, 'report --format folded: %r' % r.stderr)
    w = folded_weights(folded)
    heavy = max(w, key=w.get)
    base = os.path.basename(os.path.realpath(c.args.lua)) + '@[C]'  # lua.c's pmain: its file
    frames = heavy.split(';')
    expect(frames[:2] == [base, 'main chunk@prog.lua:0'] and
           frames[-1] == 'hot@prog.lua:2' and frames[-2] == 'function@prog.lua:3' and
           w[heavy] > 0.5 * sum(w.values()), 'heaviest stack %r of %r' % (heavy, w))
    expect(all(s.startswith(base + ';main chunk@prog.lua:0') for s in w), 'stacks: %r' % w)
    again = os.path.join(c.tmp, 'again.folded')
    r = recorderd(c, 'report', os.path.join(session, 'trace.ltr'), '--format', 'folded', '-o', again)
    expect(r.returncode == 0 and folded_weights(again) == w, 'the trace replays otherwise: %r'
           % r.stderr)
    rec = subprocess.Popen([c.args.recorderd, 'record', str(p.pid), '-o', out, '-q'],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    time.sleep(0.5)
    open(os.path.join(c.tmp, 'stop'), 'w').close()
    pout, perr = p.communicate(timeout=60)
    expect(p.returncode == 0 and pout == b'rounds some\n', 'the program: %d %r %r'
           % (p.returncode, pout, perr))
    rout, rerr = rec.communicate(timeout=60)
    expect(rec.returncode == 0 and b'exited' in rerr, 'record of a process that exits: %d %r'
           % (rec.returncode, rerr))
    # a rerun keeps the previous session as NAME.prev, as run does
    expect(sorted(os.listdir(out)) == ['prog', 'prog.prev'] and
           c.meta(os.path.join(out, 'prog'))['sampled_hz'] == 100 and
           c.meta(os.path.join(out, 'prog.prev'))['sampled_hz'] == 200,
           'second session: %s' % os.listdir(out))


FIBPROG = '''local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
local function work() local s = 0 for _ = 1, 50 do s = s + fib(16) end return s end
io.stdout:write("READY\\n") io.stdout:flush()
while not io.open("stop") do work() end
io.stdout:write("done\\n")
'''


# work short and a slow C function (string.rep) called in the slot work is
# called in: read frame by frame, such a sample read work's callees, then
# string.rep in work's slot (half the runs of outsiderecordlive, 1 in 13 of
# FIBPROG's); string.rep short enough that fib keeps a fair share of the
# samples (at 200000 a loaded CI run read fib once in 2 s: reads of a moving
# stack take longer there and more are dropped)
FIBPROGC = FIBPROG.replace('for _ = 1, 50 do s = s + fib(16) end', 'for _ = 1, 3 do s = s + fib(12) end').replace(
    'do work() end', 'do string.rep("x", 50000) work() end')


def case_outsiderecordlive(c):
    """record reading a deep recursion as it runs (no --stop): a read that a
    moving stack cut short is dropped, so every sampled stack starts at the
    base (the C entry, the main chunk, work), never at a callee."""
    record_live(c, FIBPROG)


def case_outsiderecordlivec(c):
    """The same where work returns often and a C function runs in its slot
    between calls: no stack with fib above anything but work."""
    record_live(c, FIBPROGC)


def case_outside54recordlivec(c):
    need_lua54(c)
    p = start_ready(c, FIBPROGC)
    w = record_folded(c, p, 2, 400)
    expect(len(w) > 3, 'too few stacks: %r' % w)
    # frames by place: 5.4 names work and fib by the reads that first see them
    bad = {}
    for s, n in w.items():
        f = [label_frame(x) for x in s.split(';')]
        fib = 'prog.lua:1' in f
        if f[:2] != ['[C]', 'prog.lua:0'] or (fib and (f[2] != 'prog.lua:2' or
                                                       set(f[3:]) != {'prog.lua:1'})):
            bad[s] = n
    expect(not bad, '%d of %d stacks join two moments: %r' % (len(bad), len(w), bad))
    stop_ready(c, p)


def start_dormant(c, name='prog.lua', what='the program'):
    """lua -lluatrace name (written in c.tmp, which writes READY first) with
    a dormant collector (LUATRACE_ATTACH=1), its stdin a pipe; returns its
    Popen once it is ready."""
    p = subprocess.Popen([c.args.lua, '-lluatrace', name], cwd=c.tmp,
                         env=c.env(LUATRACE_ATTACH='1'), stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    c.procs.append(p)
    expect(p.stdout.readline() == b'READY\n', '%s did not get ready' % what)
    return p


def start_ready(c, prog):
    """prog.lua (which writes READY, then runs until a file named stop
    appears) started in c.tmp; returns its Popen once it is ready."""
    c.write('prog.lua', prog)
    p = subprocess.Popen([c.args.lua, 'prog.lua'], cwd=c.tmp, env=c.env(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    c.procs.append(p)
    expect(p.stdout.readline() == b'READY\n', 'the program did not get ready')
    return p


def record_folded(c, p, seconds, rate, opts=()):
    """recorderd record of p (opts: --stop or none) into out[OPTS], then its
    folded stacks: stack -> weight."""
    out = os.path.join(c.tmp, 'out' + ''.join(opts))
    r = recorderd(c, 'record', str(p.pid), '--duration', str(seconds), '--rate', str(rate),
                  '-o', out, '-q', *opts)
    expect(r.returncode == 0, 'record %s: %d %r' % (list(opts), r.returncode, r.stderr))
    folded = os.path.join(c.tmp, 'record.folded')
    r = recorderd(c, 'report', os.path.join(out, 'prog'), '--format', 'folded', '-o', folded)
    expect(r.returncode == 0, 'report --format folded: %r' % r.stderr)
    return folded_weights(folded)


def stop_ready(c, p):
    """Ends a start_ready program: its output and exit as an untraced run's."""
    open(os.path.join(c.tmp, 'stop'), 'w').close()
    pout, _ = p.communicate(timeout=60)
    expect(p.returncode == 0 and pout == b'done\n', 'the program: %d %r' % (p.returncode, pout))


def record_live(c, prog):
    p = start_ready(c, prog)
    w = record_folded(c, p, 2, 400)
    expect(len(w) > 3, 'too few stacks: %r' % w)
    root = 'lua5.1@[C];main chunk@prog.lua:0'
    bad = {s: n for s, n in w.items() if not s.startswith(root) or
           ('fib@' in s and not s.startswith(root + ';work@prog.lua:2;fib@'))}
    expect(not bad, '%d of %d stacks do not start at the base: %r' % (len(bad), len(w), bad))
    stop_ready(c, p)


# two deep recursions (600 to 2200 frames, past a snapshot's 512 CallInfos
# and 2048 slots) that never call each other, one after the other
FAMILIES = """local function leaf() local s = 0 for i = 1, 50 do s = s + i end return s end
local x1, x2, y1, y2
function x1(n) if n == 0 then return leaf() + 0 end return x2(n - 1) + 0 end
function x2(n) if n == 0 then return leaf() + 0 end return x1(n - 1) + 0 end
function y1(n) if n == 0 then return leaf() + 0 end return y2(n - 1) + 0 end
function y2(n) if n == 0 then return leaf() + 0 end return y1(n - 1) + 0 end
io.stdout:write("READY\\n") io.stdout:flush()
local k = 0
while true do
  k = k + 1
  if k % 16 == 0 and io.open("stop") then break end
  local d = ({600, 1300, 2200})[k % 3 + 1]
  x1(d) y1(d)
end
io.stdout:write("done\\n")
"""


FAMILY = ('x1', 'x2', 'y1', 'y2')


def case_outsiderecorddeep(c):
    """record of two deep recursions that never call each other, as they
    run and held stopped: every sampled stack is main chunk, then one
    family alone (x1 x2 x1 ... or y1 y2 y1 ...), then maybe leaf. Frames
    below a thread's snapshot were read one by one, later: 1 to 15% of the
    samples joined an x chain to a y chain."""
    p = start_ready(c, FAMILIES)
    for opts in ([], ['--stop']):
        w = record_folded(c, p, 2, 1000, opts)
        bad = {}
        for s, n in w.items():
            f = [x.split('@')[0] for x in s.split(';') if x != '[...]']
            chain = [x.split('@')[0] for x in s.split(';')[2:] if x.split('@')[0] in FAMILY]
            if f[:2] != ['lua5.1', 'main chunk'] or len({x[0] for x in chain}) > 1:
                bad[s] = n
        expect(len(w) > 10, 'too few stacks: %r' % w)
        expect(not bad, 'record %s: %d of %d stacks join the two recursions (%d of %d ns): %r'
               % (opts, len(bad), len(w), sum(bad.values()), sum(w.values()), list(bad)[:2]))
    stop_ready(c, p)


# a tail recursion (each call moved down into its caller's place), a
# coroutine.wrap generator called in the register the tail recursion was
# called in, and a function with 3000 varargs (its slot below them)
SHAPES = """local function leaf() local s = 0 for i = 1, 20 do s = s + i end return s end
local function tail(n) if n == 0 then return leaf() end return tail(n - 1) end
local gen = coroutine.wrap(function() while true do leaf() coroutine.yield(1) end end)
local function va(...) if select('#', ...) < 3 then for _ = 1, 50 do leaf() end return 0 end return va(select(2, ...)) + 0 end
local function vabig(...) return va(1, 2, 3, 4, 5, 6) + select('#', ...) end
local big = {} for i = 1, 3000 do big[i] = i end
io.stdout:write("READY\\n") io.stdout:flush()
local k = 0
while true do
  k = k + 1
  if k % 64 == 0 and io.open("stop") then break end
  tail(3000)
  gen()
  vabig(unpack(big))
end
io.stdout:write("done\\n")
"""


def case_outsiderecordshapes(c):
    """record, live and --stop, of a tail recursion, a wrap generator and a
    function with 3000 varargs: every stack starts at the main chunk; tail
    is never above tail (it calls itself by tail calls: a copy made halfway
    through one saw both); the generator is never named tail (its slot
    copied after the lua_State, where tail had run); vabig, whose slot is
    below 2048 slots of varargs, is sampled below va (held stopped)."""
    p = start_ready(c, SHAPES)
    for opts in ([], ['--stop']):
        w = record_folded(c, p, 3, 1000, opts)
        root = 'lua5.1@[C];main chunk@prog.lua:0'
        bad = [s for s in w if not s.startswith(root) or 'tail@prog.lua:2;tail@' in s or
               'tail@[C]' in s]
        expect(not bad, 'record %s: %d of %d stacks wrong: %r' % (opts, len(bad), len(w), bad[:3]))
        # read as it runs, a stack over 3000 varargs is copied in two
        # windows, and one in several is dropped (the live sample
        # under-counts it: 0.5-1.2% of the samples here, 13% of the time
        # traced); held stopped, every read of it must succeed
        expect(not opts or any('vabig@prog.lua:5;va@' in s for s in w),
               'record %s: no sample in va called by vabig: %r' % (opts, list(w)))
    stop_ready(c, p)


# methods found through two __index levels (obj -> Derived -> Base), each
# called in a loop of its own, in the register Derived.new was called in
# just before: read as the program ran, the caller's saved pc could be
# another call's (new, or the same method's of a moment later)
NAMES_METHODS = 40


def names_prog():
    """The program, and the name each line that defines a function gives
    it (the truth a label's file:line is checked against)."""
    lines = ['local Base = {}', 'Base.__index = Base']
    truth = {}
    for k in range(1, NAMES_METHODS + 1):
        truth[len(lines) + 1] = 'scaled%d' % k
        lines.append('function Base:scaled%d(k) local s = 0 for _ = 1, 20 do s = s + self.x * k '
                     'end return s end' % k)
    lines += ['local Derived = setmetatable({}, {__index = Base})', 'Derived.__index = Derived']
    truth[len(lines) + 1] = 'new'
    lines += ['function Derived.new(x) return setmetatable({x = x}, Derived) end',
              'io.stdout:write("READY\\n") io.stdout:flush()',
              'local sum, i = 0, 0', 'while true do', '  i = i + 1',
              '  if io.open("stop") then break end']
    lines += ['  for j = 1, 4000 do sum = sum + Derived.new(j):scaled%d(2) end' % k
              for k in range(1, NAMES_METHODS + 1)]
    lines += ['end', 'io.stdout:write("done\\n")']
    return '\n'.join(lines) + '\n', truth


def wrong_names(w, truth, allowed):
    """The labels of w's stacks whose function (its file:line) is named
    neither as the program names it nor one of allowed."""
    bad = set()
    for s in w:
        for f in s.split(';'):
            name, where = f.rsplit('@', 1)
            if where.startswith('prog.lua:') and where != 'prog.lua:0':
                line = int(where.split(':')[1])
                if name != truth.get(line) and name not in allowed:
                    bad.add(f)
    return sorted(bad)


def case_outsiderecordnames(c):
    """record, live and --stop, of 40 methods each found through two
    __index levels and called in a loop of its own after Derived.new, in
    the same register: no frame is ever named by another call (each
    label's name is the one its file:line defines; read live, else
    'function', but most are named live too). Read live, the caller's
    saved pc could be copied a moment after the callee's frame, another
    call's: 'new' labelled scaled in about 1 record in 12 of a program with
    one such method, and here several methods in every live record."""
    prog, truth = names_prog()
    p = start_ready(c, prog)
    live = set()
    for opts in ([], [], [], ['--stop']):
        w = record_folded(c, p, 1.5, 1000, opts)
        named = {f.rsplit('@', 1)[0] for s in w for f in s.split(';')}
        seen = {v for v in truth.values() if v in named}
        live |= set() if opts else seen
        expect(len(w) > 10, 'record %s: too few stacks: %r' % (opts, list(w)[:5]))
        bad = wrong_names(w, truth, () if opts else ('function',))
        expect(not bad, 'record %s: frames named by another call: %r' % (opts, bad[:5]))
        expect(len(seen) > 1, 'record %s: no method seen: %r' % (opts, sorted(named)))
    # read live, a call site's name is kept where the other sites in its
    # register are known to call other functions (39-41 of 41 a record
    # here, with two other programs busy on the two cores): not all
    # 'function'
    expect(len(live) > NAMES_METHODS // 8, 'live records named only %d functions: %r'
           % (len(live), sorted(live)))
    stop_ready(c, p)


def case_outsidegarbage(c):
    """A dead pid, a process that is not Lua, processes that exit while read."""
    q = subprocess.Popen(['true'])
    q.wait()
    r = recorderd(c, 'dump', str(q.pid))
    expect(r.returncode == 1 and b'no process' in r.stderr, 'dead pid: %r' % r.stderr)
    q = subprocess.Popen(['sleep', '30'])
    try:
        r = recorderd(c, 'dump', str(q.pid))
        expect(r.returncode == 1 and b'no Lua 5.1 state' in r.stderr, 'sleep: %r' % r.stderr)
    finally:
        q.kill()
        q.wait()
    for i in range(20):
        q = subprocess.Popen([c.args.lua, '-e', 'for i = 1, 2e5 * %d do local t = {} end' % (i % 4)],
                             env=c.env())
        c.procs.append(q)
        outside_dump(c, q.pid)
        expect(q.wait(timeout=60) == 0, 'a process read while it ended: exit %d' % q.returncode)


DUMP_NOW = 3  # proto/lt_attach.h: LT_ATTACH_DUMP_NOW (LT_ATTACH_DUMP is 2)


def attach_sock(pid):
    """The socket path a recorderd attach to pid listens on."""
    return '/tmp/luatrace-%d/attach/%d.sock' % (os.getuid(), pid)


def wait_listening(a, pid, timeout=30):
    """Until recorderd a (a Popen) listens on pid's attach socket: it has
    checked the process and sends its request next."""
    deadline = time.monotonic() + timeout
    while not os.path.exists(attach_sock(pid)):
        if a.poll() is not None:
            raise Failure('recorderd exited first: %r' % (a.communicate()[1],))
        expect(time.monotonic() < deadline, 'recorderd never listened for %d' % pid)
        time.sleep(0.005)


def attach_sig(pid):
    """The signal a dormant collector in pid takes requests on (its marker)."""
    with open('/tmp/luatrace-%d/attach/%d' % (os.getuid(), pid)) as f:
        return int(f.read().split('signal ')[1])


def listen_as_recorderd(c, path, backlog, timeout=None):
    """A socket of ours at the attach path, as recorderd's would be (closed
    and unlinked by the case's clean-up)."""
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.socks.append((srv, path))
    srv.bind(path)
    srv.listen(backlog)
    srv.settimeout(timeout)
    return srv


def sigqueue(pid, sig, value):
    libc = ctypes.CDLL(None, use_errno=True)
    # union sigval by value: sival_int in the low half of a pointer-sized word
    if libc.sigqueue(ctypes.c_int(pid), ctypes.c_int(sig), ctypes.c_void_p(value)) != 0:
        raise OSError(ctypes.get_errno(), 'sigqueue')


def read_uint(b, i):
    t = b[i]
    if t < 0x80:
        return t, i + 1
    n = {0xcc: 1, 0xcd: 2, 0xce: 4, 0xcf: 8}[t]
    return int.from_bytes(b[i + 1:i + 1 + n], 'big'), i + 1 + n


def dump_message(b):
    """Checks one connection's bytes as a dump message; returns its flags."""
    expect(b[0] == 0x85, 'not a 5-key map: %r' % b[:16])
    i, m = 1, {}
    for _ in range(5):
        n = b[i] & 0x1f
        key = b[i + 1:i + 1 + n].decode()
        i += 1 + n
        if key == 'type':
            n = b[i] & 0x1f
            m[key] = b[i + 1:i + 1 + n].decode()
            i += 1 + n
        else:
            m[key], i = read_uint(b, i)
    expect(m['type'] == 'dump' and m['v'] == 1 and len(b) - i == m['len'],
           'dump message %r with %d bytes of records' % (m, len(b) - i))
    return m['flags']


def case_dumpdeep(c):
    c.write('prog.lua', DEEP)
    want_rc, want_out = untraced(c, 'prog.lua', b'go\n')
    expect(want_rc == 0 and b'got go' in want_out, 'untraced run: %d %r' % (want_rc, want_out))
    c.used.add('attach')
    p = start_dormant(c)
    time.sleep(0.3)
    r = recorderd(c, 'dump', str(p.pid), '--timeout', '30')
    out = r.stdout.decode()
    expect(r.returncode == 0, 'dump failed: %r %r' % (r.stdout[-2000:], r.stderr))
    note = out.splitlines()[1]
    expect('blocked in C' in note and 'cut short' in note, 'the note: %r' % note)
    rest, err = p.communicate(b'go\n', timeout=60)
    expect(p.returncode == want_rc and b'READY\n' + rest == want_out,
           'traced run: %d %r, untraced: %d %r' % (p.returncode, rest, want_rc, want_out))
    truths = dict(l.split(' ', 2)[1:] for l in err.decode().splitlines()
                  if l.startswith('TRUTH '))
    blocks = dump_blocks(out)
    expect(blocks and blocks[0][0].endswith('(running):'), 'threads of the dump: %r' % out[:500])
    seen = [frame_where(f) for f in blocks[0][1]]
    expect(seen == ['[C]'] + truths['B'].split() and len(seen) > 3000,
           'the running thread: %d frames, %s ... %s' % (len(seen), seen[:3], seen[-3:]))
    frames = sum(len(fr) for _, fr in blocks)
    expect(frames <= 16384, '%d frames printed' % frames)


def storm(c, p, pairs=300):
    """DUMP then at once DUMP_NOW, pairs times, at process p; a socket of
    ours at the attach path reads every dump message whole and gives a
    hello no ack. Returns the dump messages' flags."""
    sig, path = attach_sig(p.pid), attach_sock(p.pid)
    srv = listen_as_recorderd(c, path, 64)
    got = []

    def serve():
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            conn.settimeout(5)
            data = b''
            try:
                while len(data) < 1 << 21 and b'hello' not in data[:32]:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
            except OSError:
                pass
            conn.close()
            got.append(data)
    t = threading.Thread(target=serve, daemon=True)
    t.start()
    for i in range(pairs):
        if p.poll() is not None:
            break
        sigqueue(p.pid, sig, 2)  # DUMP: hooks every thread
        sigqueue(p.pid, sig, DUMP_NOW)  # at once: the handler reads what runs
        if i % 3 == 0:
            sigqueue(p.pid, sig, DUMP_NOW)  # nothing pending: ignored
        time.sleep(0.005)
    time.sleep(0.5)
    srv.close()
    dumps = [b for b in got if b[:1] == b'\x85']
    expect(dumps, 'no dump message arrived in %d connections' % len(got))
    flags = [dump_message(b) for b in dumps]
    print('%d connections, %d dump messages, flags %s' % (len(got), len(dumps), sorted(set(flags))))
    return flags


def case_dumpstorm(c):
    c.write('prog.lua', STORM)
    open(os.path.join(c.tmp, 'stop'), 'w').close()
    want_rc, want_out = untraced(c, 'prog.lua', b'')
    os.unlink(os.path.join(c.tmp, 'stop'))
    expect(want_rc == 0 and b'mismatches 0' in want_out, 'untraced: %d %r' % (want_rc, want_out))
    p = start(c, STORM)
    storm(c, p)
    open(os.path.join(c.tmp, 'stop'), 'w').close()
    out, err = p.communicate(timeout=120)
    expect(p.returncode == want_rc and b'READY\n' + out == want_out,
           'under the storm: %d %r %r, untraced: %r' % (p.returncode, out, err[-2000:], want_out))


def case_dumpstormc(c):
    """The storm at the C host of attach.py (libuv; coroutines made and
    resumed from C, a new thread per message): same output as untraced."""
    a = c.args
    stop = os.path.join(c.tmp, 'stop')
    cmd = [a.c_host, 'c_host.lua', '600', stop]
    open(stop, 'w').close()
    ref = subprocess.run(cmd, cwd=a.hosts, env=c.env(), capture_output=True, timeout=300)
    os.unlink(stop)
    expect(ref.returncode == 0, 'untraced c_host: %d %r' % (ref.returncode, ref.stderr))
    c.used.add('attach')
    p = subprocess.Popen(cmd, cwd=a.hosts, env=c.env(LUATRACE_ATTACH='1'),
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True)
    c.procs.append(p)
    marker = '/tmp/luatrace-%d/attach/%d' % (os.getuid(), p.pid)
    for _ in range(500):  # listening once its marker is there
        if os.path.exists(marker) or p.poll() is not None:
            break
        time.sleep(0.01)
    if not os.path.exists(marker):
        p.kill()
        raise Failure('c_host does not listen: %r' % (p.communicate()[1],))
    storm(c, p, 400)
    open(stop, 'w').close()
    out, err = p.communicate(timeout=300)
    expect(p.returncode == 0 and out == ref.stdout,
           'c_host under the storm: %d %r %r' % (p.returncode, out[-500:], err[-2000:]))


def case_hostattach(c):
    prog = c.write('hostresume.lua', HOSTRESUME)
    rounds = '1500'
    plain = subprocess.run([c.args.resume_host, prog, rounds], cwd=c.tmp, env=c.env(),
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
    c.used.add('attach')
    path = os.path.join(c.tmp, 'host.out')  # a file: a full pipe would stop the host
    with open(path, 'wb') as f:
        p = subprocess.Popen([c.args.resume_host, prog, rounds], cwd=c.tmp,
                             env=c.env(RESUME_HOST_LISTEN='1'), stdin=subprocess.DEVNULL,
                             stdout=f, stderr=subprocess.PIPE, start_new_session=True)
    c.procs.append(p)
    for _ in range(1000):
        if open(path, 'rb').read(6) == b'READY\n' or p.poll() is not None:
            break
        time.sleep(0.01)
    time.sleep(0.2)
    # --time exact: the tracks' spans below are a timeline's, which needs
    # each event's time (sampled time moves in 4 ms steps of CPU time, and
    # a host mostly in C gave the trace a few: a short track spanned half)
    r = recorderd(c, 'attach', str(p.pid), '--time', 'exact', '--duration', '0.5', '--out', c.out)
    expect(r.returncode == 0, 'attach failed: %r' % r.stderr)
    _, err = p.communicate(timeout=120)
    out = open(path, 'rb').read()
    expect(p.returncode == 0 and plain.returncode == 0 and out == b'READY\n' + plain.stdout,
           'traced host %d %r, untraced %d' % (p.returncode, err[-300:], plain.returncode))
    session = c.session('attach.%d' % p.pid)
    meta = c.meta(session)
    expect(meta['status'] == 'complete' and meta['bad_records'] == 0, 'session %r' % meta)
    names = track_names(c, session)
    expect(names and names[0] == 'main' and names.count('main') == 1
           and all(n.split(' (')[-1].startswith(('body@', 'bad@')) for n in names[1:]),
           'tracks: main, then coroutines of body and bad only: %s' % names[:8])
    with open(os.path.join(c.tmp, 'tracks.json')) as f:
        events = [e for e in json.load(f)['traceEvents'] if e.get('ph') in ('B', 'E')]
    span, end = {}, max(e['ts'] for e in events)
    for e in events:
        lo, hi = span.get(e['tid'], (e['ts'], e['ts']))
        span[e['tid']] = (min(lo, e['ts']), max(hi, e['ts']))
    long = [names[t - 1] for t, (lo, hi) in span.items() if t > 1 and hi - lo > end / 2]
    expect(not long, 'coroutine tracks open for most of the trace (dead ones sent as '
           'suspended?): %s' % long[:5])


def start_thread_host(c, text):
    """thread_host running text, dormant, once it blocks the attach signal."""
    c.write('host.lua', text)
    c.used.add('attach')
    p = subprocess.Popen([c.args.thread_host, 'host.lua'], cwd=c.tmp,
                         env=c.env(LUATRACE_ATTACH='1'), stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    c.procs.append(p)
    line = p.stdout.readline()
    if line != b'BLOCKED\n':
        raise Failure('the host did not block the signal: %r %r' % (line, p.stderr.read()))
    return p


def expect_sent_on(err):
    """While the Lua thread blocked the signal, the other thread took it:
    it must have sent it on to the Lua thread (pending there), hooking
    nothing (before: it hooked every thread itself, walking Lua's objects)."""
    got = [l for l in err.splitlines() if l.startswith('BLOCKED ')]
    expect(got == ['BLOCKED true false false'],
           'signal taken by the other thread: %s (want: pending for the Lua thread, '
           'main and coroutine unhooked)' % got)


def case_otherthread(c):
    p = start_thread_host(c, OTHERTHREAD)
    truths, stacks, err = attach(c, p, until=b'DONE\n')
    expect_sent_on(err)
    expect_only(stacks, truths['after'], 'attached from the Lua thread')
    cobody = 'host.lua:%d' % (1 + OTHERTHREAD.split('\n').index(
        'local function cobody() while true do coroutine.yield(garbage(50)) end end'))
    expect(any(cobody in s for s in stacks), 'the coroutine never traced: %s' % stacks[:5])


def case_otherthreaddump(c):
    c.write('host.lua', OTHERTHREADDUMP)
    r = subprocess.run([c.args.thread_host, 'host.lua'], cwd=c.tmp, env=c.env(), input=b'go\n',
                       capture_output=True, timeout=120)
    want = r.stdout
    expect(r.returncode == 0 and b'hooks nil nil' in want, 'untraced run: %r' % r.stderr)
    p = start_thread_host(c, OTHERTHREADDUMP)
    d = recorderd(c, 'dump', str(p.pid), '--timeout', '30')
    out = d.stdout.decode()
    expect(d.returncode == 0, 'dump failed: %r %r' % (d.stdout, d.stderr))
    rest, err = p.communicate(b'go\n', timeout=60)
    expect(p.returncode == 0 and b'BLOCKED\n' + rest == want,
           'traced run: %d %r, untraced: %r' % (p.returncode, rest, want))
    expect_sent_on(err.decode())
    expect('blocked in C' in out.splitlines()[1], 'not read by the handler: %r' % out)
    truths = dict(l.split(' ', 2)[1:] for l in err.decode().splitlines()
                  if l.startswith('TRUTH '))
    blocks = dump_blocks(out)
    seen = [[frame_where(f) for f in fr] for _, fr in blocks]
    want = [['[C]'] + truths['serve'].split(), truths['D'].split()]
    expect(seen == want, 'dump %s, the host saw %s' % (seen, want))
    expect(blocks[0][1][0] == 'host.blocked [C]', 'top of the dump: %r' % out)


class AttachCase(Case):
    def __init__(self, args, tmp):
        super().__init__(args, tmp)
        self.procs = []
        self.socks = []  # (socket, path) a case listens on

    def meta(self, session):
        import json
        return json.load(open(os.path.join(session, 'session.json')))

    def kill_daemon(self):  # and the programs, their attach markers, our sockets
        for s, path in self.socks:
            s.close()
            try:
                os.unlink(path)
            except OSError:
                pass
        self.kill_programs(self.procs)
        super().kill_daemon()


def main(argv):
    def add_args(ap):
        ap.add_argument('--block-host', help='tests/hosts/block_host (dumphost)')
        ap.add_argument('--c-host', help='tests/hosts/c_host (dumpstormc)')
        ap.add_argument('--hosts', help='tests/hosts, for c_host.lua (dumpstormc)')
        ap.add_argument('--resume-host', help='tests/hosts/resume_host (hostattach)')
        ap.add_argument('--thread-host', help='tests/hosts/thread_host (otherthread*)')
        ap.add_argument('--reload-host', help='tests/hosts/reload_host (reload)')
        ap.add_argument('--reload-plain', help='tests/hosts/reload_plain (reload)')
    return harness.case_main(argv, cases(globals()), 'luatrace-attach-', add_args,
                             make=AttachCase,
                             paths=('block_host', 'c_host', 'resume_host', 'thread_host',
                                    'reload_host', 'reload_plain'))


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
