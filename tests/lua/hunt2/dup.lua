local a, b = function() return 1 end, function() return 2 end _G["g#2"] = function() return 3 end
local g = a local s = g() g = b s = s + g() s = s + _G["g#2"]()
print(s)
