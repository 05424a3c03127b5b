-- Lua 5.4's integers and floats, integer division, bitwise operators,
-- goto, and its line-event rule (a new line, or a jump backwards): loops
-- on one line, multi-line expressions, and statements that share a line.
local function classify(x)
  if math.type(x) == "integer" then return "i" end
  return math.type(x) == "float" and "f" or "n"
end
local acc = {}
for i = 1, 10 do acc[#acc + 1] = classify(i) .. classify(i / 2) .. classify(i // 2) end
local s = 0 for i = 1, 100 do s = s + i end
local bits = (0xF0 | 0x0F) ~ 0xAA
local big = math.maxinteger // 3 + (7 << 2) - (256 >> 4)
local f = 3.0 == 3 and 2^53 or 0
local function collatz(n)
  local steps = 0
  ::top::
  if n == 1 then return steps end
  if n % 2 == 0 then n = n // 2 else n = 3 * n + 1 end
  steps = steps + 1
  goto top
end
local total = 0
for n = 1, 30 do total = total + collatz(n) end
local long = 1 +
  2 *
  3 +
  collatz(27)
local i = 0
while i < 5 do i = i + 1 end
repeat i = i - 1 until i == 0
print(table.concat(acc), s, bits, big, f, total, long, string.format("%.3f %d", 10 / 3, 7 // 2),
  tostring(1e15), tostring(2^63), math.tointeger(8.0), 5 // 0.0, -7 // 2, -7 % 3)
