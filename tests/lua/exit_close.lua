-- os.exit(code, true) from inside a nested coroutine: the state is
-- closed, so __gc finalizers (and, in 5.4, the main thread's pending
-- to-be-closed variables) run after the exit call, from lua_close
local newproxy = newproxy
local function gcobj(name, f)
  if newproxy then
    local p = newproxy(true)
    getmetatable(p).__gc = function() f(name) end
    return p
  end
  return setmetatable({}, {__gc = function() f(name) end})
end
local function fin(name)
  local s = 0
  for i = 1, 10 do s = s + i end
  io.write("fin ", name, " ", s, "\n")
end
keep = {}
for i = 1, 3 do keep[i] = gcobj("g" .. i, fin) end
local function leave(code)
  io.write("leaving\n")
  io.stdout:flush()
  os.exit(code, true)
end
local outer = coroutine.wrap(function()
  local inner = coroutine.create(function()
    pcall(function()
      keep.x = gcobj("inside", function(n) fin(n) end)
      leave(3)
    end)
  end)
  coroutine.resume(inner)
end)
outer()
print("not reached")
