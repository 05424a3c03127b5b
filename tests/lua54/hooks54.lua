-- The program's own debug hooks under Lua 5.4: what debug.gethook answers
-- (5.4 gives a lone fail where no hook is set, 5.1 three values), line
-- and count hooks beside the collector's, in the main thread and in a
-- coroutine, and a mask that installs nothing.
local function work(n)
  local s = 0
  for i = 1, n do
    s = s + i % 7
  end
  return s
end

local function show(tag, ...)
  local n = select("#", ...)
  local t = {}
  for i = 1, n do
    local v = select(i, ...)
    t[i] = type(v) == "function" and "function" or tostring(v)
  end
  print(tag, n, table.concat(t, " "))
end

show("none", debug.gethook())
local lines, counts = 0, 0
local function hook(ev)
  if ev == "line" then lines = lines + 1 else counts = counts + 1 end
end
debug.sethook(hook, "l", 100)
show("line+count", debug.gethook())
local r = work(20000)
debug.sethook()
show("removed", debug.gethook())
print("main", r, lines, counts)

debug.sethook(hook, "", 0)
show("empty mask", debug.gethook())
debug.sethook()

local co = coroutine.create(function()
  debug.sethook(function() counts = counts + 1 end, "", 50)
  show("in co", debug.gethook())
  local x = work(10000)
  debug.sethook()
  show("co removed", debug.gethook())
  return x
end)
print("co", coroutine.resume(co))
show("thread arg", debug.gethook(co))
print("counts", counts)
