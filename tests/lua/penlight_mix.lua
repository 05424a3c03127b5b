-- Real library code (Debian's lua-penlight): classes with inheritance and
-- metamethods, List and tablex over callbacks, stringx, the coroutine-based
-- lexer (coroutine.wrap), templates compiled with loadstring, pretty
-- printing, sequences, comprehensions and errors raised inside callbacks.
local pl = {
  class = require "pl.class", List = require "pl.List", tablex = require "pl.tablex",
  stringx = require "pl.stringx", lexer = require "pl.lexer", template = require "pl.template",
  pretty = require "pl.pretty", seq = require "pl.seq", utils = require "pl.utils",
  OrderedMap = require "pl.OrderedMap", func = require "pl.func", text = require "pl.text",
  comprehension = require "pl.comprehension", array2d = require "pl.array2d",
}

local Animal = pl.class()
function Animal:_init(name) self.name = name end
function Animal:speak() return self.name .. " makes " .. self:sound() end
function Animal:__tostring() return "Animal(" .. self.name .. ")" end
local Dog = pl.class(Animal)
function Dog:sound() return "woof" end
local Cat = pl.class(Animal)
function Cat:sound() return "meow" end
function Cat:speak() return self:super_speak() end
function Cat:super_speak() return Animal.speak(self) .. "!" end
for _, a in ipairs({Dog("rex"), Cat("tom"), Dog("fido")}) do
  print(a:speak(), tostring(a), a:is_a(Animal), Dog:class_of(a))
end

local ls = pl.List({5, 3, 8, 1, 9, 2})
ls:sort()
print(ls, ls:map(function(x) return x * x end), ls:filter(function(x) return x % 2 == 1 end))
print(ls:reduce(function(a, b) return a + b end), ls:slice(2, 4), ls:reverse())
print(pl.tablex.reduce("+", pl.tablex.map(function(v) return v * 2 end, {1, 2, 3})))
print(pl.tablex.deepcompare({a = {1, 2}}, {a = {1, 2}}), pl.tablex.size({x = 1, y = 2}))
local keys = pl.tablex.keys({b = 1, a = 2, c = 3})
table.sort(keys)
print(table.concat(keys, ","))

print(pl.stringx.split("a,b,,c", ","), pl.stringx.strip("  x y  "), pl.stringx.title("hello world"))
print(pl.stringx.replace("aaa", "a", "bb", 2), pl.stringx.count("banana", "an"))
print(pl.text.indent("line1\nline2\n", 2))

local src = [[
local function add(a, b) -- sum
  return a + b * 2.5
end
print(add(1, "x" .. 'y'))
]]
local counts = {}
for t, v in pl.lexer.lua(src) do counts[t] = (counts[t] or 0) + 1 end
local kinds = pl.tablex.keys(counts)
table.sort(kinds)
for _, k in ipairs(kinds) do io.write(k, "=", counts[k], " ") end
print()

local tpl = "Hello $(name)!\n# for i = 1, n do\n$(i) \n# end\n"
print(pl.template.substitute(tpl, {name = "world", n = 3, _parent = _G}))

print(pl.pretty.write({1, 2, {a = "x"}}, ""))
local ok, err = pcall(pl.pretty.read, "{1,2,")
print("pretty.read", ok == nil or ok == false, err ~= nil)

print(pl.seq.sum(pl.seq.map(function(x) return x * 3 end, pl.seq.list({1, 2, 3, 4}))))
print(pl.seq.count(pl.seq.list({1, 2, 3, 4, 5, 6}), function(x) return x > 2 end))
local C = pl.comprehension.new()
print(pl.pretty.write(C "x*x for x" {1, 2, 3}, ""))

local om = pl.OrderedMap()
om:set("z", 1); om:set("a", 2); om:set("m", 3)
for k, v in om:iter() do io.write(k, v, " ") end
print()

print(table.concat(pl.array2d.reduce_rows("+", {{1, 2}, {3, 4}}), ","))
local ok2, e2 = pcall(function()
  return pl.List({1, 2, 3}):map(function(x)
    if x == 2 then error("bad element " .. x) end
    return x
  end)
end)
print("map error", ok2, (tostring(e2):gsub("^.-:%d+: ", "")))
print(pl.utils.choose(true, "yes", "no"), select("#", pl.utils.unpack({1, 2, 3})))
local memo = pl.utils.memoize(function(n) return n * 10 end)
print(memo(4), memo(4))
