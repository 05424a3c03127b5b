-- coroutines: two coroutines passing a value back and forth; every
-- exchange is a resume and a yield (a coroutine switch each way).
-- Work scales with BENCH_SCALE (default 1); prints a checksum.
local scale = tonumber(os.getenv("BENCH_SCALE")) or 1
local n = math.floor(3500000 * scale)

local pong = coroutine.create(function(v)
  while true do
    v = coroutine.yield((v * 3 + 1) % 1000003)
  end
end)

local ping = coroutine.wrap(function()
  local v, total = 1, 0
  for i = 1, n do
    local ok, r = coroutine.resume(pong, v)
    assert(ok, r)
    v = r
    total = (total + v) % 1000000007
    if i % 50 == 0 then coroutine.yield(total) end
  end
  return -1
end)

local last = 0
while true do
  local t = ping()
  if t < 0 then break end
  last = t
end
print("coroutines", n, last)
