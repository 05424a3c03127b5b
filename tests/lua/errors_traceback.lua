-- xpcall with debug.traceback as the handler, a coroutine's traceback, table errors
local function clean(s) return (s:gsub("0x%x+", "ADDR")) end
local function lvl3() error("boom") end
local function lvl2() lvl3() end
local function lvl1() lvl2() end
local ok, tb = xpcall(lvl1, debug.traceback)
print(ok, clean(tb))
-- traceback of another coroutine
local co = coroutine.create(function() local function w() coroutine.yield() end w() end)
coroutine.resume(co)
print(clean(debug.traceback(co)))
print(clean(debug.traceback(co, "msg", 1)))
-- xpcall inside a coroutine with traceback handler
local co2 = coroutine.wrap(function()
  return xpcall(function() local t = nil; return t.x end, debug.traceback)
end)
local a, b = co2()
print(a, clean(b))
-- handler that itself calls traceback with levels
print(select(2, xpcall(function() error("lvl", 2) end, function(e) return debug.traceback(e, 2) end)))
-- error objects that are tables
local E = setmetatable({}, {__tostring = function(e) return "E!" end})
local ok2, e2 = xpcall(function() error(E) end, function(e) return tostring(e) .. debug.traceback("", 1):len() * 0 end)
print(ok2, e2)
