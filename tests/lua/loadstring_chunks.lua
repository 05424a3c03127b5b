-- Chunks from loadstring (main chunks labelled "main chunk@[string ...]:0"),
-- functions defined inside them, chunk names of every form ("=name",
-- "@file", plain, with ';' and newlines), and strings as chunk sources.

local add = loadstring("local a, b = ... return a + b")
print("add", add(2, 3))

local lib = loadstring([[
local M = {}
function M.twice(x)
  return x * 2
end
function M.thrice(x)
  return x * 3
end
return M
]])()
print("lib", lib.twice(4), lib.thrice(4))

local named = loadstring("return function(x) return x - 1 end", "=custom name")()
print("named", named(10))

local at = loadstring("local x = ...\nreturn x .. '@'", "@virtual/file.lua")
print("at", at("v"))

local weird = loadstring("local s = ...\nreturn #s", "weird;chunk\nname")
print("weird", weird("four"))

local multi = loadstring("local n = ...\nlocal t = {}\nfor i = 1, n do\n  t[i] = i\nend\nreturn #t")
print("multi", multi(5))

local long = loadstring("return 'a very long chunk text that goes on and on past the short_src limit of sixty chars'")
print("long", #long())

local bad, err = loadstring("return +", "=syntax")
print("syntax error", bad, err)

_G["global;with\nseparators"] = function(x) return x + 100 end
print("separators", _G["global;with\nseparators"](1))
