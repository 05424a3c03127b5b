-- Coverage under Lua 5.4 (coverage54-*): lines where 5.4 puts code and
-- 5.1 would not (or cannot compile): goto and labels, <close> and
-- <const>, integer division, a multiple assignment spread over lines, a
-- vararg function, and functions that never run (their lines count,
-- unhit).
local closed = 0
local function guard(name)
  return setmetatable({}, {__close = function() closed = closed + 1 end})
end

local limit <const> = 10
local sum,
      count =
        0,
        0
for i = 1, limit do
  if i % 3 == 0 then goto skip end
  sum = sum + i // 2
  count = count + 1
  ::skip::
end

local function never(x)
  local y = x * 2
  return y
end

local function varsum(...)
  local t <close> = guard("varsum")
  local s = 0
  for _, v in ipairs({...}) do
    s = s + v
  end
  return s
end

local q, r = 17 // 5,
  17 % 5
do
  local g <close> = guard("block")
  q = q + varsum(1, 2, 3)
end
if sum < 0 then
  never(sum)
end
print(sum, count, q, r, closed, 7 // 2, 7.0 // 2, 2^10, math.type(q))
