-- Lua 5.4: coroutines with pending closes at several levels (under
-- nested pcalls) closed from outside, one closed from another's __close,
-- closes that raise while closed, an error object left to coroutine.close,
-- wraps with closing values in generic for, a producer/filter pipeline,
-- yields from __index and pcall, and the resume and close refusals.
local out = {}
local function add(...) local t = table.pack(...) for i = 1, t.n do t[i] = tostring(t[i]) end out[#out+1] = table.concat(t, " ") end
local function strip(e) if type(e) == "string" then return (e:gsub("^.-:%d+: ", "")) end return type(e) end
local function res(name) return setmetatable({}, {__close = function(_, e) add("close", name, strip(e)) end}) end

local function inner(level)
  local r <close> = res("inner" .. level)
  if level > 0 then
    local ok, v = pcall(inner, level - 1)
    add("inner pcall", level, ok, strip(v))
    return v
  end
  return coroutine.yield("deep")
end
local co = coroutine.create(function() local top <close> = res("top") return inner(3) end)
add("resume", coroutine.resume(co))
add("close", coroutine.close(co))
add("status", coroutine.status(co))

-- close a coroutine from inside another's __close
local victim = coroutine.create(function() local v <close> = res("victim") coroutine.yield(1) end)
coroutine.resume(victim)
local killer = coroutine.create(function()
  local k <close> = setmetatable({}, {__close = function() add("killing", coroutine.close(victim)) end})
  coroutine.yield(2)
end)
coroutine.resume(killer)
add("killer closed", coroutine.close(killer))

-- a coroutine whose closes raise while being closed
local bad = coroutine.create(function()
  local a <close> = res("a")
  local b <close> = setmetatable({}, {__close = function() error("b fails", 0) end})
  local c <close> = setmetatable({}, {__close = function() error("c fails", 0) end})
  coroutine.yield()
end)
coroutine.resume(bad)
add("bad close", coroutine.close(bad))

-- an error in a coroutine with pending closes: they run at coroutine.close
local err = coroutine.create(function()
  local a <close> = res("err-a")
  error(setmetatable({}, {__tostring = function() return "errobj" end}))
end)
local ok, e = coroutine.resume(err)
add("err", ok, tostring(e), coroutine.status(err))
add("err close", coroutine.close(err))

-- wrap as a generic for iterator with a closing value
local function gen(n, name)
  return coroutine.wrap(function() for i = 1, n do coroutine.yield(i) end end), nil, nil, res(name)
end
local total = 0
for i in gen(5, "gen1") do total = total + i end
for i in gen(5, "gen2") do if i == 2 then break end total = total + i end
add("total", total)

-- producer / consumer pipeline with closes
local function producer(items)
  return coroutine.create(function()
    local p <close> = res("producer")
    for _, it in ipairs(items) do coroutine.yield(it) end
  end)
end
local function filter(src, pred)
  return coroutine.create(function()
    local f <close> = res("filter")
    while true do
      local ok, v = coroutine.resume(src)
      if not v then break end
      if pred(v) then coroutine.yield(v) end
    end
  end)
end
local flt = filter(producer({1, 2, 3, 4, 5, 6}), function(v) return v % 2 == 0 end)
while true do
  local ok, v = coroutine.resume(flt)
  if not v then break end
  add("got", v)
end
-- yieldable checks inside metamethods and pcall
local yc = coroutine.wrap(function()
  local t = setmetatable({}, {__index = function(_, k) return coroutine.yield(k) end})
  local v = t.x
  local ok, w = pcall(function() return coroutine.yield("in pcall") end)
  return v, ok, w, coroutine.isyieldable()
end)
add("yc", yc()) add("yc", yc("X")) add("yc", yc("W"))
-- coroutine.running in wrap, and resuming a running coroutine
local self
self = coroutine.create(function() return coroutine.resume(self) end)
add("self", coroutine.resume(self))
add("dead", coroutine.resume(self))
add("main close", pcall(coroutine.close, (coroutine.running())))
for _, l in ipairs(out) do print(l) end
