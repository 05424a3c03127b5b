-- Coroutines: create/resume/yield, status, values passed both ways, a
-- coroutine resumed from different call sites, an error in a coroutine
-- caught by resume, resuming a dead coroutine, running(), a coroutine
-- that is never finished.

local function producer(n)
  for i = 1, n do
    coroutine.yield(i, i * i)
  end
  return "produced " .. n
end

local co = coroutine.create(producer)
print("status", coroutine.status(co))
while true do
  local ok, a, b = coroutine.resume(co, 4)
  if coroutine.status(co) == "dead" then
    print("finished", ok, a)
    break
  end
  print("got", ok, a, b)
end
print("dead resume", coroutine.resume(co))

-- the same coroutine resumed from different call sites
local acc = coroutine.create(function(x)
  local total = 0
  while true do
    total = total + x
    x = coroutine.yield(total)
  end
end)
local function site_one(v) return coroutine.resume(acc, v) end
local function site_two(v)
  local ok, t = coroutine.resume(acc, v)
  return ok, t
end
local function site_three(v)
  local r = { site_one(v) }
  return r[2]
end
print("site1", site_one(1))
print("site2", site_two(2))
print("site3", site_three(3))
print("site2", site_two(4))

-- errors inside a coroutine are caught by resume
local function explode(x)
  if x > 2 then error("exploded at " .. x) end
  return x
end
local failing = coroutine.create(function(x)
  while true do
    x = coroutine.yield(explode(x))
  end
end)
print("err1", coroutine.resume(failing, 1))
print("err2", coroutine.resume(failing, 3))
print("err status", coroutine.status(failing))

-- status and running from inside
local watcher
watcher = coroutine.create(function()
  print("inside status", coroutine.status(watcher))
  print("running is me", coroutine.running() == watcher)
  coroutine.yield()
end)
coroutine.resume(watcher)
print("watcher", coroutine.status(watcher))

-- a coroutine that yields from a nested call and is never finished
local function nested_yield(n)
  if n == 0 then return coroutine.yield("deep") end
  return (nested_yield(n - 1))
end
local unfinished = coroutine.create(function() nested_yield(5) end)
print("unfinished", coroutine.resume(unfinished))
print("left", coroutine.status(unfinished))
