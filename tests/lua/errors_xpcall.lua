-- xpcall: a handler runs before the stack unwinds (it sees the failing
-- frames), debug.traceback as the handler, an error inside the handler,
-- a handler that is not a function, nested xpcall.

local function fail(msg)
  error(msg, 0)
end

local function deeper(msg)
  local r = fail(msg)
  return r
end

local function handler(e)
  local info = debug.getinfo(2, "S")
  return "handled(" .. tostring(e) .. ") at " .. info.what
end

print(xpcall(function() deeper("first") end, handler))
print(xpcall(function() return deeper("second") end, debug.traceback))

local handler_calls = 0
local function bad_handler(e)
  handler_calls = handler_calls + 1
  if handler_calls == 1 then
    error("handler failed", 0)
  end
  return "second handler call got: " .. tostring(e)
end
print(xpcall(function() deeper("third") end, bad_handler))
print("handler calls", handler_calls)

print(xpcall(function() deeper("fourth") end, 42))

local function outer_handler(e) return "outer: " .. e end
local function inner_handler(e) return "inner: " .. e end
local function nested()
  local ok, e = xpcall(function() deeper("in") end, inner_handler)
  print(ok, e)
  deeper("out")
end
print(xpcall(nested, outer_handler))

print(xpcall(function() return "no error", 2 end, handler))
