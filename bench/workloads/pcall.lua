-- pcall: protected calls that fail at various depths (error unwinding
-- several Lua frames), string and table errors, nested pcall, successes.
-- Work scales with BENCH_SCALE (default 1); prints a checksum.
local scale = tonumber(os.getenv("BENCH_SCALE")) or 1

local function deep(n, v)
  if n == 0 then
    if v % 3 == 0 then error("bad " .. v, 0) end
    if v % 3 == 1 then error({code = v}) end
    return v
  end
  return deep(n - 1, v) + 1
end

local function guarded(v)
  local ok, e = pcall(deep, v % 5, v)
  if ok then return e end
  if type(e) == "table" then return e.code end
  return #e
end

local sum = 0
for i = 1, math.floor(450000 * scale) do
  local ok, r = pcall(guarded, i)
  if ok then sum = sum + r end
  ok = pcall(error, i)       -- C function raising directly
  if not ok then sum = sum + 1 end
  sum = sum % 1000000007
end
print("pcall", sum)
