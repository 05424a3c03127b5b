-- needs: compat53 (lua-compat53), lemock (lua-lemock)
-- Real library code that replaces the standard library (Debian's
-- lua-compat53) and a mock library of metatables (lua-lemock). compat53
-- puts Lua functions in place of the C ones (coroutine.resume, status,
-- running, yield, xpcall with arguments, string.find/gsub/match/rep/
-- format, table.move and utf8 from its C modules, load with a mode and an
-- environment): our coroutines are then resumed through its Lua wrappers,
-- which call the C functions they saved, and the C functions lose the
-- global names they had. LeMock records expected calls on mock objects
-- (every access an __index, every call a __call of its own objects), then
-- replays them, failing on unexpected calls, wrong arguments and missing
-- calls (errors caught by pcall), return values, :anytimes and :times
-- counts, :label and :depend ordering, an :error raised at replay.

require "compat53"
local lemock = require "lemock"

local function first_line(s)
  if type(s) ~= "string" then return type(s) end
  return (s:match("^[^\n]*"))
end

-- coroutines through compat53's wrappers
local function producer(n)
  return coroutine.create(function(step)
    for i = 1, n do step = coroutine.yield(i * step) or step end
    return "end"
  end)
end
local co = producer(4)
local got = {}
local ok, v = coroutine.resume(co, 2)
while ok and coroutine.status(co) ~= "dead" do
  got[#got + 1] = v
  ok, v = coroutine.resume(co, #got % 2 + 1)
end
print("producer", table.concat(got, " "), v)
local main, ismain = coroutine.running()
print("running in main", type(main), ismain, coroutine.status(main))
print("resume main", coroutine.resume(main))
print("yield outside", pcall(coroutine.yield, 1))
local wrapped = coroutine.wrap(function(a)
  local b = coroutine.yield(a + 1)
  return b * 2
end)
print("wrap", wrapped(1), wrapped(10))

-- xpcall with arguments, string and table functions of compat53
print("xpcall args", xpcall(function(a, b) return a + b end, debug.traceback, 3, 4))
print("xpcall fails", xpcall(function(a) error("no " .. a, 0) end, function(e) return "handled " .. e end, "way"))
print("find", string.find("a\0b", "\0", 1, true), ("x%zy"):rep(2, "|"))
print("gsub", ("hello world"):gsub("o", { o = "0" }), ("abc"):gsub("%w", function(c) return c:upper() end))
print("format", string.format("%q|%5.1f|%s", "a\nb", 3.14159, nil))
print("move", table.concat(table.move({ 1, 2, 3, 4, 5 }, 2, 4, 1), ","),
      table.concat(table.move({ 1, 2, 3 }, 1, 3, 3, { 9, 9 }), ","))
print("pack/unpack", table.pack(1, nil, 3).n, select("#", table.unpack({ 1, 2, 3 }, 2, 3)))
print("utf8", utf8.char(72, 228, 8364, 128512), utf8.len("häll€"), utf8.codepoint("€", 1, -1))
local utf = {}
for p, c in utf8.codes("aé€") do utf[#utf + 1] = p .. ":" .. c end
print("utf8.codes", table.concat(utf, " "))
local env = { x = 5 }
local chunk = load("y = x * 2 return y", "=chunk", "t", env)
print("load env", chunk(), env.y, load("return 1", "=b", "b"))
print("math", math.tointeger(3.0), math.type(1), math.type(1.5), math.ult(1, -1))

-- LeMock: record, replay, verify
local mc = lemock.controller()
local db = mc:mock()
local log = mc:mock()
db:connect("host", 5432) ; mc:returns(true)
db:query("select 1") ; mc:returns({ 1 }) ; mc:times(2)
log:write(mc.ANYARG) ; mc:anytimes()
db:close() ; mc:returns(nil) ; mc:depend(nil)
mc:replay()
local function use(d, l)
  assert(d:connect("host", 5432))
  for i = 1, 2 do
    local rows = d:query("select 1")
    l:write("rows " .. #rows)
  end
  d:close()
  return "used"
end
print("lemock replay", use(db, log))
print("lemock verify", pcall(mc.verify, mc))

-- an unexpected call, a wrong argument, a missing call
local mc2 = lemock.controller()
local svc = mc2:mock()
svc.lookup("a") ; mc2:returns(1)
svc.store("a", 1) ; mc2:returns(true)
mc2:replay()
print("lemock wrong arg", (function() local ok, e = pcall(svc.lookup, "b") return ok, first_line(e) end)())
print("lemock right", svc.lookup("a"))
print("lemock missing", (function() local ok, e = pcall(mc2.verify, mc2) return ok, first_line(e) end)())

-- ordering by a label and depend, an error raised at replay
local mc3 = lemock.controller()
local clock = mc3:mock()
clock:start() ; mc3:label("started")
clock:now() ; mc3:returns(10) ; mc3:depend("started") ; mc3:atleastonce()
clock:fail() ; mc3:error("clock broke")
mc3:replay()
print("lemock blocked", (function() local ok, e = pcall(clock.now, clock) return ok, e:match("^[^(]*") end)())
clock:start()
print("lemock now", clock:now(), clock:now())
print("lemock error", pcall(clock.fail, clock))
print("lemock verify 3", pcall(mc3.verify, mc3))
