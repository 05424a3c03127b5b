-- Lua 5.4: an uncaught error whose value is a table with a Lua
-- __tostring, raised inside a wrap generator inside a coroutine: lua.c's
-- message handler (msghandler) calls the __tostring on top of the failing
-- stack (luaL_callmeta), which calls helpers, then builds the traceback.
local E = {}
E.__tostring = function(e) return "E(" .. e.what .. ") at depth " .. tostring(e.depth) end
local function fail(depth)
  if depth == 0 then error(setmetatable({ what = "boom", depth = 3 }, E)) end
  return fail(depth - 1) + 1
end
local gen = coroutine.wrap(function()
  coroutine.yield(1)
  fail(3)
end)
print(gen())
local co = coroutine.create(function() return gen() end)
print(coroutine.resume(co))
local function last()
  local inner = coroutine.wrap(function() fail(2) end)
  local outer = coroutine.wrap(function() inner() end)
  outer()
end
last()
