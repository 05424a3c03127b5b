-- Errors raised inside metamethods of newproxy userdata, inside pcall,
-- inside coroutines (create and wrap); C functions as metamethods
-- (error, coroutine.yield, select, tostring), errors that are tables and nil.
local P = newproxy(true)
local mt = getmetatable(P)
local function boom(what) error("boom in " .. what) end
mt.__index = function(u, k)
  if k == "bad" then boom("__index") end
  if k == "tbl" then error({ code = 7 }) end
  if k == "nil" then error(nil) end
  return k .. "!"
end
mt.__newindex = function(u, k, v) if v == 0 then boom("__newindex") end end
mt.__call = function(u, a, b) if a == "err" then return boom("__call") end return a, b end
mt.__concat = function(a, b) local x = type(a) == "string" and a or b; if x == "bad" then boom("__concat") end return "cat" end
mt.__eq = function(a, b) boom("__eq") end
mt.__lt = function(a, b) boom("__lt") end
mt.__le = function(a, b) return error("le level 2", 2) end
mt.__unm = function(a) boom("__unm") end
mt.__len = function(a) boom("__len") end
mt.__add = function(a, b) return 1 + nil end
mt.__mod = error
mt.__div = select
mt.__pow = tostring
local Q = newproxy(P)   -- shares P's metatable, so __eq applies

local function show(ok, e)
  if type(e) == "table" then e = "table code " .. tostring(e.code) end
  if type(e) == "userdata" then e = "a userdata" end
  print(ok, tostring(e))
end

local cases = {
  function() return P.good end,
  function() return P.bad end,
  function() return P.tbl end,
  function() return P["nil"] end,
  function() P.x = 0 end,
  function() P.x = 1 return "set" end,
  function() return P("err") end,
  function() return P(1, 2) end,
  function() return P .. "bad" end,
  function() return "ok" .. P end,
  function() return P == Q end,
  function() return P < Q end,
  function() return P <= Q end,
  function() return -P end,
  function() return #P end,
  function() return P + 1 end,
  function() return P % 3 end,
  function() return P / 2 end,
  function() return type(P ^ 2) end,
}

local function runall(tag)
  for i, f in ipairs(cases) do
    io.write(tag, " ", i, " ")
    show(pcall(f))
  end
end

runall("main")
local co = coroutine.create(function()
  runall("co")
  coroutine.yield("mid")
  -- errors uncaught in the coroutine: the resume reports them
  return P.bad
end)
print(coroutine.resume(co))
print(coroutine.resume(co))
print(coroutine.status(co))
local w = coroutine.wrap(function() runall("wrap"); local y = P .. "bad" end)
print(pcall(w))
-- nested: a metamethod that resumes a coroutine whose metamethod errors
mt.__unm = function(a)
  local c = coroutine.create(function() return P < Q end)
  local ok, e = coroutine.resume(c)
  return "inner " .. tostring(ok) .. " " .. e
end
print(pcall(function() return -P end))
