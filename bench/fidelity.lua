-- Where the time goes, plain and traced (scripts/bench-fidelity). Each
-- pair is a Lua-heavy part and a C-heavy part, run in alternating slices:
--   lua5.1 fidelity.lua measure PAIR [S] iteration counts for S s each (0.3)
--   lua5.1 fidelity.lua run PAIR NA NB   runs them; prints each part's CPU
--                                        time (os.clock), the plain truth
local mode, pair, na, nb = ...
local find, concat, tostring = string.find, table.concat, tostring
local big = ("x"):rep(100000)

local function tiny(x) return x + 1 end

local parts = {
  -- short lines (three line events an iteration) / a C function searching a
  -- long string
  dense = {
    function(n)
      local t = {a = 1, b = 2}
      for i = 1, n do
        t.a = t.b + i
        t.b = t.a % 7
      end
      return t.a
    end,
    function(n) local k = 0 for _ = 1, n do if find(big, "y", 1, true) then k = k + 1 end end return k end,
  },
  -- many calls of a tiny Lua function / table.concat of a large table
  calls = {
    function(n) local s = 0 for i = 1, n do s = tiny(tiny(s)) end return s end,
    function(n)
      local t = {} for i = 1, 20000 do t[i] = "ab" end
      local k = 0 for _ = 1, n do k = k + #concat(t) end return k
    end,
  },
  -- a Lua loop calling tostring (C) on each line: both in one function
  mixed = {
    function(n) local k = 0 for i = 1, n do k = k + #tostring(i) end return k end,
    -- a new string each time (see coro's): rep's cost must not hang on the GC
    function(n) local k = 0 for i = 1, n do k = k + #(big .. i):rep(3) end return k end,
  },
  -- a resume/yield ping-pong with a generator coroutine / a C function searching
  -- a long string
  coro = {
    function(n)
      local co = coroutine.wrap(function() local i = 0 while true do i = i + 1 coroutine.yield(i) end end)
      local k = 0 for _ = 1, n do k = k + co() end return k
    end,
    -- not big:rep: a string equal to one still alive is not made again
    -- (Lua interns strings), so its cost hangs on when the collector ran,
    -- which tracing shifts (the traced program's heap is not the plain one's)
    function(n) local k = 0 for _ = 1, n do if find(big, "y", 1, true) then k = k + 1 end end return k end,
  },
  -- issue 33's pairs: each a part with many events per unit of work and
  -- one with few, or none of the first's kind.
  -- tiny Lua calls / long arithmetic lines (one line event per 30 instructions)
  calllines = {
    function(n) local s = 0 for i = 1, n do s = tiny(tiny(s)) end return s end,
    function(n)
      local a, b, c = 1.5, 2.5, 3.5
      for i = 1, n do
        a = (a * 1.0001 + b * 0.9999 - c * 0.5 + i * 0.25) % 1000 + (b - c) * 0.001 + a * 0.0001
        b = (b * 0.9997 + a * 0.0003 + c * 0.125 - i * 0.5) % 1000 + (a - c) * 0.002 + b * 0.0002
      end
      return a + b
    end,
  },
  -- C string building (format, rep, concat) / short lines
  strlines = {
    function(n)
      local fmt, rep, cat = string.format, string.rep, table.concat
      local k, t = 0, {}
      for i = 1, n do
        t[1], t[2], t[3] = fmt("%08d:%s", i, "abc"), rep("xy", 64), fmt("%.3f", i / 7)
        k = k + #cat(t, ",")
      end
      return k
    end,
    function(n)
      local x, y = 0, 1
      for i = 1, n do
        x = x + i
        y = y + x % 3
      end
      return x + y
    end,
  },
  -- a coroutine generator (wrap, a yield per value) / a loop over a table
  cogen = {
    function(n)
      local gen = coroutine.wrap(function() local i = 0 while true do i = i + 1 coroutine.yield(i) end end)
      local k = 0 for _ = 1, n do k = k + gen() end return k
    end,
    function(n)
      local t = {} for i = 1, 256 do t[i] = i end
      local k = 0
      for _ = 1, n do for i = 1, #t do k = k + t[i] end end
      return k
    end,
  },
  -- pcall of a function, a third of them raising / sorts of small tables
  pcallsort = {
    function(n)
      local function f(i) if i % 3 == 0 then error("x", 0) end return i end
      local k = 0 for i = 1, n do local ok, v = pcall(f, i) if ok then k = k + v end end return k
    end,
    function(n)
      local sort, k = table.sort, 0
      for i = 1, n do
        local t = {}
        for j = 1, 40 do t[j] = (j * 7919 + i) % 101 end
        sort(t)
        k = k + t[1]
      end
      return k
    end,
  },
}

-- More pairs (scripts/bench-fidelity --pairs extra): kinds of code the
-- pairs above do not have, each again a part with many hook events per
-- unit of work (calls and returns: run's default hooks no line) against
-- one with few. Most second parts are longlines, calllines' long
-- arithmetic lines (no event in the loop at all).
local unpack = unpack or table.unpack
local loadstr = loadstring or load
local function longlines(n)
  local a, b, c = 1.5, 2.5, 3.5
  for i = 1, n do
    a = (a * 1.0001 + b * 0.9999 - c * 0.5 + i * 0.25) % 1000 + (b - c) * 0.001 + a * 0.0001
    b = (b * 0.9997 + a * 0.0003 + c * 0.125 - i * 0.5) % 1000 + (a - c) * 0.002 + b * 0.0002
  end
  return a + b
end
local function cfind(n) local k = 0 for _ = 1, n do if find(big, "y", 1, true) then k = k + 1 end end return k end
local text = ("lorem ipsum dolor sit amet "):rep(8)
-- a numeric for over a 64-element array: no event in the loop (iter's
-- and pairs' second part)
local function arraysum(n)
  local t = {} for i = 1, 64 do t[i] = i end
  local k = 0
  for _ = 1, n do for i = 1, #t do k = k + t[i] end end
  return k
end

local extra = {
  -- OOP: a method through an __index table, __add, an __index function
  -- and __call (four Lua calls an iteration) / long lines
  oop = {
    function(n)
      local P = {}
      P.__index = P
      function P:get() return self.x end
      P.__add = function(a, b) return a.x + b.x end
      local p, q = setmetatable({x = 1}, P), setmetatable({x = 2}, P)
      local proxy = setmetatable({}, {__index = function(_, key) return #key end})
      local callable = setmetatable({}, {__call = function(_, v) return v % 3 end})
      local k = 0
      for i = 1, n do k = k + p:get() + (p + q) + proxy.abc + callable(i) end
      return k
    end,
    longlines,
  },
  -- string.gsub with a Lua callback (40 calls a subject) / the same gsub
  -- with a replacement string (all in C)
  gsubfn = {
    function(n)
      local k = 0
      local function f(w) k = k + #w end
      for _ = 1, n do text:gsub("%a+", f) end
      return k
    end,
    function(n) local k = 0 for _ = 1, n do k = k + #text:gsub("(%a+)", "%1") end return k end,
  },
  -- string.gmatch: its C iterator called by the for loop (40 a subject) /
  -- a C function searching a long string
  gmatch = {
    function(n) local k = 0 for _ = 1, n do for w in text:gmatch("%a+") do k = k + #w end end return k end,
    cfind,
  },
  -- table.sort with a Lua comparator / table.sort of the same tables in C
  sortcmp = {
    function(n)
      local sort, k = table.sort, 0
      local function lt(a, b) return a < b end
      for i = 1, n do
        local t = {}
        for j = 1, 40 do t[j] = (j * 7919 + i) % 101 end
        sort(t, lt)
        k = k + t[1]
      end
      return k
    end,
    function(n)
      local sort, k = table.sort, 0
      for i = 1, n do
        local t = {}
        for j = 1, 40 do t[j] = (j * 7919 + i) % 101 end
        sort(t)
        k = k + t[1]
      end
      return k
    end,
  },
  -- a closure made and called each iteration / long lines
  closures = {
    function(n)
      local k = 0
      for i = 1, n do
        local f = function(x) return x + i end
        k = k + f(i) % 7
      end
      return k
    end,
    longlines,
  },
  -- varargs: select('#'), select(n), unpack / long lines
  varargs = {
    function(n)
      local select = select
      local function va(...) local m = select("#", ...) return m + (select(m, ...)) end
      local t, k = {1, 2, 3, 4}, 0
      for _ = 1, n do k = k + va(unpack(t)) end
      return k
    end,
    longlines,
  },
  -- recursion: fib(15), 1973 calls / long lines
  fib = {
    function(n)
      local function fib(m) if m < 2 then return m end return fib(m - 1) + fib(m - 2) end
      local k = 0 for _ = 1, n do k = k + fib(15) end return k
    end,
    longlines,
  },
  -- the same 30 calls of one small function, each the next one's caller
  -- (a chain 30 deep) / one after the other from a loop (1 deep)
  deep = {
    function(n)
      local function d(m, x) if m == 0 then return x end return d(m - 1, x + 1) + 0 end
      local k = 0 for _ = 1, n do k = k + d(30, 0) % 7 end return k
    end,
    function(n)
      local function d(m, x) if m == 0 then return x end return x + 1 end
      local k = 0
      for _ = 1, n do local x = 0 for j = 30, 1, -1 do x = d(j, x) end k = k + x % 7 end
      return k
    end,
  },
  -- string.format of 32 short strings and table.concat of them / long lines
  fmtcat = {
    function(n)
      local fmt, cat, k, t = string.format, table.concat, 0, {}
      for i = 1, n do
        for j = 1, 32 do t[j] = fmt("%d:%s", i + j, "ab") end
        k = k + #cat(t, ",")
      end
      return k
    end,
    longlines,
  },
  -- small tables made and dropped (the collector's work) / the same sums,
  -- no allocation
  gc = {
    function(n)
      local k = 0
      for i = 1, n do local t = {i, i + 1, x = i} k = k + t[1] + t[2] + t.x end
      return k
    end,
    function(n)
      local k = 0
      for i = 1, n do local a, b, x = i, i + 1, i k = k + a + b + x end
      return k
    end,
  },
  -- a chain of 20 tail calls / long lines
  tailcall = {
    function(n)
      local function tc(m, acc) if m == 0 then return acc end return tc(m - 1, acc + 1) end
      local k = 0 for _ = 1, n do k = k + tc(20, 0) % 7 end return k
    end,
    longlines,
  },
  -- a loop body of 24 short lines, no call / a C function searching a
  -- long string
  longbody = {
    function(n)
      local a, b, c, d = 0, 1, 2, 3
      for i = 1, n do
        a = a + i
        b = b + a
        c = c + b
        d = d + c
        a = a % 1000
        b = b % 1000
        c = c % 1000
        d = d % 1000
        a = a + d
        b = b - a
        c = c + 1
        d = d - 1
        a = a * 2
        b = b * 2
        c = c * 2
        d = d * 2
        a = a % 997
        b = b % 997
        c = c % 997
        d = d % 997
        a = a + b
        c = c + d
        b = b + 1
        d = d + 1
      end
      return a + b + c + d
    end,
    cfind,
  },
  -- a generic for over a stateless iterator written in Lua (a call per
  -- element) / a numeric for over the same array
  iter = {
    function(n)
      local t = {} for i = 1, 64 do t[i] = i end
      local function nxt(s, i) i = i + 1 local v = s[i] if v then return i, v end end
      local k = 0
      for _ = 1, n do for _, v in nxt, t, 0 do k = k + v end end
      return k
    end,
    arraysum,
  },
  -- pairs over a hash table (next, a C call per element) / a numeric for
  -- over an array
  pairs = {
    function(n)
      local h = {} for i = 1, 64 do h["k" .. i] = i end
      local k = 0
      for _ = 1, n do for _, v in pairs(h) do k = k + v end end
      return k
    end,
    arraysum,
  },
  -- error() four calls deep under xpcall with debug.traceback as the
  -- handler / long lines
  errtb = {
    function(n)
      local function e3() error("x") end
      local function e2() e3() return 1 end
      local function e1() e2() return 1 end
      local tb, k = debug.traceback, 0
      for _ = 1, n do local _, msg = xpcall(e1, tb) k = k + #msg end
      return k
    end,
    longlines,
  },
  -- xpcall with a Lua handler, every call raising / long lines
  xpcall = {
    function(n)
      local function f() error("x", 0) end
      local function h(e) return e end
      local k = 0
      for _ = 1, n do local _, msg = xpcall(f, h) k = k + #msg end
      return k
    end,
    longlines,
  },
  -- load() of a small chunk, then its call / long lines
  load = {
    function(n)
      local k = 0
      for i = 1, n do k = k + loadstr("local a = ... return " .. (i % 100) .. " + 1")() end
      return k
    end,
    longlines,
  },
}
for name, p in pairs(extra) do parts[name] = p end
local A, B = parts[pair][1], parts[pair][2]
-- not tail calls: the parts' stacks must keep part_a and part_b
local function part_a(n) local r = A(n) return r end
local function part_b(n) local r = B(n) return r end

local function count(f, secs)
  local n = 100
  while true do
    local t0 = os.clock()
    f(n)
    local t = os.clock() - t0
    if t > 0.05 then return math.floor(n * secs / t) end
    n = n * 4
  end
end

if mode == "measure" then
  local secs = tonumber(na) or 0.3
  print(count(A, secs), count(B, secs))
else
  na, nb = tonumber(na), tonumber(nb)
  local ta, tb = 0, 0
  for _ = 1, 10 do
    local t0 = os.clock()
    part_a(math.floor(na / 10))
    local t1 = os.clock()
    part_b(math.floor(nb / 10))
    ta, tb = ta + (t1 - t0), tb + (os.clock() - t1)
  end
  print(string.format("%.6f %.6f", ta, tb))
end
