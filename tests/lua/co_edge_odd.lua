-- coroutines in odd places
-- a wrap closure as a table.sort comparator (yields nothing, returns)
local cmp = coroutine.wrap(function(a, b)
  while true do a, b = coroutine.yield(a < b) end
end)
local t = {5, 3, 8, 1, 9, 2}
table.sort(t, cmp)
print(table.concat(t, " "))
-- a wrap closure as a gsub callback
local up = coroutine.wrap(function(c)
  local n = 0
  while true do n = n + 1; c = coroutine.yield(c:upper() .. n) end
end)
print((string.gsub("abc", "%w", up)))
-- a wrap closure as __index and __call
local idx = coroutine.wrap(function(tbl, k)
  while true do tbl, k = coroutine.yield("idx:" .. k) end
end)
local obj = setmetatable({}, {__index = idx, __call = coroutine.wrap(function(self, x)
  while true do self, x = coroutine.yield(x * 2) end
end)})
print(obj.foo, obj.bar, obj(21), obj(4))
-- a loadstring main chunk as a coroutine body
local chunk = loadstring("local a = ...; for i = 1, 3 do a = coroutine.yield(a + i) end return 'chunk done'", "=cochunk")
local cc = coroutine.create(chunk)
print(coroutine.resume(cc, 10))
print(coroutine.resume(cc, 20))
print(coroutine.resume(cc, 30))
print(coroutine.resume(cc, 40))
-- xpcall over a wrap closure, pcall over coroutine.resume
local failing = coroutine.wrap(function() local function f() error("in wrap") end f() end)
print(xpcall(failing, function(e) return "handled: " .. e end))
local cr = coroutine.create(function(x) coroutine.yield(x + 1); error({code = x}) end)
print(pcall(coroutine.resume, cr, 1))
local ok, ok2, e = pcall(coroutine.resume, cr)
print(ok, ok2, type(e), e.code)
-- resume the resumer (error), resume self (error)
local A, B
A = coroutine.create(function()
  print("A resumes B", coroutine.resume(B))
  return "A done"
end)
B = coroutine.create(function()
  print("B resumes A", coroutine.resume(A))
  print("B resumes B", coroutine.resume(B))
  print("B status", coroutine.status(A), coroutine.status(B))
  coroutine.yield("B yielded")
end)
print(coroutine.resume(A))
print(coroutine.resume(B))
-- many values through resume/yield
local big = {}
for i = 1, 200 do big[i] = i end
local echo = coroutine.create(function(...)
  local n = select("#", ...)
  local r = {coroutine.yield(n, ...)}
  return #r
end)
print(select("#", coroutine.resume(echo, unpack(big))))
print(coroutine.resume(echo, unpack(big, 1, 150)))
-- yield from a deeply tail-called chain, then resume from another function
local function t3(x) return coroutine.yield(x) end
local function t2(x) return t3(x + 1) end
local function t1(x) return t2(x + 1) end
local tc = coroutine.create(t1)
print(coroutine.resume(tc, 1))
local function elsewhere() return coroutine.resume(tc, "back") end
print(elsewhere())
-- a generator abandoned while suspended deep, collected later
do
  local g = coroutine.wrap(function() local function d(n) if n == 0 then coroutine.yield("deep") end return d(n - 1) end d(30) end)
  print(g())
end
collectgarbage()
print("end")
