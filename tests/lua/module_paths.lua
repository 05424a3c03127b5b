-- Module paths as frame names: functions of a module loaded with require
-- "corpus_pkg.util" are named corpus_pkg.util.split (package.loaded path);
-- an alias under a shorter global name wins; a function in a nested table
-- of the module has no path and takes its call-site name.
local util = require "corpus_pkg.util"
local parts = util.split("a, b ,c", ",")
print(#parts, util.join(parts, "+"))
print(util.text.upper("abc"))

-- the same module again: cached, same names
local again = require "corpus_pkg.util"
print(again == util, again.join({ "x", "y" }, "-"))

-- a shorter global alias wins over the package path
sj = util.join
print(sj({ "p", "q" }, ""))
