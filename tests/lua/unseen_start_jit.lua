-- LuaJIT only (corpus-luajit-unseen_start_jit): coroutines that start
-- where LuaJIT calls no hook, a __gc finalizer and a jit.attach handler
-- (vmevent), and are resumed later where it does. Their first event then
-- comes from frames deep in a thread never seen (a line after a yield
-- returned), not from the call of its body: the frames below must come
-- from its stack, not be left unknown. Under lua5.1 a finalizer's
-- coroutine runs hooked (the reference tracer would see it, and there is
-- no jit.attach), so the program is not in the lua5.1 corpus.
collectgarbage("stop")

local function inner(n)
  if n == 0 then
    local v = coroutine.yield("deep")
    return v or 0
  end
  return inner(n - 1) + 1
end

-- a generator first resumed in a finalizer, yielding four frames deep
local gen = coroutine.wrap(function()
  while true do inner(3) end
end)
-- a coroutine first resumed in a finalizer, yielding inside a pcall
local co = coroutine.create(function(a)
  local ok, v = pcall(function(x) return inner(2) + x end, a)
  local w = inner(1)
  error("co ends " .. tostring(ok) .. " " .. v .. " " .. w, 0)
end)

do
  local p = newproxy(true)
  getmetatable(p).__gc = function()
    gen()
    coroutine.resume(co, 10)
  end
  p = nil
end
collectgarbage("collect")
collectgarbage("stop")

-- resumed traced: the first events come from inner, three levels up
print(gen(), gen())
print(coroutine.resume(co, 5))
print(coroutine.resume(co, 7))
print(coroutine.status(co))

-- a coroutine first resumed in a jit.attach handler
local late = coroutine.create(function(k)
  local function mid(j) return inner(j) * 2 end
  local r = mid(k)
  return "late " .. r
end)
local started = false
local function handler()
  if coroutine.status(late) == "suspended" and not started then
    started = true
    coroutine.resume(late, 2)
  end
end
jit.attach(handler, "bc")
local f = loadstring("return 1")
jit.attach(handler)
print(f(), started)
print(coroutine.resume(late, 4))
print(gen())

local function after(n) if n == 0 then return "after" end return after(n - 1) end
print(after(4))
