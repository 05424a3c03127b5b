-- Required by cycle_a.lua while cycle_a loads (see there).
local B = {}
local ok, err = pcall(require, "corpus_pkg.cycle_a")
B.back = ok and "loaded" or (err:match("loop") and "loop" or "other")
function B.greet() return "b(" .. B.back .. ")" end
return B
