-- strict.lua idiom: _G with Lua __index/__newindex
local declared = {}
setmetatable(_G, {
  __newindex = function(t, n, v)
    declared[n] = true
    rawset(t, n, v)
  end,
  __index = function(t, n)
    if not declared[n] then
      error("variable '" .. n .. "' is not declared", 2)
    end
    return nil
  end,
})
x = 1
function gf(a) return a + x end
print(gf(2))
print(pcall(function() return undefined_var end))
y = nil
print(y)
local function deep(n) if n == 0 then return nope end return deep(n - 1) end
print(pcall(deep, 5))
local ok, e = pcall(function() local z = zzz + 1 end)
print(ok, e)
