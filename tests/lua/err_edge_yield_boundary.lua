-- Yields that Lua 5.1 refuses ("attempt to yield across metamethod/C-call
-- boundary", "attempt to yield from outside a coroutine"): across pcall,
-- inside a metamethod, a sort comparator, a gsub callback, from the main
-- thread; each error caught at a different place (inside the C call, in
-- the coroutine around it, in the resumer through resume or wrap).
-- Errors that are not strings (tables, nil, numbers, booleans) thrown out
-- of coroutines through resume and wrap, and error(msg, level) with levels
-- 0, 1, 2, 3 inside coroutines.

local function show(tag, ...)
  local n = select("#", ...)
  local parts = {}
  for i = 1, n do
    local v = select(i, ...)
    if type(v) == "table" then
      parts[#parts + 1] = "table(" .. tostring(v.code) .. ")"
    else
      parts[#parts + 1] = tostring(v)
    end
  end
  print(tag, n, table.concat(parts, " "))
end

local function do_yield(x)
  local r = coroutine.yield(x)
  return r
end

-- yield across pcall: caught by that very pcall, the coroutine goes on
local across_pcall = coroutine.create(function(a)
  local ok, e = pcall(do_yield, a)
  show("in co after pcall", ok, e)
  local v = coroutine.yield("real yield")
  return "done " .. tostring(v)
end)
show("ap1", coroutine.resume(across_pcall, 1))
show("ap2", coroutine.resume(across_pcall, 2))
show("ap3", coroutine.resume(across_pcall, 3))

-- yield across pcall(pcall(...)): the inner one catches it
local twice = coroutine.wrap(function()
  show("pp", pcall(pcall, do_yield, "x"))
  return "wrapped end"
end)
show("twice", twice())

-- yield inside __index and __add: the error leaves the metamethod and kills
-- the coroutine; resume reports it
local mt = {}
mt.__index = function(t, k) return do_yield(k) end
mt.__add = function(a, b) return coroutine.yield("adding") end
local obj = setmetatable({}, mt)
local meta_co = coroutine.create(function()
  local v = obj.missing
  return v
end)
show("meta index", coroutine.resume(meta_co))
show("meta status", coroutine.status(meta_co))
local add_co = coroutine.create(function()
  local ok, e = pcall(function() return obj + 1 end)
  show("add caught in co", ok, e)
  return obj + 2
end)
show("meta add", coroutine.resume(add_co))

-- yield from a sort comparator, caught by a pcall around the sort in the
-- coroutine; then from a gsub callback, caught by the wrap's caller
local sorter = coroutine.wrap(function(t)
  local ok, e = pcall(table.sort, t, function(a, b)
    coroutine.yield("cmp")
    return a < b
  end)
  show("sort caught", ok, e)
  local s = string.gsub("abc", "%w", function(c)
    return do_yield(c)
  end)
  return s
end)
show("gsub through wrap", pcall(sorter, { 3, 1, 2 }))
show("dead wrap", pcall(sorter))

-- yield from the main thread
show("main yield", pcall(coroutine.yield, 1))
show("main yield2", pcall(do_yield, 2))

-- yield inside an xpcall handler inside a coroutine: the handler fails
-- and runs again on top of itself (only once: an endless handler recursion
-- would stop at a C-call depth that depends on the tracer)
local handler_runs = 0
local handler_co = coroutine.create(function()
  return xpcall(function() error("first", 0) end, function(e)
    handler_runs = handler_runs + 1
    if handler_runs > 1 then return "handler again: " .. e end
    return coroutine.yield("from handler " .. e)
  end)
end)
show("xpcall handler", coroutine.resume(handler_co))
show("xpcall handler status", coroutine.status(handler_co))

-- non-string errors through resume and through wrap
local function thrower(v)
  local function inner() error(v) end
  inner()
end
local values = { { code = 1 }, 42, true }
for i = 1, 3 do
  local co = coroutine.create(thrower)
  show("resume err " .. i, coroutine.resume(co, values[i]))
  local w = coroutine.wrap(thrower)
  show("wrap err " .. i, pcall(w, values[i]))
end
show("resume nil", coroutine.resume(coroutine.create(thrower)))
show("wrap nil", pcall(coroutine.wrap(thrower)))

-- error levels inside coroutines
local function lvl(msg, level) error(msg, level) end
local function caller(msg, level)
  local r = lvl(msg, level)
  return r
end
local function outer_caller(msg, level)
  local r = caller(msg, level)
  return r
end
for level = 0, 3 do
  show("level co " .. level,
       coroutine.resume(coroutine.create(outer_caller), "lv", level))
  show("level wrap " .. level,
       pcall(coroutine.wrap(outer_caller), "lw", level))
end
-- level 2 from the coroutine's body: blames resume itself (a C function)
show("level body", coroutine.resume(coroutine.create(function()
  error("from body", 2)
end)))
