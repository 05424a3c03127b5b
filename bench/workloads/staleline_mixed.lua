-- scripts/bench-staleline: lines of arithmetic (no pc stored) among lines
-- that read a table or compare (each stores the pc). Each line first sets
-- cur (register 1 of work) to its own number.
local t = {10, 20, 30, 40}
local function work(n)
  local cur, x = 0, 0
  for i = 1, n do
    cur = 8 x = x + i * 3
    cur = 9 x = x + t[i % 4 + 1]
    cur = 10 x = x - i / 7
    cur = 11 if x < i then x = x + 1 end
    cur = 12 x = x + t[1] * t[2]
    cur = 13 x = x % 1000003
  end
  return x
end
while true do work(1000000) end
