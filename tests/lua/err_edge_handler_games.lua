-- xpcall message handlers that fail, recurse, call xpcall themselves,
-- resume coroutines, run table.sort with failing comparators; errors of
-- every type through several resume levels; handlers that are wraps
local function show(...)
  local t = {}
  for i = 1, select("#", ...) do
    local v = select(i, ...)
    if type(v) == "table" then v = "table:" .. tostring(v.tag) end
    t[#t + 1] = tostring(v)
  end
  print(table.concat(t, " "))
end
local function strip(e) return type(e) == "string" and (e:gsub("^[^:]*:%d+: ", "")) or e end
local function fail(v) error(v, 0) end
-- a handler that fails a few times, then succeeds (the handler runs again
-- on top of its own failure)
local tries = 0
local function flaky(e)
  tries = tries + 1
  if tries % 4 ~= 0 then error("handler try " .. tries, 0) end
  return "flaky gave up at " .. tries .. " on " .. tostring(strip(e))
end
show(xpcall(function() fail("first") end, flaky))
show(xpcall(function() fail({tag = "t"}) end, flaky))
-- a handler that itself runs xpcall with a failing handler
local function inner_h(e) return "inner_h(" .. tostring(strip(e)) .. ")" end
local function outer_h(e)
  local ok, v = xpcall(function() error("from outer_h", 0) end, inner_h)
  return "outer_h(" .. tostring(strip(e)) .. "," .. tostring(ok) .. "," .. v .. ")"
end
show(xpcall(function() local x = nil; return x.field end, outer_h))
-- a handler that recurses into a nested xpcall chain 10 deep
local function chain_h(e)
  local n = tonumber(e) or 0
  if n >= 10 then return "chain " .. n end
  local ok, v = xpcall(function() error(n + 1, 0) end, chain_h)
  return v
end
show(xpcall(function() error(0, 0) end, chain_h))
-- a handler that resumes a coroutine that fails with a table
local co = coroutine.create(function(e)
  local e2 = coroutine.yield("saw " .. tostring(e))
  error({tag = "from co " .. tostring(e2)})
end)
local function co_h(e)
  local ok1, v1 = coroutine.resume(co, strip(e))
  local ok2, v2 = coroutine.resume(co, "again")
  return v1 .. " / " .. tostring(ok2) .. " " .. v2.tag
end
show(xpcall(function() fail("to co") end, co_h))
-- a handler running table.sort whose comparator fails midway, under pcall
local function sort_h(e)
  local t = {5, 3, 8, 1, 9, 2, 7}
  local n = 0
  local ok, v = pcall(table.sort, t, function(a, b)
    n = n + 1
    if n == 6 then error({tag = "cmp" .. n}) end
    return a < b
  end)
  return "sort_h " .. tostring(ok) .. " " .. v.tag
end
show(xpcall(function() fail("sort it") end, sort_h))
-- a wrap closure as the handler (a generator of messages)
local wh = coroutine.wrap(function(e)
  while true do e = coroutine.yield("wrapped[" .. tostring(strip(e)) .. "]") end
end)
show(xpcall(function() fail("w1") end, wh))
show(xpcall(function() fail("w2") end, wh))
-- a handler that is a C function, on an error with a table value
show(xpcall(function() fail({tag = "c"}) end, type))
show(xpcall(function() fail(nil) end, tostring))
show(xpcall(function() fail(false) end, tostring))
-- errors of every type through three resume levels
local function level3(v) error(v, 0) end
local function mk(v)
  return coroutine.create(function()
    local c2 = coroutine.create(function()
      local c3 = coroutine.create(level3)
      local ok, e = coroutine.resume(c3, v)
      error(e, 0)
    end)
    local ok, e = coroutine.resume(c2)
    error(e, 0)
  end)
end
for _, v in ipairs({"str", 42, true, {tag = "tbl"}}) do
  show("levels", coroutine.resume(mk(v)))
end
show("nil", coroutine.resume(mk(nil)))
-- table.sort with a failing comparator inside pcall inside a coroutine,
-- resumed several times
local sorter = coroutine.wrap(function()
  for round = 1, 3 do
    local t = {}
    for i = 1, 20 do t[i] = (i * 7 + round) % 23 end
    local calls = 0
    local ok, e = pcall(table.sort, t, function(a, b)
      calls = calls + 1
      if calls == round * 10 then error("cmp fails at " .. calls, 0) end
      return a < b
    end)
    coroutine.yield(round .. " " .. tostring(ok) .. " " .. tostring(e))
  end
  return "sorter done"
end)
for i = 1, 4 do show(sorter()) end
-- an xpcall inside a handler inside a coroutine inside a handler
local function deep_h(e)
  local c = coroutine.wrap(function()
    return xpcall(function() fail("deeper " .. tostring(strip(e))) end, function(e2)
      return "deep_h:" .. e2
    end)
  end)
  return select(2, c())
end
show(xpcall(function() fail("top") end, deep_h))
