-- Frame naming rules: a function's name is fixed when the tracer first
-- meets it: "main chunk"; else its shortest global or package.loaded name
-- (ties by string order); else the call-site name; else "?".

-- global aliases: "zz" and "ab" have the same length, "ab" < "zz"
local function aliased(x) return x + 1 end
zz = aliased
ab = aliased
long_alias_name = aliased
print("aliased", zz(1))

-- a global found through package.loaded as well: string.upper is shorter
-- than nothing else; upper is not a global
print("upper", string.upper("abc"))

-- call-site names
local function local_name(x) return x * 2 end
local t = { field = function(x) return x - 1 end }
function t:method(x) return x + 10 end
print("call sites", local_name(2), t.field(2), t:method(2))

-- first sight decides: seen first as "first_site", later called as "other"
local function renamed(x) return x end
local first_site = renamed
print("first", first_site(1))
local other = renamed
print("other", other(2))

-- a function made global after its first call keeps its first name
local function late(x) return x end
print("late", late(3))
late_global = late
print("late global", late_global(4))

-- no name at all: called from C
print("anon", pcall(function() return "anonymous" end))
print("sort", (function()
  local s = { 3, 1, 2 }
  table.sort(s, function(a, b) return a < b end)
  return table.concat(s)
end)())

-- a table in package.loaded with functions
package.loaded.my_pkg = { run = function(x) return x .. "!" end }
print("pkg", package.loaded.my_pkg.run("go"))

-- same line, two functions: one first-sight key
local f1, f2 = function() return 1 end, function() return 2 end
print("same line", f1(), f2())

-- two functions, one line, one call-site name: told apart as g and g#2
local fs = { function() return "one" end, function() return "two" end }
for i = 1, 2 do
  local g = fs[i]
  print("same name", g())
end

-- the same code loaded twice is one function (same label, no #2)
local chunk = "return function(x) return x * 3 end"
local l1, l2 = loadstring(chunk, "=twice")(), loadstring(chunk, "=twice")()
print("loaded twice", l1(1), l2(2))

-- the ipairs iterator is "ipairs iterator", the string.gmatch one
-- "string.gmatch iterator"; a wrap closure called by a generic for,
-- which Lua names "(for generator)", is named by where its body is:
-- "coroutine.wrap(names.lua:69)"
for _, v in ipairs({ "i" }) do print("ipairs", v) end
for w in ("g"):gmatch("%a") do print("gmatch", w) end
for v in coroutine.wrap(function() coroutine.yield("w") end) do print("wrap", v) end

-- every coroutine.wrap function is one C function, but each body is its
-- own function: named by its own call site (evens, odds), not both by the
-- first one seen
local evens = coroutine.wrap(function() for i = 2, 4, 2 do coroutine.yield(i) end end)
local odds = coroutine.wrap(function() for i = 1, 3, 2 do coroutine.yield(i) end end)
print("wraps", evens(), odds(), evens(), odds())

-- no name at all: "function"
print("nameless", (function() return "x" end)())
