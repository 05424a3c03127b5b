#!/usr/bin/env python3
"""Coverage under LuaJIT: the executable lines are LuaJIT's.

  jitlines.py PROGRAM.lua... --recorderd PATH [--lua luajit]

Each program (a tests/lua program, from its own directory) is traced by
`recorderd run --format lcov -- luajit PROGRAM`; the DA lines of every SF
of coverage.lcov that is a file must be exactly the lines that carry
bytecode in LuaJIT's compilation of that file: TRUTH_LUA below, in a
separate luajit process, loads the file (never runs it) and walks every
prototype with jit.util.funcinfo and jit.util.funck (its children),
collecting the currentline of each pc from 1 to bytecodes - 1 (pc 0 is
the function header, which no line event reports). Lua 5.1's compiler
gives other lines for many programs (a `local x` with no value, the `end`
of a loop, a multi-line call...). Exit 77 when luajit is not installed.
"""

import os
import shutil
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import SKIP, Failure, base_env, expect, run, show_bytes  # noqa: E402

TRUTH_LUA = r'''
local ju = require("jit.util")
local function walk(f, set)
  local info = ju.funcinfo(f)
  for pc = 1, info.bytecodes - 1 do
    set[ju.funcinfo(f, pc).currentline] = true
  end
  if info.children then
    local i = -1
    while true do
      local k = ju.funck(f, i)
      if k == nil then break end
      if type(k) == "proto" then walk(k, set) end
      i = i - 1
    end
  end
end
for _, path in ipairs(arg) do
  local f = assert(loadfile(path))
  local set, out = {}, {}
  walk(f, set)
  for l in pairs(set) do out[#out + 1] = l end
  table.sort(out)
  io.write(#out, " ", table.concat(out, " "), "\n", path, "\n")
end
'''


def read_da(path, cwd):
    """{SF: set of DA lines}, a relative SF (a file under the program's
    working directory cwd) made absolute."""
    recs, cur = {}, None
    with open(path) as f:
        for row in f:
            key, _, val = row.rstrip('\n').partition(':')
            if key == 'SF':
                cur = recs.setdefault(os.path.join(cwd, val), set())
            elif key == 'DA':
                cur.add(int(val.split(',')[0]))
    return recs


def truth(args, tmp, files):
    """{file: set of lines carrying LuaJIT bytecode}"""
    script = os.path.join(tmp, 'truth.lua')
    with open(script, 'w') as f:
        f.write(TRUTH_LUA)
    res = run([args.lua, script] + files, tmp, base_env())
    expect(res.status == 0, 'the truth script failed: %s' % show_bytes(res.err))
    rows = res.out.decode('utf-8', 'surrogateescape').split('\n')
    got = {}
    for k in range(0, len(rows) - 1, 2):
        nums = [int(x) for x in rows[k].split()]
        got[rows[k + 1]] = set(nums[1:])
    expect(set(got) == set(files), 'the truth script skipped files: %s' % res.out[:300])
    return got


def spans(lines):
    """Sorted lines as short text: 1-3,7."""
    out, run_ = [], None
    for n in sorted(lines):
        if run_ and n == run_[1] + 1:
            run_[1] = n
        else:
            run_ = [n, n]
            out.append(run_)
    return ','.join(str(a) if a == b else '%d-%d' % (a, b) for a, b in out)


def check(args, tmp, prog):
    path = os.path.abspath(prog)
    name = os.path.splitext(os.path.basename(path))[0]
    out = os.path.join(tmp, 'out-' + name)
    os.mkdir(out)
    res = run([args.recorderd, 'run', '--quiet', '--out', out, '--format', 'lcov', '--',
               args.lua, os.path.basename(path)], os.path.dirname(path), base_env(), timeout=300)
    sessions = [d for d in os.listdir(out) if os.path.isdir(os.path.join(out, d))]
    expect(len(sessions) == 1, '%s: expected one session, found %r (status %s)\n%s'
           % (name, sessions, res.status, show_bytes(res.err)))
    lcov = os.path.join(out, sessions[0], 'coverage.lcov')
    expect(os.path.isfile(lcov), '%s: no coverage.lcov' % name)
    da = read_da(lcov, os.path.dirname(path))  # where the program ran
    files = sorted(sf for sf in da if os.path.isfile(sf))
    expect(os.path.join(os.path.dirname(path), os.path.basename(path)) in files,
           '%s: the program is not in coverage.lcov: %s' % (name, sorted(da)))
    want = truth(args, tmp, files)
    bad = []
    for sf in files:
        if da[sf] != want[sf]:
            bad.append('%s: only luatrace %s; only LuaJIT %s'
                       % (sf, spans(da[sf] - want[sf]) or '-', spans(want[sf] - da[sf]) or '-'))
    expect(not bad, '%s: DA lines are not the lines of LuaJIT bytecode:\n  %s'
           % (name, '\n  '.join(bad)))
    print('%s: ok (%d files, %d lines)' % (name, len(files), sum(len(da[f]) for f in files)))


def body(args, tmp):
    if not shutil.which(args.lua):
        print('SKIP: %s is not installed (scripts/setup installs luajit)' % args.lua)
        return SKIP
    progs = [p for p in args.programs if not harness.skip_missing(args.lua, p)]
    for prog in progs:
        check(args, tmp, prog)
    return 0 if progs else SKIP


if __name__ == '__main__':
    sys.exit(harness.program_main(sys.argv[1:], __doc__, 'luatrace-jitlines-', body,
                                  add_args=lambda ap: ap.set_defaults(lua='luajit')))
