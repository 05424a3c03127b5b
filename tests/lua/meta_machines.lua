-- State machines and objects built from metamethods: __index chains five
-- tables deep whose every level is a function indexing the next table
-- (metamethods calling metamethods), callable tables (__call) calling
-- each other through tail calls, a machine whose states are reached through
-- an __index function returning callable tables and which tail-calls from
-- state to state 600 times, a tail call into a callable table that
-- tail-calls a C function, __newindex chains forwarding writes, __concat
-- and __eq chains, an __index function that fails at the bottom of the
-- chain caught by pcall, and a tail-call loop that ends in error().

-- __index chains: level i's __index is a function reading level i+1
local levels = {}
local lookups = 0
for i = 5, 1, -1 do
  local below = levels[i + 1]
  local t = { ["own" .. i] = i * 100 }
  setmetatable(t, { __index = function(self, k)
    lookups = lookups + 1
    if below then return below[k] end
    if k == "boom" then error("no " .. k .. " at the bottom") end
    return nil
  end })
  levels[i] = t
end
local top = levels[1]
print("chain", top.own1, top.own3, top.own5, top.nothing, lookups)
print("chain boom", pcall(function() return top.boom end))

-- callable tables calling each other by tail call
local function callable(name, f)
  return setmetatable({ name = name }, { __call = f })
end
local double, inc, finish
double = callable("double", function(self, x, n)
  if n == 0 then return finish(x) end
  return inc(x * 2, n - 1)
end)
inc = callable("inc", function(self, x, n)
  return double(x + 1, n)
end)
finish = callable("finish", function(self, x)
  return tostring(x)  -- a tail call into a C function
end)
print("callables", double(1, 5), inc(0, 3))

-- a machine: states reached through an __index function
local made = 0
local states = setmetatable({}, { __index = function(t, name)
  made = made + 1
  local st = callable(name, function(self, input, pos, acc)
    if pos > #input then return acc end
    local c = input:sub(pos, pos)
    if name == "digits" then
      if c:match("%d") then return t.digits(input, pos + 1, acc + 1) end
      return t.other(input, pos + 1, acc)
    else
      if c:match("%d") then return t.digits(input, pos + 1, acc + 1) end
      return t.other(input, pos + 1, acc)
    end
  end)
  rawset(t, name, st)
  return st
end })
local input = string.rep("ab12c3", 100)
print("machine", states.other(input, 1, 0), made)

-- __newindex chain: writes forwarded twice, then stored raw
local store = {}
local inner = setmetatable({}, { __newindex = function(t, k, v) rawset(store, k, v * 2) end })
local outer = setmetatable({}, { __newindex = function(t, k, v) inner[k] = v + 1 end })
for i = 1, 5 do outer[i] = i end
print("newindex", table.concat(store, " "))

-- __concat and __eq through metamethods calling metamethods
local W = {}
W.__concat = function(a, b)
  local av = type(a) == "table" and a.v or a
  local bv = type(b) == "table" and b.v or b
  return setmetatable({ v = av .. bv }, W)
end
W.__eq = function(a, b) return a.v == b.v end
local function w(v) return setmetatable({ v = v }, W) end
local joined = w("a") .. "b" .. w("c") .. "d"
print("concat", joined.v, joined == w("abcd"), joined == w("abc"))

-- a tail-call loop that ends in error(), caught
local function countdown(n)
  if n == 0 then return error("liftoff") end
  return countdown(n - 1)
end
print("countdown", pcall(countdown, 50))

-- a callable table as __index of another, itself with an __index
local proxy = setmetatable({}, { __index = callable("lookup", function(self, k) return k end) })
print("callable index", pcall(function() return proxy.x end))
local fancy = setmetatable({}, { __index = setmetatable({}, { __index = function(t, k)
  return function(...) return k, select("#", ...) end
end }) })
print("method via index", fancy:anything(1, 2), fancy.other())
