-- LuaJIT only (corpus-luajit-jit_features): what LuaJIT has and Lua 5.1
-- has not, traced: yields across pcall, xpcall, metamethods and for-in
-- iterators; tail calls into fast functions and through __call objects
-- (Lua, C and wrap functions as __call); string.buffer (its put calling
-- __tostring, which errors), table.new, table.clear and goto; jit.on,
-- jit.off and jit.flush called by the program while it is traced (the
-- collector keeps the JIT off: no compiled code skips a hook).

do -- yields across pcall, xpcall, metamethods, iterators
local co = coroutine.create(function(a)
  local ok, v = pcall(function(x)
    local y = coroutine.yield(x + 1)
    return y * 2
  end, a)
  local ok2, e2 = pcall(function()
    coroutine.yield("in pcall 2")
    error("after yield")
  end)
  local ok3, v3 = xpcall(function()
    local z = coroutine.yield("in xpcall")
    error({ z = z })
  end, function(e) coroutine.yield("in handler?") return e end)
  return ok, v, ok2, e2, ok3, type(v3)
end)
print(coroutine.resume(co, 1))
print(coroutine.resume(co, 10))
print(coroutine.resume(co))
print(coroutine.resume(co, 5))
print(coroutine.resume(co, 6))
print(coroutine.status(co))
-- yield from __index and __add metamethods
local mt = { __index = function(t, k) return coroutine.yield("idx " .. k) end,
  __add = function(a, b) return coroutine.yield("add") end,
  __call = function(self, x) return coroutine.yield("call " .. x) end,
  __concat = function(a, b) return coroutine.yield("concat") end,
  __eq = function(a, b) return coroutine.yield("eq") end,
  __lt = function(a, b) return coroutine.yield("lt") end }
local co2 = coroutine.wrap(function()
  local o = setmetatable({}, mt)
  local o2 = setmetatable({}, mt)
  local r = {}
  r[1] = o.foo
  r[2] = o + 1
  r[3] = o(7)
  r[4] = o .. "x"
  r[5] = tostring(o == o2)
  r[6] = tostring(o < o2)
  return table.concat(r, ",")
end)
local out = { co2() }
for i = 1, 6 do out[#out + 1] = co2(i) end
print(table.concat(out, " "))
-- yield from a for-in iterator function
local function iter(s, i)
  if i >= 3 then return nil end
  coroutine.yield("it" .. i)
  return i + 1
end
local co3 = coroutine.wrap(function()
  local n = 0
  for i in iter, nil, 0 do n = n + i end
  return "sum" .. n
end)
print(co3(), co3(), co3(), co3())
-- a yield across pcall, then the coroutine abandoned
local co4 = coroutine.create(function() pcall(function() coroutine.yield(1) end) end)
print(coroutine.resume(co4))
co4 = nil
collectgarbage()
print("end")
end

do -- tail calls into fast functions
local function id(...) return ... end
print(pcall(error))
print(pcall(pcall, error, "x"))
print(select("#", pcall(pcall, pcall, error, { 1 })))
print(select("#", pcall(select, -1, 1, 2, 3)))
print(xpcall(error, tostring))
print(xpcall(error, error))
print(xpcall(function() return error("e", 0) end, id))
local function tp(f, ...) return pcall(f, ...) end
print(tp(id, 1, 2))
print(tp(error, "tp"))
local function tx(...) return xpcall(error, id, ...) end
print(tx("q"))
local function tu(t) return unpack(t) end
print(tu({ 1, 2, 3 }))
local function ts(...) return select(2, ...) end
print(ts(1, 2, 3))
local function ttn(x) return tonumber(x) end
print(ttn("12"))
local function tts(x) return tostring(x) end
print(tts(nil))
local co = coroutine.wrap(function(...)
  local function y(...) return coroutine.yield(...) end
  local a = y(1)
  local b = y(a + 1)
  return coroutine.yield(b + 1)
end)
print(co(0), co(5), co(7), co(9))
local function twrap() return coroutine.wrap(function() return "w" end)() end
print(twrap())
local function tres(c) return coroutine.resume(c, 1) end
print(tres(coroutine.create(function(x) return x * 2 end)))
local function trs() return coroutine.running() end
print(type(trs()))
local function tsetmt(t) return setmetatable(t, { __index = function() return "dflt" end }) end
print(tsetmt({}).z)
local function tgm() return getmetatable("") end
print(type(tgm()))
local function trawg(t) return rawget(t, 1) end
print(trawg({ 9 }))
local function tnext(t) return next(t) end
print(tnext({ 5 }))
local function tip(t) return ipairs(t) end
for i, v in tip({ 4, 5 }) do io.write(i, v, " ") end
print()
local function tstr(s) return s:rep(2):upper():len() end
print(tstr("ab"))
local function tmath(x) return math.floor(math.sqrt(x)) end
print(tmath(17))
local function tloop(n) local s = 0 for i = 1, n do s = s + select("#", id(i, i)) end return s end
print(tloop(50))
local t = {}
local function tins(n) for i = 1, n do table.insert(t, i) end return table.remove(t) end
print(tins(10), #t)
print(pcall(string.rep))
print(pcall(setmetatable, 1, 2))
print(pcall(coroutine.wrap(function() error("werr") end)))
local function terr() return error({ code = 1 }) end
local ok, e = pcall(terr)
print(ok, e.code)
print(string.format("%d %s", 5, tostring(setmetatable({}, { __tostring = function() return "ts" end }))))
print(#table.concat({ "a", "b" }, ","))
end

do -- tail calls through __call
local C = setmetatable({}, { __call = function(self, n) if n == 0 then return "c0" end return self(n - 1) end })
local function via(n) return C(n) end
print(via(5))
local V = setmetatable({}, { __call = function(self, ...) return select("#", ...) end })
local function viav(...) return V(...) end
print(viav(1, 2, 3))
local P = setmetatable({}, { __call = function(...) return select("#", ...) end })
local function viap(x) return P(x) end
print(viap("x"))
local T = setmetatable({}, { __call = tostring })
local function viat(x) return T(x) end
print((viat(5):gsub("table: 0x%x+", "table")))
local E = setmetatable({}, { __call = error })
local function viae(x) return E(x) end
print(pcall(viae, "e"))
local W = setmetatable({}, { __call = coroutine.wrap(function(self, a) while true do self, a = coroutine.yield(a * 2) end end) })
local function vw(x) return W(x) end
print(vw(1), vw(2), vw(3))
-- __index function returning a callable, tail-called
local M = setmetatable({}, { __index = function(t, k) return function(self, x) return k .. x end end })
local function vm(x) return M:foo(x) end
print(vm("!"))
-- deep chain of tail calls through __call objects
local objs = {}
for i = 1, 50 do
  objs[i] = setmetatable({ i = i }, { __call = function(self, acc)
    if self.i == 50 then return acc end
    return objs[self.i + 1](acc + self.i)
  end })
end
print(objs[1](0))
print(pcall(objs[1], 0))
end

do -- string.buffer, table.new, table.clear, goto
local buffer = require("string.buffer")
local T = setmetatable({}, { __tostring = function(t) return "T!" end })
local b = buffer.new()
b:put(T, 1, "x")
print(b:tostring())
b:reset()
print(pcall(b.putf, b, "%s %d", T, 5), b:tostring())
print(pcall(buffer.encode, { f = print }))
local function deep(n) if n == 0 then return {} end return { deep(n - 1) } end
print(#buffer.encode(deep(50)))
local ok, e = pcall(buffer.decode, "garbage")
print(ok)
-- a metamethod erroring inside put
local E = setmetatable({}, { __tostring = function() error("ts err") end })
print(pcall(b.put, b, E))
print(pcall(string.format, "%s", E))
print(pcall(tostring, E))
local t = setmetatable({}, { __index = function(t, k) return k * 2 end })
print(table.concat({ t[1], t[2] }, ","))
-- ipairs over a table whose __index gives the values (LuaJIT's ipairs
-- stops at the first raw nil: no __index call)
local s = 0
for i, v in ipairs(setmetatable({}, { __index = function(t, i) if i <= 5 then return i end end })) do s = s + v end
print(s)
end
do
local buffer = require("string.buffer")
local tnew = require("table.new")
local tclear = require("table.clear")
local t = tnew(10, 0)
for i = 1, 10 do t[i] = i * i end
print(#t)
tclear(t)
print(#t, next(t))
if buffer then
  local b = buffer.new()
  for i = 1, 5 do b:put(i, ","):putf("%d;", i * 2) end
  print(b:tostring())
  local s = buffer.encode({ a = 1, b = { 2, 3 } })
  local v = buffer.decode(s)
  print(v.a, v.b[2])
  b:reset()
  print(#b)
else
  print("no buffer")
end
-- goto
for i = 1, 3 do
  for j = 1, 3 do
    if j == 2 then goto continue end
    io.write(i, j, " ")
    ::continue::
  end
end
print()
local i = 1
::top::
i = i + 1
if i < 5 then goto top end
print(i)
end

do -- jit.on, jit.off, jit.flush from the program
local function work(n) local s = 0 for i = 1, n do s = s + i % 7 end return s end
print(work(1000))
jit.on()
print(work(5000))
jit.flush()
print(work(5000))
jit.off()
print(work(100))
jit.on(work, true)
print(work(3000))
jit.off(work)
print(jit.status() ~= nil)
local function loop() local t = {} for i = 1, 2000 do t[i] = work(3) end return #t end
jit.on()
print(loop())
end
