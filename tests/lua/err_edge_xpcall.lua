-- xpcall handlers that recurse a little, error objects nil/tables/numbers, error levels,
-- xpcall inside a coroutine with a handler that resumes another coroutine,
-- a handler that is a C function (error, print, tostring), pcall 150 deep.
local function lvl3() error("deep", 3) end
local function lvl2() lvl3() end
local function lvl1() lvl2() end
print(pcall(lvl1))

local depth = 0
local function rec_handler(e)
  depth = depth + 1
  if depth < 5 then return rec_handler(e .. "+") end
  local function inner(x) return "handled: " .. x end
  return inner(e)
end
print(xpcall(function() local t = nil; return t.x end, rec_handler))

print(xpcall(function() error() end, function(e) return "nil was " .. tostring(e) end))
print(xpcall(function() error({1, 2, 3}) end, function(e) return #e end))
print(xpcall(function() error(42) end, tostring))
print(xpcall(function() error("x", 0) end, string.upper))
print(select('#', xpcall(function() error("y") end, print)))

local function nest(k)
  if k == 0 then error("bottom") end
  local ok, e = pcall(nest, k - 1)
  if k % 50 == 0 then return e .. "@" .. k end
  error(e, 0)
end
print(pcall(nest, 150))

local gen = coroutine.create(function(a)
  while true do a = coroutine.yield(a * 2) end
end)
local co = coroutine.create(function()
  local r = { xpcall(function()
    local x = coroutine.yield("in xpcall?")
    return x
  end, function(e)
    local ok, v = coroutine.resume(gen, 21)
    return "h:" .. tostring(v) .. ":" .. e:gsub("^.-:%d+: ", "")
  end) }
  return r[1], r[2]
end)
print(coroutine.resume(co))
print(coroutine.status(co))

-- handler running on a deep stack
local function deep(k) if k == 0 then return nil + 1 end return (deep(k - 1)) end
print(xpcall(function() return deep(100) end, function(e)
  local tb = debug.traceback(e, 2)
  local _, lines = tb:gsub("\n", "")
  return lines
end))
