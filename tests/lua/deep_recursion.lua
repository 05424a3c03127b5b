-- Deep (non-tail) recursion: 3000 Lua levels; a chain that passes through a
-- C function (pcall) at every tenth level; an error unwinding 1000 frames.
-- (Folded output grows with the square of the depth: only depth() goes to
-- 3000.)

local function depth(n)
  if n == 0 then
    return 0
  end
  local r = depth(n - 1)
  return r + 1
end

local function build(n, acc)
  if n == 0 then return acc end
  acc[#acc + 1] = n
  local t = build(n - 1, acc)
  return t
end

local function through_pcall(n)
  if n == 0 then return 0 end
  if n % 10 == 0 then
    local ok, v = pcall(through_pcall, n - 1)
    return v + 1
  end
  return through_pcall(n - 1) + 1
end

local function deep_error(n)
  if n == 0 then error("bottom reached") end
  local v = deep_error(n - 1)
  return v
end

print("depth", depth(3000))
print("build", #build(300, {}))
print("through_pcall", through_pcall(500))
local ok, e = pcall(deep_error, 1000)
print("deep_error", ok, e)
print("again", depth(100))
