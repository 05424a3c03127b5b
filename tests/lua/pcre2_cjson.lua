-- Real library code (Debian's lua-rex-pcre2 and lua-cjson): two C
-- libraries between our Lua functions. lrexlib's gsub calling Lua
-- replacement functions (keeping a match by returning false, nested gsub
-- inside a replacement, a replacement table, a replacement running
-- cjson.decode), compiled patterns and their methods (exec, tfind, find,
-- match, dfa_exec); errors raised in replacement functions (strings,
-- tables, runtime errors, cjson's own errors) crossing the C matcher and
-- caught by pcall; a replacement that yields (fails at the C boundary,
-- ending its coroutine); bad patterns. cjson encodes and decodes inside
-- table.sort comparators, with per-instance options (cjson.new: sparse
-- arrays, depth limits, number precision, invalid numbers), errors caught
-- by pcall, and cjson.util's test harness (run_test: pcall, compare_values
-- recursion, serialise_value) and run_script (a setfenv environment).
local rex = require "rex_pcre2"
local cjson = require "cjson"
local util = require "cjson.util"

local first_line = require("corpus_util").first_line

-- gsub with Lua replacement functions
local text = "width=640 height=480 depth=24 name=screen ratio=1.5"
print(rex.gsub(text, [[(\w+)=(\d+(?:\.\d+)?)]], function(k, v)
  if k == "depth" then return false end -- keep the match
  return k:upper() .. ":" .. tonumber(v) * 2
end))
print(rex.gsub(text, [[(\w+)=]], {width = "w=", height = "h="}))
print(rex.gsub("aXbXc", "X", "<%0>", 1))

-- nested: each word's letters rewritten by an inner gsub
local function shout(w)
  return (rex.gsub(w, "[aeiou]", function(c) return c:upper() end))
end
print(rex.gsub("the quick brown fox jumps over the lazy dog", [[\b\w{4,}\b]], shout))

-- a replacement decoding JSON fragments
local cfg = 'a={"x":1,"y":[1,2,3]}; b={"x":2,"y":[]}; c=[true,null,"s"]'
local seen = {}
print(rex.gsub(cfg, [[(\w)=(\S+?)(?=;|$)]], function(name, js)
  local v = cjson.decode(js)
  seen[#seen + 1] = name
  if v.x then return name .. "#" .. v.x .. "/" .. #v.y end
  return name .. "=" .. tostring(v[2] == cjson.null) .. v[3]
end), table.concat(seen))

-- compiled patterns and their methods
local kv = rex.new([[(?<key>[a-z]+)\s*:\s*(?<val>\d+)]])
local es, ee, offs = kv:exec("  speed : 42 ;")
print(es, ee, table.concat(offs, ","))
local s, e, t = kv:tfind("size:7")
print(s, e, t[1], t[2], t.key, t.val)
print(kv:find("none here"), kv:match("depth: 9"))
local ds, ends, n = rex.new("ab|abc"):dfa_exec("xxabcx")
print(ds, table.concat(ends, ","), n)
print("count", rex.count("banana", "an"), rex.count("banana", "a(?=n)"))
print(rex.find("Hello World", "world", 1, "i"))

-- errors from replacement functions cross the C matcher
local function try_replace(how)
  return pcall(rex.gsub, "p=1 q=2 r=3", [[(\w)=(\d)]], function(k, v)
    if k ~= "q" then return k .. v end
    if how == "string" then error("cannot replace " .. k)
    elseif how == "table" then error({key = k})
    elseif how == "runtime" then local n; return n .. v
    elseif how == "cjson" then return cjson.decode("{bad json")
    end
  end)
end
for _, how in ipairs({"string", "table", "runtime", "cjson"}) do
  local ok, err = try_replace(how)
  print("replace error", how, ok, type(err) == "table" and err.key or first_line(err))
end
print("bad pattern", pcall(rex.new, "(unclosed"))
print("bad gsub", pcall(rex.gsub, "x", "[", ""))

-- a replacement function that yields: not across the C boundary
local co = coroutine.create(function()
  local r = rex.gsub("a b", [[\w]], function(c) return coroutine.yield(c) end)
  return "unreachable " .. r
end)
local ok, err = coroutine.resume(co)
print("yield in gsub", ok, first_line(err), coroutine.status(co))

-- cjson: round trips, options, errors
local rec = {name = "probe", tags = {"a", "b"}, pos = {x = 1.5, y = -2}, on = true}
local enc = cjson.encode(rec)
local back = cjson.decode(enc)
print("round trip", back.name, back.tags[2], back.pos.x, back.on, #enc)
print(cjson.encode({1, 2, 3, {4, {5}}}), cjson.encode(cjson.decode('"\\u00e9\\n"')))
print("function", pcall(cjson.encode, {f = print}))
print("sparse", pcall(cjson.encode, {[1] = 1, [20] = 2}))
local nested = {}
local cur = nested
for i = 1, 1100 do cur[1] = {}; cur = cur[1] end
print("deep", pcall(cjson.encode, nested))
print("decode errors", pcall(cjson.decode, "[1,2"), pcall(cjson.decode, "nan"))

local loose = cjson.new()
loose.encode_sparse_array(true)
loose.encode_max_depth(3)
loose.encode_number_precision(4)
loose.decode_invalid_numbers(true)
print("loose", loose.encode({[1] = "a", [4] = "d"}), loose.encode({math.pi, 1 / 3}))
print("loose depth", pcall(loose.encode, {{{{1}}}}))
print("loose decode", loose.decode("[NaN, 0x10]")[2])

-- cjson inside a sort comparator: records ordered by their encoded form
local recs = {}
for i = 1, 12 do recs[i] = {id = (i * 7) % 12, w = {i % 3}} end
table.sort(recs, function(a, b) return cjson.encode(a.w) .. a.id < cjson.encode(b.w) .. b.id end)
local ids = {}
for i, r in ipairs(recs) do ids[i] = r.id end
print("sorted", table.concat(ids, " "))
print("comparator error", pcall(table.sort, {{f = 1}, {f = print}, {f = 2}}, function(a, b)
  return cjson.encode(a) < cjson.encode(b)
end))

-- cjson.util's harness
local tests = {
  {"decode object", cjson.decode, {'{"k":[1,2]}'}, true, {{k = {1, 2}}}},
  {"decode error", cjson.decode, {"[1,"}, false,
    {"Expected value but found T_END at character 4"}},
  {"encode array", cjson.encode, {{1, "two", false}}, true, {'[1,"two",false]'}},
  {"a wrong expectation", cjson.encode, {{1}}, true, {"[2]"}},
  {"", function(a, b) print("helper", a + b) end, {2, 3}},
}
util.run_test_group(tests)
print("summary", util.run_test_summary())
print(util.serialise_value({1, {2, "x"}, cjson.null}, "  "))
local env = util.run_script("answer = json.encode({n = n * 2}); half = n / 2",
  {json = cjson, n = 21})
print("script", env.answer, env.half)
print("script error", pcall(util.run_script, "this is not lua"))
