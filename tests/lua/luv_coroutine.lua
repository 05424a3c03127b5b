-- needs: luv (lua-luv)
-- luv's event loop run inside a coroutine: libuv calls its callbacks on
-- the main thread (luv keeps the state it was loaded in) while the
-- coroutine that called uv.run is still running ("normal" to them).
-- The callbacks resume other coroutines, which yield back; one resumes
-- a coroutine suspended inside the loop's own caller's chain; errors
-- in callbacks are caught by pcall; a second loop run from a wrap; one
-- two coroutines deep, whose callback's resumes and yield are refused.
local uv = require "luv"
local out = {}
local function say(...) local t = {...} for i = 1, select('#', ...) do t[i] = tostring(t[i]) end out[#out + 1] = table.concat(t, " ") end
local function work(n) local s = 0 for i = 1, n do s = s + i end return s end

local worker = coroutine.create(function(x)
  while true do
    x = coroutine.yield(work(x))
  end
end)
local function tick_cb(name, n)
  local _, ismain = coroutine.running()
  local ok, v = coroutine.resume(worker, n)
  say(name, "main?", ismain, "worker", v)
  local ok2, e = pcall(function() if n % 2 == 0 then error("even " .. n) end return n end)
  say(name, "pcall", ok2, (tostring(e):gsub("^.-:%d+: ", "")))
end

local looper = coroutine.create(function()
  local t1, t2 = uv.new_timer(), uv.new_timer()
  local n1, n2 = 0, 0
  t1:start(1, 2, function()
    n1 = n1 + 1
    tick_cb("t1", n1)
    if n1 == 3 then t1:stop(); t1:close() end
  end)
  t2:start(2, 0, function()
    n2 = n2 + 1
    tick_cb("t2", 10 + n2)
    t2:close()
  end)
  uv.run()
  say("loop done", n1, n2, work(4))
  local x = coroutine.yield("looper yields")
  say("looper resumed with", x)
  return "looper end"
end)
say(coroutine.resume(looper))
say(coroutine.resume(looper, 42))

local gen = coroutine.wrap(function()
  local idle = uv.new_idle()
  local k = 0
  idle:start(function()
    k = k + 1
    say("idle", k, work(k))
    if k == 3 then idle:stop(); idle:close() end
  end)
  uv.run()
  coroutine.yield(k)
  return "gen end"
end)
say(gen(), gen())
-- the loop run two coroutines deep: callbacks on the main thread try to
-- resume both (normal, refused), yield (refused: the main thread), and
-- run a generator of their own
local deep, mid
mid = coroutine.create(function()
  deep = coroutine.create(function()
    local t = uv.new_timer()
    t:start(1, 0, function()
      say("cb resume deep", coroutine.resume(deep))
      say("cb resume mid", coroutine.resume(mid))
      local ok, e = pcall(coroutine.yield, 1)
      say("cb yield", ok, e)
      local g = coroutine.wrap(function() for i = 1, 2 do coroutine.yield(work(i)) end end)
      say("cb gen", g(), g())
      t:close()
    end)
    uv.run()
    coroutine.yield("deep after loop")
    return "deep end"
  end)
  say("mid", coroutine.resume(deep))
  coroutine.yield("mid yields")
  say("mid", coroutine.resume(deep))
  return "mid end"
end)
say("main", coroutine.resume(mid))
say("main", coroutine.resume(mid))
for _, l in ipairs(out) do print(l) end
