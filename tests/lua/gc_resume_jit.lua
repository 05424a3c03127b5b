-- LuaJIT only (corpus-luajit-gc_resume_jit): __gc finalizers that resume
-- coroutines dying of an error. LuaJIT runs a finalizer with its hooks off
-- and turns them back on when such a coroutine dies: the finalizer's next
-- events are a call from it and its lines, with no call event of its own
-- (a frame never seen). Under lua5.1 the reference tracer cannot see a
-- coroutine that a finalizer resumes (no resume event: hooks are off), so
-- the program is not in the lua5.1 corpus.
collectgarbage("stop")
local log = {}

local function work(n)
  local s = 0
  for i = 1, n do s = s + i end
  return s
end

local function dies(n)
  return work(n) + error("dies " .. n)
end

local function finalizer(i)
  return function()
    local co = coroutine.create(dies)
    local ok, e = coroutine.resume(co, i)
    log[#log + 1] = tostring(select(2, ok, e))
    log[#log + 1] = work(i)
    local w = coroutine.wrap(function(k) return dies(k) end)
    log[#log + 1] = tostring(pcall(w, i))
    log[#log + 1] = string.format("%d", work(i + 1))
  end
end

local function make(i)
  local p = newproxy(true)
  getmetatable(p).__gc = finalizer(i)
  return p
end

-- collected from a few frames deep, in the main thread
local function deep(n)
  if n > 0 then return deep(n - 1) + 1 end
  local ps = {}
  for i = 1, 4 do ps[i] = make(i) end
  ps = nil
  collectgarbage("collect")
  collectgarbage("stop")
  return work(3)
end
print(deep(5))

-- collected inside a coroutine, and under pcall
local c = coroutine.create(function(k)
  make(k)
  make(k + 1)
  collectgarbage("collect")
  collectgarbage("stop")
  return work(k)
end)
print(coroutine.resume(c, 6))
print(pcall(function()
  make(9)
  collectgarbage("collect")
  collectgarbage("stop")
  return work(2)
end))
print(#log, table.concat(log, " "))
