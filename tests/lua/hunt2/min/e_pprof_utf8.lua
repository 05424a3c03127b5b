_G["\255"] = function() end
_G["\255"]()
