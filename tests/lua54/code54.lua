-- What a line event costs under Lua 5.4 (co_lines54.c's CODE and WALK
-- records), against luac5.4's listing (tests/integration/code54.py):
-- functions of every shape a line event comes from. Each on its own line.
local function oneline(n) local s = 0 for i = 1, n do s = s + i * 2 end return s end

local function arith(a, b)
  local c = a * 2 + b
  local d = (c - a) % 7
  return c + d // 2
end

local function whileloop(n)
  local i, s = 0, 0
  while i < n do
    i = i + 1
    if i % 2 == 0 then s = s + i end
  end
  return s
end

local function forin(t)
  local s = 0
  for _, v in ipairs(t) do
    s = s + v
  end
  for k in pairs(t) do s = s + k end
  return s
end

local function repeatloop(n)
  local i = 0
  repeat i = i + 1 until i >= n
  return i
end

local function strings(n)
  local parts = {}
  for i = 1, n do
    parts[#parts + 1] = ("x"):rep(i % 5) .. tostring(i)
  end
  return table.concat(parts, ",")
end

local function spin(n) for _ = 1, n do end return n end

local total = spin(3) + oneline(10) + arith(3, 4) + whileloop(9) + forin({4, 5, 6}) + repeatloop(5)
print(total, #strings(20))
