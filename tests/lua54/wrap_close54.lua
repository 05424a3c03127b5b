-- Lua 5.4: a wrap body failing with to-be-closed variables pending: the
-- wrap function resets its coroutine (lua_closethread), running their
-- __close on the dead coroutine's stack, called from the wrap's caller;
-- closers that call on, fail, resume other coroutines, run nested wraps
local log = {}
local function add(...) local t = {} for i = 1, select("#", ...) do t[i] = tostring((select(i, ...))) end log[#log + 1] = table.concat(t, " ") end
local function strip(e) if type(e) == "table" then return "table" end return type(e) == "string" and (e:gsub("^[^:]*:%d+: ", "")) or e end
local function helper(name, e) return name .. "<" .. tostring(strip(e)) .. ">" end
local function closer(name, how)
  return setmetatable({}, {__close = function(_, e)
    add("close", helper(name, e))
    if how == "fail" then error("closer " .. name .. " fails", 0) end
    if how == "resume" then
      local c = coroutine.create(function(x) coroutine.yield(x .. "!") return "end" end)
      add("resumed", coroutine.resume(c, name))
    end
    if how == "wrap" then
      local w = coroutine.wrap(function() local z <close> = closer(name .. ".inner") error("inner " .. name, 0) end)
      add("inner wrap", pcall(w))
    end
  end})
end
local function body(kind)
  local a <close> = closer("a-" .. kind)
  local b <close> = closer("b-" .. kind, kind)
  coroutine.yield("first " .. kind)
  local function deep(n) if n == 0 then error("body " .. kind, 0) end deep(n - 1) end
  deep(3)
end
for _, kind in ipairs({"plain", "fail", "resume", "wrap"}) do
  local w = coroutine.wrap(body)
  add("first", w(kind))
  add("second", pcall(w))
  add("third", pcall(w))
end
-- the failure at the first resume, under xpcall whose handler sees the reset
local w = coroutine.wrap(function()
  local c <close> = closer("x", "resume")
  error({code = 7})
end)
add("xpcall", xpcall(w, function(e) return "handled " .. tostring(type(e) == "table" and e.code or e) end))
-- coroutine.close of a coroutine dead by error with closers pending
local co = coroutine.create(function()
  local p <close> = closer("p", "fail")
  local q <close> = closer("q")
  error("dies", 0)
end)
add("resume", coroutine.resume(co))
add("close", coroutine.close(co))
add("close again", coroutine.close(co))
-- a closer that runs coroutine.close on another suspended coroutine
local victim = coroutine.create(function()
  local v <close> = closer("victim")
  coroutine.yield()
end)
coroutine.resume(victim)
local killer = coroutine.wrap(function()
  local k <close> = setmetatable({}, {__close = function() add("killer closes victim", coroutine.close(victim)) end})
  coroutine.yield("k")
  error("killer dies", 0)
end)
add("killer", killer())
add("killer", pcall(killer))
for _, l in ipairs(log) do print(l) end
