-- A coroutine that replaces its own thread's table of globals with
-- setfenv(0, t) (Lua functions keep their own environment, so the program
-- runs on): functions first seen inside it, or inside a coroutine it
-- creates (which inherits the thread table), are still named from the
-- table of globals and package.loaded, not from the thread's table.
local function work(x) return x * 2 end
local function other(x) return x + 1 end
long_global_name_for_work = work
long_global_name_for_other = other

local co = coroutine.create(function()
  setfenv(0, { w = work }) -- a shorter name, only in the thread's table
  local v = work(21)
  local child = coroutine.wrap(function() return other(v) end)
  return child()
end)
print(coroutine.resume(co))
