-- compiled by stripped_chunks.lua with luac5.1 -s (LuaJIT: string.dump(f, true)):
-- never loaded as source
local function add(a, b) return a + b end
local function loop(n)
  local s = 0
  for i = 1, n do s = add(s, i) end
  return s
end
local function fails(x) if x > 2 then error("too big: " .. x) end return x end
local function tail(n) if n == 0 then return "done" end return tail(n - 1) end
local M = {}
function M.run(cb)
  local gen = coroutine.wrap(function() for i = 1, 3 do coroutine.yield(cb(i)) end end)
  print(loop(10), tail(5))
  for i = 1, 4 do print(pcall(fails, i)) end
  print(gen(), gen(), gen())
  local t = setmetatable({}, {__index = function(_, k) return k .. "!" end})
  print(t.x, t.y)
  local order = {3, 1, 2}
  table.sort(order, function(a, b) return a > b end)
  print(order[1], order[2], order[3])
  return debug.traceback("where", 1):gsub("\n.*", "")
end
return M
