_G["\127"] = function() end
_G["\127"]()
