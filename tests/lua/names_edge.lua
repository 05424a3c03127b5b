-- Names found with raw accesses and whole keys: keys holding a NUL, a
-- module named "", package.loaded._G replaced (the globals are still the
-- program's), and package.loaded with an __index that counts or raises,
-- which the tracer must never run.
local function f(x) return x + 1 end
_G["fn\0hidden"] = f
print(f(1))
local function g(x) return x * 2 end
_G["ab\0cdefgh"] = g -- 9 bytes: xyz is shorter
_G["xyz"] = g
print(g(2))
local function h(x) return x - 1 end
package.loaded[""] = { helper = h }
print(h(5))
local function k(x) return x .. "!" end
package.loaded["m\0od"] = { k = k }
print(k("a"))

local real_G = package.loaded._G
local function negate(x) return -x end
package.loaded._G = { alias = negate }
print(negate(3), type(print))

local seen = 0
package.loaded._G = nil
setmetatable(package.loaded, { __index = function(t, key)
  seen = seen + 1
  return nil
end })
local function late(x) return x + 100 end
print(late(1), seen)
setmetatable(package.loaded, { __index = function(t, key) error("no " .. tostring(key)) end })
local function later() return "ok" end
print(pcall(later))
setmetatable(package.loaded, nil)
package.loaded._G = real_G
package.loaded[""], package.loaded["m\0od"] = nil, nil
-- names over 1023 bytes are cut; the label keeps its @SRC:LINE, so two
-- functions whose names share the first 1023 bytes stay apart
local long = string.rep("L", 1100)
_G[long .. "1"] = loadstring("return function() return 1 end", "=A")()
_G[long .. "2"] = loadstring("return function() return 2 end", "=B")()
print(_G[long .. "1"]() + _G[long .. "2"]())
_G[long .. "1"], _G[long .. "2"] = nil, nil
-- two closures on one line under one call-site name get g and g#2; a
-- function the program named "g#2" on that line is then g#2#2
local a, b = function() return 1 end, function() return 2 end _G["g#2"] = function() return 3 end
local g = a g() g = b g() print(_G["g#2"]())
_G["g#2"] = nil
-- a module that is also a long list, and one with many number keys in its
-- hash part: numbers cannot name, so they do not use up what is looked at
local list = {}
for i = 1, 20001 do list[i] = i end
function list.sum(i, j) local s = 0 for n = i, j do s = s + list[n] end return s end
local sparse = {}
for i = 1, 25000 do sparse[i * 7 + 0.5] = i end
function sparse.get(x) return sparse[x] end
package.loaded.biglist, package.loaded.sparse = list, sparse
local sum, get = list.sum, sparse.get
print(sum(1, 10), get(7.5))
package.loaded.biglist, package.loaded.sparse = nil, nil
print("done")
