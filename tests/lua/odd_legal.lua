-- Odd but legal: chunks made by load() in a loop, string.dump round trips,
-- metatables of functions, numbers, nil and booleans (debug.setmetatable),
-- a huge function, very long lines, callbacks from C that fail.
local unpack = unpack or table.unpack
local loadstr = loadstring or load
local out = {}
local function note(...) local t = {...} for i = 1, select('#', ...) do t[i] = tostring(t[i]) end out[#out + 1] = table.concat(t, ' ') end
local acc = 0
for i = 1, 150 do
  local src = 'local a = ...\nlocal function sq(x) return x * x + ' .. i .. ' end\nlocal s = 0\nfor k = 1, a do s = s + sq(k) end\nreturn s, function(y) return y + ' .. i .. ' end'
  local f = assert(loadstr(src, '=gen' .. (i % 7)))
  local s, g = f(i % 5 + 1)
  acc = acc + s + g(i)
end
note('chunks', acc)
-- chunks of the same name and text: one function each time
for i = 1, 30 do local f = assert(loadstr('return ...', '=same')); acc = acc + f(i) end
note('same', acc)
local function adder(a, b)
  local s = a
  for i = 1, b do s = s + i end
  return s
end
local d1 = loadstr(string.dump(adder))
local d2 = loadstr(string.dump(adder, true))
note('dump', adder(1, 4), d1(2, 5), d2(3, 6))
local function nest() return function(x) return x * 2 end end
local dn = loadstr(string.dump(nest))
note('dump nest', dn()(21), nest()(4))
local fmt = {}
fmt.__index = function(f, k) return function(...) return k .. '(' .. table.concat({...}, ',') .. ')' end end
fmt.__concat = function(a, b)
  local fa, fb = type(a) == 'function' and a or function(...) return a end, type(b) == 'function' and b or function(...) return b end
  return function(...) return fb(fa(...)) end
end
debug.setmetatable(print, fmt)
local inc = function(x) return x + 1 end
local dbl = function(x) return x * 2 end
note('fn meta', inc.sum(1, 2), (inc .. dbl)(5), (dbl .. inc .. dbl)(3))
debug.setmetatable(print, nil)
local nm = {__index = {}}
function nm.__index.twice(n) return n * 2 end
function nm.__index.times(n, f) local r = {} for i = 1, n do r[i] = f(i) end return r end
function nm.__call(n, x) return n + x end
debug.setmetatable(0, nm)
local five = 5
note('num meta', five:twice(), #five:times(dbl), five(3), (2.5):twice())
debug.setmetatable(0, nil)
debug.setmetatable(nil, {__index = function(_, k) return 'nil.' .. tostring(k) end, __call = function(_, a) return 'called nil ' .. tostring(a) end})
local nothing = nil
note('nil meta', nothing.foo, nothing[3], nothing(7))
debug.setmetatable(nil, nil)
debug.setmetatable(true, {__call = function(b, ...) return b and select('#', ...) or -1 end, __index = function(b, k) return k end})
local yes, no = true, false
note('bool meta', yes(1, 2, 3), no(), yes.x)
debug.setmetatable(true, nil)
note('nil meta gone', pcall(function() return nothing.foo end))
local function bad_repl(s) if s == 'c' then error('bad letter ' .. s) end return s:upper() end
note('gsub err', pcall(string.gsub, 'abcd', '%a', bad_repl))
note('gsub ok', (string.gsub('abd', '%a', bad_repl)))
local function cmp(a, b) if a == 7 then error({seven = true}) end return a < b end
local t = {5, 3, 9, 1, 7, 2}
local ok, e = pcall(table.sort, t, cmp)
note('sort err', ok, type(e) == 'table' and e.seven)
note('tostring err', pcall(tostring, setmetatable({}, {__tostring = function() error('no string') end})))
local function huge(x)
  if x > 0 then x = x - 1 end
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  if x > 5 then x = x - 1 end
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  if x > 3 then x = x - 1 end
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  if x > 1 then x = x - 1 end
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  if x > 6 then x = x - 1 end
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  if x > 4 then x = x - 1 end
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  if x > 2 then x = x - 1 end
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  if x > 0 then x = x - 1 end
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  if x > 5 then x = x - 1 end
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  if x > 3 then x = x - 1 end
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  x = x + 0
  x = x + 1
  x = x + 2
  x = x + 3
  x = x + 4
  return x
end
note('huge', huge(1), huge(10))
local function gappy(x)
  x = x + 1
  --[[



















  ]]
  x = x + 1
  --[[


























  ]]
  x = x + 1
  --[[

































  ]]
  x = x + 1
  --[[








































  ]]
  x = x + 1
  --[[















































  ]]
  x = x + 1
  --[[






















































  ]]
  x = x + 1
  --[[





























































  ]]
  x = x + 1
  --[[




































































  ]]
  x = x + 1
  --[[











































































  ]]
  x = x + 1
  --[[


















































































  ]]
  x = x + 1
  --[[

























































































  ]]
  x = x + 1
  --[[
































































































  ]]
  x = x + 1
  --[[







































































































  ]]
  x = x + 1
  --[[














































































































  ]]
  x = x + 1
  --[[





















































































































  ]]
  x = x + 1
  --[[




























































































































  ]]
  x = x + 1
  --[[



































































































































  ]]
  x = x + 1
  --[[










































































































































  ]]
  x = x + 1
  --[[

















































































































































  ]]
  x = x + 1
  --[[
























































































































































  ]]
  x = x + 1
  --[[































































































































































  ]]
  x = x + 1
  --[[






































































































































































  ]]
  x = x + 1
  --[[













































































































































































  ]]
  x = x + 1
  --[[




















































































































































































  ]]
  x = x + 1
  --[[



























































































































































































  ]]
  x = x + 1
  --[[


































































































































































































  ]]
  x = x + 1
  --[[









































































































































































































  ]]
  x = x + 1
  --[[
















































































































































































































  ]]
  x = x + 1
  --[[























































































































































































































  ]]
  x = x + 1
  --[[






























































































































































































































  ]]
  x = x + 1
  --[[





































































































































































































































  ]]
  x = x + 1
  --[[












































































































































































































































  ]]
  x = x + 1
  --[[



















































































































































































































































  ]]
  x = x + 1
  --[[


























































































































































































































































  ]]
  x = x + 1
  --[[

































































































































































































































































  ]]
  x = x + 1
  --[[








































































































































































































































































  ]]
  x = x + 1
  --[[















































































































































































































































































  ]]
  x = x + 1
  --[[






















































































































































































































































































  ]]
  x = x + 1
  --[[





























































































































































































































































































  ]]
  x = x + 1
  --[[




































































































































































































































































































  ]]
  return x
end
note('gappy', gappy(0))
local longsum = 0 longsum = longsum + 0; longsum = longsum + 1; longsum = longsum + 2; longsum = longsum + 3; longsum = longsum + 4; longsum = longsum + 5; longsum = longsum + 6; longsum = longsum + 7; longsum = longsum + 8; longsum = longsum + 9; longsum = longsum + 10; longsum = longsum + 11; longsum = longsum + 12; longsum = longsum + 13; longsum = longsum + 14; longsum = longsum + 15; longsum = longsum + 16; longsum = longsum + 17; longsum = longsum + 18; longsum = longsum + 19; longsum = longsum + 20; longsum = longsum + 21; longsum = longsum + 22; longsum = longsum + 23; longsum = longsum + 24; longsum = longsum + 25; longsum = longsum + 26; longsum = longsum + 27; longsum = longsum + 28; longsum = longsum + 29; longsum = longsum + 30; longsum = longsum + 31; longsum = longsum + 32; longsum = longsum + 33; longsum = longsum + 34; longsum = longsum + 35; longsum = longsum + 36; longsum = longsum + 37; longsum = longsum + 38; longsum = longsum + 39; longsum = longsum + 40; longsum = longsum + 41; longsum = longsum + 42; longsum = longsum + 43; longsum = longsum + 44; longsum = longsum + 45; longsum = longsum + 46; longsum = longsum + 47; longsum = longsum + 48; longsum = longsum + 49; longsum = longsum + 50; longsum = longsum + 51; longsum = longsum + 52; longsum = longsum + 53; longsum = longsum + 54; longsum = longsum + 55; longsum = longsum + 56; longsum = longsum + 57; longsum = longsum + 58; longsum = longsum + 59; longsum = longsum + 60; longsum = longsum + 61; longsum = longsum + 62; longsum = longsum + 63; longsum = longsum + 64; longsum = longsum + 65; longsum = longsum + 66; longsum = longsum + 67; longsum = longsum + 68; longsum = longsum + 69; longsum = longsum + 70; longsum = longsum + 71; longsum = longsum + 72; longsum = longsum + 73; longsum = longsum + 74; longsum = longsum + 75; longsum = longsum + 76; longsum = longsum + 77; longsum = longsum + 78; longsum = longsum + 79; longsum = longsum + 80; longsum = longsum + 81; longsum = longsum + 82; longsum = longsum + 83; longsum = longsum + 84; longsum = longsum + 85; longsum = longsum + 86; longsum = longsum + 87; longsum = longsum + 88; longsum = longsum + 89; longsum = longsum + 90; longsum = longsum + 91; longsum = longsum + 92; longsum = longsum + 93; longsum = longsum + 94; longsum = longsum + 95; longsum = longsum + 96; longsum = longsum + 97; longsum = longsum + 98; longsum = longsum + 99; longsum = longsum + 100; longsum = longsum + 101; longsum = longsum + 102; longsum = longsum + 103; longsum = longsum + 104; longsum = longsum + 105; longsum = longsum + 106; longsum = longsum + 107; longsum = longsum + 108; longsum = longsum + 109; longsum = longsum + 110; longsum = longsum + 111; longsum = longsum + 112; longsum = longsum + 113; longsum = longsum + 114; longsum = longsum + 115; longsum = longsum + 116; longsum = longsum + 117; longsum = longsum + 118; longsum = longsum + 119; longsum = longsum + 120; longsum = longsum + 121; longsum = longsum + 122; longsum = longsum + 123; longsum = longsum + 124; longsum = longsum + 125; longsum = longsum + 126; longsum = longsum + 127; longsum = longsum + 128; longsum = longsum + 129; longsum = longsum + 130; longsum = longsum + 131; longsum = longsum + 132; longsum = longsum + 133; longsum = longsum + 134; longsum = longsum + 135; longsum = longsum + 136; longsum = longsum + 137; longsum = longsum + 138; longsum = longsum + 139; longsum = longsum + 140; longsum = longsum + 141; longsum = longsum + 142; longsum = longsum + 143; longsum = longsum + 144; longsum = longsum + 145; longsum = longsum + 146; longsum = longsum + 147; longsum = longsum + 148; longsum = longsum + 149; longsum = longsum + 150; longsum = longsum + 151; longsum = longsum + 152; longsum = longsum + 153; longsum = longsum + 154; longsum = longsum + 155; longsum = longsum + 156; longsum = longsum + 157; longsum = longsum + 158; longsum = longsum + 159; longsum = longsum + 160; longsum = longsum + 161; longsum = longsum + 162; longsum = longsum + 163; longsum = longsum + 164; longsum = longsum + 165; longsum = longsum + 166; longsum = longsum + 167; longsum = longsum + 168; longsum = longsum + 169; longsum = longsum + 170; longsum = longsum + 171; longsum = longsum + 172; longsum = longsum + 173; longsum = longsum + 174; longsum = longsum + 175; longsum = longsum + 176; longsum = longsum + 177; longsum = longsum + 178; longsum = longsum + 179; longsum = longsum + 180; longsum = longsum + 181; longsum = longsum + 182; longsum = longsum + 183; longsum = longsum + 184; longsum = longsum + 185; longsum = longsum + 186; longsum = longsum + 187; longsum = longsum + 188; longsum = longsum + 189; longsum = longsum + 190; longsum = longsum + 191; longsum = longsum + 192; longsum = longsum + 193; longsum = longsum + 194; longsum = longsum + 195; longsum = longsum + 196; longsum = longsum + 197; longsum = longsum + 198; longsum = longsum + 199; longsum = longsum + 200; longsum = longsum + 201; longsum = longsum + 202; longsum = longsum + 203; longsum = longsum + 204; longsum = longsum + 205; longsum = longsum + 206; longsum = longsum + 207; longsum = longsum + 208; longsum = longsum + 209; longsum = longsum + 210; longsum = longsum + 211; longsum = longsum + 212; longsum = longsum + 213; longsum = longsum + 214; longsum = longsum + 215; longsum = longsum + 216; longsum = longsum + 217; longsum = longsum + 218; longsum = longsum + 219; longsum = longsum + 220; longsum = longsum + 221; longsum = longsum + 222; longsum = longsum + 223; longsum = longsum + 224; longsum = longsum + 225; longsum = longsum + 226; longsum = longsum + 227; longsum = longsum + 228; longsum = longsum + 229; longsum = longsum + 230; longsum = longsum + 231; longsum = longsum + 232; longsum = longsum + 233; longsum = longsum + 234; longsum = longsum + 235; longsum = longsum + 236; longsum = longsum + 237; longsum = longsum + 238; longsum = longsum + 239; longsum = longsum + 240; longsum = longsum + 241; longsum = longsum + 242; longsum = longsum + 243; longsum = longsum + 244; longsum = longsum + 245; longsum = longsum + 246; longsum = longsum + 247; longsum = longsum + 248; longsum = longsum + 249; longsum = longsum + 250; longsum = longsum + 251; longsum = longsum + 252; longsum = longsum + 253; longsum = longsum + 254; longsum = longsum + 255; longsum = longsum + 256; longsum = longsum + 257; longsum = longsum + 258; longsum = longsum + 259; longsum = longsum + 260; longsum = longsum + 261; longsum = longsum + 262; longsum = longsum + 263; longsum = longsum + 264; longsum = longsum + 265; longsum = longsum + 266; longsum = longsum + 267; longsum = longsum + 268; longsum = longsum + 269; longsum = longsum + 270; longsum = longsum + 271; longsum = longsum + 272; longsum = longsum + 273; longsum = longsum + 274; longsum = longsum + 275; longsum = longsum + 276; longsum = longsum + 277; longsum = longsum + 278; longsum = longsum + 279; longsum = longsum + 280; longsum = longsum + 281; longsum = longsum + 282; longsum = longsum + 283; longsum = longsum + 284; longsum = longsum + 285; longsum = longsum + 286; longsum = longsum + 287; longsum = longsum + 288; longsum = longsum + 289; longsum = longsum + 290; longsum = longsum + 291; longsum = longsum + 292; longsum = longsum + 293; longsum = longsum + 294; longsum = longsum + 295; longsum = longsum + 296; longsum = longsum + 297; longsum = longsum + 298; longsum = longsum + 299; longsum = longsum + 300; longsum = longsum + 301; longsum = longsum + 302; longsum = longsum + 303; longsum = longsum + 304; longsum = longsum + 305; longsum = longsum + 306; longsum = longsum + 307; longsum = longsum + 308; longsum = longsum + 309; longsum = longsum + 310; longsum = longsum + 311; longsum = longsum + 312; longsum = longsum + 313; longsum = longsum + 314; longsum = longsum + 315; longsum = longsum + 316; longsum = longsum + 317; longsum = longsum + 318; longsum = longsum + 319; longsum = longsum + 320; longsum = longsum + 321; longsum = longsum + 322; longsum = longsum + 323; longsum = longsum + 324; longsum = longsum + 325; longsum = longsum + 326; longsum = longsum + 327; longsum = longsum + 328; longsum = longsum + 329; longsum = longsum + 330; longsum = longsum + 331; longsum = longsum + 332; longsum = longsum + 333; longsum = longsum + 334; longsum = longsum + 335; longsum = longsum + 336; longsum = longsum + 337; longsum = longsum + 338; longsum = longsum + 339; longsum = longsum + 340; longsum = longsum + 341; longsum = longsum + 342; longsum = longsum + 343; longsum = longsum + 344; longsum = longsum + 345; longsum = longsum + 346; longsum = longsum + 347; longsum = longsum + 348; longsum = longsum + 349; longsum = longsum + 350; longsum = longsum + 351; longsum = longsum + 352; longsum = longsum + 353; longsum = longsum + 354; longsum = longsum + 355; longsum = longsum + 356; longsum = longsum + 357; longsum = longsum + 358; longsum = longsum + 359; longsum = longsum + 360; longsum = longsum + 361; longsum = longsum + 362; longsum = longsum + 363; longsum = longsum + 364; longsum = longsum + 365; longsum = longsum + 366; longsum = longsum + 367; longsum = longsum + 368; longsum = longsum + 369; longsum = longsum + 370; longsum = longsum + 371; longsum = longsum + 372; longsum = longsum + 373; longsum = longsum + 374; longsum = longsum + 375; longsum = longsum + 376; longsum = longsum + 377; longsum = longsum + 378; longsum = longsum + 379; longsum = longsum + 380; longsum = longsum + 381; longsum = longsum + 382; longsum = longsum + 383; longsum = longsum + 384; longsum = longsum + 385; longsum = longsum + 386; longsum = longsum + 387; longsum = longsum + 388; longsum = longsum + 389; longsum = longsum + 390; longsum = longsum + 391; longsum = longsum + 392; longsum = longsum + 393; longsum = longsum + 394; longsum = longsum + 395; longsum = longsum + 396; longsum = longsum + 397; longsum = longsum + 398; longsum = longsum + 399; longsum = longsum + 400; longsum = longsum + 401; longsum = longsum + 402; longsum = longsum + 403; longsum = longsum + 404; longsum = longsum + 405; longsum = longsum + 406; longsum = longsum + 407; longsum = longsum + 408; longsum = longsum + 409; longsum = longsum + 410; longsum = longsum + 411; longsum = longsum + 412; longsum = longsum + 413; longsum = longsum + 414; longsum = longsum + 415; longsum = longsum + 416; longsum = longsum + 417; longsum = longsum + 418; longsum = longsum + 419; longsum = longsum + 420; longsum = longsum + 421; longsum = longsum + 422; longsum = longsum + 423; longsum = longsum + 424; longsum = longsum + 425; longsum = longsum + 426; longsum = longsum + 427; longsum = longsum + 428; longsum = longsum + 429; longsum = longsum + 430; longsum = longsum + 431; longsum = longsum + 432; longsum = longsum + 433; longsum = longsum + 434; longsum = longsum + 435; longsum = longsum + 436; longsum = longsum + 437; longsum = longsum + 438; longsum = longsum + 439; longsum = longsum + 440; longsum = longsum + 441; longsum = longsum + 442; longsum = longsum + 443; longsum = longsum + 444; longsum = longsum + 445; longsum = longsum + 446; longsum = longsum + 447; longsum = longsum + 448; longsum = longsum + 449; longsum = longsum + 450; longsum = longsum + 451; longsum = longsum + 452; longsum = longsum + 453; longsum = longsum + 454; longsum = longsum + 455; longsum = longsum + 456; longsum = longsum + 457; longsum = longsum + 458; longsum = longsum + 459; longsum = longsum + 460; longsum = longsum + 461; longsum = longsum + 462; longsum = longsum + 463; longsum = longsum + 464; longsum = longsum + 465; longsum = longsum + 466; longsum = longsum + 467; longsum = longsum + 468; longsum = longsum + 469; longsum = longsum + 470; longsum = longsum + 471; longsum = longsum + 472; longsum = longsum + 473; longsum = longsum + 474; longsum = longsum + 475; longsum = longsum + 476; longsum = longsum + 477; longsum = longsum + 478; longsum = longsum + 479; longsum = longsum + 480; longsum = longsum + 481; longsum = longsum + 482; longsum = longsum + 483; longsum = longsum + 484; longsum = longsum + 485; longsum = longsum + 486; longsum = longsum + 487; longsum = longsum + 488; longsum = longsum + 489; longsum = longsum + 490; longsum = longsum + 491; longsum = longsum + 492; longsum = longsum + 493; longsum = longsum + 494; longsum = longsum + 495; longsum = longsum + 496; longsum = longsum + 497; longsum = longsum + 498; longsum = longsum + 499; longsum = longsum + 500; longsum = longsum + 501; longsum = longsum + 502; longsum = longsum + 503; longsum = longsum + 504; longsum = longsum + 505; longsum = longsum + 506; longsum = longsum + 507; longsum = longsum + 508; longsum = longsum + 509; longsum = longsum + 510; longsum = longsum + 511; longsum = longsum + 512; longsum = longsum + 513; longsum = longsum + 514; longsum = longsum + 515; longsum = longsum + 516; longsum = longsum + 517; longsum = longsum + 518; longsum = longsum + 519; longsum = longsum + 520; longsum = longsum + 521; longsum = longsum + 522; longsum = longsum + 523; longsum = longsum + 524; longsum = longsum + 525; longsum = longsum + 526; longsum = longsum + 527; longsum = longsum + 528; longsum = longsum + 529; longsum = longsum + 530; longsum = longsum + 531; longsum = longsum + 532; longsum = longsum + 533; longsum = longsum + 534; longsum = longsum + 535; longsum = longsum + 536; longsum = longsum + 537; longsum = longsum + 538; longsum = longsum + 539; longsum = longsum + 540; longsum = longsum + 541; longsum = longsum + 542; longsum = longsum + 543; longsum = longsum + 544; longsum = longsum + 545; longsum = longsum + 546; longsum = longsum + 547; longsum = longsum + 548; longsum = longsum + 549; longsum = longsum + 550; longsum = longsum + 551; longsum = longsum + 552; longsum = longsum + 553; longsum = longsum + 554; longsum = longsum + 555; longsum = longsum + 556; longsum = longsum + 557; longsum = longsum + 558; longsum = longsum + 559; longsum = longsum + 560; longsum = longsum + 561; longsum = longsum + 562; longsum = longsum + 563; longsum = longsum + 564; longsum = longsum + 565; longsum = longsum + 566; longsum = longsum + 567; longsum = longsum + 568; longsum = longsum + 569; longsum = longsum + 570; longsum = longsum + 571; longsum = longsum + 572; longsum = longsum + 573; longsum = longsum + 574; longsum = longsum + 575; longsum = longsum + 576; longsum = longsum + 577; longsum = longsum + 578; longsum = longsum + 579; longsum = longsum + 580; longsum = longsum + 581; longsum = longsum + 582; longsum = longsum + 583; longsum = longsum + 584; longsum = longsum + 585; longsum = longsum + 586; longsum = longsum + 587; longsum = longsum + 588; longsum = longsum + 589; longsum = longsum + 590; longsum = longsum + 591; longsum = longsum + 592; longsum = longsum + 593; longsum = longsum + 594; longsum = longsum + 595; longsum = longsum + 596; longsum = longsum + 597; longsum = longsum + 598; longsum = longsum + 599; longsum = longsum + 600; longsum = longsum + 601; longsum = longsum + 602; longsum = longsum + 603; longsum = longsum + 604; longsum = longsum + 605; longsum = longsum + 606; longsum = longsum + 607; longsum = longsum + 608; longsum = longsum + 609; longsum = longsum + 610; longsum = longsum + 611; longsum = longsum + 612; longsum = longsum + 613; longsum = longsum + 614; longsum = longsum + 615; longsum = longsum + 616; longsum = longsum + 617; longsum = longsum + 618; longsum = longsum + 619; longsum = longsum + 620; longsum = longsum + 621; longsum = longsum + 622; longsum = longsum + 623; longsum = longsum + 624; longsum = longsum + 625; longsum = longsum + 626; longsum = longsum + 627; longsum = longsum + 628; longsum = longsum + 629; longsum = longsum + 630; longsum = longsum + 631; longsum = longsum + 632; longsum = longsum + 633; longsum = longsum + 634; longsum = longsum + 635; longsum = longsum + 636; longsum = longsum + 637; longsum = longsum + 638; longsum = longsum + 639; longsum = longsum + 640; longsum = longsum + 641; longsum = longsum + 642; longsum = longsum + 643; longsum = longsum + 644; longsum = longsum + 645; longsum = longsum + 646; longsum = longsum + 647; longsum = longsum + 648; longsum = longsum + 649; longsum = longsum + 650; longsum = longsum + 651; longsum = longsum + 652; longsum = longsum + 653; longsum = longsum + 654; longsum = longsum + 655; longsum = longsum + 656; longsum = longsum + 657; longsum = longsum + 658; longsum = longsum + 659; longsum = longsum + 660; longsum = longsum + 661; longsum = longsum + 662; longsum = longsum + 663; longsum = longsum + 664; longsum = longsum + 665; longsum = longsum + 666; longsum = longsum + 667; longsum = longsum + 668; longsum = longsum + 669; longsum = longsum + 670; longsum = longsum + 671; longsum = longsum + 672; longsum = longsum + 673; longsum = longsum + 674; longsum = longsum + 675; longsum = longsum + 676; longsum = longsum + 677; longsum = longsum + 678; longsum = longsum + 679; longsum = longsum + 680; longsum = longsum + 681; longsum = longsum + 682; longsum = longsum + 683; longsum = longsum + 684; longsum = longsum + 685; longsum = longsum + 686; longsum = longsum + 687; longsum = longsum + 688; longsum = longsum + 689; longsum = longsum + 690; longsum = longsum + 691; longsum = longsum + 692; longsum = longsum + 693; longsum = longsum + 694; longsum = longsum + 695; longsum = longsum + 696; longsum = longsum + 697; longsum = longsum + 698; longsum = longsum + 699; longsum = longsum + 700; longsum = longsum + 701; longsum = longsum + 702; longsum = longsum + 703; longsum = longsum + 704; longsum = longsum + 705; longsum = longsum + 706; longsum = longsum + 707; longsum = longsum + 708; longsum = longsum + 709; longsum = longsum + 710; longsum = longsum + 711; longsum = longsum + 712; longsum = longsum + 713; longsum = longsum + 714; longsum = longsum + 715; longsum = longsum + 716; longsum = longsum + 717; longsum = longsum + 718; longsum = longsum + 719; longsum = longsum + 720; longsum = longsum + 721; longsum = longsum + 722; longsum = longsum + 723; longsum = longsum + 724; longsum = longsum + 725; longsum = longsum + 726; longsum = longsum + 727; longsum = longsum + 728; longsum = longsum + 729; longsum = longsum + 730; longsum = longsum + 731; longsum = longsum + 732; longsum = longsum + 733; longsum = longsum + 734; longsum = longsum + 735; longsum = longsum + 736; longsum = longsum + 737; longsum = longsum + 738; longsum = longsum + 739; longsum = longsum + 740; longsum = longsum + 741; longsum = longsum + 742; longsum = longsum + 743; longsum = longsum + 744; longsum = longsum + 745; longsum = longsum + 746; longsum = longsum + 747; longsum = longsum + 748; longsum = longsum + 749; longsum = longsum + 750; longsum = longsum + 751; longsum = longsum + 752; longsum = longsum + 753; longsum = longsum + 754; longsum = longsum + 755; longsum = longsum + 756; longsum = longsum + 757; longsum = longsum + 758; longsum = longsum + 759; longsum = longsum + 760; longsum = longsum + 761; longsum = longsum + 762; longsum = longsum + 763; longsum = longsum + 764; longsum = longsum + 765; longsum = longsum + 766; longsum = longsum + 767; longsum = longsum + 768; longsum = longsum + 769; longsum = longsum + 770; longsum = longsum + 771; longsum = longsum + 772; longsum = longsum + 773; longsum = longsum + 774; longsum = longsum + 775; longsum = longsum + 776; longsum = longsum + 777; longsum = longsum + 778; longsum = longsum + 779; longsum = longsum + 780; longsum = longsum + 781; longsum = longsum + 782; longsum = longsum + 783; longsum = longsum + 784; longsum = longsum + 785; longsum = longsum + 786; longsum = longsum + 787; longsum = longsum + 788; longsum = longsum + 789; longsum = longsum + 790; longsum = longsum + 791; longsum = longsum + 792; longsum = longsum + 793; longsum = longsum + 794; longsum = longsum + 795; longsum = longsum + 796; longsum = longsum + 797; longsum = longsum + 798; longsum = longsum + 799; longsum = longsum + 800; longsum = longsum + 801; longsum = longsum + 802; longsum = longsum + 803; longsum = longsum + 804; longsum = longsum + 805; longsum = longsum + 806; longsum = longsum + 807; longsum = longsum + 808; longsum = longsum + 809; longsum = longsum + 810; longsum = longsum + 811; longsum = longsum + 812; longsum = longsum + 813; longsum = longsum + 814; longsum = longsum + 815; longsum = longsum + 816; longsum = longsum + 817; longsum = longsum + 818; longsum = longsum + 819; longsum = longsum + 820; longsum = longsum + 821; longsum = longsum + 822; longsum = longsum + 823; longsum = longsum + 824; longsum = longsum + 825; longsum = longsum + 826; longsum = longsum + 827; longsum = longsum + 828; longsum = longsum + 829; longsum = longsum + 830; longsum = longsum + 831; longsum = longsum + 832; longsum = longsum + 833; longsum = longsum + 834; longsum = longsum + 835; longsum = longsum + 836; longsum = longsum + 837; longsum = longsum + 838; longsum = longsum + 839; longsum = longsum + 840; longsum = longsum + 841; longsum = longsum + 842; longsum = longsum + 843; longsum = longsum + 844; longsum = longsum + 845; longsum = longsum + 846; longsum = longsum + 847; longsum = longsum + 848; longsum = longsum + 849; longsum = longsum + 850; longsum = longsum + 851; longsum = longsum + 852; longsum = longsum + 853; longsum = longsum + 854; longsum = longsum + 855; longsum = longsum + 856; longsum = longsum + 857; longsum = longsum + 858; longsum = longsum + 859; longsum = longsum + 860; longsum = longsum + 861; longsum = longsum + 862; longsum = longsum + 863; longsum = longsum + 864; longsum = longsum + 865; longsum = longsum + 866; longsum = longsum + 867; longsum = longsum + 868; longsum = longsum + 869; longsum = longsum + 870; longsum = longsum + 871; longsum = longsum + 872; longsum = longsum + 873; longsum = longsum + 874; longsum = longsum + 875; longsum = longsum + 876; longsum = longsum + 877; longsum = longsum + 878; longsum = longsum + 879; longsum = longsum + 880; longsum = longsum + 881; longsum = longsum + 882; longsum = longsum + 883; longsum = longsum + 884; longsum = longsum + 885; longsum = longsum + 886; longsum = longsum + 887; longsum = longsum + 888; longsum = longsum + 889; longsum = longsum + 890; longsum = longsum + 891; longsum = longsum + 892; longsum = longsum + 893; longsum = longsum + 894; longsum = longsum + 895; longsum = longsum + 896; longsum = longsum + 897; longsum = longsum + 898; longsum = longsum + 899; longsum = longsum + 900; longsum = longsum + 901; longsum = longsum + 902; longsum = longsum + 903; longsum = longsum + 904; longsum = longsum + 905; longsum = longsum + 906; longsum = longsum + 907; longsum = longsum + 908; longsum = longsum + 909; longsum = longsum + 910; longsum = longsum + 911; longsum = longsum + 912; longsum = longsum + 913; longsum = longsum + 914; longsum = longsum + 915; longsum = longsum + 916; longsum = longsum + 917; longsum = longsum + 918; longsum = longsum + 919; longsum = longsum + 920; longsum = longsum + 921; longsum = longsum + 922; longsum = longsum + 923; longsum = longsum + 924; longsum = longsum + 925; longsum = longsum + 926; longsum = longsum + 927; longsum = longsum + 928; longsum = longsum + 929; longsum = longsum + 930; longsum = longsum + 931; longsum = longsum + 932; longsum = longsum + 933; longsum = longsum + 934; longsum = longsum + 935; longsum = longsum + 936; longsum = longsum + 937; longsum = longsum + 938; longsum = longsum + 939; longsum = longsum + 940; longsum = longsum + 941; longsum = longsum + 942; longsum = longsum + 943; longsum = longsum + 944; longsum = longsum + 945; longsum = longsum + 946; longsum = longsum + 947; longsum = longsum + 948; longsum = longsum + 949; longsum = longsum + 950; longsum = longsum + 951; longsum = longsum + 952; longsum = longsum + 953; longsum = longsum + 954; longsum = longsum + 955; longsum = longsum + 956; longsum = longsum + 957; longsum = longsum + 958; longsum = longsum + 959; longsum = longsum + 960; longsum = longsum + 961; longsum = longsum + 962; longsum = longsum + 963; longsum = longsum + 964; longsum = longsum + 965; longsum = longsum + 966; longsum = longsum + 967; longsum = longsum + 968; longsum = longsum + 969; longsum = longsum + 970; longsum = longsum + 971; longsum = longsum + 972; longsum = longsum + 973; longsum = longsum + 974; longsum = longsum + 975; longsum = longsum + 976; longsum = longsum + 977; longsum = longsum + 978; longsum = longsum + 979; longsum = longsum + 980; longsum = longsum + 981; longsum = longsum + 982; longsum = longsum + 983; longsum = longsum + 984; longsum = longsum + 985; longsum = longsum + 986; longsum = longsum + 987; longsum = longsum + 988; longsum = longsum + 989; longsum = longsum + 990; longsum = longsum + 991; longsum = longsum + 992; longsum = longsum + 993; longsum = longsum + 994; longsum = longsum + 995; longsum = longsum + 996; longsum = longsum + 997; longsum = longsum + 998; longsum = longsum + 999; longsum = longsum + 1000; longsum = longsum + 1001; longsum = longsum + 1002; longsum = longsum + 1003; longsum = longsum + 1004; longsum = longsum + 1005; longsum = longsum + 1006; longsum = longsum + 1007; longsum = longsum + 1008; longsum = longsum + 1009; longsum = longsum + 1010; longsum = longsum + 1011; longsum = longsum + 1012; longsum = longsum + 1013; longsum = longsum + 1014; longsum = longsum + 1015; longsum = longsum + 1016; longsum = longsum + 1017; longsum = longsum + 1018; longsum = longsum + 1019; longsum = longsum + 1020; longsum = longsum + 1021; longsum = longsum + 1022; longsum = longsum + 1023; longsum = longsum + 1024; longsum = longsum + 1025; longsum = longsum + 1026; longsum = longsum + 1027; longsum = longsum + 1028; longsum = longsum + 1029; longsum = longsum + 1030; longsum = longsum + 1031; longsum = longsum + 1032; longsum = longsum + 1033; longsum = longsum + 1034; longsum = longsum + 1035; longsum = longsum + 1036; longsum = longsum + 1037; longsum = longsum + 1038; longsum = longsum + 1039; longsum = longsum + 1040; longsum = longsum + 1041; longsum = longsum + 1042; longsum = longsum + 1043; longsum = longsum + 1044; longsum = longsum + 1045; longsum = longsum + 1046; longsum = longsum + 1047; longsum = longsum + 1048; longsum = longsum + 1049; longsum = longsum + 1050; longsum = longsum + 1051; longsum = longsum + 1052; longsum = longsum + 1053; longsum = longsum + 1054; longsum = longsum + 1055; longsum = longsum + 1056; longsum = longsum + 1057; longsum = longsum + 1058; longsum = longsum + 1059; longsum = longsum + 1060; longsum = longsum + 1061; longsum = longsum + 1062; longsum = longsum + 1063; longsum = longsum + 1064; longsum = longsum + 1065; longsum = longsum + 1066; longsum = longsum + 1067; longsum = longsum + 1068; longsum = longsum + 1069; longsum = longsum + 1070; longsum = longsum + 1071; longsum = longsum + 1072; longsum = longsum + 1073; longsum = longsum + 1074; longsum = longsum + 1075; longsum = longsum + 1076; longsum = longsum + 1077; longsum = longsum + 1078; longsum = longsum + 1079; longsum = longsum + 1080; longsum = longsum + 1081; longsum = longsum + 1082; longsum = longsum + 1083; longsum = longsum + 1084; longsum = longsum + 1085; longsum = longsum + 1086; longsum = longsum + 1087; longsum = longsum + 1088; longsum = longsum + 1089; longsum = longsum + 1090; longsum = longsum + 1091; longsum = longsum + 1092; longsum = longsum + 1093; longsum = longsum + 1094; longsum = longsum + 1095; longsum = longsum + 1096; longsum = longsum + 1097; longsum = longsum + 1098; longsum = longsum + 1099; longsum = longsum + 1100; longsum = longsum + 1101; longsum = longsum + 1102; longsum = longsum + 1103; longsum = longsum + 1104; longsum = longsum + 1105; longsum = longsum + 1106; longsum = longsum + 1107; longsum = longsum + 1108; longsum = longsum + 1109; longsum = longsum + 1110; longsum = longsum + 1111; longsum = longsum + 1112; longsum = longsum + 1113; longsum = longsum + 1114; longsum = longsum + 1115; longsum = longsum + 1116; longsum = longsum + 1117; longsum = longsum + 1118; longsum = longsum + 1119; longsum = longsum + 1120; longsum = longsum + 1121; longsum = longsum + 1122; longsum = longsum + 1123; longsum = longsum + 1124; longsum = longsum + 1125; longsum = longsum + 1126; longsum = longsum + 1127; longsum = longsum + 1128; longsum = longsum + 1129; longsum = longsum + 1130; longsum = longsum + 1131; longsum = longsum + 1132; longsum = longsum + 1133; longsum = longsum + 1134; longsum = longsum + 1135; longsum = longsum + 1136; longsum = longsum + 1137; longsum = longsum + 1138; longsum = longsum + 1139; longsum = longsum + 1140; longsum = longsum + 1141; longsum = longsum + 1142; longsum = longsum + 1143; longsum = longsum + 1144; longsum = longsum + 1145; longsum = longsum + 1146; longsum = longsum + 1147; longsum = longsum + 1148; longsum = longsum + 1149; longsum = longsum + 1150; longsum = longsum + 1151; longsum = longsum + 1152; longsum = longsum + 1153; longsum = longsum + 1154; longsum = longsum + 1155; longsum = longsum + 1156; longsum = longsum + 1157; longsum = longsum + 1158; longsum = longsum + 1159; longsum = longsum + 1160; longsum = longsum + 1161; longsum = longsum + 1162; longsum = longsum + 1163; longsum = longsum + 1164; longsum = longsum + 1165; longsum = longsum + 1166; longsum = longsum + 1167; longsum = longsum + 1168; longsum = longsum + 1169; longsum = longsum + 1170; longsum = longsum + 1171; longsum = longsum + 1172; longsum = longsum + 1173; longsum = longsum + 1174; longsum = longsum + 1175; longsum = longsum + 1176; longsum = longsum + 1177; longsum = longsum + 1178; longsum = longsum + 1179; longsum = longsum + 1180; longsum = longsum + 1181; longsum = longsum + 1182; longsum = longsum + 1183; longsum = longsum + 1184; longsum = longsum + 1185; longsum = longsum + 1186; longsum = longsum + 1187; longsum = longsum + 1188; longsum = longsum + 1189; longsum = longsum + 1190; longsum = longsum + 1191; longsum = longsum + 1192; longsum = longsum + 1193; longsum = longsum + 1194; longsum = longsum + 1195; longsum = longsum + 1196; longsum = longsum + 1197; longsum = longsum + 1198; longsum = longsum + 1199; longsum = longsum + 1200; longsum = longsum + 1201; longsum = longsum + 1202; longsum = longsum + 1203; longsum = longsum + 1204; longsum = longsum + 1205; longsum = longsum + 1206; longsum = longsum + 1207; longsum = longsum + 1208; longsum = longsum + 1209; longsum = longsum + 1210; longsum = longsum + 1211; longsum = longsum + 1212; longsum = longsum + 1213; longsum = longsum + 1214; longsum = longsum + 1215; longsum = longsum + 1216; longsum = longsum + 1217; longsum = longsum + 1218; longsum = longsum + 1219; longsum = longsum + 1220; longsum = longsum + 1221; longsum = longsum + 1222; longsum = longsum + 1223; longsum = longsum + 1224; longsum = longsum + 1225; longsum = longsum + 1226; longsum = longsum + 1227; longsum = longsum + 1228; longsum = longsum + 1229; longsum = longsum + 1230; longsum = longsum + 1231; longsum = longsum + 1232; longsum = longsum + 1233; longsum = longsum + 1234; longsum = longsum + 1235; longsum = longsum + 1236; longsum = longsum + 1237; longsum = longsum + 1238; longsum = longsum + 1239; longsum = longsum + 1240; longsum = longsum + 1241; longsum = longsum + 1242; longsum = longsum + 1243; longsum = longsum + 1244; longsum = longsum + 1245; longsum = longsum + 1246; longsum = longsum + 1247; longsum = longsum + 1248; longsum = longsum + 1249; longsum = longsum + 1250; longsum = longsum + 1251; longsum = longsum + 1252; longsum = longsum + 1253; longsum = longsum + 1254; longsum = longsum + 1255; longsum = longsum + 1256; longsum = longsum + 1257; longsum = longsum + 1258; longsum = longsum + 1259; longsum = longsum + 1260; longsum = longsum + 1261; longsum = longsum + 1262; longsum = longsum + 1263; longsum = longsum + 1264; longsum = longsum + 1265; longsum = longsum + 1266; longsum = longsum + 1267; longsum = longsum + 1268; longsum = longsum + 1269; longsum = longsum + 1270; longsum = longsum + 1271; longsum = longsum + 1272; longsum = longsum + 1273; longsum = longsum + 1274; longsum = longsum + 1275; longsum = longsum + 1276; longsum = longsum + 1277; longsum = longsum + 1278; longsum = longsum + 1279; longsum = longsum + 1280; longsum = longsum + 1281; longsum = longsum + 1282; longsum = longsum + 1283; longsum = longsum + 1284; longsum = longsum + 1285; longsum = longsum + 1286; longsum = longsum + 1287; longsum = longsum + 1288; longsum = longsum + 1289; longsum = longsum + 1290; longsum = longsum + 1291; longsum = longsum + 1292; longsum = longsum + 1293; longsum = longsum + 1294; longsum = longsum + 1295; longsum = longsum + 1296; longsum = longsum + 1297; longsum = longsum + 1298; longsum = longsum + 1299; longsum = longsum + 1300; longsum = longsum + 1301; longsum = longsum + 1302; longsum = longsum + 1303; longsum = longsum + 1304; longsum = longsum + 1305; longsum = longsum + 1306; longsum = longsum + 1307; longsum = longsum + 1308; longsum = longsum + 1309; longsum = longsum + 1310; longsum = longsum + 1311; longsum = longsum + 1312; longsum = longsum + 1313; longsum = longsum + 1314; longsum = longsum + 1315; longsum = longsum + 1316; longsum = longsum + 1317; longsum = longsum + 1318; longsum = longsum + 1319; longsum = longsum + 1320; longsum = longsum + 1321; longsum = longsum + 1322; longsum = longsum + 1323; longsum = longsum + 1324; longsum = longsum + 1325; longsum = longsum + 1326; longsum = longsum + 1327; longsum = longsum + 1328; longsum = longsum + 1329; longsum = longsum + 1330; longsum = longsum + 1331; longsum = longsum + 1332; longsum = longsum + 1333; longsum = longsum + 1334; longsum = longsum + 1335; longsum = longsum + 1336; longsum = longsum + 1337; longsum = longsum + 1338; longsum = longsum + 1339; longsum = longsum + 1340; longsum = longsum + 1341; longsum = longsum + 1342; longsum = longsum + 1343; longsum = longsum + 1344; longsum = longsum + 1345; longsum = longsum + 1346; longsum = longsum + 1347; longsum = longsum + 1348; longsum = longsum + 1349; longsum = longsum + 1350; longsum = longsum + 1351; longsum = longsum + 1352; longsum = longsum + 1353; longsum = longsum + 1354; longsum = longsum + 1355; longsum = longsum + 1356; longsum = longsum + 1357; longsum = longsum + 1358; longsum = longsum + 1359; longsum = longsum + 1360; longsum = longsum + 1361; longsum = longsum + 1362; longsum = longsum + 1363; longsum = longsum + 1364; longsum = longsum + 1365; longsum = longsum + 1366; longsum = longsum + 1367; longsum = longsum + 1368; longsum = longsum + 1369; longsum = longsum + 1370; longsum = longsum + 1371; longsum = longsum + 1372; longsum = longsum + 1373; longsum = longsum + 1374; longsum = longsum + 1375; longsum = longsum + 1376; longsum = longsum + 1377; longsum = longsum + 1378; longsum = longsum + 1379; longsum = longsum + 1380; longsum = longsum + 1381; longsum = longsum + 1382; longsum = longsum + 1383; longsum = longsum + 1384; longsum = longsum + 1385; longsum = longsum + 1386; longsum = longsum + 1387; longsum = longsum + 1388; longsum = longsum + 1389; longsum = longsum + 1390; longsum = longsum + 1391; longsum = longsum + 1392; longsum = longsum + 1393; longsum = longsum + 1394; longsum = longsum + 1395; longsum = longsum + 1396; longsum = longsum + 1397; longsum = longsum + 1398; longsum = longsum + 1399; longsum = longsum + 1400; longsum = longsum + 1401; longsum = longsum + 1402; longsum = longsum + 1403; longsum = longsum + 1404; longsum = longsum + 1405; longsum = longsum + 1406; longsum = longsum + 1407; longsum = longsum + 1408; longsum = longsum + 1409; longsum = longsum + 1410; longsum = longsum + 1411; longsum = longsum + 1412; longsum = longsum + 1413; longsum = longsum + 1414; longsum = longsum + 1415; longsum = longsum + 1416; longsum = longsum + 1417; longsum = longsum + 1418; longsum = longsum + 1419; longsum = longsum + 1420; longsum = longsum + 1421; longsum = longsum + 1422; longsum = longsum + 1423; longsum = longsum + 1424; longsum = longsum + 1425; longsum = longsum + 1426; longsum = longsum + 1427; longsum = longsum + 1428; longsum = longsum + 1429; longsum = longsum + 1430; longsum = longsum + 1431; longsum = longsum + 1432; longsum = longsum + 1433; longsum = longsum + 1434; longsum = longsum + 1435; longsum = longsum + 1436; longsum = longsum + 1437; longsum = longsum + 1438; longsum = longsum + 1439; longsum = longsum + 1440; longsum = longsum + 1441; longsum = longsum + 1442; longsum = longsum + 1443; longsum = longsum + 1444; longsum = longsum + 1445; longsum = longsum + 1446; longsum = longsum + 1447; longsum = longsum + 1448; longsum = longsum + 1449; longsum = longsum + 1450; longsum = longsum + 1451; longsum = longsum + 1452; longsum = longsum + 1453; longsum = longsum + 1454; longsum = longsum + 1455; longsum = longsum + 1456; longsum = longsum + 1457; longsum = longsum + 1458; longsum = longsum + 1459; longsum = longsum + 1460; longsum = longsum + 1461; longsum = longsum + 1462; longsum = longsum + 1463; longsum = longsum + 1464; longsum = longsum + 1465; longsum = longsum + 1466; longsum = longsum + 1467; longsum = longsum + 1468; longsum = longsum + 1469; longsum = longsum + 1470; longsum = longsum + 1471; longsum = longsum + 1472; longsum = longsum + 1473; longsum = longsum + 1474; longsum = longsum + 1475; longsum = longsum + 1476; longsum = longsum + 1477; longsum = longsum + 1478; longsum = longsum + 1479; longsum = longsum + 1480; longsum = longsum + 1481; longsum = longsum + 1482; longsum = longsum + 1483; longsum = longsum + 1484; longsum = longsum + 1485; longsum = longsum + 1486; longsum = longsum + 1487; longsum = longsum + 1488; longsum = longsum + 1489; longsum = longsum + 1490; longsum = longsum + 1491; longsum = longsum + 1492; longsum = longsum + 1493; longsum = longsum + 1494; longsum = longsum + 1495; longsum = longsum + 1496; longsum = longsum + 1497; longsum = longsum + 1498; longsum = longsum + 1499;
note('long', longsum)
local function onelong(n) local s = 0 for i = 1, n do s = s + i end if n > 0 then s = s + dbl(0) end if n > 1 then s = s + dbl(1) end if n > 2 then s = s + dbl(2) end if n > 3 then s = s + dbl(3) end if n > 4 then s = s + dbl(4) end if n > 5 then s = s + dbl(5) end if n > 6 then s = s + dbl(6) end if n > 7 then s = s + dbl(7) end if n > 8 then s = s + dbl(8) end if n > 9 then s = s + dbl(9) end if n > 10 then s = s + dbl(10) end if n > 11 then s = s + dbl(11) end if n > 12 then s = s + dbl(12) end if n > 13 then s = s + dbl(13) end if n > 14 then s = s + dbl(14) end if n > 15 then s = s + dbl(15) end if n > 16 then s = s + dbl(16) end if n > 17 then s = s + dbl(17) end if n > 18 then s = s + dbl(18) end if n > 19 then s = s + dbl(19) end if n > 20 then s = s + dbl(20) end if n > 21 then s = s + dbl(21) end if n > 22 then s = s + dbl(22) end if n > 23 then s = s + dbl(23) end if n > 24 then s = s + dbl(24) end if n > 25 then s = s + dbl(25) end if n > 26 then s = s + dbl(26) end if n > 27 then s = s + dbl(27) end if n > 28 then s = s + dbl(28) end if n > 29 then s = s + dbl(29) end if n > 30 then s = s + dbl(30) end if n > 31 then s = s + dbl(31) end if n > 32 then s = s + dbl(32) end if n > 33 then s = s + dbl(33) end if n > 34 then s = s + dbl(34) end if n > 35 then s = s + dbl(35) end if n > 36 then s = s + dbl(36) end if n > 37 then s = s + dbl(37) end if n > 38 then s = s + dbl(38) end if n > 39 then s = s + dbl(39) end if n > 40 then s = s + dbl(40) end if n > 41 then s = s + dbl(41) end if n > 42 then s = s + dbl(42) end if n > 43 then s = s + dbl(43) end if n > 44 then s = s + dbl(44) end if n > 45 then s = s + dbl(45) end if n > 46 then s = s + dbl(46) end if n > 47 then s = s + dbl(47) end if n > 48 then s = s + dbl(48) end if n > 49 then s = s + dbl(49) end if n > 50 then s = s + dbl(50) end if n > 51 then s = s + dbl(51) end if n > 52 then s = s + dbl(52) end if n > 53 then s = s + dbl(53) end if n > 54 then s = s + dbl(54) end if n > 55 then s = s + dbl(55) end if n > 56 then s = s + dbl(56) end if n > 57 then s = s + dbl(57) end if n > 58 then s = s + dbl(58) end if n > 59 then s = s + dbl(59) end if n > 60 then s = s + dbl(60) end if n > 61 then s = s + dbl(61) end if n > 62 then s = s + dbl(62) end if n > 63 then s = s + dbl(63) end if n > 64 then s = s + dbl(64) end if n > 65 then s = s + dbl(65) end if n > 66 then s = s + dbl(66) end if n > 67 then s = s + dbl(67) end if n > 68 then s = s + dbl(68) end if n > 69 then s = s + dbl(69) end if n > 70 then s = s + dbl(70) end if n > 71 then s = s + dbl(71) end if n > 72 then s = s + dbl(72) end if n > 73 then s = s + dbl(73) end if n > 74 then s = s + dbl(74) end if n > 75 then s = s + dbl(75) end if n > 76 then s = s + dbl(76) end if n > 77 then s = s + dbl(77) end if n > 78 then s = s + dbl(78) end if n > 79 then s = s + dbl(79) end if n > 80 then s = s + dbl(80) end if n > 81 then s = s + dbl(81) end if n > 82 then s = s + dbl(82) end if n > 83 then s = s + dbl(83) end if n > 84 then s = s + dbl(84) end if n > 85 then s = s + dbl(85) end if n > 86 then s = s + dbl(86) end if n > 87 then s = s + dbl(87) end if n > 88 then s = s + dbl(88) end if n > 89 then s = s + dbl(89) end if n > 90 then s = s + dbl(90) end if n > 91 then s = s + dbl(91) end if n > 92 then s = s + dbl(92) end if n > 93 then s = s + dbl(93) end if n > 94 then s = s + dbl(94) end if n > 95 then s = s + dbl(95) end if n > 96 then s = s + dbl(96) end if n > 97 then s = s + dbl(97) end if n > 98 then s = s + dbl(98) end if n > 99 then s = s + dbl(99) end if n > 100 then s = s + dbl(100) end if n > 101 then s = s + dbl(101) end if n > 102 then s = s + dbl(102) end if n > 103 then s = s + dbl(103) end if n > 104 then s = s + dbl(104) end if n > 105 then s = s + dbl(105) end if n > 106 then s = s + dbl(106) end if n > 107 then s = s + dbl(107) end if n > 108 then s = s + dbl(108) end if n > 109 then s = s + dbl(109) end if n > 110 then s = s + dbl(110) end if n > 111 then s = s + dbl(111) end if n > 112 then s = s + dbl(112) end if n > 113 then s = s + dbl(113) end if n > 114 then s = s + dbl(114) end if n > 115 then s = s + dbl(115) end if n > 116 then s = s + dbl(116) end if n > 117 then s = s + dbl(117) end if n > 118 then s = s + dbl(118) end if n > 119 then s = s + dbl(119) end if n > 120 then s = s + dbl(120) end if n > 121 then s = s + dbl(121) end if n > 122 then s = s + dbl(122) end if n > 123 then s = s + dbl(123) end if n > 124 then s = s + dbl(124) end if n > 125 then s = s + dbl(125) end if n > 126 then s = s + dbl(126) end if n > 127 then s = s + dbl(127) end if n > 128 then s = s + dbl(128) end if n > 129 then s = s + dbl(129) end if n > 130 then s = s + dbl(130) end if n > 131 then s = s + dbl(131) end if n > 132 then s = s + dbl(132) end if n > 133 then s = s + dbl(133) end if n > 134 then s = s + dbl(134) end if n > 135 then s = s + dbl(135) end if n > 136 then s = s + dbl(136) end if n > 137 then s = s + dbl(137) end if n > 138 then s = s + dbl(138) end if n > 139 then s = s + dbl(139) end if n > 140 then s = s + dbl(140) end if n > 141 then s = s + dbl(141) end if n > 142 then s = s + dbl(142) end if n > 143 then s = s + dbl(143) end if n > 144 then s = s + dbl(144) end if n > 145 then s = s + dbl(145) end if n > 146 then s = s + dbl(146) end if n > 147 then s = s + dbl(147) end if n > 148 then s = s + dbl(148) end if n > 149 then s = s + dbl(149) end if n > 150 then s = s + dbl(150) end if n > 151 then s = s + dbl(151) end if n > 152 then s = s + dbl(152) end if n > 153 then s = s + dbl(153) end if n > 154 then s = s + dbl(154) end if n > 155 then s = s + dbl(155) end if n > 156 then s = s + dbl(156) end if n > 157 then s = s + dbl(157) end if n > 158 then s = s + dbl(158) end if n > 159 then s = s + dbl(159) end if n > 160 then s = s + dbl(160) end if n > 161 then s = s + dbl(161) end if n > 162 then s = s + dbl(162) end if n > 163 then s = s + dbl(163) end if n > 164 then s = s + dbl(164) end if n > 165 then s = s + dbl(165) end if n > 166 then s = s + dbl(166) end if n > 167 then s = s + dbl(167) end if n > 168 then s = s + dbl(168) end if n > 169 then s = s + dbl(169) end if n > 170 then s = s + dbl(170) end if n > 171 then s = s + dbl(171) end if n > 172 then s = s + dbl(172) end if n > 173 then s = s + dbl(173) end if n > 174 then s = s + dbl(174) end if n > 175 then s = s + dbl(175) end if n > 176 then s = s + dbl(176) end if n > 177 then s = s + dbl(177) end if n > 178 then s = s + dbl(178) end if n > 179 then s = s + dbl(179) end if n > 180 then s = s + dbl(180) end if n > 181 then s = s + dbl(181) end if n > 182 then s = s + dbl(182) end if n > 183 then s = s + dbl(183) end if n > 184 then s = s + dbl(184) end if n > 185 then s = s + dbl(185) end if n > 186 then s = s + dbl(186) end if n > 187 then s = s + dbl(187) end if n > 188 then s = s + dbl(188) end if n > 189 then s = s + dbl(189) end if n > 190 then s = s + dbl(190) end if n > 191 then s = s + dbl(191) end if n > 192 then s = s + dbl(192) end if n > 193 then s = s + dbl(193) end if n > 194 then s = s + dbl(194) end if n > 195 then s = s + dbl(195) end if n > 196 then s = s + dbl(196) end if n > 197 then s = s + dbl(197) end if n > 198 then s = s + dbl(198) end if n > 199 then s = s + dbl(199) end if n > 200 then s = s + dbl(200) end if n > 201 then s = s + dbl(201) end if n > 202 then s = s + dbl(202) end if n > 203 then s = s + dbl(203) end if n > 204 then s = s + dbl(204) end if n > 205 then s = s + dbl(205) end if n > 206 then s = s + dbl(206) end if n > 207 then s = s + dbl(207) end if n > 208 then s = s + dbl(208) end if n > 209 then s = s + dbl(209) end if n > 210 then s = s + dbl(210) end if n > 211 then s = s + dbl(211) end if n > 212 then s = s + dbl(212) end if n > 213 then s = s + dbl(213) end if n > 214 then s = s + dbl(214) end if n > 215 then s = s + dbl(215) end if n > 216 then s = s + dbl(216) end if n > 217 then s = s + dbl(217) end if n > 218 then s = s + dbl(218) end if n > 219 then s = s + dbl(219) end if n > 220 then s = s + dbl(220) end if n > 221 then s = s + dbl(221) end if n > 222 then s = s + dbl(222) end if n > 223 then s = s + dbl(223) end if n > 224 then s = s + dbl(224) end if n > 225 then s = s + dbl(225) end if n > 226 then s = s + dbl(226) end if n > 227 then s = s + dbl(227) end if n > 228 then s = s + dbl(228) end if n > 229 then s = s + dbl(229) end if n > 230 then s = s + dbl(230) end if n > 231 then s = s + dbl(231) end if n > 232 then s = s + dbl(232) end if n > 233 then s = s + dbl(233) end if n > 234 then s = s + dbl(234) end if n > 235 then s = s + dbl(235) end if n > 236 then s = s + dbl(236) end if n > 237 then s = s + dbl(237) end if n > 238 then s = s + dbl(238) end if n > 239 then s = s + dbl(239) end if n > 240 then s = s + dbl(240) end if n > 241 then s = s + dbl(241) end if n > 242 then s = s + dbl(242) end if n > 243 then s = s + dbl(243) end if n > 244 then s = s + dbl(244) end if n > 245 then s = s + dbl(245) end if n > 246 then s = s + dbl(246) end if n > 247 then s = s + dbl(247) end if n > 248 then s = s + dbl(248) end if n > 249 then s = s + dbl(249) end if n > 250 then s = s + dbl(250) end if n > 251 then s = s + dbl(251) end if n > 252 then s = s + dbl(252) end if n > 253 then s = s + dbl(253) end if n > 254 then s = s + dbl(254) end if n > 255 then s = s + dbl(255) end if n > 256 then s = s + dbl(256) end if n > 257 then s = s + dbl(257) end if n > 258 then s = s + dbl(258) end if n > 259 then s = s + dbl(259) end if n > 260 then s = s + dbl(260) end if n > 261 then s = s + dbl(261) end if n > 262 then s = s + dbl(262) end if n > 263 then s = s + dbl(263) end if n > 264 then s = s + dbl(264) end if n > 265 then s = s + dbl(265) end if n > 266 then s = s + dbl(266) end if n > 267 then s = s + dbl(267) end if n > 268 then s = s + dbl(268) end if n > 269 then s = s + dbl(269) end if n > 270 then s = s + dbl(270) end if n > 271 then s = s + dbl(271) end if n > 272 then s = s + dbl(272) end if n > 273 then s = s + dbl(273) end if n > 274 then s = s + dbl(274) end if n > 275 then s = s + dbl(275) end if n > 276 then s = s + dbl(276) end if n > 277 then s = s + dbl(277) end if n > 278 then s = s + dbl(278) end if n > 279 then s = s + dbl(279) end if n > 280 then s = s + dbl(280) end if n > 281 then s = s + dbl(281) end if n > 282 then s = s + dbl(282) end if n > 283 then s = s + dbl(283) end if n > 284 then s = s + dbl(284) end if n > 285 then s = s + dbl(285) end if n > 286 then s = s + dbl(286) end if n > 287 then s = s + dbl(287) end if n > 288 then s = s + dbl(288) end if n > 289 then s = s + dbl(289) end if n > 290 then s = s + dbl(290) end if n > 291 then s = s + dbl(291) end if n > 292 then s = s + dbl(292) end if n > 293 then s = s + dbl(293) end if n > 294 then s = s + dbl(294) end if n > 295 then s = s + dbl(295) end if n > 296 then s = s + dbl(296) end if n > 297 then s = s + dbl(297) end if n > 298 then s = s + dbl(298) end if n > 299 then s = s + dbl(299) end if n > 300 then s = s + dbl(300) end if n > 301 then s = s + dbl(301) end if n > 302 then s = s + dbl(302) end if n > 303 then s = s + dbl(303) end if n > 304 then s = s + dbl(304) end if n > 305 then s = s + dbl(305) end if n > 306 then s = s + dbl(306) end if n > 307 then s = s + dbl(307) end if n > 308 then s = s + dbl(308) end if n > 309 then s = s + dbl(309) end if n > 310 then s = s + dbl(310) end if n > 311 then s = s + dbl(311) end if n > 312 then s = s + dbl(312) end if n > 313 then s = s + dbl(313) end if n > 314 then s = s + dbl(314) end if n > 315 then s = s + dbl(315) end if n > 316 then s = s + dbl(316) end if n > 317 then s = s + dbl(317) end if n > 318 then s = s + dbl(318) end if n > 319 then s = s + dbl(319) end if n > 320 then s = s + dbl(320) end if n > 321 then s = s + dbl(321) end if n > 322 then s = s + dbl(322) end if n > 323 then s = s + dbl(323) end if n > 324 then s = s + dbl(324) end if n > 325 then s = s + dbl(325) end if n > 326 then s = s + dbl(326) end if n > 327 then s = s + dbl(327) end if n > 328 then s = s + dbl(328) end if n > 329 then s = s + dbl(329) end if n > 330 then s = s + dbl(330) end if n > 331 then s = s + dbl(331) end if n > 332 then s = s + dbl(332) end if n > 333 then s = s + dbl(333) end if n > 334 then s = s + dbl(334) end if n > 335 then s = s + dbl(335) end if n > 336 then s = s + dbl(336) end if n > 337 then s = s + dbl(337) end if n > 338 then s = s + dbl(338) end if n > 339 then s = s + dbl(339) end if n > 340 then s = s + dbl(340) end if n > 341 then s = s + dbl(341) end if n > 342 then s = s + dbl(342) end if n > 343 then s = s + dbl(343) end if n > 344 then s = s + dbl(344) end if n > 345 then s = s + dbl(345) end if n > 346 then s = s + dbl(346) end if n > 347 then s = s + dbl(347) end if n > 348 then s = s + dbl(348) end if n > 349 then s = s + dbl(349) end if n > 350 then s = s + dbl(350) end if n > 351 then s = s + dbl(351) end if n > 352 then s = s + dbl(352) end if n > 353 then s = s + dbl(353) end if n > 354 then s = s + dbl(354) end if n > 355 then s = s + dbl(355) end if n > 356 then s = s + dbl(356) end if n > 357 then s = s + dbl(357) end if n > 358 then s = s + dbl(358) end if n > 359 then s = s + dbl(359) end if n > 360 then s = s + dbl(360) end if n > 361 then s = s + dbl(361) end if n > 362 then s = s + dbl(362) end if n > 363 then s = s + dbl(363) end if n > 364 then s = s + dbl(364) end if n > 365 then s = s + dbl(365) end if n > 366 then s = s + dbl(366) end if n > 367 then s = s + dbl(367) end if n > 368 then s = s + dbl(368) end if n > 369 then s = s + dbl(369) end if n > 370 then s = s + dbl(370) end if n > 371 then s = s + dbl(371) end if n > 372 then s = s + dbl(372) end if n > 373 then s = s + dbl(373) end if n > 374 then s = s + dbl(374) end if n > 375 then s = s + dbl(375) end if n > 376 then s = s + dbl(376) end if n > 377 then s = s + dbl(377) end if n > 378 then s = s + dbl(378) end if n > 379 then s = s + dbl(379) end if n > 380 then s = s + dbl(380) end if n > 381 then s = s + dbl(381) end if n > 382 then s = s + dbl(382) end if n > 383 then s = s + dbl(383) end if n > 384 then s = s + dbl(384) end if n > 385 then s = s + dbl(385) end if n > 386 then s = s + dbl(386) end if n > 387 then s = s + dbl(387) end if n > 388 then s = s + dbl(388) end if n > 389 then s = s + dbl(389) end if n > 390 then s = s + dbl(390) end if n > 391 then s = s + dbl(391) end if n > 392 then s = s + dbl(392) end if n > 393 then s = s + dbl(393) end if n > 394 then s = s + dbl(394) end if n > 395 then s = s + dbl(395) end if n > 396 then s = s + dbl(396) end if n > 397 then s = s + dbl(397) end if n > 398 then s = s + dbl(398) end if n > 399 then s = s + dbl(399) end return s end
note('onelong', onelong(50), onelong(500))
for i = 1, 200 do local a = inc(i) local b = dbl(a) acc = acc + a + b end
note('acc', acc)
local function down(n) if n == 0 then return 0 end return 1 + down(n - 1) end
note('deep', down(200))
for _, l in ipairs(out) do print(l) end
