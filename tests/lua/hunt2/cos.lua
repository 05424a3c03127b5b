-- coroutines whose bodies have hostile names: chrome/speedscope tracks and pprof labels carry them
local names = { "\255co", "<zzhostile>&amp;]]>", "a;b\nc", "\1\27\127", string.rep("K", 3000), "\194\128" }
local n = 0
for i, nm in ipairs(names) do
  _G[nm] = loadstring("return function(a) local b = coroutine.yield(a + 1) return b * 2 end", "=co" .. i)()
  local co = coroutine.create(_G[nm])
  local _, v = coroutine.resume(co, i)
  local _, w = coroutine.resume(co, v)
  n = n + v + w
end
-- wraps, one left suspended, one dying of an error
_G["wrap<zzhostile>\255"] = function() coroutine.yield(1) error("x\255") end
local w = coroutine.wrap(_G["wrap<zzhostile>\255"])
n = n + w()
print(n, pcall(w))
local susp = coroutine.wrap(_G["a;b\nc"])
susp(1)
