-- More real library code (Debian's lua-penlight): XML parsing and
-- querying, delimited data with queries compiled by loadstring, sip
-- patterns, placeholder expressions built from metamethods (pl.func),
-- string I/O, lapp argument parsing whose errors are caught, and a Set
-- and MultiMap with operator metamethods.
local xml = require "pl.xml"
local data = require "pl.data"
local sip = require "pl.sip"
local func = require "pl.func"
local stringio = require "pl.stringio"
local lapp = require "pl.lapp"
local Set = require "pl.Set"
local MultiMap = require "pl.MultiMap"
local pretty = require "pl.pretty"

local doc = xml.parse([[<root><item id="1">one</item><item id="2">two</item><x a="b"/></root>]],
                      false, true)
print(doc.tag, #doc, doc:child_with_name("x").attr.a)
for item in doc:childtags() do io.write(item.tag, "=", item:get_text(), " ") end
print()
print(xml.tostring(doc))

local f = stringio.open("name,age,score\nann,31,7.5\nbob,25,9\ncid,40,6\n")
local d = data.read(f, {csv = true})
print(#d, d.fieldnames[1], d.fieldnames[3])
local q = d:select("name,score where age > 28")
for name, score in q do io.write(name, ":", score, " ") end
print()

local m = sip.compile("$v=$d")
local res = {}
print(m("x=42", res), res[1], res[2])
print(sip.match("$i $w", "12 apples", res), res[1], res[2])

local _1, _2 = func._1, func._2
local add = func.I(_1 + _2 * 2)
print(add(3, 4), func.instantiate(_1 .. "!")("hi"))
local compose = func.compose(function(x) return x + 1 end, function(x) return x * 3 end)
print(compose(5), func.bind1(math.max, 10)(3))

local out = stringio.create()
out:write("a", 1, "\n")
out:writef("%s-%d\n", "b", 2)
print((out:value():gsub("\n", "|")))

lapp.show_usage_error = "throw"
local ok, err = pcall(lapp, [[
  -n,--count (number) how many
  <file> (string)
]], {"-n", "notanumber", "x"})
print("lapp", ok, err ~= nil)
local args = lapp([[
  -v,--verbose
  -n,--count (default 3)
  <file> (string)
]], {"-v", "in.txt"})
print(args.verbose, args.count, args.file)

local s1, s2 = Set{1, 2, 3}, Set{2, 3, 4}
print(Set.len(s1 + s2), Set.len(s1 * s2), Set.len(s1 - s2), s1 == Set{3, 2, 1})
local mm = MultiMap()
mm:set("k", 1); mm:set("k", 2); mm:set("j", 3)
print(pretty.write(mm.k or mm:get("k"), ""), #mm:get("j"))
