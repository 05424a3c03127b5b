-- Coroutines dropped while suspended in the middle of calls, collected,
-- and new ones made in their place (Lua reuses the freed lua_State
-- addresses): each new coroutine runs on a stack of its own. Some finish,
-- some die of an error caught by resume, some stay suspended.
local function leaf(n)
  coroutine.yield(n)
  return n + 1
end

local function middle(n)
  return leaf(n) * 2
end

local function body(n)
  if n % 7 == 3 then error("boom " .. n) end
  local v = middle(n)
  coroutine.yield(v)
  return v
end

local total, errors = 0, 0
for round = 1, 20 do
  local cos = {}
  for i = 1, 20 do
    local co = coroutine.create(body)
    local ok, v = coroutine.resume(co, round * 20 + i)
    if ok then total = total + v else errors = errors + 1 end
    cos[i] = co
  end
  for i = 1, 20, 4 do -- a few run on, to the end
    if coroutine.status(cos[i]) == "suspended" then
      coroutine.resume(cos[i])
      local ok, v = coroutine.resume(cos[i])
      if ok and v then total = total + v end
    end
  end
  cos = nil
  collectgarbage("collect")
end
print(total, errors)
