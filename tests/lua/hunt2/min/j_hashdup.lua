local a, b = function() return 1 end, function() return 2 end _G["g#2"] = function() return 3 end
local g = a g() g = b g() _G["g#2"]()
