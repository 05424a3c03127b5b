-- functions reachable only under odd keys: empty, numbers, booleans, module names
local function mk(i) return loadstring("return function(x) return x + " .. i .. " end", "@keys_gen.lua")() end
_G[""] = mk(1)
_G[1] = mk(2)
_G[1.5] = mk(3)
_G[true] = mk(4)
package.loaded[""] = { [""] = mk(5) }
package.loaded["<zzhostile>\255.mod"] = { ["fn;x\n"] = mk(6), [""] = mk(7) }
package.loaded["a,b"] = { ["c,d"] = mk(8) }
package.loaded[string.rep("M", 3000)] = { f = mk(9) }
local s = _G[""](0) + _G[1](0) + _G[1.5](0) + _G[true](0) + package.loaded[""][""](0)
s = s + package.loaded["<zzhostile>\255.mod"]["fn;x\n"](0) + package.loaded["<zzhostile>\255.mod"][""](0)
s = s + package.loaded["a,b"]["c,d"](0) + package.loaded[string.rep("M", 3000)].f(0)
print(s)
