-- Lua 5.4: warn() switched on and off, a __gc that raises (a warning: 5.4
-- runs finalizers with hooks off, so neither tracer sees them), error
-- objects with __tostring through <close> variables under pcall and xpcall,
-- a __close raising over another error and on a normal return, nil and
-- false as to-be-closed values, a non-closable one, a __close yielding in a
-- wrap, tail recursion with varargs, mutual tail calls through a vararg
-- forwarder, integer for loops at maxinteger, %q of floats and integers.
local out = {}
local function add(...) local t = table.pack(...) for i = 1, t.n do t[i] = tostring(t[i]) end out[#out+1] = table.concat(t, " ") end
local function strip(e) if type(e) == "string" then return (e:gsub("^.-:%d+: ", "")) end return type(e) end
warn("@on")
warn("hello ", "from ", "warn")
warn("@off")
warn("not shown")
warn("@on")
-- a finalizer that raises: 5.4 turns it into a warning
do
  local x = setmetatable({}, {__gc = function(o) error("gc failure") end})
  x = nil
  collectgarbage()
  collectgarbage()
end
local gcs = 0
for i = 1, 5 do setmetatable({}, {__gc = function() gcs = gcs + 1 end}) end
collectgarbage() collectgarbage()
add("gcs", gcs)
-- error objects through to-be-closed
local Err = {}
Err.__index = Err
Err.__tostring = function(e) return "Err(" .. e.msg .. ")" end
local function newerr(msg) return setmetatable({msg = msg}, Err) end
local function res(name) return setmetatable({}, {__close = function(_, e) add("close", name, tostring(e)) end}) end
local function work(n)
  local r <close> = res("w" .. n)
  if n == 0 then error(newerr("zero")) end
  return work(n - 1)
end
local ok, e = pcall(work, 3)
add("pcall", ok, tostring(e), getmetatable(e) == Err)
local ok2, e2 = xpcall(work, function(m) add("handler", tostring(m)) return newerr("wrapped " .. m.msg) end, 2)
add("xpcall", ok2, tostring(e2))
-- __close erroring replaces the error and the next close sees the new one
local function chain()
  local a <close> = res("a")
  local b <close> = setmetatable({}, {__close = function(_, e) add("b sees", tostring(e)) error(newerr("from b")) end})
  local c <close> = res("c")
  error(newerr("orig"))
end
add("chain", pcall(chain))
-- error in __close on normal exit
local function normal_exit()
  local a <close> = res("na")
  local b <close> = setmetatable({}, {__close = function() error("close on exit", 0) end})
  return "value"
end
add("normal", pcall(normal_exit))
-- false and nil are allowed as tbc values
do local n <close> = nil local f <close> = false add("nilclose") end
-- non-closable value
add("badtbc", pcall(function() local x <close> = {} end))
-- __close yielding inside a coroutine
local co = coroutine.wrap(function()
  do
    local y <close> = setmetatable({}, {__close = function() add("yield in close") coroutine.yield("from close") add("resumed close") end})
    add("body")
  end
  return "done"
end)
add("w1", co()) add("w2", co())
-- deep recursion and tail calls through varargs
local function sum(n, acc, ...) if n == 0 then return acc, select("#", ...) end return sum(n - 1, acc + n, ...) end
add("sum", sum(1000, 0, 1, 2, 3))
local function depth(n) if n == 0 then return 0 end return 1 + depth(n - 1) end
add("depth", depth(300))
local function fwd(f, ...) return f(...) end
local function even(n) if n == 0 then return true end return fwd(odd_ref, n - 1) end
function odd_ref(n) if n == 0 then return false end return fwd(even, n - 1) end
add("even", even(501))
-- stack overflow caught
-- integer for loop edges
local c = 0
for i = math.maxinteger - 2, math.maxinteger do c = c + 1 end
for i = 1, 0 do c = c + 100 end
for i = 1.0, 2.0, 0.5 do c = c + 10 end
add("loops", c)
add(string.format("%q %q %5.2f %d %x", 1/3, math.mininteger, 2.5, 3, 255))
for _, l in ipairs(out) do print(l) end
