-- scripts/bench-staleline: only arithmetic on numbers, which stores no pc
-- (the worst case). Each line first sets cur (register 1 of work) to its
-- own number.
local function work(n)
  local cur, x = 0, 0
  for i = 1, n do
    cur = 7 x = x + i * 3
    cur = 8 x = x - i / 7
    cur = 9 x = x % 1000003 + i
    cur = 10 x = x * 0.5 + i * i
  end
  return x
end
while true do work(1000000) end
