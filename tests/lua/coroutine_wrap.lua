-- coroutine.wrap: generators in for-in loops, a wrap function called from
-- several places, an error inside a wrap function that propagates into the
-- resumer and is caught by pcall, a wrap generator that is left unfinished.

local function range(n)
  return coroutine.wrap(function()
    for i = 1, n do
      coroutine.yield(i)
    end
  end)
end

local sum = 0
for i in range(5) do
  sum = sum + i
end
print("sum", sum)

local function squares(n)
  return coroutine.wrap(function()
    for i in range(n) do
      coroutine.yield(i * i)
    end
  end)
end
local parts = {}
for s in squares(4) do
  parts[#parts + 1] = s
end
print("squares", table.concat(parts, " "))

local counter = coroutine.wrap(function()
  local n = 0
  while true do
    n = n + 1
    coroutine.yield(n)
  end
end)
local function call_a() return counter() end
local function call_b()
  local v = counter()
  return v
end
print("counter", counter(), call_a(), call_b(), call_a())

local function faulty()
  coroutine.yield("fine")
  error("wrap failed")
end
local gen = coroutine.wrap(faulty)
print("first", gen())
local function pull() local v = gen() return v end
print("second", pcall(pull))
print("third", pcall(gen))

local left = range(100)
print("partial", left(), left())
