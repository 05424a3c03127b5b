-- Many short-lived coroutines: hundreds of wrap generators in for-in loops
-- left by break (suspended, at different depths), collected with
-- collectgarbage() and replaced by new ones; coroutines created inside a
-- coroutine and resumed after their creator died; a generator created in
-- one generator and drained by another; wrap closures called by C code (a
-- sort comparator and a gsub callback that are wrap closures);
-- coroutine.resume called through pcall and through a thread's __call; a
-- wrap closure as __index; a chain of 100 wraps, each made in the last.

local function leaf_gen(n, deep)
  if deep > 0 then
    return leaf_gen(n, deep - 1) -- tail call: the body at deep 0
  end
  for i = 1, n do coroutine.yield(i) end
end

local function nest_yield(i, d)
  if d == 0 then coroutine.yield(i) return end
  nest_yield(i, d - 1)
end

local function gen(n, d)
  return coroutine.wrap(function()
    for i = 1, n do nest_yield(i, d) end
    return nil
  end)
end

local total = 0
for round = 1, 30 do
  for k = 1, 10 do
    for v in gen(5, k % 4) do
      total = total + v
      if v == k % 5 + 1 then break end
    end
  end
  if round % 10 == 0 then collectgarbage("collect") end
end
print("generators", total)

local lt = 0
for k = 1, 50 do
  local co = coroutine.create(leaf_gen)
  local ok, v = coroutine.resume(co, 3, k % 3)
  lt = lt + v
  if k % 2 == 0 then
    ok, v = coroutine.resume(co)
    lt = lt + v
  end
end
collectgarbage("collect")
print("leaf gens", lt)

-- coroutines made by a coroutine that then dies; resumed afterwards
local orphans = {}
local maker = coroutine.create(function(n)
  for i = 1, n do
    orphans[i] = coroutine.create(function(x)
      local y = coroutine.yield(x + i)
      return y * i
    end)
    coroutine.resume(orphans[i], 10 * i)
  end
  return "maker done"
end)
print("maker", coroutine.resume(maker, 4))
print("maker status", coroutine.status(maker))
maker = nil
collectgarbage("collect")
for i = 1, 4 do
  print("orphan", i, coroutine.resume(orphans[i], i))
end

-- a generator created inside one generator, drained by another
local handoff
local producer = coroutine.wrap(function()
  handoff = gen(4, 2)
  coroutine.yield(handoff())
  coroutine.yield("producer paused")
end)
local consumer = coroutine.wrap(function()
  local acc = {}
  for v in handoff do acc[#acc + 1] = v end
  return table.concat(acc, ",")
end)
print("producer", producer())
print("consumer", consumer())
print("producer again", producer())

-- wrap closures called by C: a sort comparator and a gsub callback
local cmp = coroutine.wrap(function(a, b)
  while true do
    a, b = coroutine.yield(a < b)
  end
end)
local t = { 5, 2, 8, 1, 9, 3 }
table.sort(t, cmp)
print("sorted", table.concat(t, " "))
local up = coroutine.wrap(function(c)
  local n = 0
  while true do
    n = n + 1
    c = coroutine.yield(string.upper(c) .. n)
  end
end)
print("gsub", (string.gsub("abc", "%a", up)))

-- resume through pcall and through the __call of threads
local echo = coroutine.create(function(...)
  local args = { ... }
  while true do
    args = { coroutine.yield(#args, args[1]) }
  end
end)
print("pcall resume", pcall(coroutine.resume, echo, "p", "q"))
debug.setmetatable(echo, { __call = coroutine.resume })
print("call resume", echo("c"))
local function via_call(co, x) local ok, n, a = co(x, x) return a end
print("call resume nested", via_call(echo, "v"))
debug.setmetatable(echo, nil)

-- a wrap closure as an __index metamethod (resumed by the VM's metamethod
-- call), and a chain of 100 wrap coroutines each made inside the last
local idx = coroutine.wrap(function(t, k)
  while true do t, k = coroutine.yield(k .. "!") end
end)
local o = setmetatable({}, { __index = idx })
print("index wrap", o.a, o.b)
local function rec(n)
  if n == 0 then return coroutine.yield("bottom") end
  local w = coroutine.wrap(rec)
  local v = w(n - 1)
  return v
end
print("wrap chain", coroutine.wrap(rec)(100))
