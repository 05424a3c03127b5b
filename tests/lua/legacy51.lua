-- Lua 5.1's older library and environment games: table.foreach and
-- table.foreachi calling Lua functions (stopping at a non-nil result,
-- failing inside, nested, a C function as the callback; under LuaJIT both
-- are its built-in Lua functions), table.getn/maxn; module() with
-- package.seeall for nested names (a.b.c), a module function calling
-- another through the module's environment; setfenv(1, ...) from inside a
-- function, setfenv(2, ...) on the caller, getfenv(0) read inside a
-- coroutine, debug.setfenv on a suspended coroutine's thread, a function whose
-- environment's __index is a function (globals computed on demand);
-- string.gsub with table and function replacements inside coroutines that
-- yield between gsubs, a replacement table whose __index is a function.

-- table.foreach / foreachi
local seen = {}
table.foreachi({ 10, 20, 30 }, function(i, v) seen[#seen + 1] = i .. "=" .. v end)
print("foreachi", table.concat(seen, " "))
print("foreachi stop", table.foreachi({ 5, 6, 7, 8 }, function(i, v)
  if v == 7 then return "stopped at " .. i end
end))
local keys = {}
table.foreach({ a = 1 }, function(k, v) keys[#keys + 1] = k end)
print("foreach", table.concat(keys, " "))
print("foreach error", pcall(table.foreachi, { 1, 2, 3 }, function(i, v)
  if v == 2 then error("two") end
end))
local grid = { { 1, 2 }, { 3, 4 }, { 5 } }
local total = 0
table.foreachi(grid, function(i, row)
  table.foreachi(row, function(j, v) total = total + v * i end)
end)
print("nested foreachi", total)
print("foreachi C", table.foreachi({ "x" }, rawequal))
print("getn/maxn", table.getn({ 1, 2, 3 }), table.maxn({ [1] = 1, [7] = 2 }))

-- module() with package.seeall, nested names
package.preload["legacy.geo.shapes"] = function(...)
  module(..., package.seeall)
  local function sq(x) return x * x end
  function area(w, h) return w * h end
  function square(s) return area(s, sq(1) * s) end
  function describe(s) return string.format("%d:%d", s, square(s)) end
  return _M
end
require "legacy.geo.shapes"
print("module", legacy.geo.shapes.describe(3), legacy.geo.shapes.square(5))
print("module env", getfenv(legacy.geo.shapes.area) == legacy.geo.shapes)

-- setfenv(1, ...) and setfenv(2, ...)
local function private()
  local env = setmetatable({ greeting = "hi" }, { __index = _G })
  setfenv(1, env)
  function helper_in_env(x) return greeting .. x end  -- a global of env
  return helper_in_env("!")
end
print("setfenv 1", private(), rawget(_G, "helper_in_env"))
local function paint(env) setfenv(2, env) end
local function painted()
  paint(setmetatable({ color = "red" }, { __index = _G }))
  return color
end
print("setfenv 2", painted())

-- globals computed on demand by an __index function
local computed = 0
local lazy = setfenv(function(n)
  return square_of_ + n, cube_of_
end, setmetatable({}, { __index = function(t, k)
  computed = computed + 1
  if k == "square_of_" then return 16 end
  if k == "cube_of_" then return 27 end
  return _G[k]
end }))
print("lazy env", lazy(1), computed)

-- getfenv(0) in a coroutine; setfenv on a suspended coroutine's thread
local co = coroutine.create(function()
  local before = getfenv(0) == _G
  coroutine.yield(before)
  return getfenv(0).marker
end)
print("thread env 1", coroutine.resume(co))
debug.setfenv(co, { marker = "set from outside" })
print("thread env 2", coroutine.resume(co))

-- gsub with table and function replacements inside coroutines
local vars = setmetatable({ name = "world" }, { __index = function(t, k)
  return "<" .. k .. "?>"
end })
local templ = coroutine.wrap(function(texts)
  for _, text in ipairs(texts) do
    local s = text:gsub("%$(%w+)", vars)
    s = s:gsub("%%(%w+)", function(w) return w:upper() end)
    texts = coroutine.yield(s) or texts
  end
  return "end"
end)
print("gsub co", templ({ "hello $name", "bye $who %now", "$name $name" }))
print("gsub co", templ())
print("gsub co", templ())
print("gsub co", templ())
local function count_words(text)
  local n = 0
  text:gsub("%a+", function(w) n = n + 1 end)
  return n
end
local counter = coroutine.create(function(...)
  local total = 0
  for _, t in ipairs({ ... }) do
    total = total + count_words(t)
    coroutine.yield(total)
  end
  return total
end)
local outs = {}
local ok, v = coroutine.resume(counter, "one two", "three", "four five six")
while ok and coroutine.status(counter) ~= "dead" do
  outs[#outs + 1] = v
  ok, v = coroutine.resume(counter)
end
outs[#outs + 1] = v
print("gsub counter", table.concat(outs, " "))
