-- Real library code (Debian's lua-coxpcall and lua-binaryheap): coxpcall's
-- copcall/coxpcall, pcall and xpcall rebuilt on coroutines (each protected
-- call runs its function in a new coroutine driven by performResume and
-- handleReturnValue), used inside coroutines: yields across copcall (which
-- 5.1's pcall cannot do), across two nested copcalls, errors (strings,
-- tables, runtime errors) caught with and without handlers, a handler that
-- yields, coxpcall.running, the main-thread fallbacks to pcall and xpcall;
-- binaryheap's plain and unique heaps with Lua comparators (bubbleUp and
-- sinkDown calling them), update and remove, and a unique min-heap as the
-- run queue of a small scheduler of coroutines that sleep in virtual time.
local cox = require "coxpcall"
local binaryheap = require "binaryheap"

local first_line = require("corpus_util").first_line

-- main thread: copcall is pcall, coxpcall is xpcall (wrapped when it has
-- arguments)
print(copcall(function(a, b) return a + b end, 1, 2))
print(copcall(function() error("main error") end))
print(coxpcall(function(x) return x * 2 end, function(e) return "h:" .. e end, 21))
print(coxpcall(function() error({code = 7}) end, function(e) return e.code end))
print("running in main", cox.running() == nil)

-- plain heaps
local words = {"pear", "fig", "banana", "kiwi", "apple", "plum", "cherry", "date", "lime"}
local byLen = binaryheap.minHeap(function(a, b)
  if #a ~= #b then return #a < #b end
  return a < b
end)
for _, w in ipairs(words) do byLen:insert(w) end
local out = {}
print("peek", byLen:peek(), byLen:size())
while byLen:size() > 0 do out[#out + 1] = byLen:pop() end
print(table.concat(out, " "))
local maxh = binaryheap.maxHeap()
for i = 1, 40 do maxh:insert((i * 37) % 101) end
maxh:update(1, 0)
maxh:remove(5)
out = {}
while maxh:peek() do out[#out + 1] = maxh:pop() end
print(#out, table.concat(out, ","))
print("bad insert", pcall(maxh.insert, maxh, nil))

-- unique heap: update and remove by payload
local u = binaryheap.minUnique()
for i, w in ipairs(words) do u:insert(#w * 10 + i, w) end
u:update("banana", 1)
u:update("fig", 99)
print("removed", u:remove("kiwi"))
print("value of plum", u:valueByPayload("plum"), "peek", u:peek())
print("duplicate", pcall(u.insert, u, 5, "pear"))
out = {}
while u:size() > 0 do
  local p, v = u:pop()
  out[#out + 1] = p .. "=" .. v
end
print(table.concat(out, " "))

-- the scheduler: a unique min-heap of coroutines ordered by wake-up time,
-- ties by arrival; tasks yield {sleep = n}
local now, seq = 0, 0
local queue = binaryheap.minUnique(function(a, b)
  if a.t ~= b.t then return a.t < b.t end
  return a.seq < b.seq
end)
local names, log = {}, {}
local function say(...)
  -- inside copcall, coroutine.running() is copcall's own coroutine:
  -- coxpcall.running() walks back to the task
  local parts = {names[cox.running()] or "?", now}
  for i = 1, select("#", ...) do parts[#parts + 1] = tostring((select(i, ...))) end
  log[#log + 1] = table.concat(parts, " ")
end
local function schedule(co, delay)
  seq = seq + 1
  queue:insert({t = now + delay, seq = seq}, co)
end
local function spawn(name, f)
  local co = coroutine.create(f)
  names[co] = name
  schedule(co, 0)
end
local function sleep(n)
  local woke = coroutine.yield({sleep = n})
  return woke
end

-- a task that sleeps inside copcall: the yield crosses the protected call
spawn("sleeper", function()
  local ok, a, b = copcall(function(x)
    say("in copcall", x)
    local w = sleep(3)
    say("woke inside copcall at", w)
    sleep(1)
    return x + 1, "done"
  end, 10)
  say("copcall returned", ok, a, b)
end)

-- an error after a yield, caught by copcall (the message comes back as a
-- traceback of the dead inner coroutine)
spawn("failer", function()
  local ok, e = copcall(function()
    sleep(2)
    local t = nil
    return t.field
  end)
  say("caught", ok, first_line(e))
  local ok2, e2 = copcall(function()
    sleep(1)
    error({reason = "table error"})
  end)
  say("caught table", ok2, type(e2) == "table" and e2.reason)
end)

-- nested copcalls: yields cross two levels, an inner error is caught by
-- the inner copcall, an outer one by the outer
spawn("nested", function()
  local ok, v = copcall(function()
    local ok2, v2 = copcall(function()
      sleep(2)
      say("depth two, in another coroutine", cox.running() ~= coroutine.running())
      return "inner value"
    end)
    say("inner result", ok2, v2)
    local ok3, e3 = copcall(function()
      sleep(1)
      error("inner failure", 0)
    end)
    say("inner error", ok3, first_line(e3))
    sleep(1)
    error("outer failure", 0)
  end)
  say("outer result", ok, first_line(v))
end)

-- coxpcall with handlers: the handler sees the traceback, a handler that
-- yields (it runs as plain Lua in the calling coroutine), extra arguments
spawn("handlers", function()
  local seen = {}
  local ok, r = coxpcall(function(a, b)
    sleep(a)
    error("bad " .. b, 0)
  end, function(msg)
    seen[#seen + 1] = first_line(msg)
    return "handled"
  end, 2, "thing")
  say("coxpcall", ok, r, seen[1])
  local ok2, r2 = coxpcall(function()
    sleep(1)
    error("needs a nap")
  end, function(msg)
    say("handler sleeps")
    sleep(2)
    return "rested after " .. first_line(msg):gsub("^.-:%d+: ", "")
  end)
  say("coxpcall yielding handler", ok2, r2)
  local ok3, r3, r4 = coxpcall(function(...) return select("#", ...), ... end, print, "x", nil)
  say("coxpcall values", ok3, r3, r4)
end)

-- a generator (coroutine.wrap) consumed inside copcall, sleeping between
-- items; the generator itself uses copcall around its own yields
spawn("generator", function()
  local gen = coroutine.wrap(function()
    for i = 1, 3 do
      local ok = copcall(function() coroutine.yield(i * i) end)
      if not ok then return end
    end
  end)
  local ok, total = copcall(function()
    local sum = 0
    for v in gen do
      sum = sum + v
      say("item", v)
      sleep(1)
    end
    return sum
  end)
  say("sum", ok, total)
end)

-- a task that spawns others and reschedules itself
spawn("spawner", function()
  for i = 1, 3 do
    spawn("child" .. i, function()
      local ok, v = copcall(function()
        sleep(i)
        return i * 100
      end)
      say("child result", ok, v)
    end)
    sleep(2)
  end
  say("spawner done")
end)

-- a crowd of workers: each round sleeps inside a copcall inside a
-- coxpcall, every third round fails after its sleep; the log keeps totals
local totals = {}
for w = 1, 24 do
  spawn("worker" .. w, function()
    local good, bad = 0, 0
    for round = 1, 6 do
      local ok, v = coxpcall(function()
        local ok2, v2 = copcall(function()
          sleep((w * round) % 5 + 1)
          if (w + round) % 3 == 0 then error("round " .. round, 0) end
          return round
        end)
        if not ok2 then error(v2, 0) end
        return v2
      end, function(msg) return "w" .. w .. ": " .. first_line(msg) end)
      if ok then good = good + v else bad = bad + 1 end
    end
    totals[#totals + 1] = names[cox.running()] .. "=" .. good .. "/" .. bad .. "@" .. now
  end)
end

local steps = 0
while queue:size() > 0 do
  local co, when = queue:pop()
  now = when.t
  steps = steps + 1
  local ok, req = coroutine.resume(co, now)
  if not ok then
    log[#log + 1] = "task died: " .. first_line(req)
  elseif coroutine.status(co) == "suspended" then
    schedule(co, req and req.sleep or 0)
  end
end
for _, line in ipairs(log) do print(line) end
print(table.concat(totals, " "))
print("steps", steps, "final time", now)

-- copcall in a coroutine resumed from a coroutine: running() finds the
-- outermost coroutine through coxpcall's map
local outer
outer = coroutine.create(function()
  local inner = coroutine.create(function()
    local ok, same = copcall(function()
      return cox.running() == outer, cox.running() == coroutine.running()
    end)
    return ok, same
  end)
  return coroutine.resume(inner)
end)
print("running", coroutine.resume(outer))
