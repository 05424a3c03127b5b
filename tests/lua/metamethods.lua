-- Metamethods beyond c_callbacks.lua: __index chains of tables ending in a
-- function, __newindex chains, the arithmetic family, multi-operand
-- __concat, __le falling back to __lt, __call as a for generator, through
-- pcall, tail-called and as a method, metamethods calling metamethods and
-- tail-calling, C functions as metamethods, __len on a newproxy userdata,
-- metatables of numbers, strings, booleans and functions
-- (debug.setmetatable), errors inside metamethods caught at various depths,
-- weak tables (no collection), a C __call reached by a tail call, a
-- __call generator that tail-calls, a vararg __index.

-- __index: table -> table -> function
local seen = {}
local function fallback(t, k)
  seen[#seen + 1] = k
  if k == "deep" then return "from function" end
  return nil
end
local base = setmetatable({ b = "base field" }, { __index = fallback })
local mid = setmetatable({ m = "mid field" }, { __index = base })
local top = setmetatable({}, { __index = mid })
print("chain", top.m, top.b, top.deep, top.none, table.concat(seen, ","))

-- __index function that tail-calls, and one that indexes another proxy
local function lookup_default(k) return "default " .. k end
local tailing = setmetatable({}, { __index = function(t, k) return lookup_default(k) end })
local relay = setmetatable({}, { __index = function(t, k) return tailing[k .. "!"] end })
print("tail index", tailing.x, relay.y)

-- __newindex: a table whose __newindex is a table with a __newindex function
local store = {}
local sink = setmetatable({}, { __newindex = function(t, k, v) store[k] = v * 2 end })
local front = setmetatable({}, { __newindex = sink })
front.a = 1
front.b = 5
print("newindex chain", store.a, store.b, rawget(front, "a"), rawget(sink, "a"))

-- arithmetic family
local N = {}
N.__index = N
local function num(v) return setmetatable({ v = v }, N) end
local function val(x) if type(x) == "table" then return x.v end return x end
N.__add = function(a, b) return num(val(a) + val(b)) end
N.__sub = function(a, b) return num(val(a) - val(b)) end
N.__mul = function(a, b) return num(val(a) * val(b)) end
N.__div = function(a, b) return num(val(a) / val(b)) end
N.__mod = function(a, b) return num(val(a) % val(b)) end
N.__pow = function(a, b) return num(val(a) ^ val(b)) end
N.__unm = function(a) return num(-a.v) end
N.__eq = function(a, b) return a.v == b.v end
N.__lt = function(a, b) return val(a) < val(b) end
N.__concat = function(a, b) return tostring(val(a)) .. "|" .. tostring(val(b)) end
function N:show() return "n" .. self.v end
local x, y = num(7), num(3)
print("arith", (x + y).v, (x - 2).v, (10 * y).v, (x / y).v, (x % y).v, (y ^ 2).v, (-x).v)
print("compare", x == num(7), x ~= y, x < y, x > y, x <= y, y >= x)
print("concat", x .. y .. 1 .. "s" .. y)
print("method", (x + y * 2):show())

-- __call: as a for generator, through pcall, tail-called, as a method
local counter = setmetatable({ n = 0 }, {
  __call = function(self, limit, last)
    last = (last or 0) + 1
    if last > limit then return nil end
    return last
  end,
})
local got = {}
for i in counter, 3 do got[#got + 1] = i end
print("call generator", table.concat(got, ","))
local callable = setmetatable({}, { __call = function(self, a, b)
  if type(a) == "table" then a = 0 end
  return a + b
end })
print("call pcall", pcall(callable, 2, 3))
local function tail_into_callable(a) return callable(a, 100) end
print("call tail", tail_into_callable(1))
local obj = { f = callable }
print("call method", pcall(function() return obj:f(4) end))

-- a metamethod that uses other metamethods
local V = {}
V.__index = function(v, k)
  if k == "sum" then return v[1] + v[2] end  -- itself an __add on tables
  return nil
end
local W = { __add = function(a, b) return a.w + b.w end }
local w1, w2 = setmetatable({ w = 1 }, W), setmetatable({ w = 2 }, W)
local vv = setmetatable({ w1, w2 }, V)
print("nested meta", vv.sum)

-- C functions as metamethods
local cmeta = setmetatable({ present = 1 }, { __index = rawget, __unm = type, __call = select,
                                               __concat = rawequal })
print("c meta", cmeta.absent, -cmeta, cmeta .. cmeta, pcall(cmeta, 1))

-- __len and __index on a newproxy userdata
local ud = newproxy(true)
getmetatable(ud).__len = function(u) return 42 end
getmetatable(ud).__index = function(u, k) return k .. k end
print("userdata", #ud, ud.ab)

-- metatables of other types
local smeta = getmetatable("")
local old_index = smeta.__index
smeta.__index = function(s, k)
  if k == "twice" then return function(self) return self .. self end end
  return old_index[k]
end
print("string meta", ("ab"):twice(), ("x"):upper())
smeta.__index = old_index

debug.setmetatable(0, { __index = function(n, k) if k == "sq" then return n * n end end,
                        __call = function(n, m) return n + m end })
print("number meta", (5).sq, (4)(6))
debug.setmetatable(0, nil)
debug.setmetatable(true, { __concat = function(a, b) return tostring(a) .. "&" .. tostring(b) end })
print("boolean meta", true .. false)
debug.setmetatable(true, nil)
debug.setmetatable(print, { __index = function(f, k) return "fn." .. k end })
print("function meta", print.name)
debug.setmetatable(print, nil)

-- errors inside metamethods, caught at various depths
local strict = setmetatable({}, {
  __index = function(t, k) error("no field " .. k) end,
  __add = function(a, b) return a.missing + 1 end,  -- error in __index inside __add
  __lt = function(a, b) local z = nil; return z.field end,  -- runtime error
})
local function depth3(t) return (t + 1) end
local function depth2(t) local r = depth3(t); return r end
local function depth1(t) local r = depth2(t); return r end
print("err index", pcall(function() return strict.foo end))
print("err add deep", pcall(depth1, strict))
print("err lt", pcall(function() return strict < strict end))
print("err sort lt", pcall(table.sort, { strict, strict, strict }))
local cok, ce = pcall(setmetatable({}, { __call = function() error({ code = 7 }) end }))
print("err in call", cok, ce.code)
local ok, e = pcall(function()
  local inner_ok, inner_e = pcall(function() return strict.bar end)
  return inner_ok, inner_e, strict.baz
end)
print("err nested", ok, e)

-- weak tables: used like plain tables (nothing collected)
local cache = setmetatable({}, { __mode = "k" })
local key = {}
cache[key] = "kept"
local vals = setmetatable({}, { __mode = "v", __index = function(t, k) return "miss " .. k end })
print("weak", cache[key], vals.q)

-- a C __call reached by a tail call (runs on top of its caller), a C
-- __tostring, a __call generator that tail-calls, a vararg __index
local ctab = setmetatable({}, { __call = type, __tostring = type })
local function tail_c(v) return ctab(v) end
print("tail c call", tail_c(1), tostring(ctab))
local gen = setmetatable({}, { __call = function(self, s, c)
  local function step(n) if n < 3 then return n + 1 end end
  return step(c)
end })
local steps = {}
for i in gen, nil, 0 do steps[#steps + 1] = i end
print("tail generator", table.concat(steps, ","))
local function vararg_index(...)
  local _, k = ...
  return select("#", ...) .. k
end
print("vararg index", setmetatable({}, { __index = vararg_index }).z)
