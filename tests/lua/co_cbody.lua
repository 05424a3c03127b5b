-- coroutines whose body is a C function, or a wrap closure
local function show(...)
  local t = {}
  for i = 1, select("#", ...) do t[#t + 1] = tostring((select(i, ...))) end
  print(table.concat(t, " "))
end
local direct = pcall(coroutine.create, print)
local function body(f)
  if direct then return f end
  return function(...) return f(...) end
end
local function gen(n)
  return coroutine.wrap(function()
    for i = 1, n do coroutine.yield(i) end
    return nil
  end)
end
-- wrap(string.gsub) with a callback that pulls from a generator
local g = gen(100)
local function repl(c) return c .. g() end
show(coroutine.wrap(body(string.gsub))("abcde", "%w", repl))
-- create(pcall) with a failing function
local function boom(x) error("boom " .. x, 0) end
local co = coroutine.create(body(pcall))
show(coroutine.resume(co, boom, 7))
show(coroutine.status(co))
-- create(pcall) with a function that tries to yield
local function yielder(x) local y = coroutine.yield(x + 1) return y * 2 end
co = coroutine.create(body(pcall))
show(coroutine.resume(co, yielder, 1))
show(coroutine.status(co))
if coroutine.status(co) == "suspended" then show(coroutine.resume(co, 10)) end
-- wrap(coroutine.yield): yields its arguments, then returns the next ones
local w = coroutine.wrap(body(coroutine.yield))
show(w(1, 2, 3))
show(w(4, 5))
show(pcall(w, 6))
-- wrap(select)
show(coroutine.wrap(body(select))("#", 1, nil, 3))
-- create(wrap(f)): the body is a wrap closure
local inner = coroutine.wrap(function(a)
  local b = coroutine.yield(a * 2)
  local c = coroutine.yield(b * 3)
  return "inner done", c
end)
local outer = coroutine.create(body(inner))
show(coroutine.resume(outer, 5))
show(coroutine.resume(outer, 6))
show(coroutine.resume(outer, 7))
show(coroutine.resume(outer, 8))
-- wrap(table.sort) with a Lua comparator
local t = {5, 2, 9, 1, 7, 3}
local ncmp = 0
coroutine.wrap(body(table.sort))(t, function(a, b) ncmp = ncmp + 1 return a > b end)
show(table.concat(t, ","), ncmp > 0)
local ok, e
-- wrap(table.sort) with a failing comparator
t = {3, 1, 2}
ok, e = pcall(coroutine.wrap(body(table.sort)), t, function(a, b) error({code = 3}) end)
show(ok, type(e), e.code)
-- wrap(error) with string and table errors
ok, e = pcall(coroutine.wrap(body(error)), "plain", 0)
show(ok, e)
ok, e = pcall(coroutine.wrap(body(error)), {code = 9})
show(ok, type(e), e.code)
-- a Lua body that tail-calls a C function calling back into Lua
local function cb(c)
  local v = g()
  return c:upper() .. tostring(v)
end
local tw = coroutine.wrap(function(s)
  coroutine.yield("first")
  return string.gsub(s, "%w", cb)
end)
show(tw("xy"))
show(tw())
-- a body that tail-calls pcall of a yielding function
local pw = coroutine.wrap(function()
  return pcall(yielder, 40)
end)
show(pcall(pw))
-- create(coroutine.resume): a body that is resume of another coroutine
local target = coroutine.create(function(a) local b = coroutine.yield(a + 100) return b + 1000 end)
local rc = coroutine.create(body(coroutine.resume))
show(coroutine.resume(rc, target, 1))
show(coroutine.status(target), coroutine.status(rc))
show(coroutine.resume(target, 2))
-- wrap(coroutine.wrap(f)) : a wrap closure of a wrap closure
local ww = coroutine.wrap(body(coroutine.wrap(function(a) return a .. "!" end)))
show(ww("hey"))
-- coroutine.create(print) and tostring of results
co = coroutine.create(body(tostring))
show(coroutine.resume(co, 42))
show(coroutine.resume(co, 42))
