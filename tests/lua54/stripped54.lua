-- Lua 5.4: functions without line information (string.dump(f, true)):
-- a stripped function, a stripped main chunk (vararg: its first
-- instruction is VARARGPREP) and the functions it defines, called
-- beside their unstripped originals; their line events carry no line.
local function adder(a, b)
  local s = a
  for i = 1, b do s = s + i end
  return s
end
local stripped = load(string.dump(adder, true))
print(adder(1, 4), stripped(2, 5))

local src = [[
local n = ...
local M = {}
function M.twice(x) return x * 2 end
function M.sum(t)
  local s = 0
  for _, v in ipairs(t) do s = s + M.twice(v) end
  return s
end
return M, n
]]
local chunk = load(string.dump(load(src, "=mod"), true), "=mod", "b")
local M, n = chunk(7)
print(n, M.sum({1, 2, 3}), M.twice(21))
local plain = load(src, "=mod")
local P = plain(1)
print(P.sum({4, 5}))
-- a stripped function that fails, caught, and one in a coroutine
local function boom(x) if x > 1 then error("boom " .. x) end return x end
local sboom = load(string.dump(boom, true))
print(pcall(sboom, 1), select(2, pcall(sboom, 2)))
local co = coroutine.wrap(load(string.dump(function(a)
  local b = coroutine.yield(a + 1)
  return b * 2
end, true)))
print(co(1), co(5))
