-- The handlers of tests/hosts/c_host.c (see there for the events). Each
-- source keeps its own state, so the transcript printed by "finish" does
-- not depend on how the sources interleave.
--
-- With HOST_TIMING set, every event checks luatrace.tracing() and writes
-- "tracing on|off <ns>" (CLOCK_MONOTONIC) to stderr when it changes.

local M = 2147483647
local all = setmetatable({}, {__mode = "k"}) -- every coroutine, to check hooks
local log = {pool = {}, slow = {}, tick = {}, message = {}, echo = {}}
local sum = {pool = 0, slow = 0, tick = 0, message = 0, echo = 0}
local count = {pool = 0, slow = 0, tick = 0, message = 0, echo = 0}

local lt, was_tracing
if os.getenv("HOST_TIMING") then
  lt = require("luatrace")
  was_tracing = false
end

local function timing()
  if lt and lt.tracing() ~= was_tracing then
    was_tracing = not was_tracing
    io.stderr:write(("tracing %s %.0f\n"):format(was_tracing and "on" or "off", host.now()))
  end
end

local function hash(s)
  local h = 5381
  for i = 1, #s do h = (h * 33 + s:byte(i)) % M end
  return h
end

local function fold(k, v)
  count[k] = count[k] + 1
  sum[k] = (sum[k] * 31 + v) % M
  if count[k] % 100 == 0 then log[k][#log[k] + 1] = sum[k] end
end

-- recursion
local function tree(d)
  if d == 0 then return 1 end
  return tree(d - 1) + tree(d - 2 >= 0 and d - 2 or 0) + 1
end

-- strings
local function words(n)
  local t = {}
  for i = 1, n do t[#t + 1] = ("w%03d"):format((i * 7) % 101) end
  local s = table.concat(t, " ")
  s = s:gsub("w(%d)", "%1x"):upper()
  return s
end

-- tables: sort and fold
local function table_work(n, seed)
  local t = {}
  for i = 1, n do t[i] = (i * seed) % 97 end
  table.sort(t)
  local acc = 0
  for i, v in ipairs(t) do acc = (acc * 3 + v * i) % M end
  return acc
end

-- errors: raised deep, caught by pcall
local function risky(n)
  if n % 3 == 0 then error({code = n}) end
  if n % 3 == 1 then error("bad " .. n, 2) end
  return n
end

local function guarded(n)
  local ok, e = pcall(risky, n)
  if ok then return e end
  return type(e) == "table" and e.code * 2 or #e
end

local function work(n)
  return (tree(n % 6 + 2) + hash(words(n % 20 + 5)) + table_work(n % 30 + 10, n)
          + guarded(n)) % M
end

-- Waits for the next event in a nested call: the coroutine is suspended
-- three frames deep between events.
local function wait_event(depth)
  if depth > 0 then return wait_event(depth - 1) + 0 end
  return coroutine.yield()
end

local function pool_body(kind)
  return function(slot)
    all[coroutine.running()] = true
    local mine = slot
    while true do
      local n = wait_event(slot % 3 + 1)
      timing()
      mine = (mine + work(n + slot)) % M
      fold(kind, mine)
    end
  end
end

host.on("pool", pool_body("pool"))
host.on("slow", pool_body("slow"))

host.on("tick", function(arg)
  timing()
  local n = tonumber(arg)
  fold("tick", work(n * 5))
  return ("m%d %s"):format(n, words(n % 7 + 1))
end)

host.on("message", function(line)
  timing()
  all[coroutine.running()] = true
  local id, body = line:match("^m(%d+) (.*)$")
  fold("message", (hash(body) + tonumber(id)) % M)
  local echo = coroutine.yield(("r%s %d"):format(id, #body))
  timing()
  fold("echo", (hash(echo) + work(tonumber(id))) % M)
end)

-- After the counted events: keeps Lua busy for attach, changes nothing.
local spare = {}
host.on("linger", function()
  timing()
  local co = coroutine.create(function(n) return work(coroutine.yield(n) + n) end)
  all[co] = true
  coroutine.resume(co, 3)
  coroutine.resume(co, 4)
  spare[#spare % 4 + 1] = co
end)

host.on("finish", function()
  for _, k in ipairs({"pool", "slow", "tick", "message", "echo"}) do
    print(("%-7s %6d %10d  %s"):format(k, count[k], sum[k], table.concat(log[k], " ")))
  end
  local hooked, n = 0, 0
  if debug.gethook() then hooked = hooked + 1 end
  for co in pairs(all) do
    n = n + 1
    if debug.gethook(co) then hooked = hooked + 1 end
  end
  print(("hooks: %s"):format(hooked == 0 and "none" or hooked .. " threads hooked"))
  io.stderr:write(("checked %d threads\n"):format(n + 1))
end)

return host.run()
