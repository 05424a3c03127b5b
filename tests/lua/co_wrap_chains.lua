-- coroutine.wrap chains 30-45 deep: each level resumes the next, values
-- yielded back up level by level, a table error raised at the bottom
-- crossing every wrap (killing them) or caught by pcall halfway, and a
-- bottom coroutine left suspended by its dead chain, then resumed from main.
local function chain(n, fail_at, catch_at)
  if n == 0 then
    coroutine.yield("bottom")
    if fail_at then error({depth = 0}) end
    return "ok"
  end
  local w = coroutine.wrap(function() return chain(n - 1, fail_at, catch_at) end)
  local r = w()
  coroutine.yield(r .. "<" .. n)
  if n == catch_at then
    local ok, e = pcall(w)
    return "caught@" .. n .. ":" .. tostring(ok) .. ":" .. type(e)
  end
  return w()
end
for _, cfg in ipairs({{40, false, nil}, {45, true, 20}, {30, true, nil}}) do
  local top = coroutine.create(function() return chain(cfg[1], cfg[2], cfg[3]) end)
  local ok, v = coroutine.resume(top)
  print(ok, #v)
  ok, v = coroutine.resume(top)
  print(ok, type(v) == "string" and v or type(v))
  print(coroutine.status(top))
end
-- a long chain where the bottom coroutine is left suspended and resumed from elsewhere later
local saved
local function hold(n)
  if n == 0 then saved = coroutine.running(); return coroutine.yield("held") end
  return (coroutine.wrap(function() return hold(n - 1) end))()
end
local c = coroutine.create(function() return hold(20) end)
print(coroutine.resume(c))
print(coroutine.status(saved), coroutine.status(c))
local ok, e = coroutine.resume(saved, "from main")
print(ok, e, coroutine.status(saved))
print(coroutine.resume(c))
