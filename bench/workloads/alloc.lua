-- alloc: allocation-heavy (what run --memory costs most on): small tables,
-- new strings and closures made in a loop, most dropped at once, some kept
-- for a while (the collector runs). Work scales with BENCH_SCALE (default
-- 1); prints a checksum.
local scale = tonumber(os.getenv("BENCH_SCALE")) or 1

local kept, h = {}, 0
local function point(i) return {x = i, y = i * 2} end
local function label(i) return "item-" .. i end
local function adder(i) return function(x) return x + i end end

for i = 1, math.floor(400000 * scale) do
  local p = point(i)
  local s = label(i % 5000)
  local f = adder(i % 7)
  h = (h + p.y + #s + f(1)) % 1000000007
  kept[i % 2000 + 1] = p
end
print("alloc", h)
