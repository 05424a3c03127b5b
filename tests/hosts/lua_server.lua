-- lua_server: a pure Lua "server" for live attach tests: a coroutine
-- scheduler runs request tasks (string, table, pcall/error, recursion
-- work), each suspended mid-call between its steps.
--
--   LUATRACE_ATTACH=1 lua5.1 -lluatrace lua_server.lua ROUNDS [STOPFILE]
--
-- ROUNDS rounds of the scheduler make the transcript (the same every run);
-- then, until STOPFILE exists, the same work runs without output; last it
-- prints whether any coroutine still carries a debug hook.

local rounds = tonumber(arg[1]) or 200
local stopfile = arg[2]
local M = 2147483647
local all = setmetatable({}, {__mode = "k"})

local function hash(s)
  local h = 5381
  for i = 1, #s do h = (h * 33 + s:byte(i)) % M end
  return h
end

local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end

local function risky(n)
  if n % 4 == 0 then error({n = n}) end
  if n % 4 == 1 then error("odd " .. n) end
  return n
end

local function step(n)
  local t = {}
  for i = 1, 20 + n % 13 do t[i] = ("%d:%s"):format((i * n) % 89, ("x"):rep(i % 5)) end
  table.sort(t)
  local ok, e = pcall(risky, n)
  local v = ok and e or (type(e) == "table" and e.n or #e)
  return (hash(table.concat(t, ",")) + fib(n % 12) + v) % M
end

-- A request yields between steps from inside nested calls.
local function pause(depth, v)
  if depth > 0 then return pause(depth - 1, v) end
  return coroutine.yield(v)
end

local function request(id)
  local acc = id
  for s = 1, 3 + id % 4 do
    acc = (acc * 7 + step(id + s)) % M
    pause(id % 3, acc)
  end
  return acc
end

-- The scheduler: a few long-lived workers, plus new requests every round.
local function worker(w)
  local acc = w
  while true do
    acc = (acc + step(acc % 1000)) % M
    pause(2, acc)
  end
end

local workers, tasks = {}, {}
for w = 1, 6 do
  workers[w] = coroutine.create(worker)
  all[workers[w]] = true
end

local next_id = 0
local function round(quiet)
  for _ = 1, 2 do
    next_id = next_id + 1
    local co = coroutine.create(request)
    all[co] = true
    tasks[#tasks + 1] = {co = co, id = next_id}
  end
  local sum, done = 0, {}
  for w = 1, #workers do
    local _, v = coroutine.resume(workers[w], w)
    sum = (sum + v) % M
  end
  local keep = {}
  for _, t in ipairs(tasks) do
    local ok, v = coroutine.resume(t.co, t.id)
    assert(ok, v)
    if coroutine.status(t.co) == "dead" then done[#done + 1] = t.id .. "=" .. v
    else keep[#keep + 1] = t end
    sum = (sum + v) % M
  end
  tasks = keep
  if not quiet then return sum, done end
end

for r = 1, rounds do
  local sum, done = round(false)
  if r % 20 == 0 then print(("round %d sum %d done %s"):format(r, sum, table.concat(done, " "))) end
end

local function exists(path)
  local f = io.open(path)
  if f then f:close() end
  return f ~= nil
end

-- Linger: the work goes on, the output does not change.
local saved = {next_id, tasks, workers}
workers, tasks = {}, {}
for w = 1, 3 do workers[w] = coroutine.create(worker); all[workers[w]] = true end
local n = 0
while stopfile and not exists(stopfile) do
  n = n + 1
  round(true)
  if #tasks > 40 then tasks = {} end
end
next_id, tasks, workers = saved[1], saved[2], saved[3]

local hooked = debug.gethook() and 1 or 0
for co in pairs(all) do
  if debug.gethook(co) then hooked = hooked + 1 end
end
print(("%d tasks pending; hooks: %s"):format(#tasks,
  hooked == 0 and "none" or hooked .. " threads hooked"))
