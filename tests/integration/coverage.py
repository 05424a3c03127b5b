#!/usr/bin/env python3
"""Coverage reports against the truth and against their real consumers.

  coverage.py CASE [PROGRAM.lua] --recorderd PATH [--lua lua5.1]

Cases (each in a fresh temporary directory, always removed):
  program P  run P (a tests/lua program, from its own directory) under
             `recorderd run` and under a reference line counter (a C line
             hook counting per source and line, REFCOUNT_C below), then
             check the session's coverage files (check_session). With
             --lua lua5.4 (tests/lua54, prog54 below) the reference runs in
             the program itself (REF54_LUA: debug.sethook's "l" counts, and
             the activelines of every function called), and the exact lines
             are luac5.4's (5.4's own bytecode, sent by the collector)
  threads    coroutines created before tracing starts, after it, by
             coroutine.wrap, and in C with lua_newthread (a helper module
             compiled here with cc): hit counts equal the reference's
  merge      the same program traced twice: `report --merge` adds the
             counts, and equals `lcov -a A -a B`
  options    --include, --exclude, --include-untested; a source deleted
             and one edited after the trace; reports rebuilt from the trace
  nofile     a "=m.lua" chunk beside the file m.lua: never merged into it
  sameline   prototypes sharing a line range: each a function, in one
             session and in a --merge
  annotate   annotate/ per resolved file: one file reached by four names,
             ./mod.lua, a file outside the working directory (also
             Cobertura's second <source>)
  truncated  a program killed mid-run: every coverage report says so
  chdir      a program that changes directory, then loads files by
             relative names: each read where it was loaded (lfs needed)
  luacheck   luacheck (lua-check) over Penlight's sources (lua-penlight):
             exact lines of every loaded file, hits against the same
             trace's reports (luacheck's own counts vary from run to run);
             every file under /usr/share/lua/5.1 against luac (skipped
             when they are not installed)

check_session, for one session directory:
  - coverage.lcov, luacov.stats.out, coverage.txt exist;
  - coverage.txt, coverage.lcov, coverage.xml and report.html say the
    counts are incomplete exactly when session.json's status is truncated;
  - the DA lines of every SF equal the instruction lines `luac5.1 -l -l -p`
    lists for that file, and its FN records the prototypes it lists (one
    each, several of one line range included);
  - `lcov --summary` and `genhtml` accept coverage.lcov with the line and
    function totals of coverage.txt's Total row;
  - luacov.stats.out: "MAX:NAME" then MAX counts each followed by one space,
    equal to the DA counts;
  - coverage.xml (Cobertura) has the coverage-04 DTD's elements, nesting
    and required attributes (checked here: the DTD is not ours to ship),
    is well-formed for xmllint, and holds exactly coverage.lcov's lines,
    hits, functions and totals, each class's <source>/filename being its
    SF; the first <source> is the session's cwd (files under it relative
    to it), a second one the deepest directory of the files elsewhere;
    its method lines are the DA lines of the function's range;
  - `recorderd report SESSION --format lcov|luacov|coverage|cobertura`,
    run from another directory, rebuilds the four files byte for byte
    (but Cobertura's timestamp);
  - DA hits equal the annotate report's, line by line, and all line events
    add up to the total of the line-weighted folded stacks;
  - annotate/ holds one visible file per file with hits, whose hits are
    exactly its DA hits;
  - with a reference: every line's DA count equals the reference's count,
    and the line events of sources that are not files add up too.
Exit status: 0 pass, 1 fail, 77 skipped.
"""

import argparse
import json
import os
import xml.etree.ElementTree as ET
import re
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import SKIP, Failure, base_env, cases, run, show_bytes  # noqa: E402,F401

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.normpath(os.path.join(HERE, '..', 'lua'))
LUA_DIR = '/usr/share/lua/5.1'

# The reference: a C line hook, as the collector's, but counting line
# events per (source, line) in a plain table. A C hook is inherited by every
# thread created after it is set (coroutine.create, wrap, lua_newthread);
# threads that exist before are given to COV_START. With REFCOUNT_DEFER=1
# counting starts when the program calls COV_START(threads...). Counts are
# written at exit (atexit: normal end, os.exit, uncaught error), one
# "HEXSOURCE LINE COUNT" per line.
REFCOUNT_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <lua.h>
#include <lauxlib.h>

typedef struct entry { char *src; int line; unsigned long n; } entry;
static entry *tab;
static size_t cap, used;

static size_t hash(const char *s, int line)
{
    size_t h = 1469598103934665603ull ^ (size_t)line;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static void put(entry *t, size_t c, char *src, int line, unsigned long n)
{
    size_t i = hash(src, line) & (c - 1);
    while (t[i].src && (t[i].line != line || strcmp(t[i].src, src)))
        i = (i + 1) & (c - 1);
    if (!t[i].src) {
        t[i].src = src;
        t[i].line = line;
        used++;
    }
    t[i].n += n;
}

static void count(const char *src, int line)
{
    size_t i = hash(src, line) & (cap - 1);
    while (tab[i].src && (tab[i].line != line || strcmp(tab[i].src, src)))
        i = (i + 1) & (cap - 1);
    if (tab[i].src) {
        tab[i].n++;
        return;
    }
    if ((used + 1) * 2 > cap) {
        entry *old = tab;
        size_t oc = cap;
        cap *= 2;
        tab = calloc(cap, sizeof *tab);
        used = 0;
        for (size_t k = 0; k < oc; k++)
            if (old[k].src)
                put(tab, cap, old[k].src, old[k].line, old[k].n);
        free(old);
    }
    put(tab, cap, strdup(src), line, 1);
}

static void hook(lua_State *L, lua_Debug *ar)
{
    if (ar->event == LUA_HOOKLINE && ar->currentline > 0 && lua_getinfo(L, "S", ar))
        count(ar->source, ar->currentline);
}

static void watch(lua_State *T)
{
    lua_sethook(T, hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKLINE, 0);
}

static int start(lua_State *L)
{
    watch(L);
    for (int i = 1; i <= lua_gettop(L); i++)
        if (lua_isthread(L, i))
            watch(lua_tothread(L, i));
    return 0;
}

static void dump(void)
{
    const char *path = getenv("REFCOUNT_OUT");
    FILE *f = path ? fopen(path, "w") : NULL;
    for (size_t i = 0; f && i < cap; i++) {
        if (!tab[i].src)
            continue;
        fputc('x', f); /* a field even for an empty chunk name */
        for (const char *s = tab[i].src; *s; s++)
            fprintf(f, "%02x", (unsigned char)*s);
        fprintf(f, " %d %lu\n", tab[i].line, tab[i].n);
    }
    if (f)
        fclose(f);
}

int luaopen_refcount(lua_State *L)
{
    cap = 1024;
    tab = calloc(cap, sizeof *tab);
    atexit(dump);
    lua_register(L, "COV_START", start);
    lua_register(L, "COV_SETUP", start);
    const char *defer = getenv("REFCOUNT_DEFER");
    if (!defer || strcmp(defer, "1"))
        watch(L);
    return 0;
}
"""

# A C module whose run(f, setup) runs f in a thread made by lua_newthread,
# resumed from C until it returns (no coroutine.resume involved).
COTHREAD_C = r'''
#include <lua.h>
#include <lauxlib.h>

static int run(lua_State *L)
{
    int n = 0, st;
    luaL_checktype(L, 1, LUA_TFUNCTION);
    lua_State *T = lua_newthread(L);
    if (lua_isfunction(L, 2)) { /* the reference hooks the thread */
        lua_pushvalue(L, 2);
        lua_pushvalue(L, -2);
        lua_call(L, 1, 0);
    }
    lua_pushvalue(L, 1);
    lua_xmove(L, T, 1);
    while ((st = lua_resume(T, 0)) == LUA_YIELD) {
        n++;
        lua_settop(T, 0);
    }
    if (st != 0) {
        lua_xmove(T, L, 1);
        return lua_error(L);
    }
    lua_pushinteger(L, n);
    return 1;
}

int luaopen_cothread(lua_State *L)
{
    lua_newtable(L);
    lua_pushcfunction(L, run);
    lua_setfield(L, -2, "run");
    return 1;
}
'''

BODIES = '''local M = {}

function M.counter(n)
  local total = 0
  for i = 1, n do
    total = total + i
    coroutine.yield(total)
  end
  return total
end

function M.cbody()
  local s = 0
  for i = 1, 4 do
    s = s + i
    if i % 2 == 0 then
      coroutine.yield(s)
    end
  end
  return s
end

function M.gen(n)
  return coroutine.wrap(function()
    for i = 1, n do
      coroutine.yield(i * i)
    end
  end)
end

function M.never(x)
  if x then
    return x + 1
  end
  return 0
end

return M
'''

THREADS_MAIN = '''local bodies = require "bodies"
local cothread = require "cothread"
local early = coroutine.create(bodies.counter)
print("early", coroutine.resume(early, 4))
if COV_START then COV_START(early) else require "luatrace" end
print("early", coroutine.resume(early))
print("early", coroutine.resume(early))
print("cthread", cothread.run(bodies.cbody, COV_SETUP))
local late = coroutine.create(bodies.counter)
while coroutine.status(late) ~= "dead" do print("late", coroutine.resume(late, 3)) end
for v in bodies.gen(3) do print("gen", v) end
print("cthread", cothread.run(function() return bodies.cbody() end, COV_SETUP))
'''


def expect(cond, what):
    if not cond:
        raise Failure(what)


# The Lua 5.4 reference (-e, before the program): a Lua line hook in the
# main thread and in every coroutine made after it, counting line events
# per (source, line); the activelines of every function that is called
# (debug.getinfo(f, "L")), the executable lines 5.4 itself gives. Written
# as REFCOUNT_C's rows, and "HEXSOURCE LINE" rows to REFCOUNT_OUT.exec, at
# os.exit or when the state closes (a finalizer).
REF54_LUA = r"""
local getinfo, sethook, hits, exec, seen = debug.getinfo, debug.sethook, {}, {}, {}
local function hook(ev, line)
  local info = getinfo(2, "S")
  local src = info.source
  if src == "=(command line)" then return end -- this reference's own
  if ev == "line" then
    if not line then return end -- stripped (string.dump(f, true)): no lines
    local t = hits[src] or {}
    hits[src] = t
    t[line] = (t[line] or 0) + 1
  else
    local info = getinfo(2, "fl")
    local f = info.func
    if seen[f] then return end
    seen[f] = true
    -- C or stripped (string.dump(f, true), luac -s): no lines; 5.4.4's
    -- getinfo "L" reads a stripped vararg function's lineinfo (NULL)
    if info.currentline < 0 then return end
    local t = exec[src] or {}
    exec[src] = t
    for l in pairs(getinfo(f, "L").activelines or {}) do t[l] = true end
  end
end
local function hex(s) return "x" .. s:gsub(".", function(c) return ("%02x"):format(c:byte()) end) end
local done
local function dump()
  if done then return end
  done = true
  sethook()
  local out = os.getenv("REFCOUNT_OUT")
  local f, e = io.open(out, "w"), io.open(out .. ".exec", "w")
  for src, t in pairs(hits) do
    for l, n in pairs(t) do f:write(hex(src), " ", l, " ", n, "\n") end
  end
  for src, t in pairs(exec) do
    for l in pairs(t) do e:write(hex(src), " ", l, "\n") end
  end
  f:close() e:close()
end
REF54_KEEP = setmetatable({}, {__gc = dump})
local exit, create, wrap = os.exit, coroutine.create, coroutine.wrap
-- os.exit(code, true) closes the state: the main thread's pending __close
-- run after the call, and REF54_KEEP's __gc (marked first, run last) dumps
os.exit = function(code, close, ...) if not close then dump() end return exit(code, close, ...) end
local function hooked(f)
  local co = create(f)
  sethook(co, hook, "cl")
  return co
end
coroutine.create = hooked
coroutine.wrap = function(f)
  local co = hooked(f)
  return function(...)
    local r = table.pack(coroutine.resume(co, ...))
    if not r[1] then -- as 5.4's wrap: the dead coroutine reset (its
      local e = r[2] -- pending __close run), the error where it was called
      if coroutine.status(co) == "dead" then
        local ok, ce = coroutine.close(co)
        if not ok then e = ce end
      end
      error(e, 2)
    end
    return table.unpack(r, 2, r.n)
  end
end
sethook(hook, "cl")
"""


def is54(lua):
    return os.path.basename(lua).startswith('lua5.4')


# {======================================================================
# Running things

class Ctx:
    def __init__(self, args, tmp):
        self.args, self.tmp = args, tmp
        self.refdir = os.path.join(tmp, 'refcount')
        os.mkdir(self.refdir)
        if not is54(args.lua):  # 5.4's reference is Lua (REF54_LUA)
            build_module(self.refdir, 'refcount', REFCOUNT_C)
        self.nout = 0

    def traced(self, cmd, cwd, env_extra=None, opts=()):
        """Runs cmd under `recorderd run`; returns (result, session dir)."""
        self.nout += 1
        out = os.path.join(self.tmp, 'out%d' % self.nout)
        env = base_env()
        env.update(env_extra or {})
        res = run([self.args.recorderd, 'run', '--quiet', '--out', out, '--format', 'all'] +
                  list(opts) + ['--'] + cmd,
                  cwd, env, timeout=300)
        dirs = [d for d in os.listdir(out) if os.path.isdir(os.path.join(out, d))]
        expect(len(dirs) == 1, 'expected one session in %s: %r' % (out, dirs))
        return res, os.path.join(out, dirs[0])

    def reference(self, cmd, cwd, env_extra=None):
        """Runs cmd with the reference line counter; returns its counts
        {source: {line: n}} (sources as Lua names them, '@' included)."""
        out = os.path.join(self.tmp, 'refcount.out')
        env = base_env()
        env.update(env_extra or {})
        env['REFCOUNT_OUT'] = out
        env['LUA_CPATH'] = '%s/?.so;%s' % (self.refdir, env.get('LUA_CPATH', ';;'))
        pre = ['-e', REF54_LUA] if is54(cmd[0]) else ['-lrefcount']
        res = run(cmd[:1] + pre + cmd[1:], cwd, env, timeout=300)
        self.ref_res = res
        counts = {}
        try:
            with open(out) as f:
                for row in f:
                    hexsrc, line, n = row.split()
                    src = bytes.fromhex(hexsrc[1:]).decode('utf-8', 'replace')
                    counts.setdefault(src, {})[int(line)] = int(n)
        except (OSError, ValueError) as e:
            raise Failure('reference counter failed (%s); stderr:\n%s'
                          % (e, show_bytes(res.err)))
        os.unlink(out)
        self.ref_exec = {}
        if is54(cmd[0]):
            with open(out + '.exec') as f:
                for row in f:
                    hexsrc, line = row.split()
                    src = bytes.fromhex(hexsrc[1:]).decode('utf-8', 'replace')
                    self.ref_exec.setdefault(src, set()).add(int(line))
            os.unlink(out + '.exec')
        return counts

    def report(self, args, cwd=None):
        res = run([self.args.recorderd, 'report'] + args, cwd or self.tmp, base_env())
        expect(res.status == 0, 'recorderd report %s: status %d\n%s'
               % (' '.join(args), res.status, show_bytes(res.err)))
        return res

# }======================================================================


# {======================================================================
# Readers

def sf_path(sf, cwd, path):
    """An SF of path as an absolute path, checking the rule: a file under
    the program's working directory cwd is relative to it (as luacov
    writes, so CI services need no mapping), any other absolute."""
    under = sf.startswith(cwd.rstrip('/') + '/')
    if os.path.isabs(sf):
        expect(not under, '%s: SF %s is under the working directory %s but not relative'
               % (path, sf, cwd))
        return sf
    expect(sf and not sf.startswith('./') and '..' not in sf.split('/'),
           '%s: SF %r' % (path, sf))
    return os.path.join(cwd, sf)


def session_cwd(session):
    """The traced program's working directory, from session.json."""
    with open(os.path.join(session, 'session.json')) as f:
        return json.load(f)['cwd']


def read_lcov(path, cwd):
    """{SF: {'da': {line: n}, 'fn': {name: line}, 'fnda': {name: n},
    'totals': {'LF': n, ...}}}, each SF made absolute (sf_path: cwd is the
    working directory of the traced program, the first one's for a merge)."""
    recs, cur = {}, None
    with open(path) as f:
        for row in f:
            row = row.rstrip('\n')
            key, _, val = row.partition(':')
            if key == 'SF':
                val = sf_path(val, cwd, path)
                expect(val not in recs, 'SF %s twice in %s' % (val, path))
                cur = recs[val] = {'da': {}, 'fn': {}, 'fnda': {}, 'totals': {}}
            elif key == 'DA':
                line, n = val.split(',')[:2]
                cur['da'][int(line)] = int(n)
            elif key == 'FN':
                line, name = val.split(',', 1)
                expect(name not in cur['fn'], 'FN %s twice in %s' % (name, path))
                cur['fn'][name] = int(line)
            elif key == 'FNDA':
                n, name = val.split(',', 1)
                cur['fnda'][name] = int(n)
            elif key in ('LF', 'LH', 'FNF', 'FNH'):
                cur['totals'][key] = int(val)
            elif row.startswith('# luatrace: INCOMPLETE: ') and cur is None:
                pass  # a cut trace, said before the first record
            elif key not in ('TN', 'end_of_record'):
                raise Failure('%s: unexpected line %r' % (path, row))
    return recs


def luac_listing(path, lua, version='5.1'):
    """(instruction lines, prototype line ranges) of luacVERSION -l -l -p.
    Under 5.4, VARARGPREP is left out: 5.4 (5.4.4 on, what Debian has)
    gives it no line (activelines skips a vararg function's first
    instruction) and no line event."""
    name = 'luac' + version
    luac = os.path.join(os.path.dirname(lua), name) if os.sep in lua else name
    res = subprocess.run([luac, '-l', '-l', '-p', path], capture_output=True, text=True,
                         errors='replace')
    expect(res.returncode == 0, '%s -p %s failed: %s' % (name, path, res.stderr))
    lines, protos = set(), []
    for row in res.stdout.splitlines():
        m = re.match(r'\t\d+\t\[(\d+)\]\t(\w+)', row)
        if m and not (version == '5.4' and m.group(2) == 'VARARGPREP'):
            lines.add(int(m.group(1)))
        m = re.match(r'(?:main|function) <.*:(\d+),(\d+)> \(', row)
        if m:  # every prototype, two of one line range included
            protos.append((int(m.group(1)), int(m.group(2))))
    return lines, protos


def read_text(path):
    """coverage.txt: the Total row (hits, missed, fns hit, fns) and the hit
    counts of the listings of sources outside the totals {name: {line: n}}.
    The listings copy the sources' bytes, which need not be UTF-8 (lua-leg's
    scanner.lua holds a Latin-1 byte): undecodable bytes are kept as
    surrogates."""
    with open(path, errors='surrogateescape') as f:
        text = f.read()
    m = re.search(r'^Total +(\d+) +(\d+) +\S+ +(\d+)/(\d+) ', text, re.M)
    expect(m, '%s: no Total row' % path)
    total = tuple(int(x) for x in m.groups())
    others = set()
    part = text.split('\nNot in the totals', 1)
    if len(part) == 2:
        for row in part[1].split('\n\n', 1)[0].splitlines()[1:]:
            others.add(row[2:])
    listings = {}
    for m in re.finditer(r'^={78}\n([^\n]*)\n={78}\n(.*?)(?=^={78}\n|\Z)', text,
                         re.M | re.S):
        name, body = m.group(1), m.group(2)
        rows = {}
        for r in re.finditer(r'^ *(\d+) \(line (\d+)\)$', body, re.M):
            rows[int(r.group(2))] = int(r.group(1))
        listings[name] = rows
    return total, others, listings, text


def lcov_summary(path):
    """(lines hit, lines, functions hit, functions) from lcov --summary."""
    res = subprocess.run(['lcov', '--summary', path], capture_output=True, text=True)
    expect(res.returncode == 0, 'lcov --summary %s: %s%s' % (path, res.stdout, res.stderr))
    return summary_numbers(res.stdout + res.stderr, 'lcov --summary')


def summary_numbers(out, who):
    # "1 of 1 function", "2 of 3 functions"
    lm = re.search(r'lines\.+: [\d.]+% \((\d+) of (\d+) lines?\)', out)
    fm = re.search(r'functions\.+: [\d.]+% \((\d+) of (\d+) functions?\)', out)
    expect(lm, '%s printed no line totals:\n%s' % (who, out))
    fh, ft = (int(fm.group(1)), int(fm.group(2))) if fm else (0, 0)
    return int(lm.group(1)), int(lm.group(2)), fh, ft


def genhtml(path, tmp, cwd):
    """Run from cwd, the traced program's working directory, as in CI: the
    relative SF are relative to it."""
    html = tempfile.mkdtemp(prefix='html-', dir=tmp)
    res = subprocess.run(['genhtml', '-o', html, os.path.abspath(path)], capture_output=True,
                         text=True, cwd=cwd)
    expect(res.returncode == 0, 'genhtml %s: status %d\n%s%s'
           % (path, res.returncode, res.stdout[-2000:], res.stderr[-2000:]))
    expect(os.path.isfile(os.path.join(html, 'index.html')), 'genhtml wrote no index.html')
    shutil.rmtree(html, ignore_errors=True)
    return summary_numbers(res.stdout + res.stderr, 'genhtml')


def read_luacov(path):
    """{name: [count of line 1, ...]}; checks the layout on the way."""
    with open(path) as f:
        rows = f.read().split('\n')
    expect(rows[-1] == '', '%s does not end with a newline' % path)
    rows = rows[:-1]
    expect(len(rows) % 2 == 0, '%s: odd number of lines' % path)
    stats = {}
    for head, counts in zip(rows[0::2], rows[1::2]):
        m = re.match(r'(\d+):(.+)$', head)
        expect(m, '%s: bad header %r' % (path, head))
        n = int(m.group(1))
        expect(counts.endswith(' ') or n == 0,
               '%s: counts of %s lack the trailing space' % (path, m.group(2)))
        values = counts.split(' ')[:-1] if n else []
        expect(len(values) == n, '%s: %s has %d counts, max %d'
               % (path, m.group(2), len(values), n))
        stats[m.group(2)] = [int(v) for v in values]
    expect(list(stats) == sorted(stats), '%s: files not sorted' % path)
    return stats

# }======================================================================


# {======================================================================
# The checks

def check_exact(lcov, lua):
    """DA lines and FN records against luac5.1 -l -l -p (luac5.4's under
    lua5.4), file by file."""
    for sf, rec in lcov.items():
        if is54(lua):
            check_exact54(sf, rec, lua)
            continue
        lines, protos = luac_listing(sf, lua)
        got = set(rec['da'])
        expect(got == lines, '%s: executable lines differ from luac5.1 -l -l: only ours %s,'
               ' only luac %s' % (sf, sorted(got - lines)[:20], sorted(lines - got)[:20]))
        fn_lines = sorted(rec['fn'].values())
        want = sorted(max(a, 1) for a, _ in protos)
        expect(fn_lines == want, '%s: FN lines %s, luac prototypes %s'
               % (sf, fn_lines[:20], want[:20]))
        t = rec['totals']
        expect(t.get('LF') == len(rec['da']) and t.get('FNF') == len(rec['fn'])
               and t.get('LH') == sum(1 for v in rec['da'].values() if v)
               and t.get('FNH') == sum(1 for v in rec['fnda'].values() if v),
               '%s: LF/LH/FNF/FNH do not match the records: %s' % (sf, t))


def check_exact54(sf, rec, lua):
    """DA lines and FN records against luac5.4 -l -l -p: every prototype
    luac5.4 lists, called or not, is an FN (a file 5.1 cannot compile has
    its never-called functions from the collector's NEST records)."""
    lines, protos = luac_listing(sf, lua, '5.4')
    got = set(rec['da'])
    expect(got == lines, '%s: executable lines differ from luac5.4 -l -l: only ours %s,'
           ' only luac %s' % (sf, sorted(got - lines)[:20], sorted(lines - got)[:20]))
    fn_lines = sorted(rec['fn'].values())
    want = sorted(max(a, 1) for a, _ in protos)
    expect(fn_lines == want, '%s: FN lines %s, luac5.4 prototypes %s'
           % (sf, fn_lines[:20], want[:20]))
    t = rec['totals']
    expect(t.get('LF') == len(rec['da']) and t.get('FNF') == len(rec['fn'])
           and t.get('LH') == sum(1 for v in rec['da'].values() if v)
           and t.get('FNH') == sum(1 for v in rec['fnda'].values() if v),
           '%s: LF/LH/FNF/FNH do not match the records: %s' % (sf, t))


def check_activelines(ref_exec, lcov, cwd):
    """5.4: the activelines of every function called are DA lines, and so
    is every line that has code in a function called (a DA line outside
    them is in a function that never ran: no hits)."""
    for src, lines in ref_exec.items():
        path = os.path.normpath(os.path.join(cwd, src[1:])) if src.startswith('@') else None
        if path not in lcov:
            continue
        da = lcov[path]['da']
        expect(lines <= set(da), '%s: activelines %s are not DA lines' % (path, sorted(lines - set(da))[:20]))
        extra = {l for l in da if l not in lines and da[l]}
        expect(not extra, '%s: lines %s were hit but no function called has them' % (path, sorted(extra)[:20]))


def check_consumers(session, tmp, total, cwd):
    """lcov --summary and genhtml agree with coverage.txt's totals."""
    path = os.path.join(session, 'coverage.lcov')
    hits, missed, fh, ft = total
    want = (hits, hits + missed, fh, ft)
    if os.path.getsize(path) == 0:
        expect(want == (0, 0, 0, 0), 'empty coverage.lcov, but coverage.txt totals %s' % (want,))
        return
    got = lcov_summary(path)
    expect(got == want, 'lcov --summary says %s (hit, lines, fn hit, fns), coverage.txt %s'
           % (got, want))
    got = genhtml(path, tmp, cwd)
    expect(got == want, 'genhtml says %s, coverage.txt %s' % (got, want))


def check_luacov(session, lcov, cwd):
    stats = read_luacov(os.path.join(session, 'luacov.stats.out'))
    expect(len(stats) == len(lcov), 'luacov.stats.out has %d files, coverage.lcov %d'
           % (len(stats), len(lcov)))
    for name, counts in stats.items():
        expect(not name.startswith('./') and not name.startswith('@'), 'luacov key %r' % name)
        sf = os.path.normpath(os.path.join(cwd, name))
        expect(sf in lcov, 'luacov file %s (%s) is not in coverage.lcov' % (name, sf))
        da = lcov[sf]['da']
        expect(len(counts) == max(da, default=0), '%s: max %d, last DA line %d'
               % (name, len(counts), max(da, default=0)))
        for i, n in enumerate(counts, 1):
            expect(n == da.get(i, 0), '%s:%d: luacov %d, DA %s' % (name, i, n, da.get(i)))


# coverage-04.dtd as facts: each element's children (in order; * any
# number) and its required attributes
COBERTURA = {
    'coverage': (['sources?', 'packages'], ['line-rate', 'branch-rate', 'lines-covered',
                 'lines-valid', 'branches-covered', 'branches-valid', 'complexity', 'version',
                 'timestamp']),
    'sources': (['source*'], []),
    'source': ([], []),
    'packages': (['package*'], []),
    'package': (['classes'], ['name', 'line-rate', 'branch-rate', 'complexity']),
    'classes': (['class*'], []),
    'class': (['methods', 'lines'], ['name', 'filename', 'line-rate', 'branch-rate',
                                     'complexity']),
    'methods': (['method*'], []),
    'method': (['lines'], ['name', 'signature', 'line-rate', 'branch-rate', 'complexity']),
    'lines': (['line*'], []),
    'line': (['conditions*'], ['number', 'hits']),
}


def check_dtd(el):
    expect(el.tag in COBERTURA, 'Cobertura: unknown element <%s>' % el.tag)
    kids, attrs = COBERTURA[el.tag]
    missing = [a for a in attrs if a not in el.attrib]
    expect(not missing, 'Cobertura: <%s> lacks %s' % (el.tag, missing))
    tags, k = [c.tag for c in el], 0
    for spec in kids:
        name, many, opt = spec.rstrip('*?'), spec.endswith('*'), spec.endswith('?')
        if many:
            while k < len(tags) and tags[k] == name:
                k += 1
        elif k < len(tags) and tags[k] == name:
            k += 1
        else:
            expect(opt, 'Cobertura: <%s> wants <%s> at %d: %r' % (el.tag, name, k, tags))
    expect(k == len(tags), 'Cobertura: <%s> has %r' % (el.tag, tags[k:]))
    for c in el:
        check_dtd(c)


def check_cobertura(session, lcov):
    """coverage.xml against the DTD's rules and against coverage.lcov."""
    path = os.path.join(session, 'coverage.xml')
    if shutil.which('xmllint'):
        res = run(['xmllint', '--noout', '--nonet', path], session, base_env())
        expect(res.status == 0, 'xmllint: %s' % show_bytes(res.err))
    root = ET.parse(path).getroot()
    check_dtd(root)
    # the program's working directory first, files under it relative to
    # it (as CI services match them to the project); files elsewhere
    # relative to a second source, the deepest directory holding them
    with open(os.path.join(session, 'session.json')) as f:
        cwd = json.load(f)['cwd']
    under = {sf for sf in lcov if sf.startswith(cwd.rstrip('/') + '/')}
    elsewhere = set(lcov) - under
    sources = [s.text for s in root.iter('source')]
    want = [cwd] + ([os.path.commonpath([os.path.dirname(sf) for sf in elsewhere])]
                    if elsewhere else [])
    expect(sources == want, 'Cobertura sources %r, want %r' % (sources, want))
    got = {}
    for cls in root.iter('class'):
        fn = cls.get('filename')
        expect(not os.path.isabs(fn) and '..' not in fn.split('/'), 'filename %r' % fn)
        sf = os.path.join(sources[0], fn)
        if sf not in under:
            expect(len(sources) == 2, 'Cobertura class %s: not under %s' % (fn, sources[0]))
            sf = os.path.join(sources[1], fn)
        expect(sf in lcov and sf not in got, 'Cobertura class %s: no SF, or twice' % sf)
        got[sf] = cls
        rec = lcov[sf]
        lines = {int(ln.get('number')): int(ln.get('hits')) for ln in cls.find('lines')}
        expect(lines == rec['da'], '%s: Cobertura lines differ from DA' % sf)
        methods = {m.get('name'): m for m in cls.find('methods')}
        expect(set(methods) == set(rec['fn']), '%s: methods %r, FN %r'
               % (sf, sorted(methods), sorted(rec['fn'])))
        for name, m in methods.items():
            ml = {int(ln.get('number')): int(ln.get('hits')) for ln in m.find('lines')}
            expect(all(rec['da'].get(k) == v for k, v in ml.items()),
                   '%s: method %s lines are not DA lines' % (sf, name))
        hit = sum(1 for v in rec['da'].values() if v)
        expect(abs(float(cls.get('line-rate')) - (hit / len(rec['da']) if rec['da'] else 1))
               < 1e-4, '%s: line-rate %s' % (sf, cls.get('line-rate')))
    expect(set(got) == set(lcov), 'Cobertura classes %r, SF %r' % (sorted(got), sorted(lcov)))
    lf = sum(r['totals']['LF'] for r in lcov.values())
    lh = sum(r['totals']['LH'] for r in lcov.values())
    expect((int(root.get('lines-valid')), int(root.get('lines-covered'))) == (lf, lh),
           'Cobertura totals %s/%s, LCOV %d/%d' % (root.get('lines-covered'),
                                                 root.get('lines-valid'), lh, lf))


def check_rebuild(ctx, session):
    """report --format F from the trace equals the session's file."""
    other = tempfile.mkdtemp(prefix='elsewhere-', dir=ctx.tmp)
    for fmt, name in (('lcov', 'coverage.lcov'), ('luacov', 'luacov.stats.out'),
                      ('coverage', 'coverage.txt'), ('cobertura', 'coverage.xml')):
        out = os.path.join(other, name)
        ctx.report([session, '--format', fmt, '-o', out], cwd=other)
        with open(out, 'rb') as a, open(os.path.join(session, name), 'rb') as b:
            x, y = a.read(), b.read()
        if fmt == 'coverage':  # the title names the session, or the trace
            x, y = x.split(b'\n', 1)[1], y.split(b'\n', 1)[1]
        if fmt == 'cobertura':  # when it was written
            x, y = (re.sub(rb' timestamp="\d+"', b'', v) for v in (x, y))
        expect(x == y, 'report --format %s differs from the session\'s %s' % (fmt, name))
    shutil.rmtree(other, ignore_errors=True)


def check_reference(ref, lcov, others, listings, cwd, skip):
    """Every line's hits against the reference counts; sources that are
    not files by their total of line events."""
    ref_other = 0
    skip = {os.path.realpath(p) for p in skip}
    for src, lines in ref.items():
        path = os.path.normpath(os.path.join(cwd, src[1:])) if src.startswith('@') else None
        if path and os.path.realpath(path) in skip:
            continue
        if path in lcov:
            da = lcov[path]['da']
            for line, n in lines.items():
                expect(da.get(line) == n, '%s:%d: %s line events, the reference counted %d'
                       % (path, line, da.get(line), n))
            for line, n in da.items():
                expect(n == lines.get(line, 0), '%s:%d: %d line events, the reference %d'
                       % (path, line, n, lines.get(line, 0)))
        else:
            ref_other += sum(lines.values())
    for sf in lcov:
        if os.path.realpath(sf) not in skip:
            expect(any(s.startswith('@') and os.path.normpath(os.path.join(cwd, s[1:])) == sf
                       for s in ref) or not any(lcov[sf]['da'].values()),
                   '%s has hits the reference never saw' % sf)
    got_other = sum(sum(listings.get(name, {}).values()) for name in others)
    expect(got_other == ref_other, 'sources that are not files: %d line events, the reference'
           ' %d' % (got_other, ref_other))


def check_same_trace(ctx, session, lcov, others, listings, cwd):
    """Hits against the other reports of the same trace: the annotate
    listing, line by line, and the total of the line-weighted folded
    stacks."""
    res = ctx.report([session, '--format', 'annotate'])
    per_src, cur = {}, None
    for row in res.out.decode('utf-8', 'replace').split('\n'):
        if row.startswith('== ') and '   (hits: line events' in row:
            cur = per_src.setdefault(row[3:].rsplit('   (hits: line events', 1)[0], {})
            continue
        m = re.match(r' *(\d+) +[\d.]+ +(\d+)  ', row)
        if m and cur is not None and int(m.group(1)):  # 0: time only (trace start)
            cur[int(m.group(2))] = cur.get(int(m.group(2)), 0) + int(m.group(1))
    by_path = {}
    for src, lines in per_src.items():
        path = os.path.normpath(os.path.join(cwd, src))
        if path in lcov:
            for line, n in lines.items():
                by_path.setdefault(path, {})[line] = by_path.get(path, {}).get(line, 0) + n
    for path, rec in lcov.items():
        hits = {k: v for k, v in rec['da'].items() if v}
        expect(hits == by_path.get(path, {}), '%s: DA hits differ from the annotate report:'
               ' %s' % (path, sorted(set(hits.items()) ^ set(by_path.get(path, {}).items()))[:10]))
    res = ctx.report([session, '--format', 'folded', '--weight', 'lines'])
    folded = sum(int(r.rsplit(' ', 1)[1]) for r in res.out.decode('utf-8', 'replace')
                 .splitlines() if r)
    ours = sum(sum(r['da'].values()) for r in lcov.values()) + sum(
        sum(listings.get(name, {}).values()) for name in others)
    expect(ours == folded, 'coverage counts %d line events, the folded stacks %d'
           % (ours, folded))


def check_annotate_dir(session, lcov):
    """annotate/: one visible file per covered file, whatever names it was
    reached by, holding exactly its DA hits."""
    adir = os.path.join(session, 'annotate')
    seen = {}
    for name in os.listdir(adir):
        expect(not name.startswith('.'), 'hidden annotate file %r' % name)
        with open(os.path.join(adir, name), encoding='utf-8', errors='replace') as f:
            text = f.read()
        m = re.match(r'== (.*?)   \(hits: line events', text)
        expect(m, 'annotate/%s: no header' % name)
        if m.group(1) not in lcov:
            continue
        expect(m.group(1) not in seen, '%s annotated twice: %s, %s'
               % (m.group(1), seen.get(m.group(1)), name))
        seen[m.group(1)] = name
        hits = {}
        for r in re.finditer(r'^ *(\d+) +[\d.]+ +(\d+)  ', text, re.M):
            if int(r.group(1)):
                hits[int(r.group(2))] = int(r.group(1))
        want = {k: v for k, v in lcov[m.group(1)]['da'].items() if v}
        expect(hits == want, 'annotate/%s: hits differ from DA: %s' % (name, sorted(
            set(hits.items()) ^ set(want.items()))[:10]))
    missing = [sf for sf, r in lcov.items() if any(r['da'].values()) and sf not in seen]
    expect(not missing, 'no annotate file for %s' % missing)
    return seen


def other_names(others):
    """Names of the sources listed outside the totals ("NAME: N lines hit; NOTE")."""
    names = set()
    for row in others:
        m = re.match(r'(.*): \d+ lines? hit; ', row)
        if m:
            names.add(m.group(1))
    return names


def check_incomplete(session):
    """A session that ended truncated says so in the head of every
    coverage report and in report.html; a complete one in none."""
    with open(os.path.join(session, 'session.json')) as f:
        cut = json.load(f)['status'] == 'truncated'
    heads = {}
    for name in ('coverage.txt', 'coverage.lcov', 'coverage.xml', 'report.html'):
        with open(os.path.join(session, name), encoding='utf-8', errors='replace') as f:
            heads[name] = f.read()
    said = {'coverage.txt': heads['coverage.txt'].split('\n')[1].startswith('INCOMPLETE: '),
            'coverage.lcov': heads['coverage.lcov'].startswith('# luatrace: INCOMPLETE: ') or
            (cut and heads['coverage.lcov'] == ''),  # no record: nothing to mislead
            'coverage.xml': '\n<!-- luatrace: INCOMPLETE: ' in heads['coverage.xml'],
            'report.html': '<th class="l">INCOMPLETE</th>' in heads['report.html']}
    wrong = [n for n, v in said.items() if v != cut]
    expect(not wrong, 'session %s, yet %s %s' % ('truncated' if cut else 'complete', wrong,
                                                 'do not say so' if cut else 'say it was cut'))
    return cut


def check_session(ctx, session, cwd, ref=None, skip=()):
    for name in ('coverage.lcov', 'luacov.stats.out', 'coverage.txt', 'coverage.xml'):
        expect(os.path.isfile(os.path.join(session, name)), 'no %s in %s' % (name, session))
    check_incomplete(session)
    lcov = read_lcov(os.path.join(session, 'coverage.lcov'), session_cwd(session))
    check_cobertura(session, lcov)
    total, others, listings, _ = read_text(os.path.join(session, 'coverage.txt'))
    check_exact(lcov, ctx.args.lua)
    check_consumers(session, ctx.tmp, total, session_cwd(session))
    check_luacov(session, lcov, cwd)
    check_rebuild(ctx, session)
    check_same_trace(ctx, session, lcov, other_names(others), listings, cwd)
    check_annotate_dir(session, lcov)
    if ref is not None:
        check_reference(ref, lcov, other_names(others), listings, cwd, skip)
    return lcov, total

# }======================================================================


# {======================================================================
# Cases

def case_program(ctx):
    path = os.path.abspath(ctx.args.program)
    cwd, prog = os.path.dirname(path), os.path.basename(path)
    res, session = ctx.traced([ctx.args.lua, prog], cwd)
    ref = ctx.reference([ctx.args.lua, prog], cwd)
    # a reference that failed part-way (its own hook raising, or lua5.4
    # crashing under it) counted only the lines before it: the two runs
    # must end with one status (not one output: REF54_LUA's own wrap
    # raises a failed body's message without 5.4's position)
    expect(ctx.ref_res.status == res.status,
           'the reference run ended otherwise than the traced run (status %r, %r); stderr:\n%s'
           % (ctx.ref_res.status, res.status, show_bytes(ctx.ref_res.err)))
    lcov, total = check_session(ctx, session, cwd, ref)
    if is54(ctx.args.lua):
        check_activelines(ctx.ref_exec, lcov, cwd)
    print('%s: ok (%d files, %d of %d lines, %d of %d functions)'
          % (prog, len(lcov), total[0], total[0] + total[1], total[2], total[3]))


def build_module(tmp, name, text):
    """Compiles C source text into tmp/name.so."""
    src = os.path.join(tmp, name + '.c')
    with open(src, 'w') as f:
        f.write(text)
    try:
        cflags = subprocess.run(['pkg-config', '--cflags', 'lua5.1'], capture_output=True,
                                text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        cflags = ['-I/usr/include/lua5.1']
    res = subprocess.run([os.environ.get('CC', 'cc'), '-shared', '-fPIC', '-O2'] + cflags
                         + [src, '-o', os.path.join(tmp, name + '.so')],
                         capture_output=True, text=True)
    expect(res.returncode == 0, 'cannot build %s.so:\n%s' % (name, res.stderr))


def case_threads(ctx):
    work = os.path.join(ctx.tmp, 'threads')
    os.mkdir(work)
    build_module(work, 'cothread', COTHREAD_C)
    for name, text in (('bodies.lua', BODIES), ('main.lua', THREADS_MAIN)):
        with open(os.path.join(work, name), 'w') as f:
            f.write(text)
    env = {'LUA_CPATH': work + '/?.so;;'}
    # LUA_INIT set (empty): recorderd run leaves it alone, so tracing starts
    # at the program's own require "luatrace", after `early` was created
    res, session = ctx.traced([ctx.args.lua, 'main.lua'], work, dict(env, LUA_INIT=''))
    expect(res.status == 0, 'traced run failed:\n' + show_bytes(res.err))
    ref = ctx.reference([ctx.args.lua, 'main.lua'], work, dict(env, REFCOUNT_DEFER='1'))
    bodies = os.path.join(work, 'bodies.lua')
    lcov, _ = check_session(ctx, session, work, None)
    da = lcov[bodies]['da']
    want = {}
    for src, lines in ref.items():
        if src.startswith('@') and os.path.normpath(os.path.join(work, src[1:])) == bodies:
            want = lines
    for line in sorted(set(da) | set(want)):
        expect(da.get(line, 0) == want.get(line, 0), 'bodies.lua:%d: %s line events, the'
               ' reference %s' % (line, da.get(line), want.get(line, 0)))
    expect(want.get(14, 0) == 10 and want.get(7, 0) == 5,
           'the reference did not see the C thread or the early coroutine: %s' % want)
    # bodies.lua's main chunk ran before tracing began, M.never never ran
    fnda = lcov[bodies]['fnda']
    expect(fnda.get('main chunk') == 0 and fnda.get('function@31') == 0 and
           all(v > 0 for k, v in fnda.items() if k not in ('main chunk', 'function@31')),
           'function hits: %s' % fnda)
    print('threads: ok (%d line events in bodies.lua)' % sum(da.values()))


def case_merge(ctx):
    prog = 'coroutines_nested.lua'
    _, s1 = ctx.traced([ctx.args.lua, prog], CORPUS)
    _, s2 = ctx.traced([ctx.args.lua, prog], CORPUS)
    merged = os.path.join(ctx.tmp, 'merged.lcov')
    ctx.report(['--merge', s1, s2, '-o', merged])
    cwd = session_cwd(s1)
    one, two = read_lcov(os.path.join(s1, 'coverage.lcov'), cwd), read_lcov(merged, cwd)
    expect(set(one) == set(two), 'merged files %s, single run %s' % (set(two), set(one)))
    for sf in one:
        expect({k: 2 * v for k, v in one[sf]['da'].items()} == two[sf]['da'],
               '%s: merged DA counts are not twice the single run\'s' % sf)
        expect({k: 2 * v for k, v in one[sf]['fnda'].items()} == two[sf]['fnda'],
               '%s: merged FNDA counts are not twice the single run\'s' % sf)
    theirs = os.path.join(ctx.tmp, 'lcov-merged.lcov')
    res = subprocess.run(['lcov', '-q', '-a', os.path.join(s1, 'coverage.lcov'), '-a',
                          os.path.join(s2, 'coverage.lcov'), '-o', theirs],
                         capture_output=True, text=True)
    expect(res.returncode == 0, 'lcov -a failed: ' + res.stderr)
    lc = read_lcov(theirs, cwd)
    for sf in one:
        expect(lc[sf]['da'] == two[sf]['da'] and lc[sf]['fnda'] == two[sf]['fnda'],
               '%s: lcov -a and report --merge disagree' % sf)
    stats = os.path.join(ctx.tmp, 'merged.stats')
    ctx.report(['--merge', s1, s2, '--format', 'luacov', '-o', stats])
    single = read_luacov(os.path.join(s1, 'luacov.stats.out'))
    double = read_luacov(stats)
    expect(double == {k: [2 * n for n in v] for k, v in single.items()},
           'merged luacov stats are not twice the single run\'s')
    for lcovfile in (merged,):
        h, n, fh, fn = lcov_summary(lcovfile)
        expect((h, n) == (sum(1 for r in two.values() for v in r['da'].values() if v),
                          sum(len(r['da']) for r in two.values())), 'lcov --summary of merge')
        genhtml(lcovfile, ctx.tmp, cwd)
    print('merge: ok (%d files, counts doubled, equal to lcov -a)' % len(one))


OPTIONS_PROG = '''local a = require "lib.a"
local c = require "vendor.c"
print(a.f(2), c.g(3))
dofile("gone.lua")
os.remove("gone.lua")
print(loadstring("return 1 + 1")())
-- named like a file that is never loaded: no file's coverage
print(loadstring("local q = 1\\nq = q + 1\\nreturn q", "=lib/unused.lua")())
'''


def case_options(ctx):
    work = os.path.join(ctx.tmp, 'opts')
    for d in ('lib', 'vendor'):
        os.makedirs(os.path.join(work, d))
    files = {
        'main.lua': OPTIONS_PROG,
        'lib/a.lua': 'local M = {}\nfunction M.f(x)\n  return x * 2\nend\n'
                     'function M.unused()\n  return 0\nend\nreturn M\n',
        'lib/unused.lua': 'local t = {}\n\nfunction t.x()\n  return 1\nend\n\nreturn t\n',
        'vendor/c.lua': 'return { g = function(x) return x + 1 end }\n',
        'gone.lua': 'local x = 1\nx = x + 1\n',
    }
    for name, text in files.items():
        with open(os.path.join(work, name), 'w') as f:
            f.write(text)
    env = {'LUA_PATH': './?.lua;;'}
    res, session = ctx.traced([ctx.args.lua, 'main.lua'], work, env)
    expect(res.status == 0, 'traced run failed:\n' + show_bytes(res.err))
    lcov, _ = check_session(ctx, session, work)
    expect(os.path.join(work, 'lib/a.lua') in lcov and os.path.join(work, 'vendor/c.lua')
           in lcov and os.path.join(work, 'gone.lua') not in lcov,
           'session files: %s' % sorted(lcov))
    _, others, _, text = read_text(os.path.join(session, 'coverage.txt'))
    expect(any(r.startswith('gone.lua: 2 lines hit; no source file: ') and
               'No such file' in r for r in others),
           'the deleted file is not noted: %s' % others)
    expect(any(r.startswith('[string "return 1 + 1"]: 1 line hit;') for r in others),
           'the loadstring chunk is not listed: %s' % others)
    expect(any(r.startswith('lib/unused.lua: 3 lines hit; a chunk loaded from a string or '
                            "named with '=': no source file") for r in others),
           'the "=lib/unused.lua" chunk is not listed as no file: %s' % others)
    # chunks with no source get no annotate file and no listing in report.html
    # (a program may load thousands), only a row for them all; run's
    # LUA_INIT chunk, the collector's, is none of them (it is not traced)
    ann = os.listdir(os.path.join(session, 'annotate'))
    expect(not [n for n in ann if 'string' in n or 'LUA_INIT' in n or 'unused' in n]
           and len(ann) == 4, 'annotate files: %s' % ann)
    expect(not [r for r in others if 'LUA_INIT' in r], 'LUA_INIT is listed: %s' % others)
    with open(os.path.join(session, 'report.html'), encoding='utf-8') as f:
        page = f.read()
    expect('2 chunks loaded from strings or named with &apos;=&apos;' in page
           and '>[string &quot;return 1 + 1&quot;]</h3>' not in page,
           'report.html lists string chunks')

    def lcov_of(*opts):
        out = os.path.join(ctx.tmp, 'opt.lcov')
        ctx.report([session, '--format', 'lcov', '-o', out] + list(opts), cwd=work)
        got = read_lcov(out, session_cwd(session))
        check_exact(got, ctx.args.lua)
        if got:
            genhtml(out, ctx.tmp, session_cwd(session))
        return {os.path.relpath(sf, work) for sf in got}, got

    names, _ = lcov_of('--exclude', os.path.join(work, 'vendor'))
    expect(names == {'main.lua', 'lib/a.lua'}, '--exclude DIR: %s' % names)
    names, _ = lcov_of('--exclude', '*/c.lua', '--exclude', 'main.lua')
    expect(names == {'lib/a.lua'}, '--exclude PAT twice: %s' % names)
    names, _ = lcov_of('--include', '*/lib/*', '--include', 'vendor/*')
    expect(names == {'lib/a.lua', 'vendor/c.lua'}, '--include twice: %s' % names)
    for pat in ('./lib', './lib/', './lib/*'):  # a directory as the shell names it
        names, _ = lcov_of('--include', pat)
        expect(names == {'lib/a.lua'}, '--include %s: %s' % (pat, names))
    names, got = lcov_of('--include-untested', 'lib', '--include-untested', work + '/vendor/')
    expect(names == {'main.lua', 'lib/a.lua', 'lib/unused.lua', 'vendor/c.lua'},
           '--include-untested: %s' % names)
    unused = got[os.path.join(work, 'lib/unused.lua')]
    expect(unused['da'] and not any(unused['da'].values()) and not any(unused['fnda'].values()),
           'an untested file has hits: %s' % unused)
    names, _ = lcov_of('--include-untested', 'lib', '--exclude', '*unused*')
    expect('lib/unused.lua' not in names, '--exclude applies to untested files: %s' % names)
    # run's own --include/--exclude: the session's coverage reports are
    # report's of the same filters, byte for byte
    pats = ['--include', '*/lib/*', '--include', 'vendor/*', '--exclude', '*/c.lua']
    with open(os.path.join(work, 'gone.lua'), 'w') as f:  # the program removes it again
        f.write(files['gone.lua'])
    res, fsession = ctx.traced([ctx.args.lua, 'main.lua'], work, env, pats)
    expect(res.status == 0, 'run --include: %s' % show_bytes(res.err))
    for fmt, name in (('lcov', 'coverage.lcov'), ('luacov', 'luacov.stats.out'),
                      ('coverage', 'coverage.txt')):
        out = os.path.join(ctx.tmp, 'filtered.' + fmt)
        ctx.report([session, '--format', fmt, '-o', out] + pats, cwd=work)
        with open(out, 'rb') as a, open(os.path.join(fsession, name), 'rb') as b:
            want, got = a.read(), b.read()
        if fmt == 'coverage':  # its title names the session as it was given
            want, got = want.split(b'\n', 1)[1], got.split(b'\n', 1)[1]
        expect(got == want, 'run %s: %s differs from report\'s:\n%s\nwant:\n%s' %
               (' '.join(pats), name, got[:600], want[:600]))
    expect(set(read_lcov(os.path.join(fsession, 'coverage.lcov'), session_cwd(fsession))) ==
           {os.path.join(work, 'lib/a.lua')}, 'run --include: %s' % fsession)
    with open(os.path.join(fsession, 'report.html'), encoding='utf-8') as f:
        page = f.read()
    expect('main.lua</h3>' not in page and 'lib/a.lua</h3>' in page,
           'report.html of run --include lists other sources')
    stats = os.path.join(ctx.tmp, 'untested.stats')
    ctx.report([session, '--format', 'luacov', '--include-untested', 'lib', '-o', stats],
               cwd=work)
    expect('lib/unused.lua' in read_luacov(stats), 'untested file missing from luacov stats')

    # an edited source: two lines inserted at the top move every hit
    a = os.path.join(work, 'lib/a.lua')
    with open(a) as f:
        old = f.read()
    with open(a, 'w') as f:
        f.write('\n\n' + old)
    ctx.report([session, '--format', 'coverage', '-o', os.path.join(ctx.tmp, 'edited.txt')])
    with open(os.path.join(ctx.tmp, 'edited.txt')) as f:
        edited = f.read()
    expect('carry no bytecode now: the source changed since the trace?' in edited,
           'the edited source is not noted:\n' + edited[:2000])
    res = run([ctx.args.recorderd, 'report', session, '--format', 'lcov', '--merge'],
              ctx.tmp, base_env())
    expect(res.status == 0, '--merge of one session: %s' % show_bytes(res.err))
    res = run([ctx.args.recorderd, 'report', session, session], ctx.tmp, base_env())
    expect(res.status == 2 and b'--merge' in res.err, 'two traces without --merge: %s'
           % show_bytes(res.err))
    res = run([ctx.args.recorderd, 'report', session, '--exclude', 'x'], ctx.tmp, base_env())
    expect(res.status == 2, '--exclude with the profile format was accepted')
    print('options: ok')


def case_paths(ctx):
    """A file in a directory whose name holds ';': covered at its real path
    (the collector sends a file's path whole), its label cleaned as the
    manual says (doc/reports.md: ';' -> ','); annotate run from another directory lists
    its sources."""
    work = os.path.join(ctx.tmp, 'paths')
    os.makedirs(os.path.join(work, 'semi;colon'))
    with open(os.path.join(work, 'semi;colon', 's.lua'), 'w') as f:
        f.write('local x = 2\nreturn x + 3\n')
    outside = os.path.join(ctx.tmp, 'outside.lua')  # not under the working directory
    with open(outside, 'w') as f:
        f.write('return 0\n')
    with open(os.path.join(work, 'main.lua'), 'w') as f:
        f.write('print(dofile("semi;colon/s.lua") + dofile(%r))\n' % outside)
    res, session = ctx.traced([ctx.args.lua, 'main.lua'], work)
    expect(res.status == 0 and res.out == b'5\n', 'traced run failed:\n' + show_bytes(res.err))
    lcov, _ = check_session(ctx, session, work)
    semi = os.path.join(work, 'semi;colon', 's.lua')
    expect(set(lcov) == {os.path.join(work, 'main.lua'), semi, outside} and
           lcov[semi]['da'] == {1: 1, 2: 1}, 'session files: %s' % lcov)
    # SF as luacov writes them: relative under the working directory, the
    # file elsewhere absolute (CI services then need no path mapping)
    with open(os.path.join(session, 'coverage.lcov')) as f:
        sfs = sorted(row[3:].rstrip('\n') for row in f if row.startswith('SF:'))
    expect(sfs == sorted(['main.lua', 'semi;colon/s.lua', outside]), 'SF: %s' % sfs)
    with open(os.path.join(session, 'stacks.folded')) as f:
        folded = f.read()
    expect(';main chunk@semi,colon/s.lua:0 ' in folded, 'labels:\n' + folded)
    # reports made from another directory read the sources from the
    # program's own (session.json's cwd), given the session or its trace
    text = ctx.report([session, '--format', 'annotate']).out
    expect(b'not readable' not in text and b'2  return x + 3' in text and
           b'1  print(dofile' in text, 'annotate from elsewhere:\n' + show_bytes(text))
    ann = os.path.join(ctx.tmp, 'ann')
    ctx.report([os.path.join(session, 'trace.ltr'), '--format', 'annotate', '-o', ann])
    with open(os.path.join(ann, 'semi;colon_s.lua.txt')) as f:
        text = f.read()
    expect('not readable' not in text and '2  return x + 3' in text,
           'annotate -o from elsewhere:\n' + text)
    print('paths: ok')


# chdir: ./m.lua and sub/m.lua have one relative name; their code is on
# lines of their own (1-5, 7-13), so that the reference's counts for
# "@m.lua", which merge both, split by line into the truth of each file
CHDIR_FILES = {
    'm.lua': 'local M = {}\nfunction M.g(n)\n  return n * 2\nend\nreturn M\n',
    'sub/m.lua': '-- sub/m.lua: its code starts at line 7\n\n\n\n\n\n'
                 'local M = {}\nfunction M.f(n)\n  local s = 0\n'
                 '  for i = 1, n do s = s + i end\n  return s\nend\nreturn M\n',
    'sub/n.lua': 'local N = {}\nfunction N.h(x)\n  return x + 1\nend\nreturn N\n',
    'main.lua': '''local lfs = require "lfs"
local top = dofile("m.lua")
print(top.g(3))
assert(lfs.chdir("sub"))
local m = dofile("m.lua")
local n = dofile("n.lua")
print(m.f(10))
assert(lfs.chdir(".."))
print(m.f(3), top.g(4))
local n2 = dofile("sub/n.lua")
print(n.h(1), n2.h(2))
assert(lfs.chdir("sub"))
print(top.g(5), n.h(3))
''',
}


def case_chdir(ctx):
    """A program that changes directory (lfs.chdir) and loads files by
    relative names: each file is read in the directory current when it was
    loaded, not the start one. ./m.lua and sub/m.lua (one name, two files),
    sub/n.lua (no such file at the start directory; reached by two names,
    one entry), functions called after a chdir back: coverage.lcov,
    coverage.txt and annotate/ have every file with the reference's counts
    (a C line hook)."""
    if run([ctx.args.lua, '-e', 'require "lfs"'], ctx.tmp, base_env()).status != 0:
        print('SKIP: chdir: lua-filesystem (lfs) is not installed')
        return SKIP
    work = os.path.join(ctx.tmp, 'chdir')
    os.makedirs(os.path.join(work, 'sub'))
    for name, text in CHDIR_FILES.items():
        with open(os.path.join(work, name), 'w') as f:
            f.write(text)
    res, session = ctx.traced([ctx.args.lua, 'main.lua'], work)
    expect(res.status == 0 and res.out == b'6\n55\n6\t8\n2\t3\n10\t4\n',
           'traced run: %r\n%s' % (res.out, show_bytes(res.err)))
    ref = ctx.reference([ctx.args.lua, 'main.lua'], work)
    lcov, total = check_session(ctx, session, work)
    top, sub, n = (os.path.join(work, p) for p in ('m.lua', 'sub/m.lua', 'sub/n.lua'))
    expect(set(lcov) == {os.path.join(work, 'main.lua'), top, sub, n},
           'files: %s' % sorted(lcov))
    _, others, _, _ = read_text(os.path.join(session, 'coverage.txt'))
    expect(not others, 'sources without a file: %s' % others)
    want = {top: ref['@m.lua'], sub: ref['@m.lua'], n: {},
            os.path.join(work, 'main.lua'): ref['@main.lua']}
    for src in ('@n.lua', '@sub/n.lua'):
        for line, k in ref[src].items():
            want[n][line] = want[n].get(line, 0) + k
    for path, lines in want.items():
        da = lcov[path]['da']
        got = {line: k for line, k in da.items() if k}
        truth = {line: k for line, k in lines.items() if line in da}
        expect(got == truth, '%s: line events %s, the reference %s' % (path, got, truth))
    merged = {line: k for line, k in ref['@m.lua'].items()}
    split = dict(lcov[top]['da'])
    for line, k in lcov[sub]['da'].items():
        split[line] = split.get(line, 0) + k
    expect({l: k for l, k in split.items() if k} == merged,
           'the two m.lua files %s, the reference %s' % (split, merged))
    expect(lcov[sub]['da'].get(10) == 15 and lcov[top]['da'].get(3) == 3,
           'sub/m.lua\'s loop, ./m.lua\'s g: %s %s' % (lcov[sub]['da'], lcov[top]['da']))
    print('chdir: ok (%d files, %d of %d lines)' % (len(lcov), total[0], total[0] + total[1]))


NOFILE_M = 'local M = {}\nfunction M.f()\n  return 1\nend\nreturn M\n'
NOFILE_PROG = '''local m = dofile("m.lua")
local code = "local a = 1\\nlocal b = 2\\nlocal c = 3\\nlocal d = 4\\nreturn a"
assert(loadstring(code, "=m.lua"))()
'''


def case_nofile(ctx):
    """A "=m.lua" chunk beside the real m.lua (one short_src, one string id
    in the trace): the file keeps only its own counts, in every report."""
    work = os.path.join(ctx.tmp, 'nofile')
    os.mkdir(work)
    for name, text in (('m.lua', NOFILE_M), ('prog.lua', NOFILE_PROG)):
        with open(os.path.join(work, name), 'w') as f:
            f.write(text)
    res, session = ctx.traced([ctx.args.lua, 'prog.lua'], work)
    expect(res.status == 0, 'traced run failed:\n' + show_bytes(res.err))
    ref = ctx.reference([ctx.args.lua, 'prog.lua'], work)
    lcov, _ = check_session(ctx, session, work, ref)
    m = lcov[os.path.join(work, 'm.lua')]
    expect(m['da'] == {1: 1, 2: 1, 3: 0, 4: 1, 5: 1} and m['fnda'] == {'main chunk': 1,
           'function@2': 0}, 'm.lua holds the "=m.lua" chunk\'s counts: %s' % m)
    _, others, _, _ = read_text(os.path.join(session, 'coverage.txt'))
    expect(any(r.startswith('m.lua: 5 lines hit; a chunk loaded from a string or named with')
               for r in others), 'the "=m.lua" chunk is not listed apart: %s' % others)
    with open(os.path.join(session, 'annotate', 'm.lua.txt')) as f:
        ann = f.read()
    expect(re.search(r'^ +3    return 1$', ann, re.M) and
           re.search(r'^ +1 +[\d.]+ +1  local M = \{\}$', ann, re.M),
           'annotate of m.lua:\n' + ann)
    with open(os.path.join(session, 'report.html'), encoding='utf-8') as f:
        page = f.read()
    expect('<tr class="miss"><td class="n">3</td><td>0</td>' in page,
           'report.html: line 3 of m.lua is not missed')
    print('nofile: ok')


ANNOTATE_PROG = '''local here = os.getenv("PWD")
dofile("sub/a.lua")
dofile("./sub/a.lua")
dofile("sub/../sub/a.lua")
dofile(here .. "/sub/a.lua")
require "mod"
dofile(OTHER)
'''


def case_annotate(ctx):
    """annotate/ holds a file per resolved file: sub/a.lua reached by four
    names is one sub_a.lua.txt with every count, ./mod.lua is mod.lua.txt
    (not a hidden ._mod.lua.txt), a file outside the working directory is
    named by its absolute path."""
    work = os.path.join(ctx.tmp, 'annot')
    os.makedirs(os.path.join(work, 'sub'))
    os.makedirs(os.path.join(ctx.tmp, 'elsewhere'))
    other = os.path.join(ctx.tmp, 'elsewhere', 'o.lua')
    for path, text in ((os.path.join(work, 'main.lua'), ANNOTATE_PROG),
                       (os.path.join(work, 'sub', 'a.lua'), 'local n = 0\nn = n + 1\nreturn n\n'),
                       (os.path.join(work, 'mod.lua'), 'return {}\n'),
                       (other, 'return 1\n')):
        with open(path, 'w') as f:
            f.write(text)
    env = {'LUA_PATH': './?.lua;;', 'PWD': work}
    res, session = ctx.traced([ctx.args.lua, '-e', 'OTHER=%r' % other, 'main.lua'], work, env)
    expect(res.status == 0, 'traced run failed:\n' + show_bytes(res.err))
    lcov, _ = check_session(ctx, session, work)
    a = os.path.join(work, 'sub', 'a.lua')
    expect(lcov[a]['da'] == {1: 4, 2: 4, 3: 4}, 'sub/a.lua: %s' % lcov[a]['da'])
    xml = ET.parse(os.path.join(session, 'coverage.xml')).getroot()
    expect([x.text for x in xml.iter('source')] == [work, os.path.dirname(other)] and
           'sub/a.lua' in [c.get('filename') for c in xml.iter('class')],
           'Cobertura sources: %s' % [x.text for x in xml.iter('source')])
    names = set(os.listdir(os.path.join(session, 'annotate')))
    want = {'main.lua.txt', 'sub_a.lua.txt', 'mod.lua.txt',
            other[1:].replace('/', '_') + '.txt'}
    expect(names == want, 'annotate files %s, want %s' % (sorted(names), sorted(want)))
    print('annotate: ok')


KILLED_PROG = '''local a = 0
for i = 1, 100000 do a = a + i end
io.stdout:flush()
os.execute("kill -9 $PPID")
print("never")
'''


def case_truncated(ctx):
    """A program killed mid-run (session status truncated): every coverage
    report says its counts are incomplete, lcov and genhtml read the
    comment without a warning, coverage.xml stays valid Cobertura, and a
    --merge counts the cut traces."""
    work = os.path.join(ctx.tmp, 'killed')
    os.mkdir(work)
    with open(os.path.join(work, 'kill.lua'), 'w') as f:
        f.write(KILLED_PROG)
    with open(os.path.join(work, 'fine.lua'), 'w') as f:
        f.write('local x = 1\nreturn x\n')
    _, cut = ctx.traced([ctx.args.lua, 'kill.lua'], work)
    expect(check_incomplete(cut), 'the killed program\'s session is not truncated')
    lcov, _ = check_session(ctx, cut, work)
    prog = os.path.join(work, 'kill.lua')
    expect(prog in lcov and lcov[prog]['da'][2] > 0 and lcov[prog]['da'][5] == 0,
           'kill.lua: %s' % lcov.get(prog))
    path = os.path.join(cut, 'coverage.lcov')
    for cmd in (['lcov', '--summary', path], ['genhtml', '-o', os.path.join(ctx.tmp, 'h'), path]):
        res = subprocess.run(cmd, capture_output=True, text=True, cwd=work)  # SF relative to it
        expect(res.returncode == 0 and 'WARNING' not in res.stdout + res.stderr,
               '%s: %s%s' % (cmd[0], res.stdout, res.stderr))
    _, fine = ctx.traced([ctx.args.lua, 'fine.lua'], work)
    expect(not check_incomplete(fine), 'a complete session says it was cut')
    text = ctx.report(['--merge', cut, fine, '--format', 'coverage']).out.decode()
    expect(text.split('\n')[1].startswith('INCOMPLETE: 1 of the 2 traces were cut short'),
           'merge: ' + text[:300])
    print('truncated: ok')


SAMELINE_PROG = '''local inc, dec = function(x) return x + 1 end, function(x) return x - 1 end
if arg[1] == "dec" then dec(1) else inc(1) end
local mt = setmetatable({}, {__index = function() return 1 end, __newindex = function() end})
local _ = mt.x
'''


def case_sameline(ctx):
    """Prototypes sharing a line range are each a function: FNF counts
    every one, those that never ran are missed, and --merge matches them
    by name."""
    work = os.path.join(ctx.tmp, 'sameline')
    os.mkdir(work)
    prog = os.path.join(work, 'prog.lua')
    with open(prog, 'w') as f:
        f.write(SAMELINE_PROG)
    _, s1 = ctx.traced([ctx.args.lua, 'prog.lua'], work)
    ref = ctx.reference([ctx.args.lua, 'prog.lua'], work)
    lcov, _ = check_session(ctx, s1, work, ref)
    want = {'main chunk': 1, 'inc': 1, 'function@1': 0, 'function@3': 1, 'function@3#2': 0}
    expect(lcov[prog]['fnda'] == want and lcov[prog]['totals']['FNF'] == 5 and
           lcov[prog]['totals']['FNH'] == 3, 'functions: %s' % lcov[prog])
    _, s2 = ctx.traced([ctx.args.lua, 'prog.lua', 'dec'], work)
    merged = os.path.join(ctx.tmp, 'sameline.lcov')
    ctx.report(['--merge', s1, s2, '-o', merged])
    both = read_lcov(merged, session_cwd(s1))
    check_exact(both, ctx.args.lua)
    want = {'main chunk': 2, 'inc': 1, 'dec': 1, 'function@3': 2, 'function@3#2': 0}
    expect(both[prog]['fnda'] == want, 'merged functions: %s' % both[prog]['fnda'])
    expect(lcov_summary(merged)[2:] == (4, 5), 'lcov --summary of the merge')
    print('sameline: ok')


# Lua 5.4's syntax (<close>): recorderd's Lua 5.1 cannot compile the
# file, so its prototypes are the functions the trace has
SAMELINE54_PROG = '''local mk = function(i) return function() return i end end
local s = 0
for i = 1, 5 do s = s + mk(i)() end
local inc, dec = function(x) return x + 1 end, function(x) return x - 1 end
local t <close> = nil
print(s, inc(1), inc(2))
'''


def case_sameline54(ctx):
    """sameline where Lua 5.1 cannot compile the file (5.4's <close>):
    two functions traced on one line range are two functions, each with
    its own calls. Before, the second was counted as the first (mk 10
    calls, its inner function 0: FNH 3 of 5, want 4)."""
    lua54 = harness.need_lua54()
    work = os.path.join(ctx.tmp, 'sameline54')
    os.mkdir(work)
    prog = os.path.join(work, 'prog.lua')
    with open(prog, 'w') as f:
        f.write(SAMELINE54_PROG)
    res, session = ctx.traced([lua54, 'prog.lua'], work)
    expect(res.status == 0 and res.out == b'15\t2\t3\n', 'run: %d %r %r'
           % (res.status, res.out, res.err))
    lcov = read_lcov(os.path.join(session, 'coverage.lcov'), session_cwd(session))
    want = {'main chunk': 1, 'mk': 5, 'function@1': 5, 'inc': 2, 'function@4': 0}
    expect(lcov[prog]['fnda'] == want and lcov[prog]['totals']['FNF'] == 5 and
           lcov[prog]['totals']['FNH'] == 4, 'functions: %s' % lcov[prog])
    print('sameline54: ok')


def case_luacheck(ctx):
    luacheck = shutil.which('luacheck')
    pl = os.path.join(LUA_DIR, 'pl')
    if not luacheck or not os.path.isdir(pl):
        print('SKIP: needs luacheck (lua-check) and %s (lua-penlight)' % pl)
        return SKIP
    # luacheck is not deterministic from run to run (its table.sort
    # comparator runs a few times more or less: pairs() over tables keyed by
    # addresses), so hits are checked against the same trace's other
    # reports, not against a separate reference run
    cmd = [ctx.args.lua, luacheck, '--no-cache', '--formatter', 'plain', pl]
    res, session = ctx.traced(cmd, ctx.tmp)
    lcov, total = check_session(ctx, session, ctx.tmp)
    expect(sum(1 for sf in lcov if '/luacheck/' in sf) > 20, 'luacheck\'s modules missing')
    # every file under /usr/share/lua/5.1, compiled only
    out = os.path.join(ctx.tmp, 'all.lcov')
    ctx.report([session, '--format', 'lcov', '--include-untested', LUA_DIR, '-o', out])
    every = read_lcov(out, session_cwd(session))
    check_exact(every, ctx.args.lua)
    found = {os.path.join(d, f) for d, _, fs in os.walk(LUA_DIR) for f in fs
             if f.endswith('.lua')}
    compiles = {f for f in found if subprocess.run(['luac5.1', '-p', f],
                                                    capture_output=True).returncode == 0}
    got = {sf for sf in every if sf.startswith(LUA_DIR + '/')}
    expect(got == compiles, 'files under %s that Lua 5.1 compiles: %d, in the report: %d (%s)'
           % (LUA_DIR, len(compiles), len(got), sorted(got ^ compiles)[:5]))
    text = ctx.report([session, '--format', 'coverage', '--include-untested', LUA_DIR]).out
    for f in found - compiles:  # e.g. Lua 5.3 code in luacheck's vendor tree
        expect(('\n  %s: 0 lines hit; %s:' % (f, f)).encode() in text,
               '%s does not compile, yet coverage.txt gives no reason' % f)
    print('luacheck: ok (%d files traced, %d of %d lines; %d files of %s exact, %d do not'
          ' compile)' % (len(lcov), total[0], total[0] + total[1], len(got), LUA_DIR,
                         len(found - compiles)))


def main(argv):
    table = cases(globals())
    # meson runs each case on its own, and program once per corpus program
    if harness.list_cases(argv, set(table) - {'program'}):
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('case', choices=sorted(table))
    ap.add_argument('program', nargs='?', help='for the program case')
    ap.add_argument('--recorderd', required=True)
    ap.add_argument('--lua', default='lua5.1')
    args = ap.parse_args(argv)
    if not harness.have_recorderd(args.recorderd):
        return SKIP
    args.recorderd = os.path.abspath(args.recorderd)
    if not shutil.which('lcov') or not shutil.which('genhtml'):
        print('FAIL: lcov and genhtml are needed (scripts/setup installs the lcov package)')
        return 1
    if args.case == 'program' and not args.program:
        ap.error('the program case needs a program')
    if args.case == 'program' and harness.skip_missing(args.lua, args.program):
        return SKIP
    return harness.in_tmpdir('luatrace-coverage-', lambda tmp: table[args.case](Ctx(args, tmp)))

# }======================================================================


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
