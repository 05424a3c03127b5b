#!/usr/bin/env python3
"""Random Lua programs, each checked against the reference tracer.

  randprog.py --recorderd PATH [--seeds 1-40] [--lua lua5.1] [--ref-lua CMD]
              [--reftrace-c SO] [--save DIR] [--jobs N]
  randprog.py --print SEED          the program of one seed, to stdout

Each seed makes one deterministic program out of the constructs that stack
rebuilding must get right, mixed at random: calls through locals, globals,
fields and methods; tail calls into Lua and C functions; pcall, xpcall
(handlers that call on), errors of every kind raised at any depth; Lua
callbacks from C (table.sort, string.gsub, metamethods, loadstring
chunks); coroutines created, wrapped, yielded from nested calls,
abandoned, and resumed later from another coroutine; metamethods and
comparators that raise mid-way, error values of every type, tail calls
through __call, varargs and select, setfenv'd and string.dump'd functions,
one-line loops, refused and allowed yields inside C-called Lua. A budget
bounds the calls. Every program is then checked exactly as a corpus program is
(corpus.py): output unchanged by tracing, folded stacks by lines and by
calls equal to the reference's.
Exit status: 0 all pass, 1 a seed failed, 77 skipped (no recorderd).
"""

import argparse
import os
import random
import shutil
import signal
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402
import harness  # noqa: E402

MOD = 1000003   # keeps every number a small integer: exact, printed alike


class Gen:
    """One program. Functions are numbered; each is reached in one of four
    ways (which decides the names 5.1 and the tracers give it)."""

    KINDS = ('local', 'global', 'field', 'method')

    def __init__(self, seed):
        self.r = random.Random(seed)
        self.n = self.r.randint(3, 9)
        self.kind = [self.r.choice(self.KINDS) for _ in range(self.n)]
        self.chunks = 0
        # one program in ten may os.exit anywhere: inside coroutines, C
        # callbacks, handlers (the trace must end whole wherever it stops)
        self.may_exit = self.r.random() < 0.1

    # {=================================================================
    # How function j is named, called and passed

    def name(self, j):
        return {'local': 'f%d', 'global': 'g%d', 'field': 'M.f%d',
                'method': 'M.m%d'}[self.kind[j]] % j

    def call(self, j, d='d - 1', x='x'):
        """An expression calling function j."""
        if self.kind[j] == 'method':
            return 'M:m%d(%s, %s)' % (j, d, x)
        return '%s(%s, %s)' % (self.name(j), d, x)

    def fargs(self, j, d='d - 1', x='x'):
        """The function value and its arguments, for pcall(F, ...) and
        the like: a method gets its self."""
        pre = 'M, ' if self.kind[j] == 'method' else ''
        return self.name(j), '%s%s, %s' % (pre, d, x)

    def any_call(self, d='d - 1', x='x'):
        return self.call(self.r.randrange(self.n), d, x)

    # }=================================================================

    # {=================================================================
    # Statements: each a list of lines; those that call guard on d > 0

    def stmt(self, depth):
        r = self.r
        pick = r.choice([
            self.s_work, self.s_work, self.s_call, self.s_call, self.s_loop,
            self.s_pcall, self.s_xpcall, self.s_error, self.s_create,
            self.s_resume_pending, self.s_wrap, self.s_generator, self.s_yield,
            self.s_sort, self.s_gsub, self.s_meta, self.s_chunk,
            self.s_varargs, self.s_if, self.s_deep, self.s_dump,
            self.s_foreach, self.s_meta_err, self.s_sort_err, self.s_callobj,
            self.s_yield_inside, self.s_oneline, self.s_fenv, self.s_dump_fn,
            self.s_vtail, self.s_err_obj, self.s_gen_err, self.s_wrap_later,
            self.s_call_yield])
        if depth > 1 and pick in (self.s_loop, self.s_if):
            pick = self.s_work
        return pick(depth)

    @staticmethod
    def block(head, body):
        """head, body indented, end."""
        return [head] + ['  ' + s for s in body] + ['end']

    def guard(self, body):
        return self.block('if d > 0 then', body)

    def s_work(self, depth):
        k = self.r.randint(1, 9)
        return ['x = (x * %d + %d) %% %d' % (k, k + 1, MOD)]

    def s_call(self, depth):
        return self.guard(['x = (x + %s) %% %d' % (self.any_call(), MOD)])

    def s_loop(self, depth):
        body = self.stmt(depth + 1) + self.s_work(depth)
        return self.block('for i = 1, %d do' % self.r.randint(2, 4), body)

    def s_if(self, depth):
        m = self.r.randint(2, 5)
        body = self.stmt(depth + 1)
        return self.block('if x %% %d == %d then' % (m, self.r.randrange(m)), body)

    def caught(self):
        """x's update from (ok, v) of a protected call."""
        return ('x = (x + (ok and (tonumber(v) or 0) or'
                ' (type(v) == "string" and #v or 3))) %% %d' % MOD)

    def s_pcall(self, depth):
        f, a = self.fargs(self.r.randrange(self.n))
        return self.guard(['local ok, v = pcall(%s, %s)' % (f, a),
                           self.caught()])

    def s_xpcall(self, depth):
        handler = self.r.choice([
            'function(m) return type(m) == "string" and #m or 1 end',
            # a handler that raises runs again on top, until the C stack
            # overflows: where depends on the C levels a hook adds (the
            # reference's Lua hook adds some), so the handler's calls are
            # protected
            'function(m) return select(2, pcall(%s, %s)) end'
            % self.fargs(self.r.randrange(self.n), '0', '#tostring(d)'),
            'debug.traceback', 'H'])
        return self.guard([
            'local ok, v = xpcall(function() return %s end, %s)'
            % (self.any_call(), handler),
            'if type(v) == "string" then v = #v end', self.caught()])

    def s_error(self, depth):
        m = self.r.randint(3, 9)
        what = self.r.choice([
            'error("e" .. d)', 'error({d})', 'error("lvl" .. d, 2)',
            'error()', 'local t = nil; x = x + t.f', 'x = x + {}',
            'error(d, 0)', 'string.rep()'])
        if self.may_exit and self.r.random() < 0.5:
            what = 'io.write("exit\\n") os.exit(d % 3)'
        return ['if x %% %d == %d then %s end' % (m, self.r.randrange(m), what)]

    def s_create(self, depth):
        f, a = self.fargs(self.r.randrange(self.n))
        return self.guard([
            'local co = coroutine.create(%s)' % f,
            'local ok, v = coroutine.resume(co, %s)' % a,
            'local n = 0',
            'while ok and coroutine.status(co) == "suspended" and n < %d do'
            % self.r.randint(0, 3),
            '  n = n + 1',
            '  ok, v = coroutine.resume(co, x)',
            'end',
            self.caught(),
            'if coroutine.status(co) == "suspended" then'
            ' PENDING[#PENDING + 1] = co end'])

    def s_resume_pending(self, depth):
        # unchecked, a resume may find the coroutine running, normal
        # (it resumed us) or dead: an error result
        check = self.r.choice(['coroutine.status(co) == "suspended"', 'true'])
        return ['local co = table.remove(PENDING, %d)'
                % self.r.choice([1, 1, 2]),
                'if co and %s then' % check,
                '  local ok, v = coroutine.resume(co, x)',
                '  ' + self.caught(),
                'end']

    def s_wrap(self, depth):
        f, a = self.fargs(self.r.randrange(self.n))
        return self.guard(['local w = coroutine.wrap(%s)' % f,
                           'local ok, v = pcall(w, %s)' % a,
                           'if ok then ok, v = pcall(w, x) end',
                           self.caught()])

    def s_generator(self, depth):
        return self.guard([
            'for v in coroutine.wrap(function()',
            '  for i = 1, %d do coroutine.yield(%s) end'
            % (self.r.randint(1, 3), self.any_call()),
            'end) do x = (x + v) %% %d end' % MOD])

    def s_yield(self, depth):
        return ['if coroutine.running() then',
                '  x = (x + (tonumber((coroutine.yield(x))) or 0)) %% %d' % MOD,
                'end']

    def s_sort(self, depth):
        return self.guard([
            'local t = {5, 3, 9, 1}',
            'table.sort(t, function(a, b)',
            '  if a == 9 then x = (x + %s) %% %d end' % (self.any_call(), MOD),
            '  return a < b',
            'end)'])

    def s_gsub(self, depth):
        return self.guard([
            'local s = string.gsub("a1b2", "%%d", function(c) return %s end)'
            % self.any_call(),
            'x = (x + #s) %% %d' % MOD])

    def s_meta(self, depth):
        c = self.any_call()
        use = self.r.choice([
            'x = (x + o.key) % {0}', 'x = (x + (o + 1)) % {0}',
            'x = (x + o(x)) % {0}', 'x = (x + #tostring(o)) % {0}',
            'if o < o then x = x + 1 end', 'x = (x + #(o .. "z")) % {0}',
            'o.new = x', 'x = (x + -o) % {0}'])
        return self.guard([
            'local o = setmetatable({}, {',
            '  __index = function(t, k) return %s end,' % c,
            '  __add = function(a, b) return %s end,' % c,
            '  __call = function(self, a) return %s end,' % c,
            '  __tostring = function(self) return "o" .. %s end,' % c,
            '  __lt = function(a, b) return %s %% 2 == 0 end,' % c,
            '  __concat = function(a, b) return "c" .. %s end,' % c,
            '  __newindex = function(t, k, v) x = %s end,' % c,
            '  __unm = function(a) return %s end})' % c,
            use.format(MOD)])

    def s_chunk(self, depth):
        f, a = self.fargs(self.r.randrange(self.n))
        self.chunks += 1
        tail = self.r.choice(['return f(a, b, c)',
                              'local r = f(a, b, c) return r'])
        name = self.r.choice([', "=chunk%d"' % self.chunks, ''])
        return self.guard([
            'local chunk = loadstring("local f, a, b, c = ... %s"%s)' % (tail, name),
            'x = (x + chunk(%s, %s)) %% %d' % (f, a, MOD)])

    def s_deep(self, depth):
        """A recursion far deeper than d: through pcall every few levels,
        maybe failing at the bottom."""
        n = self.r.choice([30, 120, 400])
        # at most 40 pcalls deep: C levels stay well under 5.1's 200
        k = max(self.r.randint(3, 40), n // 40 + 1)
        return ['BUDGET = BUDGET - %d' % (n // 4),
                'x = (x + DEEP(%d, %d, %s)) %% %d'
                % (n, k, self.r.choice(['true', 'false']), MOD)]

    def s_dump(self, depth):
        return ['x = (x + loadstring(string.dump(VA))(x, 1)) %% %d' % MOD]

    def s_foreach(self, depth):
        return self.guard([
            'table.foreach({7, 8}, function(k, v) x = (x + %s) %% %d end)'
            % (self.any_call(), MOD)])

    def s_varargs(self, depth):
        return self.guard([
            'x = (x + VA(%s, 1, 2) + select("#", %s)) %% %d'
            % (self.any_call(), self.any_call(), MOD)])

    def mid_error(self):
        """A statement raising an error of some kind on some x."""
        what = self.r.choice(['error("m" .. d)', 'error({d})', 'error()',
                              'error(nil)', 'error(false)', 'error(x, 2)',
                              'local t = nil; x = x + t.f', 'string.rep()'])
        return 'if x %% %d == 0 then %s end' % (self.r.randint(2, 4), what)

    def s_meta_err(self, depth):
        """A metamethod that calls on, then may raise mid-way; the
        operation is under pcall or not (the error then unwinds further)."""
        c, e = self.any_call(), self.mid_error()
        op, use = self.r.choice([
            ('__eq', 'return o == p'), ('__lt', 'return o < p'),
            ('__le', 'return o <= p'), ('__concat', 'return o .. "s"'),
            ('__index', 'return o.key'), ('__newindex', 'o.k = 1'),
            ('__call', 'return o(1)'), ('__unm', 'return -o'),
            ('__tostring', 'return tostring(o)'), ('__mod', 'return o % 2'),
            ('__le', 'return o >= p')])
        mt = ['local mt = {%s = function(a, b)' % op,
              '  x = (x + %s) %% %d' % (c, MOD), '  ' + e,
              '  return %s' % ('"v"' if op in ('__concat', '__tostring')
                               else 'x % 2 == 0'),
              'end}']
        body = mt + ['local o = setmetatable({}, mt)',
                     'local p = setmetatable({}, mt)']
        if self.r.random() < 0.7:
            body += ['local ok, v = pcall(function() %s end)' % use,
                     'if type(v) ~= "number" then v = 1 end', self.caught()]
        else:
            body += ['local v = (function() %s end)()' % use,
                     'if type(v) == "number" then x = (x + v) %% %d end' % MOD]
        return self.guard(body)

    def s_sort_err(self, depth):
        """A comparator that calls on and raises, or an order function
        sort finds invalid."""
        cmp = self.r.choice([
            ['  x = (x + %s) %% %d' % (self.any_call(), MOD), '  ' +
             self.mid_error(), '  return a < b'],
            ['  if a == 4 then x = (x + %s) %% %d end' % (self.any_call(), MOD),
             '  return true']])
        return self.guard(['local t = {5, 3, 9, 1, 7, 2, 8, 4, 6, 10, 12, 11}',
                           'local ok, v = pcall(table.sort, t, function(a, b)']
                          + cmp + ['end)', self.caught()])

    def s_callobj(self, depth):
        """Calls through a table's __call: direct, pcall'd, tail."""
        c = self.any_call('d - 1', 'a')
        body = ['local o = setmetatable({}, {__call = function(self, a)'
                ' return %s end})' % c]
        how = self.r.choice([
            'x = (x + o(x)) % {0}',
            'local ok, v = pcall(o, x) ' + self.caught(),
            'x = (x + (function(...) return o(...) end)(x)) % {0}'])
        return self.guard(body + [how.format(MOD)])

    def s_yield_inside(self, depth):
        """A yield inside C-called Lua (a metamethod, comparator, gsub
        callback, pcall): an error in 5.1 everywhere but directly."""
        where = self.r.choice([
            'local o = setmetatable({}, {__index = function(t, k)'
            ' return coroutine.yield(k) end}) local v = o.k',
            'table.sort({3, 1, 2}, function(a, b) coroutine.yield(a)'
            ' return a < b end)',
            'string.gsub("ab", ".", function(c) coroutine.yield(c) end)',
            'pcall(coroutine.yield, x)'])
        return self.guard(['local ok, v = pcall(function() %s end)' % where,
                           'x = (x + (ok and 1 or 2)) %% %d' % MOD])

    def s_oneline(self, depth):
        """Loops and calls on one line: each backward jump is a line
        event of that line."""
        c = self.any_call()
        return self.guard([self.r.choice([
            'for i = 1, %d do x = (x + %s) %% %d end' % (self.r.randint(1, 3), c, MOD),
            'local i = 0 while i < %d do i = i + 1 x = (x + %s) %% %d end'
            % (self.r.randint(1, 3), c, MOD),
            'local i = 0 repeat i = i + 1 x = (x + %s) %% %d until i >= 2'
            % (c, MOD),
            'x = (x + %s) %% %d x = (x * 3) %% %d if x %% 2 == 0 then'
            ' x = (x + %s) %% %d end' % (c, MOD, MOD, self.any_call(), MOD)])])

    def s_fenv(self, depth):
        """A function given an environment of its own (setfenv), reaching
        the program's functions through it."""
        j = self.r.randrange(self.n)
        if self.kind[j] == 'local':
            return self.s_call(depth)
        return self.guard([
            'local e = setmetatable({}, {__index = _G})',
            'local fe = setfenv(function(d, x) return %s end, e)'
            % self.call(j, 'd', 'x'),
            'x = (x + fe(d - 1, x) + (getfenv(fe) == e and 1 or 0)) %% %d'
            % MOD])

    def s_dump_fn(self, depth):
        """string.dump of a function that calls on by globals, loaded back
        (a copy of one function's code: one function for the tracers)."""
        j = self.r.randrange(self.n)
        if self.kind[j] == 'local':
            return self.s_call(depth)
        return self.guard([
            'local df = loadstring(string.dump(function(d, x) return %s end))'
            % self.call(j, 'd', 'x'),
            'x = (x + df(d - 1, x)) %% %d' % MOD])

    def s_vtail(self, depth):
        """Tail calls through varargs and select."""
        f, a = self.fargs(self.r.randrange(self.n))
        return self.guard(['x = (x + %s) %% %d' % (self.r.choice([
            'VT(%s, %s)' % (f, a), 'VS(2, 0, %s, %s)' % (f, a)]), MOD)])

    def s_err_obj(self, depth):
        """Errors whose value is not a string, caught by xpcall handlers
        that look at it or call on."""
        obj = self.r.choice(['nil', '{code = d}', 'false', 'd',
                             'setmetatable({}, {__tostring = function()'
                             ' return "obj" end})'])
        handler = self.r.choice([
            'function(m) return type(m) end',
            'function(m) return tostring(m) end',
            'function(m) return select(2, pcall(%s, %s)) end'
            % self.fargs(self.r.randrange(self.n), '0', '1')])
        return self.guard([
            'local ok, v = xpcall(function() x = (x + %s) %% %d error(%s) end, %s)'
            % (self.any_call(), MOD, obj, handler),
            'if type(v) ~= "number" then v = 1 end', self.caught()])

    def s_wrap_later(self, depth):
        """A wrap function kept for later: called again from whatever
        runs then (another coroutine, the one it runs in: an error)."""
        if self.r.random() < 0.5:
            f, a = self.fargs(self.r.randrange(self.n))
            return self.guard(['local w = coroutine.wrap(%s)' % f,
                               'WRAPS[#WRAPS + 1] = w',
                               'local ok, v = pcall(w, %s)' % a,
                               self.caught()])
        return ['local w = table.remove(WRAPS, 1)',
                'if w then local ok, v = pcall(w, x) %s end' % self.caught()]

    def s_call_yield(self, depth):
        """A yield through __call: a C function called by the VM itself,
        so the yield is allowed where a direct one is."""
        return ['if coroutine.running() then',
                '  local o = setmetatable({}, {__call = coroutine.yield})',
                '  x = (x + (tonumber((o(x))) or 0)) %% %d' % MOD,
                'end']

    def s_gen_err(self, depth):
        """A for-in generator (Lua) that calls on and may raise."""
        return self.guard([
            'local ok, v = pcall(function()',
            '  for k in function(s, c) if c >= 2 then return nil end'
            ' x = (x + %s) %% %d %s return c + 1 end, nil, 0 do x = x + k end'
            % (self.any_call(), MOD, self.mid_error()),
            'end)', self.caught()])

    # }=================================================================

    # {=================================================================
    # Functions and the program

    def ret(self):
        r = self.r.random()
        if r < 0.3:
            return 'return %s' % self.any_call()    # a tail call (d may be 0)
        if r < 0.4:
            return 'return math.max(x %% %d, (%s))' % (MOD, self.any_call())
        return 'return x %% %d' % MOD

    def function(self, j):
        head = {'local': 'f%d = function(d, x)', 'global': 'function g%d(d, x)',
                'field': 'M.f%d = function(d, x)',
                'method': 'function M:m%d(d, x)'}[self.kind[j]] % j
        body = ['BUDGET = BUDGET - 1', 'if BUDGET < 0 then d = 0 end']
        for _ in range(self.r.randint(1, 5)):
            body += self.stmt(0)
        ret = self.ret()
        if 'd - 1' in ret:  # a call at d <= 0 could chain forever
            body += ['if d <= 0 then return x %% %d end' % MOD]
        return self.block(head, body + [ret]) + ['']

    def program(self):
        r = self.r
        locs = [self.name(j) for j in range(self.n) if self.kind[j] == 'local']
        out = ['-- generated by randprog.py: the calls, errors and coroutines'
               ' of a program, mixed at random',
               'BUDGET = %d' % r.choice([60, 200, 600, 1500]),
               'PENDING = {}',
               'WRAPS = {}',
               'M = {}',
               'function H(m) return type(m) == "string" and #m or 2 end',
               'function VA(...) return select("#", ...) + (... or 0) end',
               'function VT(f, ...) return f(...) end',
               'function VS(n, ...) return VT(select(n, ...)) end',
               'function DEEP(n, k, fail)',
               '  if BUDGET < 0 then return 1 end',
               '  if n == 0 then',
               '    BUDGET = BUDGET - 1',
               '    if fail then error("bottom") end',
               '    return 1',
               '  end',
               '  if n % k == 0 then',
               '    local ok, v = pcall(DEEP, n - 1, k, fail)',
               '    return ok and v + 1 or 1',
               '  end',
               '  return DEEP(n - 1, k, fail) + 1',
               'end']
        if locs:
            out.append('local ' + ', '.join(locs))
        out.append('')
        for j in range(self.n):
            out += self.function(j)
        # names found in tables: M as a module, a local under a global alias
        if r.random() < 0.3:
            out.append('package.loaded["rand.mod"] = M')
        for j in range(self.n):
            if self.kind[j] == 'local' and r.random() < 0.3:
                out.append('A%d = f%d' % (j, j))
        depth = r.randint(2, 7)
        f, a = self.fargs(r.randrange(self.n), str(depth), 'r')
        out += ['local total = 0',
                'for r = 1, %d do' % r.randint(1, 4),
                '  local ok, v = pcall(%s, %s)' % (f, a),
                '  total = (total + (ok and (tonumber(v) or 0) or 1)) %% %d'
                % MOD,
                '  print(r, ok, type(v) == "string" and v or type(v))',
                'end',
                'for i, co in ipairs(PENDING) do',
                '  local ok, v = coroutine.resume(co, i)',
                '  print("pending", i, ok, type(v) == "table" and "table" or v)',
                'end',
                'print("total", total, BUDGET)']
        end = r.random()
        if end < 0.08:
            out.append(self.call(r.randrange(self.n), '2', '7'))  # may raise
        elif end < 0.14:
            out.append('os.exit(%d)' % r.randint(0, 3))
        return '\n'.join(out) + '\n'

    # }=================================================================


# {======================================================================

def parse_seeds(text):
    seeds = []
    for part in text.split(','):
        a, _, b = part.partition('-')
        seeds += range(int(a), int(b or a) + 1)
    return seeds


def check_seed(args, seed, helper):
    tmp = tempfile.mkdtemp(prefix='luatrace-rand-')
    try:
        prog = os.path.join(tmp, 'rand_%d.lua' % seed)
        with open(prog, 'w') as f:
            f.write(Gen(seed).program())
        ns = argparse.Namespace(program=prog,
                                recorderd=os.path.abspath(args.recorderd),
                                lua=args.lua, ref_lua=args.ref_lua,
                                reftrace_c=helper, save=None)
        if args.save:
            ns.save = os.path.join(args.save, 'seed-%d' % seed)
        try:
            corpus.check(ns, tmp)
            return None
        except harness.Failure as e:
            if args.save:
                os.makedirs(ns.save, exist_ok=True)
                shutil.copy(prog, ns.save)
            return 'seed %d: %s' % (seed, e)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--recorderd', help='the recorderd binary')
    p.add_argument('--lua', default='lua5.1', help='the Lua 5.1 interpreter')
    p.add_argument('--ref-lua', help='the reference run\'s interpreter and'
                   ' its options (default: --lua), e.g. "luajit -joff"')
    p.add_argument('--seeds', default='1-40', help='e.g. 1-40 or 3,9,100-120')
    p.add_argument('--reftrace-c', help='reftrace_c.so (built when not given)')
    p.add_argument('--save', help='for each failing seed, its program and'
                   ' folded files go into DIR/seed-N')
    p.add_argument('--jobs', type=int, default=2)
    p.add_argument('--print', type=int, metavar='SEED',
                   help='print the program of SEED and exit')
    return p.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    if args.print is not None:
        sys.stdout.write(Gen(args.print).program())
        return 0
    if not (args.recorderd and os.path.isfile(args.recorderd)
            and os.access(args.recorderd, os.X_OK)):
        print('SKIP: no recorderd at %s' % args.recorderd)
        return harness.SKIP
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    tmp = tempfile.mkdtemp(prefix='luatrace-randc-')
    try:
        try:
            helper = args.reftrace_c or corpus.build_helper(tmp)
        except harness.Failure as e:
            print('FAIL: %s' % e)
            return 1
        seeds = parse_seeds(args.seeds)
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            fails = [f for f in pool.map(lambda s: check_seed(args, s, helper),
                                         seeds) if f]
        for f in fails:
            print('FAIL: ' + f)
        print('%d of %d random programs agree with the reference'
              % (len(seeds) - len(fails), len(seeds)))
        return 1 if fails else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

# }======================================================================


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
