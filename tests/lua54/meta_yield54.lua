-- Lua 5.4: metamethods that yield, fail or tail-call, across pcall, in
-- coroutines closed while suspended inside them
local log = {}
local function add(...) local t = {} for i = 1, select("#", ...) do t[i] = tostring((select(i, ...))) end log[#log + 1] = table.concat(t, " ") end
local function strip(e) return (tostring(e):gsub("^.-:%d+: ", "")) end
local mt = {}
mt.__index = function(t, k) local v = coroutine.yield("index " .. k) return v end
mt.__newindex = function(t, k, v) coroutine.yield("newindex " .. k) rawset(t, k, v * 2) end
mt.__add = function(a, b) return coroutine.yield("add") end
mt.__concat = function(a, b) local r = coroutine.yield("concat") return r .. "!" end
mt.__eq = function(a, b) return coroutine.yield("eq") end
mt.__lt = function(a, b) return coroutine.yield("lt") end
mt.__le = function(a, b) error("le fails") end
mt.__call = function(self, x) return coroutine.yield("call " .. x) end
mt.__len = function(self) return select("#", coroutine.yield("len")) end
mt.__unm = function(self) return mt.__call(self, "unm") end -- tail call into a yielding metamethod
local function body()
  local a, b = setmetatable({}, mt), setmetatable({}, mt)
  add("got", a.foo)
  a.bar = 21
  add("bar", rawget(a, "bar"))
  add("sum", a + 1)
  add("cat", a .. "x")
  add("eq", a == b)
  add("lt", a < b)
  add("le", pcall(function() return a <= b end))
  add("call", a(5))
  add("len", #a)
  add("unm", -a)
  local ok, v = pcall(function() return a.inside .. "/" .. (a + 2) end)
  add("pcall", ok, v)
  return "body done"
end
local co = coroutine.create(body)
local answers = {"FOO", nil, 42, "C", true, false, "called", nil, "U", "I", 7}
local i = 0
while true do
  local ok, what = coroutine.resume(co, answers[i])
  add("yielded", ok, what)
  if coroutine.status(co) == "dead" then break end
  i = i + 1
end
-- a coroutine closed while suspended inside a metamethod inside pcall,
-- with to-be-closed variables pending at several levels
local function tbc(name)
  return setmetatable({}, {__close = function(_, e) add("close", name, e and strip(e)) end})
end
local co2 = coroutine.create(function()
  local x <close> = tbc("outer")
  return pcall(function()
    local y <close> = tbc("inner")
    local obj = setmetatable({}, mt)
    return obj.key
  end)
end)
add("co2", coroutine.resume(co2))
add("close co2", coroutine.close(co2))
add("co2 status", coroutine.status(co2))
-- closed while its __close handler fails
local co3 = coroutine.create(function()
  local x <close> = setmetatable({}, {__close = function() error("close fails", 0) end})
  local y <close> = tbc("y3")
  coroutine.yield(pcall(coroutine.yield, "in pcall"))
end)
add("co3", coroutine.resume(co3))
add("close co3", coroutine.close(co3))
-- __close that yields during the normal end of a block
local co4 = coroutine.wrap(function()
  do
    local z <close> = setmetatable({}, {__close = function() coroutine.yield("from close") add("close resumed") end})
    add("in block")
  end
  return "co4 end"
end)
add("co4", co4())
add("co4", co4())
-- an error unwinding through a yielding __close under pcall
local co5 = coroutine.wrap(function()
  local ok, e = pcall(function()
    local z <close> = setmetatable({}, {__close = function(_, e) coroutine.yield("closing " .. strip(e)) end})
    error("unwind me")
  end)
  return "co5 end " .. tostring(ok) .. " " .. strip(e)
end)
add("co5", co5())
add("co5", co5())
-- coroutine.close of a coroutine that is normal (resumed us): refused
local outer
outer = coroutine.create(function()
  local inner = coroutine.create(function()
    return pcall(coroutine.close, outer)
  end)
  return coroutine.resume(inner)
end)
add("outer", coroutine.resume(outer))
for _, l in ipairs(log) do print(l) end
