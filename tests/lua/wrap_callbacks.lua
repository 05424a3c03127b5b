-- Coroutines entered from C callbacks and metamethods: coroutine.wrap
-- closures used as __index, __call, __lt, a table.sort comparator and a
-- string.gsub replacement function; a coroutine body that itself runs
-- metamethods and sort comparators between yields; a thread whose
-- metatable (debug.setmetatable) has __call = coroutine.resume and an
-- __index function; an error in a wrap body used as a metamethod.

-- a wrap closure as __index: each lookup resumes it
local function index_body(t, k)
  local n = 0
  while true do
    n = n + 1
    t, k = coroutine.yield(k .. "#" .. n)
  end
end
local lazy = setmetatable({}, { __index = coroutine.wrap(index_body) })
print("wrap index", lazy.a, lazy.b, lazy.a)

-- a wrap closure as __call
local acc = setmetatable({}, {
  __call = coroutine.wrap(function(self, x)
    local sum = 0
    while true do
      sum = sum + x
      self, x = coroutine.yield(sum)
    end
  end),
})
print("wrap call", acc(1), acc(2), acc(3))

-- a wrap closure as __lt, used by table.sort without a comparator
local K = {
  __lt = coroutine.wrap(function(a, b)
    while true do a, b = coroutine.yield(a.k < b.k) end
  end),
}
local items = {}
for i, k in ipairs({ 4, 2, 5, 1, 3 }) do items[i] = setmetatable({ k = k }, K) end
table.sort(items)
local order = {}
for i, it in ipairs(items) do order[i] = it.k end
print("wrap lt sort", table.concat(order, " "))

-- a wrap closure as a sort comparator
local desc = coroutine.wrap(function(a, b)
  while true do a, b = coroutine.yield(a > b) end
end)
local nums = { 3, 9, 1, 7 }
table.sort(nums, desc)
print("wrap comparator", table.concat(nums, " "))

-- a wrap closure as a gsub replacement
local numbering = coroutine.wrap(function(w)
  local i = 0
  while true do
    i = i + 1
    w = coroutine.yield(i .. ":" .. w)
  end
end)
print("wrap gsub", (string.gsub("red green blue", "%a+", numbering)))

-- a coroutine body that runs metamethods and a comparator between yields
local Cmp = { __lt = function(a, b) return a.v < b.v end,
              __index = function(t, k) return "idx " .. k end }
local worker = coroutine.create(function()
  local a, b = setmetatable({ v = 1 }, Cmp), setmetatable({ v = 2 }, Cmp)
  coroutine.yield(a < b)
  coroutine.yield(a.missing)
  local l = { 3, 1, 2 }
  table.sort(l, function(x, y) return x > y end)
  return table.concat(l, ",")
end)
print("co meta", coroutine.resume(worker))
print("co meta", coroutine.resume(worker))
print("co meta", coroutine.resume(worker))

-- a thread with a metatable: calling it resumes it, indexing it runs __index
local function echo(...)
  local args = { ... }
  while true do
    args = { coroutine.yield(#args, args[1]) }
  end
end
local co = coroutine.create(echo)
debug.setmetatable(co, {
  __call = coroutine.resume,
  __index = function(th, k) return k .. ":" .. coroutine.status(th) end,
})
print("thread call", co("x", "y"))
print("thread call", co("z"))
print("thread index", co.state)
debug.setmetatable(co, nil)

-- an error in a wrap body used as __index, caught by pcall around the lookup
local fragile = setmetatable({}, {
  __index = coroutine.wrap(function(t, k)
    t, k = coroutine.yield("first " .. k)
    error("wrap index failed on " .. k)
  end),
})
print("wrap index err", fragile.p)
print("wrap index err", pcall(function() return fragile.q end))
print("wrap index dead", pcall(function() return fragile.r end))
