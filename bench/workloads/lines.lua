-- lines: a long loop body of arithmetic, no calls: line events only.
-- Work scales with BENCH_SCALE (default 1); prints a checksum.
local scale = tonumber(os.getenv("BENCH_SCALE")) or 1

local a, b, c, d = 1, 2, 3, 4
for i = 1, math.floor(6000000 * scale) do
  a = (a * 31 + i) % 65521
  b = (b + a * 7) % 65521
  c = (c * 17 + b) % 65521
  d = (d + c + i % 13) % 65521
  if a > b then a = a - b else b = b - a end
  c = c + (d % 3)
  d = d - (a % 5)
end
print("lines", a, b, c, d)
