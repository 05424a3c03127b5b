-- Chunk names and function shapes: "=name with spaces\n", "@file:with:colons",
-- "=" names over 60 bytes sharing a prefix (short_src cuts them), a long
-- "@" name, an empty name, string chunks starting with a newline or with
-- quotes and brackets, loadstring of string.dump'ed functions (one with
-- upvalues, re-run and re-dumped), functions on one line, a 6000-byte line,
-- setfenv on functions and threads, getfenv(0), 60 upvalues, varargs.
local function run(src, name, ...)
  local f, err = loadstring(src, name)
  if not f then print("load error", err) return end
  return f(...)
end
print(run("local function inner(x) return x * 2 end return inner(21)", "=name with spaces\n"))
print(run("local function inner(x) return x + 2 end return inner(1)", "@file:with:colons.lua"))
local long1 = "=" .. string.rep("abcdefghij", 7) .. "-first"
local long2 = "=" .. string.rep("abcdefghij", 7) .. "-second"
print(run("local function g() return 'one' end return g()", long1))
print(run("local function g() return 'two' end return g()", long2))
print(run("return (function() return 'at@' end)()", "@" .. string.rep("dir/", 40) .. "deep.lua"))
print(run("local function e() return 'empty' end return e()", ""))
print(run("\nlocal function nl() return 'newline first' end return nl()"))
print(run("local s = \"q\" local function qb() return '[q]' .. s end return qb()"))
print(run("return select('#', ...)", "=varargs", 1, nil, 3, nil))
-- same chunk name and text loaded twice: one function
for i = 1, 2 do print(run("local function twice(n) return n + 1 end return twice(" .. i .. ")", "=twice")) end
-- string.dump round trips
local function withup()
  local k = 10
  return function(x) k = k + x return k end
end
local adder = withup()
local dumped = string.dump(adder)
local copy = loadstring(dumped)
print(pcall(copy, 1))          -- upvalue is nil in the copy: an error
local function pure(a, b) local function sq(v) return v * v end return sq(a) + sq(b) end
local pure2 = loadstring(string.dump(pure))
print(pure(3, 4), pure2(3, 4))
local pure3 = loadstring(string.dump(pure2), "=ignored name")
print(pure3(1, 2))
-- functions on one line, called under one name and under others
local a, b = function(x) return x + 1 end, function(x) return x - 1 end
local c = function(x) return a(x) * b(x) end local d = function() return c(5) end
print(a(1), b(1), c(2), d())
-- a very long line
local parts = {}
for i = 1, 190 do parts[i] = "v" .. i .. "=" .. string.rep("1", 20) end
local longsrc = "local " .. table.concat(parts, ";local ") .. "; local function lng() return v1 + v190 end return lng()"
print(#longsrc > 3000, run(longsrc, "=longline"))
-- setfenv on functions and threads, getfenv(0)
local env = setmetatable({ tag = "env" }, { __index = _G })
local function uses() return tag end
setfenv(uses, env)
print(uses(), getfenv(uses) == env, getfenv(0) == _G)
local co = coroutine.create(function()
  local function look() return tag end
  return look(), getfenv(0) == _G
end)
debug.setfenv(co, env)
print(coroutine.resume(co))
local co2 = coroutine.create(function()
  setfenv(0, setmetatable({ tag = "thread" }, { __index = _G }))
  local f = loadstring("return tag")
  coroutine.yield(f())
  local g = loadstring("local function inner() return tag end return inner()")
  return g()
end)
print(coroutine.resume(co2)); print(coroutine.resume(co2))
-- 60 upvalues (the 5.1 maximum) (a function made by loadstring)
local decl, uses250 = {}, {}
for i = 1, 60 do decl[i] = "local u" .. i .. " = " .. i; uses250[i] = "u" .. i end
local src = table.concat(decl, "\n") .. "\nlocal function big() return " .. table.concat(uses250, "+") .. " end\nreturn big()"
print(run(src, "@upvalues60.lua"))
-- varargs through several levels, with nils and a tail call
local function va(...) return select("#", ...), ... end
local function vb(...) return va(nil, ...) end
local function vc(...) local n = select("#", ...) return vb(n, ...) end
print(vc(nil, nil))
print(vc())
