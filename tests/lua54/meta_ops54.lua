-- Lua 5.4's metamethods (5.4's getinfo names them without "__": add,
-- index, close): bitwise ones and integer division, __call chains in tail
-- position, __index/__newindex chains, __eq/__lt/__le, __concat, __len,
-- __tostring and __name, errors raised inside metamethods, table.sort and
-- gsub/gmatch with Lua functions.
local out = {}
local function add(...) local t = table.pack(...) for i = 1, t.n do t[i] = tostring(t[i]) end out[#out+1] = table.concat(t, " ") end
local function strip(e) if type(e) == "string" then return (e:gsub("^.-:%d+: ", "")) end return type(e) end
local V = {}
V.__index = V
V.__name = "Vec"
local function vec(x, y) return setmetatable({x = x, y = y}, V) end
V.__add = function(a, b) return vec(a.x + b.x, a.y + b.y) end
V.__idiv = function(a, n) return vec(a.x // n, a.y // n) end
V.__mod = function(a, n) return vec(a.x % n, a.y % n) end
V.__band = function(a, b) return vec(a.x & b.x, a.y & b.y) end
V.__bor = function(a, b) return vec(a.x | b.x, a.y | b.y) end
V.__bxor = function(a, b) return vec(a.x ~ b.x, a.y ~ b.y) end
V.__shl = function(a, n) return vec(a.x << n, a.y << n) end
V.__shr = function(a, n) return vec(a.x >> n, a.y >> n) end
V.__bnot = function(a) return vec(~a.x, ~a.y) end
V.__unm = function(a) return vec(-a.x, -a.y) end
V.__eq = function(a, b) return a.x == b.x and a.y == b.y end
V.__lt = function(a, b) return a.x < b.x or (a.x == b.x and a.y < b.y) end
V.__le = function(a, b) return not (b < a) end
V.__len = function(a) return math.abs(a.x) + math.abs(a.y) end
V.__concat = function(a, b) return tostring(a) .. "|" .. tostring(b) end
V.__tostring = function(a) return "(" .. a.x .. "," .. a.y .. ")" end
local a, b = vec(12, 7), vec(5, 3)
add(a + b, a // 2, a % 5, a & b, a | b, a ~ b, a << 2, a >> 1, ~a, -a)
add(a == b, a ~= vec(12, 7), a < b, a <= b, b <= a, #a, a .. b, a .. "s", "s" .. b)
-- __call chains, called in tail position
local inner = setmetatable({}, {__call = function(self, x) return x * 2 end})
local outer = setmetatable({}, {__call = function(self, x) return inner(x + 1) end})
local function tail(x) return outer(x) end
add("call", tail(4), pcall(outer, 1))
-- __index chains of functions and tables
local base = setmetatable({}, {__index = function(t, k) return "base:" .. k end})
local mid = setmetatable({}, {__index = base})
local top = setmetatable({}, {__index = function(t, k) if k == "own" then return 1 end return mid[k] end})
add("index", top.own, top.foo, rawget(top, "foo"))
local log = {}
local store = setmetatable({}, {__newindex = function(t, k, v) log[#log+1] = k rawset(t, k, v and v * 10) end})
store.a = 1 store.b = 2 store.a = 3
add("newindex", store.a, store.b, table.concat(log, ","))
-- errors inside metamethods
local bad = setmetatable({}, {__add = function() error("no add", 0) end, __index = function(t, k) error("no " .. k) end,
  __lt = function() error({}) end})
add("errs", pcall(function() return bad + 1 end), strip(select(2, pcall(function() return bad.x end))), (select(2, pcall(function() return bad < bad end))) == nil)
-- __tostring erroring within tostring and within string.format
local weird = setmetatable({}, {__tostring = function() error("tostring fails", 0) end})
add("tostr", pcall(tostring, weird), pcall(string.format, "%s", weird))
local named = setmetatable({}, {__name = "MyType"})
add("named", (tostring(named):match("^MyType: ") ~= nil), strip(select(2, pcall(function() return named + 1 end))))
-- sort with a Lua comparator, erroring comparator
local arr = {5, 3, 9, 1, 7, 2, 8}
table.sort(arr, function(x, y) return x > y end)
add("sort", table.concat(arr, ","), pcall(table.sort, {3, 1, 2}, function() error("cmp", 0) end))
-- gsub/gmatch with Lua functions
add("gsub", (("a1b22c333"):gsub("%d+", function(d) return "<" .. #d .. ">" end)))
local words = {} for w, n in ("x=1, y=22, z=333"):gmatch("(%a)=(%d+)") do words[#words+1] = w .. tonumber(n) // 2 end
add("gmatch", table.concat(words, " "))
for _, l in ipairs(out) do print(l) end
