-- Lua functions called back from C: table.sort comparators, string.gsub
-- replacement functions, metamethods (__index, __newindex, __add, __lt,
-- __le, __eq, __call, __concat, __unm, __len on tables is not called in 5.1),
-- ipairs/pairs/next loops, select and unpack.

local t = { 9, 3, 7, 1, 8, 2 }
table.sort(t, function(a, b) return a > b end)
print("sorted desc", table.concat(t, " "))

local words = { "pear", "fig", "banana", "kiwi" }
local function by_length(a, b)
  if #a ~= #b then return #a < #b end
  return a < b
end
table.sort(words, by_length)
print("by length", table.concat(words, " "))

local function shout(w) return w:upper() .. "!" end
print("gsub", (string.gsub("hello big world", "%a+", shout)))
print("gsub table", (("$a and $b"):gsub("%$(%a)", { a = "x", b = "y" })))

local Vec = {}
Vec.__index = function(v, k)
  if k == "len2" then return v.x * v.x + v.y * v.y end
  return rawget(Vec, k)
end
Vec.__add = function(p, q) return Vec.new(p.x + q.x, p.y + q.y) end
Vec.__lt = function(p, q) return p.len2 < q.len2 end
Vec.__le = function(p, q) return p.len2 <= q.len2 end
Vec.__eq = function(p, q) return p.x == q.x and p.y == q.y end
Vec.__unm = function(p) return Vec.new(-p.x, -p.y) end
Vec.__concat = function(p, q)
  local function show(v)
    if type(v) == "table" then return "(" .. v.x .. "," .. v.y .. ")" end
    return tostring(v)
  end
  return show(p) .. show(q)
end
Vec.__call = function(self, s) return self.x * s, self.y * s end
function Vec.new(x, y) return setmetatable({ x = x, y = y }, Vec) end

local p, q = Vec.new(1, 2), Vec.new(3, 1)
local r = p + q
print("add", r.x, r.y, "len2", r.len2)
print("lt", p < q, "le", q <= p, "eq", p == Vec.new(1, 2))
local n = -p
print("unm", n.x, n.y)
print("concat", p .. q, "v=" .. r)
print("call", p(10))

local log = {}
local proxy = setmetatable({}, {
  __newindex = function(tbl, k, v) log[#log + 1] = k .. "=" .. v; rawset(tbl, k, v) end,
})
proxy.a = 1
proxy.b = 2
print("newindex", table.concat(log, ","))

local s = 0
for i, v in ipairs({ 10, 20, 30 }) do s = s + i * v end
print("ipairs", s)
local keys = {}
for k in pairs({ alpha = 1, beta = 2, gamma = 3 }) do keys[#keys + 1] = k end
table.sort(keys)
print("pairs", table.concat(keys, ","))
local k, v = next({ only = "one" })
print("next", k, v)

local function count(...) return select("#", ...) end
print("select", count(1, nil, 3), select(-1, "a", "b", "c"), select(2, "a", "b", "c"))
print("unpack", unpack({ 1, 2, 3 }))
print("unpack range", unpack({ "a", "b", "c", "d" }, 2, 3))
print("tostring meta", tostring(setmetatable({}, { __tostring = function() return "custom" end })))
