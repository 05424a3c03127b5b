-- (Lua 5.4: tests/lua/wrap_recycled.lua) Wrap closures collected and made again: two bodies defined on one line,
-- so that only their code tells them apart, wrapped one after the other
-- with a full collection in between, so that a new body closure takes the
-- address of a freed one (of the other body, as often as of its own).
-- Each wrap function carries the name of its own body's wraps, never the
-- other's (under LuaJIT and Lua 5.4 the collector keys a wrap by its body
-- closure, and a freed closure's address once named the next closure's).

local total = 0
for i = 1, 400 do
  local gen = coroutine.wrap(i % 3 == 0 and function(n) coroutine.yield(n + 1) end or function(n) coroutine.yield(n * 2) end)
  total = total + gen(i)
  if i % 7 == 0 then collectgarbage() end
end
print("total", total)
