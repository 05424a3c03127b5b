-- Coroutines resumed from inside other coroutines' pcall and xpcall
-- handlers, a coroutine resuming one that errors (uncaught in it, so both
-- die), status/running seen from every level, yield inside pcall inside a
-- coroutine (refused in 5.1), a dead coroutine resumed again, a coroutine
-- resumed by a metamethod of another coroutine, yields from a tail-called
-- __call, and a coroutine passed between three resumers while suspended.
local function status_all(tag, ...)
  local out = {}
  for i = 1, select("#", ...) do out[i] = coroutine.status((select(i, ...))) end
  print(tag, table.concat(out, ","), coroutine.running() ~= nil)
end

local A, B, C
local function failer(x)
  local function deeper(y) if y > 2 then error("failer at " .. y) end return coroutine.yield(y) end
  local v = x
  while true do v = deeper(v + 1) end
end
C = coroutine.create(failer)
B = coroutine.create(function()
  status_all("in B", B, C)
  local ok, v = pcall(function()
    local r = { coroutine.resume(C, 0) }
    status_all("in B pcall", B, C)
    return r[2]
  end)
  print("B got", ok, v)
  coroutine.yield("B yields")
  -- now C errors: resume returns false; then B errors itself, uncaught
  local ok2, e2 = coroutine.resume(C, 5)
  print("B sees C", ok2, e2)
  status_all("in B late", B, C)
  local again = { coroutine.resume(C) }
  print("C again", again[1], again[2])
  error({ who = "B" })
end)
A = coroutine.create(function()
  local r1 = { coroutine.resume(B) }
  print("A: B said", r1[1], r1[2])
  local r2 = { coroutine.resume(B) }
  print("A: B died", r2[1], type(r2[2]) == "table" and r2[2].who)
  status_all("in A", A, B, C)
  -- yield across pcall: refused
  print(pcall(coroutine.yield, "x"))
  print(pcall(function() return coroutine.yield("y") end))
  return "A done"
end)
print(coroutine.resume(A))
print(coroutine.resume(A))
status_all("main", A, B, C)

-- a coroutine resumed from inside an xpcall handler of another coroutine
local helper = coroutine.create(function(a)
  local n = 0
  while true do n = n + 1; a = coroutine.yield(a .. "/" .. n) end
end)
local X = coroutine.create(function()
  return xpcall(function() return nil .. "x" end, function(e)
    local ok, v = coroutine.resume(helper, "h")
    local ok2, v2 = coroutine.resume(helper, "h2")
    return v .. "+" .. v2
  end)
end)
print(coroutine.resume(X))

-- a coroutine resumed by a metamethod running in another coroutine
local counter = coroutine.wrap(function()
  local i = 0
  while true do i = i + 1; coroutine.yield(i) end
end)
local proxy = setmetatable({}, { __index = function(t, k) return k .. counter() end })
local Y = coroutine.wrap(function()
  local s = proxy.a .. proxy.b
  coroutine.yield(s)
  return proxy.c
end)
print(Y()); print(Y())
print(pcall(Y))

-- yields from a __call that tail-calls, and via a callable table in a tail call
local yielder = setmetatable({}, { __call = function(self, v)
  local function inner(w) return coroutine.yield(w * 2) end
  return inner(v)
end })
local Z = coroutine.create(function(v)
  local function tc(w) return yielder(w) end
  local a = tc(v)
  local b = yielder(a)
  return a + b
end)
print(coroutine.resume(Z, 1)); print(coroutine.resume(Z, 5)); print(coroutine.resume(Z, 7))
print(coroutine.resume(Z))

-- one suspended coroutine resumed by three different resumers
local shared = coroutine.create(function(tag)
  for i = 1, 4 do tag = coroutine.yield("step " .. i .. " from " .. tag) end
  return "shared done " .. tag
end)
local function r1() return coroutine.resume(shared, "r1") end
local W = coroutine.wrap(function()
  coroutine.yield(select(2, coroutine.resume(shared, "W")))
  local function deep(n) if n == 0 then return select(2, coroutine.resume(shared, "W deep")) end return (deep(n - 1)) end
  return deep(5)
end)
print(r1()); print(W()); print(W())
print(pcall(coroutine.resume, shared, "pcall"))
print(coroutine.resume(shared, "main"))
print(coroutine.resume(shared, "dead"))
