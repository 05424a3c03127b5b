-- 2000 coroutines alive at once, each suspended at its own depth (1 to 6
-- nested calls) and resumed in a fixed pseudo-random order; some resume
-- others while running (nested resumes up to 5 deep), some die by error,
-- dead ones are replaced, and wrap closures mixed in. debug.traceback and
-- debug.getinfo on levels inside them.
local seed = 12345
local function rnd(n) seed = (seed * 1103515245 + 12345) % 2147483648 return seed % n + 1 end
local N = 2000
local cos, kinds = {}, {}
local function nest(d, f) if d == 0 then return f() end local r = nest(d - 1, f) return r end
local function body(id)
  local k = 0
  while true do
    k = k + 1
    local depth = (id + k) % 6
    local cmd = nest(depth, function() return coroutine.yield(id * 10 + k) end)
    if cmd == "die" then error("died " .. id) end
    if type(cmd) == "number" and cos[cmd] and coroutine.status(cos[cmd]) == "suspended" and cmd ~= id then
      nest(1, function() return coroutine.resume(cos[cmd], "nested") end)
    end
    if cmd == "info" then
      local n = 0
      while debug.getinfo(n + 1, "l") do n = n + 1 end
      local tb = debug.traceback("x", 1)
      local _, lines = tb:gsub("\n", "")
      coroutine.yield(n .. ":" .. lines)
    end
  end
end
local function make(i)
  if i % 7 == 0 then
    local w = coroutine.wrap(body)
    kinds[i] = "wrap"
    local co = coroutine.create(function(...)
      local a = { ... }
      while true do a = { coroutine.yield(w(unpack(a))) } end
    end)
    return co
  end
  kinds[i] = "co"
  return coroutine.create(body)
end
for i = 1, N do cos[i] = make(i); coroutine.resume(cos[i], i) end
local sum, deaths, infos = 0, 0, {}
for step = 1, 6000 do
  local i = rnd(N)
  local r = rnd(20)
  local cmd = r == 1 and "die" or r == 2 and "info" or r <= 8 and rnd(N) or nil
  local ok, v = coroutine.resume(cos[i], cmd)
  if not ok or coroutine.status(cos[i]) == "dead" then
    deaths = deaths + 1
    cos[i] = make(i)
    coroutine.resume(cos[i], i)
  elseif type(v) == "string" then
    infos[#infos + 1] = v
  elseif type(v) == "number" then
    sum = (sum + v) % 1000003
  end
  if step % 1500 == 0 then collectgarbage() end
end
print("sum", sum, "deaths", deaths, "infos", #infos)
print(table.concat(infos, " ", 1, math.min(#infos, 20)))
