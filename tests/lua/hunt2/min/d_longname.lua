local L = string.rep("L", 1100)
_G[L .. "1"] = loadstring("return function() end", "=A")()
_G[L .. "2"] = loadstring("return function() end", "=B")()
_G[L .. "1"]() _G[L .. "2"]()
