-- Tail calls ending in C functions and C calls in tail position:
-- return select(...), return pcall(f), return coroutine.yield(...),
-- return error(...), return unpack(t), return tostring(x) with a Lua
-- __tostring, return string.gsub(s, p, luafn), return setmetatable(...),
-- return table.sort(t, cmp); chains of Lua tail calls that end in them;
-- a tail call to a callable table whose __call is Lua and whose __call
-- tail-calls C; table.sort with a comparator that errors midway or yields;
-- gsub callbacks that error; a wrap iterator failing mid-iteration.
local function sel(...) return select(2, ...) end
local function t1(...) return sel(...) end
local function t2(...) return t1(...) end
print(t2("a", "b", "c"))

local function failing(x) if x then error("failing " .. x) end return "fine" end
local function pc(x) return pcall(failing, x) end
local function pc2(x) return pc(x) end
print(pc2(nil)); print(pc2("now"))

local function up(x) return unpack({ x, x + 1, x + 2 }) end
local function up2(x) return up(x * 10) end
print(up2(4))

local mt = { __tostring = function(o) return "obj<" .. o.n .. ">" end }
local function ts(o) return tostring(o) end
local function ts2(n) return ts(setmetatable({ n = n }, mt)) end
print(ts2(5))

local function repl(w) return "<" .. w:upper() .. ">" end
local function gs(s) return string.gsub(s, "%a+", repl) end
local function gs2(s) return gs(s) end
print(gs2("one two three"))

local function mk(n) return setmetatable({ n = n }, mt) end
local function mk2(n) return mk(n + 1) end
print(tostring(mk2(1)))

local function err_tail(m) return error(m, 2) end
local function err_mid(m) return err_tail(m) end
print(pcall(function() return err_mid("tail error") end))

local callable = setmetatable({}, { __call = function(self, a, b)
  return select("#", a, b), string.rep(a, b)
end })
local function callme(a) return callable(a, 3) end
local function callme2(a) return callme(a) end
print(callme2("z"))

-- yields through tail-called C functions
local co = coroutine.wrap(function(a)
  local function y(v) return coroutine.yield(v) end
  local function y2(v) return y(v) end
  local b = y2(a + 1)
  local c = y(b * 2)
  return sel("skip", c, "end")
end)
print(co(1)); print(co(10)); print(co(100))

-- table.sort: comparator erroring midway, comparator yielding
local t = {}
for i = 1, 30 do t[i] = (i * 7) % 31 end
local calls = 0
local function cmp(a, b)
  calls = calls + 1
  if calls == 40 then error("cmp gave up") end
  return a < b
end
print(pcall(table.sort, t, cmp))
local function sortit(tt, f) return table.sort(tt, f) end
calls = 0
print(pcall(sortit, t, function(a, b) return cmp(b, a) end))
local cy = coroutine.create(function()
  table.sort({ 3, 2, 1 }, function(a, b) coroutine.yield("in cmp") return a < b end)
  return "unreached"
end)
print(coroutine.resume(cy))
print(coroutine.status(cy))

-- gsub callbacks that error, directly and in a helper through tail calls
local function check(w) if w == "bad" then error("bad word", 0) end return w end
local function cb(w) return check(w) end
print(pcall(string.gsub, "ok fine bad more", "%a+", cb))
print(pcall(function() return ("x y"):gsub("%a", function(c) return nil .. c end) end))

-- a wrap generator used by for-in that fails mid-iteration
local function gen(n)
  return coroutine.wrap(function()
    for i = 1, n do
      if i == 3 then error("gen broke at " .. i) end
      coroutine.yield(i)
    end
  end)
end
print(pcall(function()
  local s = 0
  for v in gen(5) do s = s + v end
  return s
end))

-- tail call into a C function that calls back into Lua which tail-calls
local function inner(x) return tostring(x) end
local function viasort(tt) return table.sort(tt, function(a, b) return inner(a) < inner(b) end) end
local tt = { 3, 1, 2 }
viasort(tt)
print(tt[1], tt[2], tt[3])
