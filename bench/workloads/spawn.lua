-- spawn: a coroutine per iteration, as an iterator per loop or a handler
-- per request makes: coroutine.wrap generators, each run to its end (and
-- collected). Work scales with BENCH_SCALE (default 1); prints a checksum.
local scale = tonumber(os.getenv("BENCH_SCALE")) or 1
local n = math.floor(500000 * scale)

local function range(a, b)
  return coroutine.wrap(function()
    for i = a, b do coroutine.yield(i) end
  end)
end

local total = 0
for k = 1, n do
  for v in range(k, k + 3) do total = (total + v * k) % 1000000007 end
end
print("spawn", n, total)
