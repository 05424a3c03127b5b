-- Lua 5.4's CallInfo list reused: recursions a few hundred deep unwound
-- by errors at varying depths (a few frames, or nearly all), the list of
-- free CallInfos shrunk by full collections (luaE_shrinkCI relinks the
-- survivors), then calls at the depths the freed ones had; a coroutine
-- that recurses and errors inside; a recursion 5000 deep unwound at once
-- (as one stopped by the stack's limit: the reference tracer is too slow
-- for that one, collector.py's deep54 runs it). The collector keeps the last event's CallInfos
-- to know a depth without walking the whole chain: every depth must stay
-- the one debug.getinfo sees.
local function down(n, at)
  if n == at then error("at " .. n) end
  if n == 0 then return 0 end
  return 1 + down(n - 1, at)
end

local function tail(n, at)
  if n == at then error("tail at " .. n) end
  if n == 0 then return 0 end
  return tail(n - 1, at)
end

local sum = 0
for round = 1, 40 do
  local depth = 150 + (round * 37) % 250
  -- the error in the 1st, 2nd, 3rd, ... frame of the recursion (a few
  -- frames unwound), or near its bottom (nearly all of them)
  local back = ({1, 2, 3, 4, 5, 8, 40})[round % 7 + 1]
  local at = round % 5 == 0 and 2 or depth - back + 1
  local ok, e = pcall(round % 4 == 0 and tail or down, depth, at)
  sum = sum + (ok and e or #e)
  if round % 3 == 0 then collectgarbage() end
  local t = {}
  for i = 1, 6 do t[i] = down(i * 7, -1) end
  sum = sum + t[6]
end

local co = coroutine.create(function(n)
  local got = coroutine.yield(down(n, -1))
  return down(got, got - 3)
end)
print(coroutine.resume(co, 120))
collectgarbage()
local ok, e = coroutine.resume(co, 200)
print(ok, (tostring(e):gsub("^.-:%d+: ", "")))

local function forever(n)
  if n == 5000 then error("stack overflow") end
  return 1 + forever(n + 1)
end
local okf, ef = pcall(forever, 0)
print(okf, (tostring(ef):gsub("^.-:%d+: ", "")))
print(down(300, -1), sum)
