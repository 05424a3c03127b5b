-- __gc finalizers that fail, run by collectgarbage() called from deep
-- stacks, from inside pcall, xpcall (the handler runs inside the
-- finalizer, hooks off), a coroutine and a sort comparator; finalizers
-- that call functions first (untraced) later called normally; a finalizer
-- that itself runs pcall and collectgarbage. The automatic collector is
-- stopped so that finalizers run only at the explicit collections.
collectgarbage("stop")
local log = {}
local function helper(x) return x * 2 end          -- first called in a finalizer
local function helper2(s) return "[" .. s .. "]" end
local function mkbad(tag)
  local p = newproxy(true)
  getmetatable(p).__gc = function()
    log[#log + 1] = helper(#tag)
    error("gc error " .. tag)
  end
  return p
end
local function mkgood(tag)
  local p = newproxy(true)
  getmetatable(p).__gc = function()
    log[#log + 1] = helper2(tag)
    local ok, e = pcall(error, "inner " .. tag)
    log[#log + 1] = e
  end
  return p
end
local function full()
  collectgarbage("collect")
  collectgarbage("stop")
  return "collected"
end
local function deep(n, f) if n == 0 then return f() end return (deep(n - 1, f)) end

do local p = mkbad("one") end
print(pcall(deep, 40, full)); collectgarbage("stop")
print(table.concat(log, " "))
do local p = mkgood("two") end
print(pcall(deep, 10, full)); collectgarbage("stop")
print(helper(21), helper2("x"))
do local p = mkbad("three") end
print(xpcall(function() return deep(20, full) end, function(e) return "handled: " .. e end))
collectgarbage("stop")
do local p = mkbad("four") end
local co = coroutine.create(function()
  local function inco() return deep(5, full) end
  coroutine.yield("before")
  return inco()
end)
print(coroutine.resume(co)); collectgarbage("stop")
print(coroutine.resume(co)); collectgarbage("stop")
print(coroutine.status(co))
do local p = mkbad("five") end
print(pcall(table.sort, { 3, 2, 1 }, function(a, b) full() return a < b end))
collectgarbage("stop")
-- a finalizer that runs a full collection of another failing one
do
  local p = newproxy(true)
  getmetatable(p).__gc = function()
    do local q = mkbad("nested") end
    local ok, e = pcall(full)
    log[#log + 1] = "nested:" .. tostring(ok)
  end
end
print(pcall(full)); collectgarbage("stop")
print(pcall(full)); collectgarbage("stop")
print(table.concat(log, " "))
print(deep(3, function() return "end" end))
