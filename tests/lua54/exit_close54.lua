-- Lua 5.4: os.exit(code, true) from a coroutine inside a function with
-- pending to-be-closed variables in the main thread (closed by lua_close
-- after the exit call, deepest first) and in the coroutine (never closed),
-- and __gc finalizers run after them
local function closer(name)
  return setmetatable({}, {__close = function(_, err)
    local s = 0
    for i = 1, 5 do s = s + i end
    io.write("close ", name, " ", tostring(err), " ", s, "\n")
  end})
end
local g = setmetatable({}, {__gc = function() io.write("gc\n") end})
local function run()
  local a <close> = closer("a")
  local function deeper()
    local b <close> = closer("b")
    local co = coroutine.wrap(function()
      local c <close> = closer("c")
      io.write("exit now\n")
      io.stdout:flush()
      os.exit(5, true)
    end)
    co()
  end
  deeper()
end
local top <close> = closer("top")
run()
