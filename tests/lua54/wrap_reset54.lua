-- Lua 5.4's wrap function resets a coroutine whose body failed
-- (lua_closethread) before the error goes on: an xpcall handler then runs
-- on top of the wrap frame whose coroutine has no frames left (5.1 keeps
-- a dead coroutine's). That frame is still the call of the body it ran:
-- a failure after a yield, one at the first resume, a handler calling the
-- dead wrap again (a new call: a dead wrap's, no body), a C handler.
local function handler(e)
  return "handled: " .. tostring(e)
end

local function fail_after_yield(msg)
  local w = coroutine.wrap(function()
    coroutine.yield("first")
    error(msg, 0)
  end)
  w()
  return w()
end
print("a", xpcall(fail_after_yield, handler, "boom1"))

local dead
local function handler2(e)
  local ok, v = pcall(dead)
  return e .. " / again: " .. tostring(v)
end
print("b", xpcall(function()
  dead = coroutine.wrap(function() error("boom2", 0) end)
  dead()
end, handler2))

print("c", xpcall(function()
  local w = coroutine.wrap(function(x) error(x, 0) end)
  w("boom3")
end, tostring))
