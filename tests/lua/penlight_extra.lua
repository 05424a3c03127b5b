-- Real library code (Debian's lua-penlight), the modules penlight_mix and
-- penlight_more leave out: List (map, filter, reduce, slices, partition,
-- a failing pop), Set algebra, OrderedMap with a Lua sort comparator,
-- MultiMap, Map, permute's coroutine iterator, operator, types, url,
-- luabalanced, config over stringio, pretty.write and pretty.load (not
-- pretty.read: it runs debug.sethook, which the reference cannot share),
-- stringx, templates (loops, a failing callback inside its xpcall, syntax
-- errors, compiled templates), seq, memoize, string lambdas, Date.
local List = require "pl.List"
local Map = require "pl.Map"
local Set = require "pl.Set"
local OrderedMap = require "pl.OrderedMap"
local MultiMap = require "pl.MultiMap"
local permute = require "pl.permute"
local operator = require "pl.operator"
local types = require "pl.types"
local url = require "pl.url"
local lb = require "pl.luabalanced"
local config = require "pl.config"
local stringio = require "pl.stringio"
local pretty = require "pl.pretty"
local stringx = require "pl.stringx"
local template = require "pl.template"
local tablex = require "pl.tablex"
local utils = require "pl.utils"
local seq = require "pl.seq"
local Date = require "pl.Date"

local l = List{5, 3, 8, 1, 9, 2}
l:sort()
print(l, l:map(function(x) return x * x end), l:filter(function(x) return x % 2 == 1 end))
print(l:reduce(operator.add), l:slice(2, 4), l:reverse(), l:index(8), l:contains(7))
print(List.range(1, 10, 3), List{1, 2} .. List{3}, l:partition(function(x) return x > 4 and "big" or "small" end).big)
print(pcall(function() return List{1, 2}:pop(5) end))
local s1, s2 = Set{"a", "b", "c"}, Set{"b", "c", "d"}
print(#Set.values(s1 + s2), Set.len(s1 * s2), Set.isempty(s1 - s1), s1 == Set{"c", "b", "a"})
local om = OrderedMap()
om:set("z", 1); om:set("a", 2); om:set("m", 3)
om:sort(function(a, b) return a > b end)
for k, v in om:iter() do io.write(k, "=", v, " ") end print()
print(om)
local mm = MultiMap()
mm:set("k", 1); mm:set("k", 2); mm:set("j", 3)
print(#mm.k, mm.j[1])
local m = Map{one = 1}
m:set("two", 2)
print(m:get("two"), tablex.size(m))
local n = 0
for p in permute.iter({1, 2, 3, 4}) do n = n + 1 end
print("perms", n, #permute.table({1, 2, 3}))
print(types.is_callable(print), types.is_integer(3), types.is_empty({}), types.to_bool("yes"))
print(url.quote("a b&c=d/é"), url.unquote("a%20b%26c"))
print(lb.match_bracketed("(a(b)c) rest", 1))
print(lb.match_string([["a\"b" tail]], 1))
local el, ep = lb.match_explist("a, f(b, c), {d} x", 1); print(#el, ep)
local cfg = config.read(stringio.open("# comment\nname = joe\nsize = 10\nlist = 1,2,3\n[sec]\nx=1\n"), {list_delim = ","})
print(cfg.name, cfg.size, cfg.list and #cfg.list, cfg.sec and cfg.sec.x)
print(type(config.read(stringio.open("= bad"), {})))
print(pretty.write({1, "two", {x = 3}, sub = {"a"}}, ""))
print(pretty.load("x = 1; y = {2}", nil, false).y[1])
print(stringx.split("a,b,,c", ","), stringx.strip("  hi  "), stringx.join(":", {"a", "b"}))
print(stringx.replace("aaa", "a", "bb", 2), stringx.count("banana", "an"), stringx.center("x", 5, "*"))
print(stringx.shorten("abcdefghij", 6), stringx.title("hello world"), stringx.lines("a\nb\nc")())
print(stringx.expandtabs("a\tb", 4), stringx.splitv("x y z"))
local t = template.substitute([[
# for i, v in ipairs(items) do
$(i): $(v:upper())
# end
total $(#items)]], {items = {"a", "b"}, ipairs = ipairs, _parent = _G})
print(t)
print(template.substitute("$(boom())", {boom = function() error("tmpl boom") end}))
print(template.substitute("# if x then\n$(y)\n", {x = true, y = 1}))
print(pcall(template.substitute, "$(1 +)", {}))
local ct = template.compile("<$(name)>", {chunk_name = "tmpl"})
print(ct:render({name = "n1"}), ct:render({name = "n2"}))
print(seq.sum(seq.map(function(x) return x * 2 end, seq.list{1, 2, 3})))
print(seq.copy(seq.filter(seq.list{1, 2, 3, 4}, function(x) return x > 2 end)))
local memo = utils.memoize(function(x) return x * 10 end)
print(memo(2), memo(2))
print(utils.bind1(operator.add, 5)(6), utils.string_lambda("|x| x + 1")(2))
print(pcall(utils.string_lambda, "|x| x +"))
local d = Date{year = 2020, month = 2, day = 28, hour = 12}
d:add{day = 2}
print(d:year(), d:month(), d:day())
local df = Date.Format("yyyy-mm-dd")
print(df:tostring(d), df:parse("2021-03-04"):month())
print(pcall(function() return df:parse("garbage") end))
