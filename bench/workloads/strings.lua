-- strings: work inside C library functions (gsub with patterns and a Lua
-- callback, format, concat, rep, find), few Lua lines per C call.
-- Work scales with BENCH_SCALE (default 1); prints a checksum.
local scale = tonumber(os.getenv("BENCH_SCALE")) or 1

local text = string.rep("The quick brown fox jumps over the lazy dog 42 times. ", 20)
local h = 0
local function mix(s)
  for i = 1, #s, 7 do h = (h * 31 + s:byte(i)) % 1000000007 end
end

for i = 1, math.floor(7000 * scale) do
  local s = text:gsub("%a+", function(w) return #w > 4 and w:upper() or nil end)
  s = s:gsub("(%d+)", "<%1>")
  local parts = {}
  for j = 1, 20 do
    parts[j] = string.format("%5d:%-8s|%.3f", i * j, "k" .. j, j / 7)
  end
  local joined = table.concat(parts, ",")
  local r = string.rep("ab-", i % 50 + 1)
  local a, b = s:find("LAZY", 1, true)
  mix(joined)
  h = (h + #s + #r + (a or 0) + (b or 0)) % 1000000007
end
print("strings", h)
