-- Wrap closures whose bodies are one function to the reader (doc/reports.md,
-- "Frame labels": a chunk loaded twice, string.dump + loadstring, and
-- two identical functions on one line share one key), though each is its
-- own Proto: all wraps of such bodies carry the name the first one got.

-- one chunk text loaded twice: two Protos, one function
local src = "return function(n) for i = 1, n do coroutine.yield(i) end end"
local gen1 = loadstring(src, "=gen body")()
local gen2 = loadstring(src, "=gen body")()
local first = coroutine.wrap(gen1)
local second = coroutine.wrap(gen2)
print("loaded twice", first(2), second(2), first(), second())

-- string.dump + loadstring of a body
local function counter(n)
  for i = n, 1, -1 do coroutine.yield(i) end
end
local orig = coroutine.wrap(counter)
local copy = coroutine.wrap(loadstring(string.dump(counter)))
print("dumped", orig(2), copy(3), orig(), copy())

-- two identical functions on one line, each the body of a wrap, one call site
local bodies = { function() coroutine.yield("y") end, function() coroutine.yield("y") end }
for i = 1, 2 do
  local w = coroutine.wrap(bodies[i])
  print("same line", i, w())
end
