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
  recursion   attach 60 calls deep
  unwinding   attach inside an xpcall message handler, while an error is
              on its way out of three frames
  coroutine   attach while a coroutine runs (main is suspended in resume)
  inc         attach while the program sits in C (os.execute "sleep")
  dump        dump while in C: printed when it returns to Lua, stack exact
  dumpco      dump of a program with coroutines suspended mid-call: every
              coroutine's stack exact, none hooked afterwards
"""

import argparse
import os
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from collector import Case, expect, run_case  # noqa: E402
from corpus import Failure, base_env  # noqa: E402

PRELUDE = '''
local luatrace = require "luatrace"
local function busy(n) local s = 0 for i = 1, n or 300 do s = s + i % 3 end return s end
-- Frames from `level` down to the root, as "SRC:LINEDEFINED" or "[C]".
local function frames(level, co)
  local t = {}
  while true do
    local i = co and debug.getinfo(co, level, "S") or (not co and debug.getinfo(level, "S"))
    if not i then break end
    if i.what ~= "tail" then
      t[#t + 1] = i.what == "C" and "[C]" or (i.source:gsub("^@", "") .. ":" .. i.linedefined)
    end
    level = level + 1
  end
  return table.concat(t, " ")
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
detached()
io.stderr:write("TRUTH wait ", truth, "\\n")
io.stderr:write("TRUTH after prog.lua:", debug.getinfo(after, "S").linedefined,
                " prog.lua:0 [C]\\n")
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

DUMPCO = PRELUDE + '''
local function deep(n) if n == 0 then coroutine.yield() else deep(n - 1) end end
local cos, text = {}, {}
for i = 1, 3 do
  cos[i] = coroutine.create(function() deep(i * 2) end)
  coroutine.resume(cos[i])
  text[i] = frames(0, cos[i])
end
local function spin() ready() for i = 1, 20000 do busy() end end
io.stderr:write("SPIN ", frames(1), "\\n")
spin()
for i = 1, 3 do io.stderr:write("CO ", text[i], " HOOK ", tostring(debug.gethook(cos[i])), "\\n") end
'''


def label_frame(label):
    """'name@SRC:LINE' -> 'SRC:LINE'; 'name@[C]' -> '[C]'."""
    return label.rsplit('@', 1)[1]


def start(c, text, env_extra=None):
    c.write('prog.lua', text)
    c.used.add('attach')
    env = c.env(LUATRACE_ATTACH='1', **(env_extra or {}))
    p = subprocess.Popen([c.args.lua, '-lluatrace', 'prog.lua'], cwd=c.tmp, env=env,
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True)
    c.procs.append(p)
    line = p.stdout.readline()
    if line != b'READY\n':
        raise Failure('the program did not get ready: %r %r' % (line, p.stderr.read()))
    return p


def recorderd(c, *args, timeout=60):
    return subprocess.run([c.args.recorderd] + list(args), cwd=c.tmp, env=base_env(),
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)


def attach(c, p, duration='0.5'):
    r = recorderd(c, 'attach', str(p.pid), '--duration', duration, '--out', c.out)
    expect(r.returncode == 0, 'attach failed: %r' % r.stderr)
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


def case_coroutine(c):
    p = start(c, COROUTINE)
    truths, stacks, _ = attach(c, p)
    # Code in a coroutine hangs under its resumer's stack (the main chunk in
    # coroutine.resume): the collector sends the resume chain at attach.
    resumer = ['[C]', 'prog.lua:0', '[C]']
    expect_only(stacks, truths['wait'], 'attached inside a coroutine', (resumer,))
    expect_only(stacks, truths['after'], 'after the coroutine yielded')


def case_inc(c):
    p = start(c, INC)
    time.sleep(0.2)  # well inside os.execute("sleep 1")
    truths, stacks, err = attach(c, p, duration='2')
    expect('TRACING true' in err, 'not tracing once back from C: %r' % err)
    expect_only(stacks, truths['blocked'], 'attached while in C')


def case_dump(c):
    p = start(c, INC)
    time.sleep(0.2)
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


def dump_frames(block):
    """'name (SRC:LINE)' lines of a dump -> SRC, '[C]' for C frames."""
    return ['[C]' if l.endswith('[C]') else l.rsplit('(', 1)[1].split(':')[0] for l in block]


def case_dumpco(c):
    p = start(c, DUMPCO)
    r = recorderd(c, 'dump', str(p.pid), '--timeout', '20')
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


CASES = {'recursion': case_recursion, 'unwinding': case_unwinding, 'coroutine': case_coroutine,
         'inc': case_inc, 'dump': case_dump, 'dumpco': case_dumpco}


class AttachCase(Case):
    def __init__(self, args, tmp):
        super().__init__(args, tmp)
        self.procs = []

    def meta(self, session):
        import json
        return json.load(open(os.path.join(session, 'session.json')))

    def kill_daemon(self):  # and the programs, and their attach markers
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
            try:
                os.unlink('/tmp/luatrace-%d/attach/%d' % (os.getuid(), p.pid))
            except OSError:
                pass


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument('case', choices=sorted(CASES))
    ap.add_argument('--recorderd', required=True)
    ap.add_argument('--cpath', required=True)
    ap.add_argument('--lua', default='lua5.1')
    args = ap.parse_args(argv)
    args.recorderd = os.path.abspath(args.recorderd)
    args.cpath = os.path.abspath(args.cpath)
    return run_case(CASES[args.case], args.case, lambda tmp: AttachCase(args, tmp),
                    'luatrace-attach-')


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
