-- (Lua 5.4: tests/lua/co_die_early.lua) Coroutines that die of an error before their body calls anything: under
-- lines by sample (run's default) the body's call has no record of its
-- own after it, and its thread is gone at the next one. The call still
-- counts, under the resume or the wrap call that ran it.

local co = coroutine.create(function(t) return t.a.b end)
print("resume", (coroutine.resume(co, {})))
local w = coroutine.wrap(function() local f = nil; f() end)
print("wrap", (pcall(w)))
-- a body that calls first, then a function that dies before calling
local inner = function(t) return t.x.y + 1 end
local co2 = coroutine.create(function(t) local n = #tostring(t) return n + inner(t) end)
print("nested", (coroutine.resume(co2, {})))
-- many of them, each a new thread
local dead = 0
for i = 1, 50 do
  local c = coroutine.create(function(v) return v.k.j end)
  if not coroutine.resume(c, {}) then dead = dead + 1 end
end
print("dead", dead)
