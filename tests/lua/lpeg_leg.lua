-- Real library code (Debian's lua-lpeg and lua-leg): LPeg's matcher is C
-- that calls back into Lua. leg's Lua 5.1 grammar (leg.parser) checks
-- chunks, its match-time functions (setPrefix/matchPrefix, CHECK) run at
-- every prefix expression, and a syntax error is raised by CHECK's function
-- from inside lpeg.match and caught by pcall; the grammar with captures
-- (leg.parser.apply, grammar.pipe composing capture functions) builds an
-- outline of a chunk; leg.scanner tokenizes with comment2text and
-- string2text as captures and raises a lexical error; re.lua compiles
-- patterns (its own grammar runs Lua captures) with Lua functions as
-- definitions and replaces with re.gsub. Plain LPeg: lpeg.Cmt accepting,
-- rejecting and moving the position, `/ function` and Cf folds, an error in
-- a capture function caught by pcall, lpeg.match called again inside a
-- capture function (C -> Lua -> C -> Lua) and a pcall in one catching a
-- nested match's error, a recursive grammar whose captures evaluate
-- arithmetic, and a capture function that yields (an error at the C
-- boundary that ends its coroutine).
local lpeg = require "lpeg"
local re = require "re"
local parser = require "leg.parser"
local scanner = require "leg.scanner"
local grammar = require "leg.grammar"

local P, R, S, V, C, Ct, Cc, Cf, Cmt =
  lpeg.P, lpeg.R, lpeg.S, lpeg.V, lpeg.C, lpeg.Ct, lpeg.Cc, lpeg.Cf, lpeg.Cmt

local source = [=[
-- a small module
local M = {}

--[==[ Adds two numbers. ]==]
function M.add(a, b)
  return a + b
end

function M:scale(t, ...)
  local out = {}
  for i, v in ipairs(t) do out[i] = v * self.k end
  while #out > 3 do table.remove(out) end
  return out, select("#", ...)
end

local function helper(x)
  if x > 1 then return helper(x - 1) elseif x == 1 then return "one" else return nil end
end

repeat local y = helper(3) until y
M.name = "mod" .. [[long string]] .. 'q\'s'
return M
]=]

-- leg.parser.check: valid chunks, and errors raised inside the match by
-- CHECK's match-time function (pcall: check does not catch them)
local chunks = {
  source,
  "x = 1",
  "local t = {1, 2; x = 3, [4] = 5}",
  "f(a)(b):c 'd' {e}",
  "if a then b() end end",        -- garbage after the chunk: no error, false
  "while true do x = 1",          -- CHECK: missing 'end'
  "function f(a, b x end",        -- CHECK: missing ')'
  "t = {1, 2",                    -- CHECK: missing '}'
}
for i, src in ipairs(chunks) do
  print("check", i, pcall(parser.check, src))
end
-- and this file itself (the program runs in its own directory)
local f = assert(io.open("lpeg_leg.lua"))
local self_source = f:read("*a")
f:close()
print("check self", parser.check(self_source))

-- the grammar with captures: an outline of functions and returns. pipe
-- composes GlobalFunction's capture (name and parameters to text) with a
-- recorder; an extra rule redefines LocalFunction to capture its name
local outline = {}
local function record(line) outline[#outline + 1] = line end
local captures = grammar.pipe({
  GlobalFunction = record,
  LocalFunction = record,
}, {
  GlobalFunction = function(name, params)
    return "function " .. name .. "(" .. (params or "") .. ")"
  end,
  LocalFunction = function(name, params)
    return "local function " .. name .. "(" .. (params or "") .. ")"
  end,
  FuncName = grammar.C,
  ParList = grammar.C,
  LastStat = function(text) record((text:gsub("%s+", " "))) end,
})
local Sp = V"IGNORED"
local outliner = P(parser.apply({
  LocalFunction = V"LOCAL" * Sp * V"FUNCTION" * Sp * C(V"Name") * Sp * V"FuncBody",
}, captures))
print("outline match", outliner:match(source) == #source + 1)
print(table.concat(outline, "\n"))

-- grammar.apply with a new initial rule: count each kind of statement
local counts, kinds = {}, {}
local function counter(kind)
  return function(...)
    if not counts[kind] then counts[kind] = 0; kinds[#kinds + 1] = kind end
    counts[kind] = counts[kind] + 1
    return ...
  end
end
local stat_caps = {}
for _, k in ipairs({"Assign", "FunctionCall", "If", "While", "Repeat",
                    "NumericFor", "GenericFor", "LocalAssign"}) do
  stat_caps[k] = counter(k)
end
local stats = P(parser.apply(nil, stat_caps))
stats:match(source)
stats:match(self_source)
table.sort(kinds)
for _, k in ipairs(kinds) do io.write(k, "=", counts[k], " ") end
print()

-- leg.scanner: one token at a time (its TOKEN holds match-time functions,
-- so LPeg 1.0 refuses it inside a loop), comments and strings turned into
-- text by captures
local Cp = lpeg.Cp
local gap = (scanner.SPACE + scanner.COMMENT / scanner.comment2text)^0
local one = Ct(gap) * Cp() * (scanner.STRING / scanner.string2text
  + C(scanner.TOKEN)) * Cp()
local pos, ntok, comments, texts = 1, 0, {}, {}
while true do
  local skipped, b, tok, e = one:match(source, pos)
  if not skipped then break end
  ntok = ntok + 1
  for _, c in ipairs(skipped) do comments[#comments + 1] = c end
  if tok ~= source:sub(b, e - 1) then texts[#texts + 1] = tok end
  pos = e
end
print("tokens", ntok, select(2, (Ct(gap) * Cp()):match(source, pos)) == #source + 1)
print("comments", table.concat(comments, "|"))
print("strings", table.concat(texts, "|"))
print("text2string", scanner.text2string("a\nb\"c"))
print("lexical", pcall(lpeg.match, scanner.STRING, 'x = 1\ny = "unfinished\n', 11))

-- re: compiled grammars, Lua functions as definitions, gsub with a function
local list = re.compile([[
  list <- {| item (',' item)* |}
  item <- %s* (num / word) %s*
  num <- {[0-9]+} -> tonum
  word <- {[a-z]+} -> up
]], {tonum = function(s) return tonumber(s) * 10 end,
     up = function(s) return s:upper() end})
local got = list:match("1, abc,22 , de,333")
print("re list", #got, table.concat(got, " "))
print("re find", re.find("the quick brown fox", "{[aeiou]+}"))
print("re gsub", re.gsub("a=1, bb=22, ccc=333", "{[a-z]+} '=' {[0-9]+}",
  function(k, v) return v .. ":" .. #k end))
print("re bad", pcall(re.compile, "a <- ("))

-- plain LPeg: Cmt accepting, rejecting and moving, folds, errors in captures
local even = Cmt(C(R"09"^1), function(s, i, d)
  if tonumber(d) % 2 == 0 then return i, "even:" .. d end
  return false
end)
local word = C(R"az"^1) / function(w) return "w:" .. w end
local skip2 = Cmt(P"@", function(s, i) return i + 2 end)
local item = even + word + skip2 + C(R"09"^1) / function(d) return "odd:" .. d end
local sp = S" \t"^0
local items = Ct((sp * item)^0)
print(table.concat(items:match("12 abc 7 @xy 40 z"), " "))

local sum = Cf(Cc(0) * (sp * C(R"09"^1))^0, function(acc, n) return acc + n end)
print("sum", sum:match("1 2 3 4 5 6 7 8 9 10"))

local strict_num = C(R"09"^1) / function(d)
  if #d > 3 then error("too long: " .. d, 0) end
  return tonumber(d)
end
local nums = Ct((sp * strict_num)^0)
print("short", #nums:match("1 22 333"))
print("long", pcall(lpeg.match, nums, "1 22 4444 5"))
local ok, e = pcall(lpeg.match, P(1) / function() error({code = 3}) end, "x")
print("table error", ok, e.code)

-- a capture function that runs another match (lpeg.match re-entered)
local inner = Ct((C(R"az") + 1)^0)
local bracketed = P"[" * C((1 - P"]")^0) / function(body)
  return table.concat(inner:match(body), "")
end * P"]"
print("nested", table.concat(Ct((bracketed + 1)^0):match("x[a1b2c] y[d-e] [f]"), "|"))

-- a recursive grammar whose captures evaluate
local function binop(a, op, b)
  if op == "+" then return a + b elseif op == "-" then return a - b
  elseif op == "*" then return a * b else return a / b end
end
local function fold(first, ...)
  local acc = first
  for i = 1, select("#", ...), 2 do
    acc = binop(acc, (select(i, ...)), (select(i + 1, ...)))
  end
  return acc
end
local calc = P{
  "Exp",
  Exp = (V"Term" * (sp * C(S"+-") * sp * V"Term")^0) / fold,
  Term = (V"Factor" * (sp * C(S"*/") * sp * V"Factor")^0) / fold,
  Factor = C(R"09"^1) / tonumber + "(" * sp * V"Exp" * sp * ")",
}
for _, e in ipairs({"1+2*3", "(1+2)*3", "2*(3+(4-1)*2)/4", "((((7))))-8"}) do
  print("calc", e, calc:match(e))
end

-- a capture function that yields: lpeg.match is a C boundary, so the
-- yield fails inside it; the error ends the coroutine
local co = coroutine.create(function(subject)
  local got = lpeg.match(Ct((C(R"az") / function(c)
    if c == "q" then coroutine.yield("never") end
    return c:upper()
  end)^0), subject)
  coroutine.yield(table.concat(got))
  return lpeg.match(C(R"az"^1) / function(w) coroutine.yield(w) end, "quit")
end)
print("co", coroutine.resume(co, "abc"))
print("co", coroutine.resume(co))
print("co", coroutine.status(co), coroutine.resume(co))
-- a pcall inside a capture function catching a nested match's error
local guarded = C(R"az"^1) / function(w)
  return select(2, pcall(lpeg.match, P(1) / function() error("inner " .. w, 0) end, w))
end
print("guarded", table.concat(Ct((guarded + 1)^0):match("ab cd"), "|"))
