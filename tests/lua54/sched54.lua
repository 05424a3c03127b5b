-- A server-style scheduler under Lua 5.4: tasks are coroutines over a
-- virtual clock, a timer heap, message queues; tasks yield from inside
-- pcall, from __index/__lt/__concat/__call metamethods, from for-in
-- iterators, from __close handlers; errors cross resume boundaries with
-- tracebacks; a task resumed by different tasks; coroutine.close.
local clock = 0
local timers = {}          -- sorted list of {t, seq, co}
local seq = 0
local ready = {}
local log = {}

local function say(...)
  local t = {...}
  for i = 1, select('#', ...) do t[i] = tostring(t[i]) end
  log[#log + 1] = table.concat(t, " ")
end

local function push_timer(t, co)
  seq = seq + 1
  local e = {t = t, seq = seq, co = co}
  local i = #timers + 1
  while i > 1 do
    local p = timers[i - 1]
    if p.t < e.t or (p.t == e.t and p.seq < e.seq) then break end
    timers[i] = p
    i = i - 1
  end
  timers[i] = e
end

local function pop_timer()
  return table.remove(timers, 1)
end

local function sleep(dt)
  return coroutine.yield("sleep", dt)
end

local Queue = {}
Queue.__index = Queue
function Queue.new() return setmetatable({first = 1, last = 0, items = {}, waiters = {}}, Queue) end
function Queue:put(v)
  self.last = self.last + 1
  self.items[self.last] = v
  local w = table.remove(self.waiters, 1)
  if w then ready[#ready + 1] = w end
end
function Queue:get()
  while self.first > self.last do
    self.waiters[#self.waiters + 1] = coroutine.running()
    coroutine.yield("wait")
  end
  local v = self.items[self.first]
  self.items[self.first] = nil
  self.first = self.first + 1
  return v
end

local tasks = {}
local function spawn(name, f, ...)
  local args = table.pack(...)
  local co = coroutine.create(function() return f(table.unpack(args, 1, args.n)) end)
  tasks[co] = name
  ready[#ready + 1] = co
  return co
end

local function step(co)
  local ok, what, arg = coroutine.resume(co)
  if not ok then
    say("task", tasks[co], "failed:", (tostring(what):gsub("^.-:%d+: ", "")))
    local tb = debug.traceback(co)
    local _, n = tb:gsub("\n", "")
    say("traceback lines", n > 0)
  elseif coroutine.status(co) == "dead" then
    say("task", tasks[co], "done", what)
  elseif what == "sleep" then
    push_timer(clock + arg, co)
  elseif what == "wait" then
    -- parked in a queue
  elseif what == "yield" or what == nil then
    ready[#ready + 1] = co
  end
end

local function run()
  while true do
    while #ready > 0 do
      local co = table.remove(ready, 1)
      step(co)
    end
    local e = pop_timer()
    if not e then break end
    clock = e.t
    step(e.co)
  end
end

-- a producer/consumer pair over a queue
local q = Queue.new()
spawn("producer", function(n)
  for i = 1, n do
    sleep(i % 3 + 1)
    q:put(i * 10)
  end
  q:put(false)
  return "produced"
end, 12)
spawn("consumer", function()
  local sum = 0
  while true do
    local ok, v = pcall(function()
      local v = q:get()             -- yields inside pcall (5.4)
      if v == 70 then error({code = v}) end
      return v
    end)
    if ok then
      if v == false then break end
      sum = sum + v
    else
      say("consumer caught", v.code)
    end
  end
  return sum
end)

-- yields from metamethods
local Lazy = setmetatable({}, {__index = function(t, k)
  sleep(2)                          -- yield inside __index
  local v = k:upper()
  rawset(t, k, v)
  return v
end})
local Ver = {}
Ver.__lt = function(a, b) coroutine.yield("yield"); return a.n < b.n end
Ver.__concat = function(a, b)
  local x = type(a) == "table" and a.n or a
  local y = type(b) == "table" and b.n or b
  sleep(1)
  return x .. "." .. y
end
Ver.__call = function(self, d) sleep(d); return self.n * d end
local function ver(n) return setmetatable({n = n}, Ver) end
spawn("meta", function()
  say("lazy", Lazy.alpha, Lazy.beta, Lazy.alpha)
  local a, b = ver(1), ver(2)
  say("lt", a < b, b < a)
  say("concat", a .. b, a .. 5)
  say("call", a(3), b(1))
  return "meta"
end)

-- yields from a for-in iterator
local function ticking(n)
  local i = 0
  return function()
    i = i + 1
    if i > n then return nil end
    sleep(1)
    return i, i * i
  end
end
spawn("iter", function()
  local acc = {}
  for i, sq in ticking(5) do acc[#acc + 1] = i .. ":" .. sq end
  return table.concat(acc, ",")
end)

-- __close that yields, and closing on error through pcall
local function closer(name)
  return setmetatable({}, {__close = function(_, err)
    sleep(1)
    say("closed", name, err and (tostring(err):gsub("^.-:%d+: ", "")) or "ok")
  end})
end
spawn("close", function()
  do
    local a <close> = closer("a")
    local b <close> = closer("b")
    sleep(1)
  end
  local ok, e = pcall(function()
    local c <close> = closer("c")
    error("boom in close task")
  end)
  say("close pcall", ok, (tostring(e):gsub("^.-:%d+: ", "")))
  return "closed"
end)

-- an error crossing two resume boundaries
local function deep_fail(n)
  if n == 0 then local t = nil; return t.field end
  return (deep_fail(n - 1))
end
spawn("crossing", function()
  local inner = coroutine.create(function()
    sleep(0) -- not our scheduler: this yield goes to the resume below
    deep_fail(6)
  end)
  local ok, what = coroutine.resume(inner)
  say("inner first", ok, what)
  ok, what = coroutine.resume(inner)
  say("inner second", ok, (tostring(what):gsub("^.-:%d+: ", "")))
  say("inner tb", #debug.traceback(inner) > 0)
  error(setmetatable({}, {__tostring = function() return "wrapped failure" end}))
end)

-- a coroutine resumed from different tasks
local shared = coroutine.create(function(a)
  local n = 0
  while true do
    n = n + a
    a = coroutine.yield(n)
  end
end)
for i = 1, 3 do
  spawn("sharer" .. i, function()
    local total = 0
    for k = 1, 3 do
      local _, v = coroutine.resume(shared, i * k)
      total = total + v
      sleep(i)
    end
    return total
  end)
end

-- coroutine.close of a task suspended inside pcall with pending closes
local victim = spawn("victim", function()
  local x <close> = setmetatable({}, {__close = function() say("victim closed") end})
  pcall(function()
    local y <close> = setmetatable({}, {__close = function() say("victim inner closed") end})
    sleep(100)
  end)
  say("victim never")
end)
spawn("killer", function()
  sleep(5)
  for i, e in ipairs(timers) do
    if e.co == victim then table.remove(timers, i) break end
  end
  say("close victim", coroutine.close(victim))
  return "killed"
end)

-- chained wrap generators, 3 deep, yielding to the scheduler in between
local function gen(n) return coroutine.wrap(function() for i = 1, n do coroutine.yield(i) end end) end
local function map(g, f) return coroutine.wrap(function() for v in g do coroutine.yield(f(v)) end end) end
local function filter(g, p) return coroutine.wrap(function() for v in g do if p(v) then coroutine.yield(v) end end end) end
spawn("chain", function()
  local out = {}
  for v in filter(map(gen(12), function(x) return x * 3 end), function(x) return x % 2 == 0 end) do
    out[#out + 1] = v
    sleep(1)
  end
  return table.concat(out, " ")
end)

run()
for _, l in ipairs(log) do print(l) end
print("clock", clock)
