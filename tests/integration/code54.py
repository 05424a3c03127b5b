#!/usr/bin/env python3
"""What a line event costs under Lua 5.4: the CODE and WALK records.

  code54.py PROGRAM.lua --recorderd PATH --lua lua5.4 [--luac luac5.4]
            [--lua51 lua5.1 [--luac51 luac5.1] [--luajit luajit]]

`recorderd run --time exact -- lua5.4 PROGRAM` (every line hooked); then
each Lua function's CODE and WALK records in trace.ltr must be what
luac5.4's own listing of the program gives (a separate compiler, never
the collector's reading of 5.4's Proto):
- its line events, per run of its code: one at each change of line, and
  one more at each jump back to a pc of the same run (a loop within one
  line: each turn is a line event there);
- CODE: its instructions (MMBIN, MMBINI and MMBINK left out: they run
  only when a metamethod is called) x16 over its line events;
- WALK: the steps of 5.4's walk through lineinfo that find each event's
  line (pc + 1 where the function has no absolute line info: under 128
  instructions, no jump of 128 lines) x16 over its line events.
A vararg function's VARARGPREP (pc 1) has no line (5.4.4 on). Under Lua
5.1 (--lua51 given), CODE the same way against luac5.1's listing (every
instruction counted), and no WALK nor WBIAS; under LuaJIT (--luajit too),
CODE against jit.util's listing of its bytecode.
Exit 77 without lua5.4 or luac5.4.
"""

import os
import re
import shutil
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collector  # noqa: E402  (trace_records)
import harness  # noqa: E402
from harness import SKIP, base_env, expect, run, show_bytes  # noqa: E402

EV_FUNC, EV_CODE, EV_WBIAS, EV_WALK = 1, 15, 25, 26  # lt_event.h's LT_EVENT_LIST order
MMBIN = ('MMBIN', 'MMBINI', 'MMBINK')
BACK = ('JMP', 'FORLOOP', 'TFORLOOP')
HEAD = re.compile(r'^(main|function) <[^>]*:(\d+),(\d+)> \((\d+) instructions?')
INSTR = re.compile(r'^\t(\d+)\t\[(\d+)\]\t(\S+)\s*(.*)$')


def listing(luac, path):
    """{linedefined: [(pc from 0, line, opcode, jump target from 0 or None)]}
    from luac -l."""
    res = run([luac, '-l', '-p', path], os.path.dirname(path), base_env())
    expect(res.status == 0, 'luac failed: %s' % show_bytes(res.err))
    funcs, cur = {}, None
    for row in res.out.decode().split('\n'):
        m = HEAD.match(row)
        if m:
            cur = funcs.setdefault(int(m.group(2)), [])
            expect(int(m.group(4)) < 128, 'line %s: too long for no absolute line info'
                   % m.group(2))
            continue
        m = INSTR.match(row)
        if m and cur is not None:
            to = re.search(r'; to (\d+)', m.group(4))
            cur.append((int(m.group(1)) - 1, int(m.group(2)), m.group(3),
                        int(to.group(1)) - 1 if to else None))
    return funcs


def expected(code):
    """(ipl16, walk16) of one function's listing."""
    events = steps = ins = 0
    prev, start = None, 0
    for pc, line, op, to in code:
        if pc == 0 and op == 'VARARGPREP':
            continue
        if line != prev:
            events, steps, start = events + 1, steps + pc + 1, pc
        prev = line
        ins += op not in MMBIN
        if op in BACK and to is not None and start <= to <= pc:
            events, steps = events + 1, steps + to + 1
    return ins * 16 // events, steps * 16 // events


def code_by_line(recs):
    """{linedefined: {kind: value}} of the CODE and WALK records."""
    line_of, got = {}, {}
    for kind, a in recs:
        if kind == EV_FUNC:
            line_of[a[0]] = a[4]  # fid -> linedefined
        elif kind in (EV_CODE, EV_WALK) and line_of.get(a[0]) is not None:
            got.setdefault(line_of[a[0]], {})[kind] = a[1]
    return got


def traced(args, tmp, lua, path, name):
    """The records of a --time exact run of path under lua."""
    out = os.path.join(tmp, 'out-' + name)
    res = run([args.recorderd, 'run', '--quiet', '--time', 'exact', '--out', out, '--', lua,
               os.path.basename(path)], os.path.dirname(path), base_env(), timeout=120)
    expect(res.status == 0, '%s: run failed (%s): %s' % (name, res.status, show_bytes(res.err)))
    sessions = os.listdir(out)
    expect(len(sessions) == 1, '%s: sessions %r' % (name, sessions))
    return collector.trace_records(os.path.join(out, sessions[0], 'trace.ltr'))


def check54(args, tmp, path):
    got = code_by_line(traced(args, tmp, args.lua, path, '54'))
    want = {ld: expected(code) for ld, code in listing(args.luac, path).items()}
    bad = []
    for ld, (ipl16, walk16) in sorted(want.items()):
        g = got.get(ld, {})
        if (g.get(EV_CODE), g.get(EV_WALK)) != (ipl16, walk16):
            bad.append('function at line %d: CODE %s WALK %s, luac says %d %d'
                       % (ld, g.get(EV_CODE), g.get(EV_WALK), ipl16, walk16))
    expect(not bad, 'CODE and WALK against luac5.4:\n  ' + '\n  '.join(bad))
    print('lua5.4: %d functions as luac5.4 lists them' % len(want))


P51 = """local function oneline(n) local s = 0 for i = 1, n do s = s + i end return s end
local function spin(n) for _ = 1, n do end while n > 0 do n = n - 1 end return n end
local function nested(t, n)
  local k = 0
  for _ = 1, n do for i = 1, #t do k = k + t[i] end end
  local i = 0
  while i < n do
    i = i + 1
  end
  for _, v in ipairs(t) do k = k + v end
  return k
end
print(oneline(10), spin(3), nested({1, 2, 3}, 4))
"""


def check51(args, tmp):
    """Lua 5.1: CODE as luac5.1 lists the code (all of it counted), and no
    WALK or WBIAS (its line lookup is a table read)."""
    prog = os.path.join(tmp, 'p51.lua')
    with open(prog, 'w') as f:
        f.write(P51)
    recs = traced(args, tmp, args.lua51, prog, '51')
    kinds = {k for k, _ in recs}
    expect(not kinds & {EV_WALK, EV_WBIAS}, 'lua5.1: record kinds %s' % sorted(kinds, key=str))
    got = code_by_line(recs)
    want = {ld: expected(code)[0] for ld, code in listing(args.luac51, prog).items()}
    bad = ['function at line %d: CODE %s, luac5.1 says %d' % (ld, got.get(ld, {}).get(EV_CODE), v)
           for ld, v in sorted(want.items()) if got.get(ld, {}).get(EV_CODE) != v]
    expect(not bad, 'CODE against luac5.1:\n  ' + '\n  '.join(bad))
    print('lua5.1: %d functions as luac5.1 lists them, no WALK or WBIAS' % len(want))


# Each prototype's (linedefined, instructions, line events) as LuaJIT's
# own jit.util and jit.vmdef list them (names, not the collector's read of
# the GCproto): pc 0, the header, is no instruction; a line event at each
# change of line and at each jump back within a run of one line.
JIT_LIST = r"""
local util, vmdef = require 'jit.util', require 'jit.vmdef'
local BACK = {FORL = true, IFORL = true, ITERL = true, IITERL = true, JMP = true}
local function walk(f)
  local info = util.funcinfo(f)
  local n, events, run, last = info.bytecodes, 1, 1, nil
  for pc = 1, n - 1 do
    local line = util.funcinfo(f, pc).currentline
    if last and line ~= last then events, run = events + 1, pc end
    last = line
    local ins, m = util.funcbc(f, pc)
    local op = vmdef.bcnames:sub(bit.band(ins, 0xff) * 6 + 1, bit.band(ins, 0xff) * 6 + 6)
    local to = pc + 1 + bit.rshift(ins, 16) - 0x8000
    if BACK[op:match('%S+')] and to >= run and to <= pc then events = events + 1 end
  end
  print(info.linedefined, n - 1, events)
  for i = -1, -1000, -1 do
    local k = util.funck(f, i)
    if k == nil then break end
    if type(k) == 'proto' then walk(k) end
  end
end
walk(assert(loadfile(arg[1])))
"""


def check_jit(args, tmp):
    """LuaJIT: CODE as its own jit.util lists the bytecode."""
    prog = os.path.join(tmp, 'p51.lua')
    lister = os.path.join(tmp, 'jitlist.lua')
    with open(lister, 'w') as f:
        f.write(JIT_LIST)
    res = run([args.luajit, lister, prog], tmp, base_env())
    expect(res.status == 0, 'jit.util listing failed: %s' % show_bytes(res.err))
    rows = [r.split() for r in res.out.decode().strip().split('\n')]
    want = {int(ld): int(n) * 16 // int(ev) for ld, n, ev in rows}
    got = code_by_line(traced(args, tmp, args.luajit, prog, 'jit'))
    bad = ['function at line %d: CODE %s, jit.util says %d' % (ld, got.get(ld, {}).get(EV_CODE), v)
           for ld, v in sorted(want.items()) if got.get(ld, {}).get(EV_CODE) != v]
    expect(not bad, 'CODE against jit.util:\n  ' + '\n  '.join(bad))
    print('luajit: %d functions as jit.util lists them' % len(want))


def body(args, tmp):
    args.luac = args.luac or shutil.which('luac5.4')
    if not shutil.which(args.lua) or not args.luac:
        print('SKIP: lua5.4 or luac5.4 is not installed (scripts/setup installs them)')
        return SKIP
    for prog in args.programs:
        check54(args, tmp, os.path.abspath(prog))
    args.luac51 = args.luac51 or shutil.which('luac5.1')
    if args.lua51 and args.luac51:
        check51(args, tmp)
        if args.luajit and shutil.which(args.luajit):
            check_jit(args, tmp)
    return 0


def add_args(ap):
    ap.add_argument('--luac')
    ap.add_argument('--lua51')
    ap.add_argument('--luac51')
    ap.add_argument('--luajit')
    ap.set_defaults(lua='lua5.4')


if __name__ == '__main__':
    sys.exit(harness.program_main(sys.argv[1:], __doc__, 'luatrace-code54-', body,
                                  add_args=add_args))
