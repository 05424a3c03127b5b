-- Lua 5.4: __close handlers that yield, on error unwinding under pcall in
-- a coroutine, on return, under xpcall's handler and as a generic for's
-- closing value; a coroutine closed while suspended inside a __close, and
-- one whose __close raises after its yield.
local out = {}
local function add(...) local t = table.pack(...) for i = 1, t.n do t[i] = tostring(t[i]) end out[#out+1] = table.concat(t, " ") end
local function strip(e) if type(e) == "string" then return (e:gsub("^.-:%d+: ", "")) end return type(e) end
local function yclose(name)
  return setmetatable({}, {__close = function(_, e)
    add("closing", name, strip(e))
    local r = coroutine.yield("y:" .. name)
    add("closed", name, r)
  end})
end
local function plain(name) return setmetatable({}, {__close = function(_, e) add("plain", name, strip(e)) end}) end
-- error unwinding under pcall, __close yielding
local co = coroutine.create(function()
  local ok, e = pcall(function()
    local a <close> = plain("pa")
    local b <close> = yclose("pb")
    local c <close> = yclose("pc")
    error("unwind")
  end)
  add("after pcall", ok, strip(e))
  local function ret()
    local r <close> = yclose("ret")
    return "retval"
  end
  add("ret", ret())
  return "end"
end)
local n = 0
while coroutine.status(co) ~= "dead" do
  n = n + 1
  add("resume", n, coroutine.resume(co, "r" .. n))
end
-- closed while suspended inside a __close
local co2 = coroutine.create(function()
  local a <close> = plain("outer")
  do
    local b <close> = plain("mid")
    local c <close> = yclose("inner")
  end
  add("not reached")
end)
add("co2", coroutine.resume(co2))
add("co2 close", coroutine.close(co2), coroutine.status(co2))
-- error inside a yielding __close after the resume
local co3 = coroutine.create(function()
  local a <close> = plain("a3")
  local b <close> = setmetatable({}, {__close = function() coroutine.yield("in b") error("b after yield", 0) end})
  return "x"
end)
add("co3", coroutine.resume(co3))
add("co3", coroutine.resume(co3))
add("co3", coroutine.status(co3), coroutine.close(co3))
-- xpcall's handler in a coroutine, then yields in close
local co4 = coroutine.wrap(function()
  local r = table.pack(xpcall(function()
    local z <close> = yclose("z")
    error({tag = "obj"})
  end, function(m) add("handler", type(m), m.tag) return "h" end))
  add("xp", r[1], r[2])
  return "done4"
end)
add("co4", co4()) add("co4", co4("again"))
-- generic for closing value that yields
local co5 = coroutine.wrap(function()
  for i in function(_, i) i = (i or 0) + 1 if i <= 3 then return i end end, nil, nil, yclose("forclose") do
    if i == 2 then break end
  end
  return "done5"
end)
add("co5", co5()) add("co5", co5("k"))
for _, l in ipairs(out) do print(l) end
