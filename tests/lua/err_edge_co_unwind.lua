-- Errors unwinding through coroutines: an error at the bottom of four
-- nested wrap generators crosses three wrap boundaries and is caught by a
-- pcall in the middle one; an error from a create'd coroutine re-raised by
-- its resumer with error(e, 0) through another coroutine; deep recursion
-- (1500 levels) inside a coroutine that unwinds through an error, and a
-- coroutine suspended 500 deep then resumed into an error; tail calls in
-- coroutines: `return coroutine.yield(x)`, a body that tail-calls another
-- function first thing, tail calls into functions that call wrap closures.

-- four wrap levels; level 4 errors, level 1 catches with pcall
local function make(level, fail_at)
  return coroutine.wrap(function(x)
    if level == fail_at then
      error({ where = level })
    end
    if level == 7 then
      coroutine.yield(x .. "!")
      return "bottom"
    end
    local sub = make(level + 1, fail_at)
    local v = sub(x .. level)
    coroutine.yield(v)
    return "end" .. level
  end)
end
local top = coroutine.wrap(function()
  local ok, e = pcall(make(2, 4), "x")
  coroutine.yield("caught at 1 from " .. tostring(type(e) == "table" and e.where))
  local ok2, v = pcall(make(2, 9), "y") -- no error: 6 levels of yields
  coroutine.yield("no error " .. tostring(ok2) .. " " .. v)
  local ok3, e3 = pcall(make(2, 3), "z")
  return "caught " .. tostring(ok3) .. " " .. tostring(e3 and e3.where)
end)
print("wrap1", top())
print("wrap2", top())
print("wrap3", top())

-- re-raise through create'd coroutines
local function stage(n)
  if n == 0 then error("stage zero failed", 0) end
  local co = coroutine.create(stage)
  local ok, e = coroutine.resume(co, n - 1)
  if not ok then
    error(e .. " <" .. n, 0)
  end
  return e
end
print("stages", pcall(stage, 4))
print("stages co", coroutine.resume(coroutine.create(stage), 3))

-- deep recursion inside a coroutine, unwinding through an error
local function dive(n)
  if n == 0 then error("bottom at depth", 0) end
  local r = dive(n - 1)
  return r
end
local diver = coroutine.create(function(n)
  local ok, e = pcall(dive, n)
  coroutine.yield(e)
  dive(200)
end)
print("dive", coroutine.resume(diver, 1500))
print("dive2", coroutine.resume(diver))
print("diver", coroutine.status(diver))

-- suspended 500 deep, resumed into an error that kills the coroutine
local function sink(n)
  if n == 0 then
    local cmd = coroutine.yield("at bottom")
    if cmd == "fail" then error("failed at bottom", 0) end
    return 0
  end
  local r = sink(n - 1)
  return r + 1
end
local sunk = coroutine.wrap(sink)
print("sink", sunk(500))
print("sink fail", pcall(sunk, "fail"))

-- tail calls in coroutines
local function pass_through(x)
  return coroutine.yield(x) -- yield is C: no tail call in 5.1
end
local function relay(x)
  return pass_through(x * 2) -- a real tail call
end
local tailco = coroutine.wrap(function(x)
  return relay(x) -- the body itself is replaced
end)
print("tail1", tailco(5))
print("tail2", tailco("back"))

local gen = coroutine.wrap(function()
  for i = 1, 3 do coroutine.yield(i) end
end)
local function pull() return gen() end
local function pull_tail() return pull() end
local puller = coroutine.wrap(function()
  local a = pull_tail()
  coroutine.yield(a)
  return pull_tail() + pull()
end)
print("pull", puller(), puller())

local function count(n, acc)
  if n == 0 then return coroutine.yield(acc) end
  return count(n - 1, acc + n)
end
local counter = coroutine.create(count)
print("count", coroutine.resume(counter, 100, 0))
print("count end", coroutine.resume(counter, "fin"))
