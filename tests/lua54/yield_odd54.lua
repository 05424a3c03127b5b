-- Lua 5.4: odd yields and resumes: pcall(coroutine.yield) and a yield
-- tail-called inside pcall, an xpcall body failing after a resume, yields
-- refused inside table.sort and string.gsub callbacks, an __index chain
-- two objects deep whose inner one yields, __eq/__le yielding, __pairs
-- returning a wrap generator, an error crossing two resumes (a traceback
-- of the dead one), a failing wrap iterator inside pcall, a __close that
-- yields and one that fails on coroutine.close, isyieldable/running.
local function strip(e) return (tostring(e):gsub("^.-:%d+: ", "")) end
local out = {}
local function say(...) local t = table.pack(...) for i = 1, t.n do t[i] = tostring(t[i]) end out[#out + 1] = table.concat(t, " ") end

-- pcall(coroutine.yield, ...) and a tail-called yield inside pcall
local co = coroutine.create(function(a)
  local r = table.pack(pcall(coroutine.yield, a + 1))
  say("pcall yield got", table.unpack(r, 1, r.n))
  local ok, v = pcall(function(x) return coroutine.yield(x * 2) end, r[2])
  say("tail yield got", ok, v)
  local ok2, e = xpcall(function()
    local w = coroutine.yield("in xpcall")
    error("after resume " .. w)
  end, function(m) local y = strip(m); return "handled: " .. y end)
  say("xpcall", ok2, e)
  return "end"
end)
say(coroutine.resume(co, 1))
say(coroutine.resume(co, 10))
say(coroutine.resume(co, 20))
say(coroutine.resume(co, "W"))
say(coroutine.status(co))

-- sort comparator that tries to yield: refused at the C boundary
local sorter = coroutine.wrap(function()
  local t = {3, 1, 2}
  local ok, e = pcall(table.sort, t, function(a, b) coroutine.yield("cmp") return a < b end)
  say("sort yield", ok, strip(e))
  local ok2, e2 = pcall(string.gsub, "ab", "%a", function(c) return coroutine.yield(c) end)
  say("gsub yield", ok2, strip(e2))
  return "sorter done"
end)
say(sorter())

-- __index chains, two objects deep, the inner one yields
local inner = setmetatable({}, {__index = function(t, k) local v = coroutine.yield("inner " .. k) return v end})
local outer = setmetatable({}, {__index = function(t, k) return inner[k] .. "!" end})
local eq_mt = {__eq = function(a, b) coroutine.yield("eq") return a.v == b.v end,
               __le = function(a, b) coroutine.yield("le") return a.v <= b.v end}
local gen = coroutine.wrap(function()
  local x = outer.key
  say("chain got", x)
  local a, b = setmetatable({v = 1}, eq_mt), setmetatable({v = 1}, eq_mt)
  say("eq", a == b, "le", a <= b)
  return "chain done"
end)
local v = gen()
while v ~= "chain done" do
  say("gen yielded", v)
  v = gen(v == "inner key" and "VAL" or nil)
end

-- __pairs returning a wrap generator
local bag = setmetatable({}, {__pairs = function(t)
  return coroutine.wrap(function()
    for i = 1, 3 do coroutine.yield("k" .. i, i * i) end
  end)
end})
for k, val in pairs(bag) do say("bag", k, val) end

-- a coroutine resumed by a coroutine, which is resumed by a third,
-- errors crossing both resumes and a traceback taken at each level
local c3 = coroutine.create(function()
  coroutine.yield(1)
  local t = setmetatable({}, {__index = function() error({lvl = 3}) end})
  return t.x
end)
local c2 = coroutine.create(function()
  local ok, a = coroutine.resume(c3)
  coroutine.yield(a + 1)
  local ok2, e = coroutine.resume(c3)
  say("c2 sees", ok2, type(e) == "table" and e.lvl, #debug.traceback(c3) > 0)
  error(e)
end)
local c1 = coroutine.wrap(function()
  local ok, a = coroutine.resume(c2)
  coroutine.yield(a + 1)
  local ok2, e = coroutine.resume(c2)
  say("c1 sees", ok2, type(e) == "table" and e.lvl)
  return "c1"
end)
say("c1 first", c1())
say("c1 second", c1())

-- yield inside a for-in iterator that is itself a wrap, inside pcall
local outer_co = coroutine.wrap(function()
  local ok, err = pcall(function()
    for i in coroutine.wrap(function() for j = 1, 3 do coroutine.yield(j) end error("iter broke") end) do
      coroutine.yield("step " .. i)
    end
  end)
  return "iter: " .. tostring(ok) .. " " .. strip(err)
end)
for i = 1, 4 do say(outer_co()) end

-- a coroutine closed while suspended inside __close of another block
local cc = coroutine.create(function()
  local a <close> = setmetatable({}, {__close = function() say("a closed") end})
  do
    local b <close> = setmetatable({}, {__close = function()
      say("b closing, yields")
      coroutine.yield("from b close")
      say("b closed")
    end})
  end
  coroutine.yield("after b")
  return "cc end"
end)
say(coroutine.resume(cc))
say(coroutine.resume(cc))
say(coroutine.close(cc), coroutine.status(cc))

-- a close handler that errors while closing a coroutine
local ce = coroutine.create(function()
  local a <close> = setmetatable({}, {__close = function(_, e) error("close failed") end})
  coroutine.yield()
end)
coroutine.resume(ce)
local ok, e = coroutine.close(ce)
say("close err", ok, strip(e))

-- isyieldable / running
say(coroutine.isyieldable(), select(2, coroutine.running()))
say(coroutine.wrap(function() return coroutine.isyieldable(), select(2, coroutine.running()) end)())
for _, l in ipairs(out) do print(l) end
