-- Required by require_errors.lua: requires corpus_pkg.cycle_b while it is
-- itself still loading; cycle_b's require of it back fails (Lua 5.1:
-- "loop or previous error loading module"), which cycle_b catches.
local A = { name = "a" }
local B = require "corpus_pkg.cycle_b"
function A.greet() return "a+" .. B.greet() end
return A
