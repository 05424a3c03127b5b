-- Resumes that fail without switching threads, and coroutines resumed from
-- unusual places: a coroutine resuming itself (running), resuming its own
-- resumer (normal), a dead one, a wrap closure called from inside its own
-- coroutine and after its death; status/running everywhere; a coroutine
-- that resumes a sibling created by its creator, and that sibling resuming
-- a third; one coroutine resumed from a different call depth each time,
-- alternately by resume and from inside other coroutines.

local function st(co) return coroutine.status(co) end

-- resuming the running coroutine, and the normal one that resumed us
local outer, inner
outer = coroutine.create(function()
  print("self resume", coroutine.resume(outer))
  print("outer sees inner", st(inner))
  local ok, v = coroutine.resume(inner)
  print("outer got", ok, v)
  print("self resume again", coroutine.resume(outer))
  return "outer end"
end)
inner = coroutine.create(function()
  print("inner sees outer", st(outer))
  print("resume normal", coroutine.resume(outer))
  print("resume self", coroutine.resume(inner))
  print("running is inner", coroutine.running() == inner)
  coroutine.yield("inner yielded")
  return "inner end"
end)
print("outer", coroutine.resume(outer))
print("statuses", st(outer), st(inner))
print("inner rest", coroutine.resume(inner))
print("dead resumes", coroutine.resume(inner), coroutine.resume(outer))

-- a wrap closure calling itself from inside its coroutine, then after death
local selfcall
selfcall = coroutine.wrap(function(n)
  local ok, e = pcall(selfcall, n)
  print("wrap self call", ok, e)
  coroutine.yield(n + 1)
  return "last"
end)
print("selfcall", selfcall(1), selfcall(), pcall(selfcall))
print("selfcall dead again", pcall(selfcall, 5))

-- a wrap closure whose coroutine resumes the wrap of its resumer
local w_a, w_b
w_a = coroutine.wrap(function()
  local ok, e = pcall(w_b)
  coroutine.yield("a: " .. tostring(ok) .. " " .. tostring(e))
  return "a done"
end)
w_b = coroutine.wrap(function()
  local ok, e = pcall(w_a) -- w_a is normal: it resumed us through pcall
  coroutine.yield("b: " .. tostring(ok) .. " " .. tostring(e))
end)
print("w_a", w_a())
print("w_a again", w_a())

-- siblings: a creator makes three coroutines; the first resumes the
-- second, which resumes the third; the third yields all the way back
local function creator()
  local sib = {}
  local function chainer(i)
    return function(x)
      print("sib", i, "status of creator's thread", coroutine.running() ~= nil)
      while true do
        if sib[i + 1] then
          local ok, v = coroutine.resume(sib[i + 1], x .. ">" .. i)
          x = coroutine.yield(v)
        else
          x = coroutine.yield(x .. ">" .. i .. "!")
        end
      end
    end
  end
  for i = 1, 3 do sib[i] = coroutine.create(chainer(i)) end
  local r = {}
  for k = 1, 3 do
    local ok, v = coroutine.resume(sib[1], "r" .. k)
    r[#r + 1] = v
  end
  print("states", st(sib[1]), st(sib[2]), st(sib[3]))
  return table.concat(r, " ")
end
print("creator", creator())

-- one coroutine resumed from a different depth each time, and from inside
-- other coroutines
local wanderer = coroutine.create(function(tag)
  local n = 0
  while true do
    n = n + 1
    tag = coroutine.yield(tag .. "#" .. n)
  end
end)
local function at_depth(d, tag)
  if d == 0 then
    local ok, v = coroutine.resume(wanderer, tag)
    return v
  end
  local v = at_depth(d - 1, tag)
  return v
end
for d = 0, 6, 3 do
  print("depth", d, at_depth(d, "d" .. d))
end
local host = coroutine.wrap(function()
  print("host first", at_depth(2, "h1"))
  coroutine.yield()
  local nested = coroutine.create(function()
    print("nested", at_depth(4, "n1"))
    coroutine.yield()
    print("nested again", at_depth(1, "n2"))
  end)
  coroutine.resume(nested)
  print("host", at_depth(0, "h2"))
  coroutine.resume(nested)
end)
host()
print("main", at_depth(5, "m"))
host()
print("main last", at_depth(1, "m2"))
print("wanderer", st(wanderer))
