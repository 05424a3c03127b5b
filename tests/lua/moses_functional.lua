-- Real library code (Debian's lua-moses): Moses, a functional utility belt
-- in pure Lua. Almost everything is a closure made by another closure:
-- curry (a local function returning itself until it has its arguments),
-- partial and partialRight with '_' placeholders, compose and pipe,
-- juxtapose, over/overEvery/overArgs, converge, cond, dispatch, once,
-- before, after, flip, rearg, bind, memoize (a recursive function that
-- calls itself through its memo closure); the chaining interface, where
-- every library function is reached through a metatable __index function
-- and one wrapper closure per name (all of one prototype); generators made
-- with coroutine.wrap that get coroutine.yield itself as a callback
-- (partition, aperture, permutation), consumed by for-in loops, by
-- tabulate inside another wrap generator, and abandoned half way; Lua
-- comparators in sortBy and sortedk; deep recursion through isEqual and
-- flatten; errors raised in callbacks caught by pcall.
local M = require "moses"

local function show(v)
  if type(v) ~= "table" then return tostring(v) end
  local parts, n = {}, #v
  for i = 1, n do parts[i] = show(v[i]) end
  local keys = {}
  for k in pairs(v) do
    if type(k) ~= "number" or k < 1 or k > n then keys[#keys + 1] = tostring(k) end
  end
  table.sort(keys)
  for _, k in ipairs(keys) do parts[#parts + 1] = k .. "=" .. show(v[k]) end
  return "{" .. table.concat(parts, ",") .. "}"
end

-- collections with Lua callbacks
local people = {
  {name = "ada", age = 36, lang = "lua"}, {name = "bob", age = 25, lang = "c"},
  {name = "cy", age = 41, lang = "lua"}, {name = "dee", age = 19, lang = "go"},
  {name = "eve", age = 25, lang = "c"}, {name = "fay", age = 33, lang = "lua"},
}
print("names", show(M.pluck(people, "name")))
print("adults", show(M.map(M.select(people, function(p) return p.age >= 25 end),
  function(p) return p.name end)))
print("sum ages", M.reduce(M.pluck(people, "age"), function(a, b) return a + b end))
print("running", show(M.mapReduce({1, 2, 3, 4, 5}, function(s, v) return s * v end)))
local byLang = M.groupBy(people, function(p) return p.lang end)
for lang, group in M.sortedk(byLang) do
  print("lang", lang, show(M.pluck(group, "name")))
end
print("count", show(M.countBy(people, function(p) return p.age > 30 and "old" or "young" end)))
local sorted = M.sortBy(M.clone(people), function(p) return p.age * 100 + #p.name end)
print("by age", show(M.pluck(sorted, "name")))
print("oldest", M.best(people, function(a, b) return a.age > b.age end).name)
print("find", M.findWhere(people, {lang = "go"}).name)
print("zipWith", show(M.zipWith(function(a, b, c) return a .. b .. (c or "-") end,
  {"a", "b", "c"}, {1, 2, 3}, {"x", "y"})))
print("flatten", show(M.flatten({1, {2, {3, {4, {5, {6}}}}}, {{7}}, 8})))
print("powerset", #M.powerset({1, 2, 3, 4}), show(M.xprod({1, 2}, {"a", "b"})))
print("equal", M.isEqual({a = {b = {c = {1, 2, {d = "e"}}}}}, {a = {b = {c = {1, 2, {d = "e"}}}}}),
  M.isEqual({1, {2, {3}}}, {1, {2, {4}}}))

-- function combinators
local add3 = function(a, b, c) return a + b + c end
local curried = M.curry(add3, 3)
print("curry", curried(1)(2)(3), curried(10)(20)(30))
local minus = function(a, b) return a - b end
print("partial", M.partial(minus, 10)(3), M.partial(minus, "_", 10)(3),
  M.partialRight(minus, 10)(3))
local inc = function(x) return x + 1 end
local double = function(x) return x * 2 end
local square = function(x) return x * x end
print("compose", M.compose(inc, double, square)(3), M.pipe(3, inc, double, square))
print("juxtapose", M.juxtapose(5, inc, double, square))
print("over", show(M.over(math.min, math.max, function(...) return select("#", ...) end)(4, 9, 2, 7)))
print("overEvery", M.overEvery(function(x) return x > 0 end, function(x) return x % 2 == 0 end)(4),
  M.overSome(function(x) return x > 10 end, function(x) return x < 0 end)(4))
print("overArgs", M.overArgs(function(a, b) return a .. "/" .. b end, double, square)(3, 4))
print("converge", M.converge(function(a, b) return a + b end, math.min, math.max)(4, 9, 2))
local classify = M.cond({
  {function(x) return x < 0 end, function(x) return "negative " .. x end},
  {function(x) return x == 0 end, M.constant("zero")},
  {function(x) return true end, function(x) return "positive " .. x end},
})
print("cond", classify(-2), classify(0), classify(5))
local lookup = M.dispatch(function(k) if k == "a" then return 1 end end,
  function(k) if #k > 2 then return #k end end, M.constant("default"))
print("dispatch", lookup("a"), lookup("abcd"), lookup("z"))
local calls = 0
local setup = M.once(function(x) calls = calls + 1; return "setup " .. x end)
print("once", setup(1), setup(2), calls)
local limited = M.before(function(x) return x end, 2)
print("before", limited("a"), limited("b"), limited("c"))
local later = M.after(function(x) return "fired " .. x end, 3)
print("after", later(1), later(2), later(3), later(4))
print("flip", M.flip(function(...) return table.concat({...}, "") end)("a", "b", "c"),
  M.rearg(function(a, b, c) return a .. b .. c end, {3, 1, 2})("x", "y", "z"))
print("bind", M.bind(minus, 100)(1), M.bindn(add3, 1, 2)(3))
print("times", show(M.times(square, 6)), show(M.unfold(function(s) if s < 100 then return s, s * 3 end end, 1)))

-- memoize: the recursion goes through the memo closure
local fib
fib = M.memoize(function(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end)
print("fib", fib(60), fib(30))

-- chaining: methods found by an __index function, one wrapper per name
local chained = M.chain({5, 3, 8, 1, 9, 2})
  :map(function(v) return v * 10 end)
  :select(function(v) return v > 15 end)
  :sort()
  :reverse()
  :value()
print("chain", show(chained))
print("chain call", show(M({"b", "a", "c"}):sort(function(a, b) return a > b end):push("z"):value()))

-- generators: coroutine.wrap bodies that get coroutine.yield as a callback
local parts = {}
for p in M.partition({1, 2, 3, 4, 5, 6, 7}, 3, 0) do parts[#parts + 1] = show(p) end
print("partition", table.concat(parts, " "))
print("aperture", show(M.tabulate(M.aperture({1, 2, 3, 4, 5}, 3))))
local perms = {}
for p in M.permutation({"a", "b", "c"}) do perms[#perms + 1] = table.concat(p) end
table.sort(perms)
print("permutations", #perms, table.concat(perms, " "))
-- a generator of generators: each step tabulates a partition generator
local sizes = coroutine.wrap(function()
  for n = 1, 4 do coroutine.yield(n, M.tabulate(M.partition({1, 2, 3, 4, 5, 6}, n))) end
end)
for n, ps in sizes do print("partition by", n, #ps, show(ps[1])) end
local halfway = M.permutation({1, 2, 3, 4, 5})
print("abandoned", show(halfway()), show(halfway()))
local it = M.iterator(double, 1, 8)
print("iterator", show(M.tabulate(M.skip(it, 3))))

-- errors raised in callbacks
print(pcall(M.map, {1, 2, "x", 4}, function(v) return v * 2 end))
local ok, e = pcall(M.reduce, {1, 2, 3}, function(a, b)
  if b == 3 then error({reached = b}) end
  return a + b
end)
print(ok, show(e))
print(pcall(M.sortBy, {3, 1, 2}, function(v) if v == 2 then error("no twos", 0) end return v end))
local bad = M.compose(inc, function(x) error("inner " .. x, 0) end, double)
print(pcall(bad, 7))
local failing = coroutine.wrap(function() M.each({1, 2}, function(v) coroutine.yield(v) end); error("generator done", 0) end)
print("gen", failing(), failing(), pcall(failing))
