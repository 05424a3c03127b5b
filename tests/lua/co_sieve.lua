-- Coroutines creating coroutines while they run: the concurrent prime
-- sieve (each prime found adds a filter coroutine, made inside the one
-- before it, so the chain grows to 60 filters and every number crosses
-- them all through nested resumes); a recursive tree walk in wrap
-- generators (each node's generator makes its children's and yields their
-- values up through every level); permutations by recursive generators;
-- a long generator (20000 yields) consumed in slices by three readers; a
-- generator chain abandoned mid-way and collected; an error raised
-- twelve generators deep crossing every resume.

local function gen_numbers(from)
  return coroutine.create(function()
    local n = from
    while true do
      coroutine.yield(n)
      n = n + 1
    end
  end)
end

local function next_of(co)
  local ok, v = coroutine.resume(co)
  if not ok then error(v, 0) end
  return v
end

local function filter(p, source)
  return coroutine.create(function()
    while true do
      local n = next_of(source)
      if n % p ~= 0 then coroutine.yield(n) end
    end
  end)
end

local primes = {}
local chain = gen_numbers(2)
for i = 1, 60 do
  local p = next_of(chain)
  primes[#primes + 1] = p
  chain = filter(p, chain)
end
print("primes", primes[1], primes[10], primes[60], #primes)

-- a tree walked by recursive wrap generators
local function tree(depth, label)
  if depth == 0 then return { v = label } end
  return { v = label, tree(depth - 1, label * 2), tree(depth - 1, label * 2 + 1) }
end
local function walk(node)
  return coroutine.wrap(function()
    if node[1] then for v in walk(node[1]) do coroutine.yield(v) end end
    coroutine.yield(node.v)
    if node[2] then for v in walk(node[2]) do coroutine.yield(v) end end
  end)
end
local sum, count, first = 0, 0, {}
for v in walk(tree(6, 1)) do
  sum, count = sum + v, count + 1
  if count <= 5 then first[count] = v end
end
print("walk", count, sum, table.concat(first, " "))

-- permutations by recursive generators
local function permgen(a, n)
  n = n or #a
  if n <= 1 then
    coroutine.yield(a)
  else
    for i = 1, n do
      a[n], a[i] = a[i], a[n]
      permgen(a, n - 1)
      a[n], a[i] = a[i], a[n]
    end
  end
end
local function permutations(a)
  return coroutine.wrap(function() permgen(a) end)
end
local perms, last = 0, nil
for p in permutations({ "a", "b", "c", "d", "e" }) do
  perms = perms + 1
  last = table.concat(p)
end
print("permutations", perms, last)

-- a long generator read in slices by three readers in turn
local long = coroutine.wrap(function()
  for i = 1, 20000 do coroutine.yield(i % 7) end
  return nil
end)
local drained = false
local readers = {}
for r = 1, 3 do
  readers[r] = coroutine.create(function()
    local got = 0
    while true do
      for _ = 1, 50 do
        local v = not drained and long()
        if not v then drained = true return got end
        got = got + v
      end
      coroutine.yield(got)
    end
  end)
end
local totals, alive = { 0, 0, 0 }, 3
while alive > 0 do
  alive = 0
  for r = 1, 3 do
    if coroutine.status(readers[r]) ~= "dead" then
      local ok, v = coroutine.resume(readers[r])
      totals[r] = v
      if coroutine.status(readers[r]) ~= "dead" then alive = alive + 1 end
    end
  end
end
print("readers", totals[1], totals[2], totals[3])

-- a chain abandoned mid-way, then collected
do
  local c = gen_numbers(100)
  for i = 1, 5 do c = filter(i + 1, c) end
  print("abandoned", next_of(c), next_of(c))
end
collectgarbage()

-- an error twelve generators deep, crossing every resume
local function nest(depth)
  return coroutine.create(function()
    if depth == 0 then
      coroutine.yield("bottom")
      error({ depth = depth })
    end
    local inner = nest(depth - 1)
    while true do coroutine.yield(next_of(inner)) end
  end)
end
local top = nest(12)
print("deep 1", coroutine.resume(top))
local ok, e = coroutine.resume(top)
print("deep 2", ok, type(e) == "table" and e.depth, coroutine.status(top))
