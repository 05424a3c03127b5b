-- calls: many short Lua calls (recursive fib, small helpers, methods).
-- Work scales with BENCH_SCALE (default 1); prints a checksum.
local scale = tonumber(os.getenv("BENCH_SCALE")) or 1

local function fib(n)
  if n < 2 then return n end
  return fib(n - 1) + fib(n - 2)
end

local function add(a, b) return a + b end
local function sq(x) return x * x end
local function clamp(x, m) if x > m then return x % m end return x end

local Vec = {}
Vec.__index = Vec
function Vec.new(x, y) return setmetatable({x = x, y = y}, Vec) end
function Vec:dot(o) return self.x * o.x + self.y * o.y end

local sum = 0
for _ = 1, math.max(1, math.floor(120 * scale)) do
  sum = sum + fib(20)
end
local a, b = Vec.new(1, 2), Vec.new(3, 4)
for i = 1, math.floor(3000000 * scale) do
  sum = clamp(add(sum, sq(i % 7)) + a:dot(b), 1000000007)
end
print("calls", sum)
