-- functions defined in this file under hostile global names: FN/FNDA records, cobertura methods, luacov
_G["a,b,c"] = function() return 1 end
_G["<zzhostile a='1'>&amp;]]>"] = function() return 2 end
_G["\255\254\226\130"] = function() return 3 end
_G["x\ny\rz\0w"] = function() return 4 end
_G["end_of_record"] = function() return 5 end
_G["\1\t\27\127"] = function() return 6 end
_G[string.rep("N", 5000)] = function() return 7 end
_G["\194\128\239\191\190"] = function() return 8 end
_G["  "] = function() return 9 end
_G["FN:1"] = function() return 10 end
local never = function() return 11 end
local s = 0
for k, v in pairs(_G) do if type(k) == "string" and type(v) == "function" and debug.getinfo(v, "S").short_src == "fnnames.lua" then s = s + v() end end
print(s)
