-- require of a module from the corpus directory: the module's main chunk
-- runs inside require (and its loader), its functions are named after
-- package.loaded.corpus_mod; a second require returns the cached table.

local mod = require "corpus_mod"
print("loaded_with", mod.loaded_with)
print("inc", mod.inc(1))
print("sum", mod.sum(1, 2, 3, 4))
print("apply", mod.apply(mod.inc, 10))
local again = require("corpus_mod")
print("same table", again == mod)
local short = mod.inc
print("alias", short(5))
print("string.format", string.format("%05.1f|%s", 3.14159, "x"))
