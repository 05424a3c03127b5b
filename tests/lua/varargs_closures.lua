-- Vararg functions (select, unpack, ... forwarded through several calls)
-- and closures: closures created in loops (one function prototype, many
-- closures), counters with shared upvalues, closures returned and called
-- later, recursive local closures.

local function count(...)
  return select("#", ...)
end

local function forward(...)
  local n = count(...)
  return n, ...
end

local function varsum(...)
  local s = 0
  local args = { ... }
  for i = 1, #args do
    s = s + args[i]
  end
  return s
end

local function with_fixed(a, b, ...)
  return a, b, count(...), varsum(...)
end

print("count", count(), count(nil), count(1, nil, nil))
print("forward", forward("a", "b"))
print("varsum", varsum(1, 2, 3, 4, 5))
print("fixed", with_fixed(1, 2, 3, 4, 5))
print("unpack", varsum(unpack({ 10, 20, 30 })))

local adders = {}
for i = 1, 5 do
  adders[i] = function(x) return x + i end
end
local total = 0
for i = 1, 5 do
  total = total + adders[i](i)
end
print("adders", total)

local function make_counter()
  local n = 0
  local function inc() n = n + 1 return n end
  local function get() return n end
  return inc, get
end
local inc1, get1 = make_counter()
local inc2, get2 = make_counter()
inc1() inc1() inc2()
print("counters", get1(), get2())

local function memo_fib()
  local cache = {}
  local fib
  fib = function(n)
    if n < 2 then return n end
    if cache[n] then return cache[n] end
    local v = fib(n - 1) + fib(n - 2)
    cache[n] = v
    return v
  end
  return fib
end
print("memo fib", memo_fib()(40))

local compose = function(...)
  local fs = { ... }
  return function(x)
    for i = #fs, 1, -1 do
      x = fs[i](x)
    end
    return x
  end
end
local f = compose(function(x) return x * 2 end, function(x) return x + 3 end)
print("compose", f(4))
