-- (Lua 5.4: tests/lua/tail_err_early.lua) Tail calls whose callee raises before it calls anything: under lines by
-- sample (run's default) the callee has no record of its own, so only the
-- collector can say it took its caller's place; the error unwinds it from
-- there, never from under its caller.

local function bad(t) return t.x.y end
local function caller(t) return bad(t) end
print("tail", pcall(caller, {}) == false)
-- two tail calls in a row, the last one raising
local function first(t) return caller(t) end
print("chain", pcall(first, {}) == false)
-- a tail call that raises after calling (its call settles it) beside one
-- that does not raise at all
local function ok(t) return #tostring(t) > 0 end
local function calls_ok(t) return ok(t) end
print("ok", calls_ok({}))
local function late(t) local _ = tostring(t) return t.x.y end
local function to_late(t) return late(t) end
print("late", pcall(to_late, {}) == false)
-- in a coroutine
local co = coroutine.create(function(t) return caller(t) end)
print("coroutine", coroutine.resume(co, {}) == false)
