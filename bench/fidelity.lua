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
