-- require under Lua 5.4: its searchers are package.searchers[N] (5.1's
-- package.loaders), each named with the module it looks for: the
-- preload searcher, then the Lua file searcher, which loads mod54.lua.
local mod = require "mod54"
print("twice", mod.twice(21))
package.preload["pre54"] = function(name) return {name = name} end
print("preload", require("pre54").name)
