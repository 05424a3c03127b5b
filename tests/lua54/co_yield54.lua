-- Lua 5.4's yields across pcall and metamethods (continuations), and
-- coroutine.close of suspended coroutines, with to-be-closed variables
-- that run on close.
local log = {}
local function add(x) log[#log + 1] = tostring(x) end

local function inner(n)
  for i = 1, n do coroutine.yield(i) end
  return "inner-done"
end
local function across_pcall(n)
  local ok, v = pcall(inner, n)
  add(ok) add(v)
  local ok2, e = pcall(function() coroutine.yield("in-pcall") error("boom") end)
  add(ok2) add(e)
  return "ap"
end
local co = coroutine.create(across_pcall)
while true do
  local ok, v = coroutine.resume(co, 3)
  add(v)
  if coroutine.status(co) == "dead" then break end
end

-- a yield inside __index, __add and __lt
local mt = {
  __index = function(_, k) return coroutine.yield("idx " .. k) end,
  __add = function(a, b) coroutine.yield("add") return 40 + b end,
  __lt = function(a, b) coroutine.yield("lt") return true end,
}
local function meta_user()
  local o = setmetatable({}, mt)
  local x = o.foo
  local y = o + 2
  local z = o < o
  return x, y, z
end
local gen = coroutine.wrap(meta_user)
add(gen()) add(gen("got")) add(gen()) add(gen())

-- coroutine.close runs the pending to-be-closed variables
local function closer(name)
  return setmetatable({}, {__close = function(_, err) add("close " .. name .. " " .. tostring(err)) end})
end
local function body()
  local a <close> = closer("a")
  local b <close> = closer("b")
  coroutine.yield("suspended")
  add("never")
end
local c2 = coroutine.create(body)
add(select(2, coroutine.resume(c2)))
add(coroutine.close(c2))
add(coroutine.status(c2))
-- close of a coroutine that died with an error
local c3 = coroutine.create(function() local x <close> = closer("c3") error("fail3") end)
add(coroutine.resume(c3))
add(coroutine.close(c3))
-- a wrap inside a wrap, each yielding through the other
local outer = coroutine.wrap(function()
  local inner2 = coroutine.wrap(function() for i = 1, 3 do coroutine.yield(i * 10) end end)
  for i = 1, 3 do coroutine.yield(inner2() + i) end
end)
for _ = 1, 3 do add(outer()) end
print(table.concat(log, " "))
