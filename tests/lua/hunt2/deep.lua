-- a 1500-deep recursion of a function with a hostile name, and a stack overflow caught by pcall
_G["r<zzhostile>;\255"] = function(n) if n == 0 then return 0 end return 1 + _G["r<zzhostile>;\255"](n - 1) end
print(_G["r<zzhostile>;\255"](1500))
local function inf(n) return 1 + inf(n + 1) end
print((pcall(inf, 1)))
