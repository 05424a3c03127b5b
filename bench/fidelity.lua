-- Where the time goes, plain and traced (scripts/bench-fidelity). Each
-- pair is a Lua-heavy part and a C-heavy part, run in alternating slices:
--   lua5.1 fidelity.lua measure PAIR     iteration counts for 0.3 s each
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
    function(n) local k = 0 for _ = 1, n do k = k + #big:rep(3) end return k end,
  },
  -- a resume/yield ping-pong with a generator coroutine / string.rep
  coro = {
    function(n)
      local co = coroutine.wrap(function() local i = 0 while true do i = i + 1 coroutine.yield(i) end end)
      local k = 0 for _ = 1, n do k = k + co() end return k
    end,
    function(n) local k = 0 for _ = 1, n do k = k + #big:rep(3) end return k end,
  },
}
local A, B = parts[pair][1], parts[pair][2]
-- not tail calls: the parts' stacks must keep part_a and part_b
local function part_a(n) local r = A(n) return r end
local function part_b(n) local r = B(n) return r end

local function count(f)
  local n = 100
  while true do
    local t0 = os.clock()
    f(n)
    local t = os.clock() - t0
    if t > 0.05 then return math.floor(n * 0.3 / t) end
    n = n * 4
  end
end

if mode == "measure" then
  print(count(A), count(B))
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
