-- producer/filter/consumer pipelines and a round-robin scheduler
local function producer(items)
  return coroutine.create(function()
    for _, x in ipairs(items) do coroutine.yield(x) end
  end)
end
local function receive(prod)
  local ok, v = coroutine.resume(prod)
  return v
end
local function filter(prod, pred)
  return coroutine.create(function()
    while true do
      local x = receive(prod)
      if x == nil then return end
      if pred(x) then coroutine.yield(x) end
    end
  end)
end
local function mapper(prod, f)
  return coroutine.create(function()
    for x in function() return receive(prod) end do coroutine.yield(f(x)) end
  end)
end
local function consumer(prod)
  local out = {}
  while true do
    local x = receive(prod)
    if x == nil then break end
    out[#out + 1] = x
  end
  return table.concat(out, ",")
end
local items = {}
for i = 1, 30 do items[i] = i end
print(consumer(mapper(filter(producer(items), function(x) return x % 3 == 0 end), function(x) return x * x end)))

-- scheduler with sleeping tasks in virtual time
local tasks, now, log = {}, 0, {}
local function spawn(name, f, ...)
  local co = coroutine.create(f)
  tasks[#tasks + 1] = {name = name, co = co, wake = 0, args = {...}}
end
local function sleep(t) coroutine.yield(t) end
local function worker(name, n, step)
  for i = 1, n do
    log[#log + 1] = name .. i .. "@" .. now
    sleep(step)
  end
  if name == "c" then error("task c failed") end
  return name .. " done"
end
spawn("a", worker, "a", 3, 2)
spawn("b", worker, "b", 2, 3)
spawn("c", worker, "c", 2, 1)
spawn("d", function() local function nested(k) if k == 0 then sleep(5) return "deep" end return nested(k - 1) end return nested(10) end)
while #tasks > 0 do
  table.sort(tasks, function(x, y) if x.wake ~= y.wake then return x.wake < y.wake end return x.name < y.name end)
  local t = table.remove(tasks, 1)
  now = math.max(now, t.wake)
  local ok, v = coroutine.resume(t.co, unpack(t.args))
  if not ok then log[#log + 1] = t.name .. " error: " .. v
  elseif coroutine.status(t.co) == "dead" then log[#log + 1] = tostring(v)
  else t.wake = now + v; tasks[#tasks + 1] = t end
end
print(table.concat(log, "\n"))

-- wrap generators in for-in, chained
local function range(n) return coroutine.wrap(function() for i = 1, n do coroutine.yield(i) end end) end
local function take(gen, k) return coroutine.wrap(function() for i = 1, k do local v = gen(); if not v then return end coroutine.yield(v) end end) end
local function zip(g1, g2) return coroutine.wrap(function() while true do local a, b = g1(), g2(); if not a or not b then return end coroutine.yield(a, b) end end) end
local s = {}
for a, b in zip(range(5), take(range(100), 3)) do s[#s + 1] = a .. ":" .. b end
print(table.concat(s, " "))
-- tail call inside a coroutine that errors inside pcall
local function bad(x) error("bad " .. x) end
local function relay(x) return bad(x) end
local co = coroutine.create(function(x)
  local ok, e = pcall(relay, x)
  coroutine.yield(e)
  return relay(x + 1)
end)
print(coroutine.resume(co, 1))
print(coroutine.resume(co))
print(coroutine.resume(co))
