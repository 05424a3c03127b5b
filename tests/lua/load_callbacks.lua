-- loadstring'd code calling back into the main chunk, setfenv/getfenv, string.dump
function helper(x) return x * 3 end
local api = {}
function api.log(s) return "log:" .. s end
local chunk = assert(loadstring([[
  local a = ...
  local function inner(y) return helper(y) + 1 end
  return inner(a), api_log("x" .. a)
]], "=generated"))
api_log = api.log
print(chunk(5))
-- sandbox with setfenv
local env = {print = print, helper = function(x) return "sandboxed " .. x end, api_log = api.log}
setfenv(chunk, env)
print(pcall(chunk, 7))
print(getfenv(chunk) == env, getfenv(1) == _G)
-- function environment changed at run time
local function usesglobal() return helper(2) end
print(usesglobal())
setfenv(usesglobal, setmetatable({}, {__index = function(t, k) return function(x) return k .. x end end}))
print(usesglobal())
-- setfenv at a level
local function changer()
  setfenv(2, setmetatable({print = print}, {__index = _G}))
  return "changed"
end
local function victim()
  changer()
  newglobal = 1
  return rawget(_G, "newglobal")
end
print(victim())
-- string.dump round trip, twice
local function tpl(a, b)
  local function sub(x) return x - 1 end
  return sub(a) * b
end
local dumped = string.dump(tpl)
local f1 = loadstring(dumped)
local f2 = loadstring(dumped, "=dumped")
print(f1(3, 4), f2(5, 6), tpl(7, 8))
-- loadstring calling loadstring
local meta = loadstring("return loadstring('return helper(...) + 100')")
print(meta()(1))
-- load with a reader function that calls into Lua
local parts = {"return ", "helper", "(10)", " + 1"}
local i = 0
local lf = load(function() i = i + 1; return parts[i] end, "=reader")
print(lf())
-- syntax error in loadstring, runtime error in generated code
print(loadstring("return +", "=bad"))
local rt = loadstring("local t = nil; return t.field", "=rt")
print(pcall(rt))
