-- Coroutines nested three deep: each level resumes the next; yields travel
-- back one level at a time; an error at the deepest level is caught by the
-- middle level; the stack of code in a coroutine is its resumer's stack
-- followed by its own.

local function level3(x)
  local y = coroutine.yield("l3 got " .. x)
  if y == "boom" then error("level3 exploded") end
  return "l3 done " .. y
end

local function level2(x)
  local c3 = coroutine.create(level3)
  local _, v = coroutine.resume(c3, x)
  local got = coroutine.yield(v)
  local ok, r = coroutine.resume(c3, got)
  coroutine.yield(tostring(ok) .. ":" .. r)
  local c3b = coroutine.create(level3)
  coroutine.resume(c3b, "again")
  local ok2, e2 = coroutine.resume(c3b, "boom")
  return "l2 saw " .. tostring(ok2) .. " " .. e2
end

local function level1(x)
  local c2 = coroutine.create(level2)
  local results = {}
  local ok, v = coroutine.resume(c2, x)
  while coroutine.status(c2) ~= "dead" do
    results[#results + 1] = v
    v = coroutine.yield(v)
    ok, v = coroutine.resume(c2, v)
  end
  results[#results + 1] = v
  return table.concat(results, " | ")
end

local c1 = coroutine.create(level1)
local step = 0
local ok, v = coroutine.resume(c1, "start")
while coroutine.status(c1) ~= "dead" do
  step = step + 1
  print("step", step, v)
  ok, v = coroutine.resume(c1, "s" .. step)
end
print("final", ok, v)

-- wrap inside create inside wrap
local outer = coroutine.wrap(function()
  local mid = coroutine.create(function()
    local inner = coroutine.wrap(function()
      coroutine.yield(1)
      coroutine.yield(2)
    end)
    coroutine.yield(inner() + inner())
  end)
  local _, s = coroutine.resume(mid)
  coroutine.yield(s * 10)
end)
print("mixed", outer())
