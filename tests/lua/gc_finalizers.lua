-- __gc finalizers (newproxy) run by the collector at whatever allocation
-- triggers a GC step, in the main thread and in a coroutine, and at
-- collectgarbage(). Lua 5.1 runs them with hooks off (GCTM clears
-- allowhook): they make no events, their time goes to the frame running.
local finalized = 0
local function make(n)
  local p = newproxy(true)
  getmetatable(p).__gc = function()
    finalized = finalized + 1
  end
  return p
end

local function churn(n)
  local t = {}
  for i = 1, n do
    t[i % 50 + 1] = make(i)
    local s = string.rep("x", i % 64)
    t[#t + 1] = s
  end
  return #t
end

print("churn", churn(2000))
collectgarbage("collect")

local co = coroutine.create(function(n)
  for k = 1, 3 do
    churn(n)
    collectgarbage("step", 10)
    coroutine.yield(k)
  end
end)
for _ = 1, 3 do coroutine.resume(co, 500) end
collectgarbage("collect")
print("finalized", finalized > 0)
