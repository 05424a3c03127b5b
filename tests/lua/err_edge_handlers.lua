-- Error handlers and coroutines: an xpcall handler that runs on top of a
-- wrap closure whose coroutine just died, handlers that resume coroutines
-- (a live one, the dead one), a handler inside a coroutine, yields refused
-- inside for-in iterators called by the VM, a chain of 60 nested wrap
-- coroutines whose deepest one fails (the message gains one position per
-- wrap it crosses), and an uncaught error from inside two wraps that ends
-- the program (status 1; lua.c's handler runs on top of the wrap closure).

local helper = coroutine.create(function(msg)
  while true do
    msg = coroutine.yield("helper saw " .. tostring(msg))
  end
end)

local function fail_in_wrap(msg)
  local w = coroutine.wrap(function()
    coroutine.yield("first")
    error(msg, 0)
  end)
  w()
  return w()
end

local function handler(e)
  local ok, v = coroutine.resume(helper, e)
  return "handled: " .. v
end
print("h1", xpcall(function() return fail_in_wrap("boom1") end, handler))

local dead_w
local function handler2(e)
  local ok, v = pcall(dead_w)
  return e .. " / again: " .. tostring(v)
end
print("h2", xpcall(function()
  dead_w = coroutine.wrap(function() error("boom2", 0) end)
  dead_w()
end, handler2))

-- xpcall inside a coroutine, handler resumes a third coroutine
-- (once only: the handler runs again for its own error, and an endless
-- recursion would stop at a C-call depth that depends on the tracer)
local h3_runs = 0
local inside = coroutine.wrap(function()
  local r = { xpcall(function() error({ k = "tbl" }) end, function(e)
    h3_runs = h3_runs + 1
    if h3_runs > 1 then return "again: " .. tostring(e) end
    local ok, v = coroutine.resume(helper, e.k)
    coroutine.yield("cannot") -- refused: the handler is a C-call boundary
    return v
  end) }
  coroutine.yield(tostring(r[1]) .. " " .. tostring(r[2]))
  return "inside done"
end)
print("h3", inside())
print("h3b", inside())

-- yields from iterators called by the VM's generic for (a C-call boundary
-- in 5.1); the loop body itself may yield
local function yielding_iter(s, i)
  if i >= 3 then return nil end
  coroutine.yield("from iterator " .. i)
  return i + 1
end
local function counting_iter(s, i)
  if i >= 3 then return nil end
  return i + 1
end
local looper = coroutine.create(function()
  for i in counting_iter, nil, 0 do
    coroutine.yield("body " .. i)
  end
  local ok, e = pcall(function()
    for i in yielding_iter, nil, 0 do end
  end)
  coroutine.yield("iter: " .. tostring(ok) .. " " .. e)
  for i in yielding_iter, nil, 0 do end
end)
for k = 1, 6 do
  print("loop", k, coroutine.resume(looper))
end

-- 60 nested wraps; the deepest fails; caught at the top
local function nest(n)
  return coroutine.wrap(function()
    if n == 0 then error("deepest", 1) end
    local inner = nest(n - 1)
    local v = inner()
    return v
  end)
end
local ok, e = pcall(nest(60))
print("nest60", ok, #e, e:sub(1, 60))

-- uncaught: from inside two wraps up to the top level
local function final_failure()
  local a = coroutine.wrap(function()
    local b = coroutine.wrap(function()
      error({ "not a string" })
    end)
    b()
  end)
  a()
end
io.write("before final\n")
final_failure()
