-- Lua 5.4's everyday idioms: a generic for's closing value (left by the
-- loop's end, break, return and an error), goto continue, integer and float
-- division and bitwise operators, string.pack/unpack, the utf8 library,
-- table.move, varargs passed on through tail calls, load with an
-- environment and with a reader function, coroutine.running, isyieldable
-- and close (one whose __close raises), <const>.
local log = {}
local function add(...) log[#log+1] = table.concat({...}, " ") end
local function closer(name)
  return setmetatable({}, {__close = function(_, e) add("closed", name, type(e) == "string" and (e:gsub("^.-:%d+: ", "")) or type(e)) end})
end
local function range(n, name)
  local i = 0
  return function() i = i + 1; if i <= n then return i end end, nil, nil, closer(name)
end
for i in range(3, "r1") do add("i", i) end
for i in range(5, "r2") do if i == 2 then break end end
local function find(n) for i in range(10, "r3") do if i == n then return i * 2 end end end
add("find", find(4))
local ok, e = pcall(function() for i in range(10, "r4") do if i == 3 then error("boom at " .. i) end end end)
add("pcall", tostring(ok), (tostring(e):gsub("^.-:%d+: ", "")))
-- goto continue idiom
local s = 0
for i = 1, 20 do
  if i % 3 == 0 then goto continue end
  s = s + (i // 2) + (i % 4) + (i & 5) + (i | 2) + (i ~ 7) + (i << 2) + (i >> 1) + (~i)
  ::continue::
end
add("s", s, 7 // 2, 7.0 // 2, 7 / 2, -7 // 2, -7 % 3, 3 % -2, 2^10, math.type(2^10), math.tointeger(3.0))
add(tostring(math.maxinteger + 1 == math.mininteger), tostring(1e308 * 10), tostring(0/0 ~= 0/0))
-- string.pack / unpack
local packed = string.pack("<i4 d s1 z", 42, 3.5, "hi", "zero")
local a, b, c, d, nxt = string.unpack("<i4 d s1 z", packed)
add("pack", #packed, a, b, c, d, nxt, string.packsize("i4i8"))
-- utf8
local u = "héllo wörld ✓"
add("utf8", utf8.len(u), utf8.char(72, 228, 8364), utf8.codepoint(u, 2))
for p, c in utf8.codes("aé✓") do add("cp", p, c) end
add("off", utf8.offset(u, 3), utf8.charpattern)
-- table.move, select('#'), varargs tail calls
local t = table.move({1, 2, 3, 4, 5}, 2, 4, 1, {})
add("move", table.concat(t, ","))
local function count(...) return select("#", ...) end
local function pass(...) return count(...) end
local function pass2(f, ...) return f(...) end
add("va", pass(1, nil, 3, nil), pass2(pass, nil, nil), pass2(pass2, pass, 1, 2, 3))
-- load with env
local env = {print = print, x = 10}
local chunk = load("local y = x * 2 function g(z) return z + y end return g(1)", "=envchunk", "t", env)
add("load", chunk(), env.g(5))
local f2 = load((function() local parts = {"return ", "1 + ", "2"} local i = 0 return function() i = i + 1 return parts[i] end end)())
add("loadfn", f2 and f2() or "nil")
-- coroutine running / isyieldable / close
local co = coroutine.create(function(a)
  local cl <close> = closer("co1")
  local _, main = coroutine.running()
  add("inco", tostring(main), tostring(coroutine.isyieldable()))
  local x = coroutine.yield(a + 1)
  local y = coroutine.yield(x * 2)
  return y
end)
add("r1", tostring(select(2, coroutine.resume(co, 1))))
add("r2", tostring(select(2, coroutine.resume(co, 5))))
add("close", tostring(coroutine.close(co)), coroutine.status(co))
local co2 = coroutine.create(function()
  local c <close> = closer("co2")
  coroutine.yield()
  error({code = 7})
end)
coroutine.resume(co2)
local okr, er = coroutine.resume(co2)
add("co2", tostring(okr), type(er), er.code, tostring(coroutine.close(co2)))
local co3 = coroutine.create(function()
  local c <close> = setmetatable({}, {__close = function() error("close fail", 0) end})
  coroutine.yield(1)
end)
coroutine.resume(co3)
add("co3", tostring(coroutine.close(co3)))
add("main", tostring(select(2, coroutine.running())), tostring(coroutine.isyieldable()))
-- const
local K <const> = 10
local L <const> = K * 2
add("const", K + L)
for _, l in ipairs(log) do print(l) end
