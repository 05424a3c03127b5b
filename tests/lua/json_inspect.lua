-- Real library code (Debian's lua-dkjson and lua-inspect): dkjson's pure-Lua
-- encoder and scanner (no lpeg) on nested structures, round trips, key order
-- from the `keyorder` option and from a `__jsonorder` metatable field,
-- `__tojson` metamethods called from the encoder, an `exception` handler,
-- encode errors (cycles, unsupported types) and decode errors caught by
-- pcall; inspect.inspect on nested tables with metatables, `__tostring`,
-- shared subtables, depth limits and a `process` callback (its keys sorted
-- with a Lua comparator inside table.sort).
local json = require "dkjson"
local inspect = require "inspect"

local ORDER = {"id", "name", "kind", "tags", "pos", "children", "meta", "value"}

local function enc(v, extra)
  local state = {keyorder = ORDER}
  if extra then for k, x in pairs(extra) do state[k] = x end end
  return json.encode(v, state)
end

-- nested structures, encoded, decoded and encoded again
local function tree(depth, id)
  local node = {id = id, name = "node" .. id, kind = depth % 2 == 0 and "even" or "odd",
                tags = {"t" .. depth, "u" .. id}, pos = {x = depth * 1.5, y = -id}}
  if depth > 0 then
    node.children = {}
    for i = 1, 3 do node.children[i] = tree(depth - 1, id * 3 + i) end
  end
  return node
end

local t = tree(3, 1)
local s1 = enc(t)
print(#s1, s1:sub(1, 120))
local back, pos, err = json.decode(s1)
print("decoded", pos, err, back.children[2].children[3].name, back.children[3].pos.y)
local s2 = enc(back)
print("round trip equal", s1 == s2)
print(enc({1, 2.5, -3e10, true, false, json.null, "a\"b\\c\n\t\1", {}, {{}}}))
print(enc({name = "indented", tags = {"x", "y"}, meta = {value = 1}}, {indent = true}))

-- arrays with holes, `n`, and explicit object/array types
print(enc({1, nil, 3}), enc({n = 4, 1}), enc(setmetatable({}, {__jsontype = "object"})))
local holes = {}
holes[1], holes[20] = "a", "b"
local ok, e = pcall(enc, holes)
print("holes", ok, e)

-- __jsonorder and __tojson
local Point = {}
Point.__index = Point
Point.__jsonorder = {"y", "x"}
local function point(x, y) return setmetatable({x = x, y = y}, Point) end
print(json.encode({p = point(1, 2)}))
local Money = {__tojson = function(self, state)
  return json.quotestring(string.format("%d.%02d %s", self.cents / 100, self.cents % 100, self.cur))
end}
local function money(c, cur) return setmetatable({cents = c, cur = cur}, Money) end
print(enc({value = money(12345, "EUR"), children = {money(5, "USD"), money(100, "GBP")}}))
local Fail = {__tojson = function() return nil, "no way" end}
print("tojson fails", pcall(json.encode, {value = setmetatable({}, Fail)}))
-- dkjson 2.6 drops an element's error under a key order: it fails later
local okk, ek = pcall(enc, {value = setmetatable({}, Fail)})
print("tojson fails, ordered", okk, (ek:gsub("^.-:%d+: ", "")))
local Ind = {__tojson = function(self, state)
  json.addnewline(state)
  return json.quotestring("at level " .. (state.level or 0))
end}
print(enc({value = setmetatable({}, Ind)}, {indent = true}))

-- encode errors: a cycle, a function, a table key; and an exception handler
local cyc = {name = "cyc"}
cyc.children = {cyc}
print("cycle", pcall(json.encode, cyc))
print("function", pcall(json.encode, {value = print}))
print("bad key", pcall(json.encode, {[{}] = 1}))
print(enc({name = "handled", value = print, children = {cyc}},
  {exception = json.encodeexception}))
local seen = {}
print(enc({value = print, meta = coroutine.create(function() end)}, {exception = function(reason, v, state, msg)
  seen[#seen + 1] = reason .. ":" .. type(v)
  return json.quotestring(type(v))
end}))
print(table.concat(seen, " "))

-- decode errors, raised from a checked decoder and caught by pcall
local function decode_strict(str)
  local v, p, msg = json.decode(str, 1, json.null)
  if msg then error("bad json: " .. msg, 2) end
  return v, p
end
for _, bad in ipairs({'{"a": 1,', '[1, 2', '"unterminated', '{"a" 1}', '[1, @]',
                      '{"a": [1, {"b": tru}]}', '', '  // only a comment\n'}) do
  local ok2, e2 = pcall(decode_strict, bad)
  if ok2 then e2 = "lenient " .. enc(e2) end
  print("decode", ok2, (tostring(e2):gsub("^.-:%d+: ", "")))
end
local v = decode_strict('/* c */ {"a": [1, 2, {"b": null}], "c": "\\u00e9\\ud83d\\ude00", "d": 1e3}')
print(v.a[3].b == json.null, #v.c, v.d, getmetatable(v).__jsontype, getmetatable(v.a).__jsontype)
local plain = json.decode('{"k": [1, 2]}', 1, nil, nil)
print(getmetatable(plain), #plain.k)
local decoded_pos = select(2, json.decode('[1] [2]'))
print("second value", json.decode('[1] [2]', decoded_pos)[1])

-- inspect: nested tables, metatables, __tostring, shared subtables, depth
local shared = {"shared", 1}
local Vec = {__tostring = function(self) return "Vec(" .. self.x .. "," .. self.y .. ")" end}
Vec.__index = Vec
local function vec(x, y) return setmetatable({x = x, y = y}, Vec) end
local data = {
  "first", 2, true,
  name = "root", ["key with space"] = "v", [10] = "ten", [2.5] = "float",
  a = shared, b = shared,
  list = {vec(1, 2), vec(3, 4)},
  nested = {deep = {deeper = {deepest = "bottom"}}},
  ctrl = "tab\there\0nul\"q",
  f = print, g = print,
}
print(inspect(data))
print(inspect(data, {depth = 2, newline = " ", indent = ""}))
print(inspect(tree(1, 7)))
print(inspect((json.decode('{"x": [1, {"y": null}], "z": "w"}'))))
local Bad = {__tostring = function() error("tostring failed") end}
print((inspect(setmetatable({1}, Bad)):gsub("error: .-:%d+: ", "error: ")))

-- process: drop metatables, hide one key, rename strings in the path
local paths = {}
local function process(item, path)
  if path[#path] == inspect.METATABLE then return nil end
  if path[#path] == "ctrl" then return nil end
  if type(item) == "string" and #path > 0 and path[#path] ~= inspect.KEY then
    return item:upper()
  end
  if #path > 0 and path[#path] ~= inspect.KEY then
    local parts = {}
    for i = 1, #path do parts[i] = tostring(path[i]) end
    paths[#paths + 1] = table.concat(parts, ".")
  end
  return item
end
print(inspect(data, {process = process}))
table.sort(paths)
print(#paths, table.concat(paths, " "))
print(inspect({1, {2, {3, {4}}}}, {process = function(item, path)
  if type(item) == "number" then return item * 10 end
  return item
end, depth = 3}))
