-- Real library code (Debian's lua-messagepack): lua-MessagePack packs and
-- unpacks in pure Lua through two dispatch tables, `packers` (indexed by
-- type name, an __index metamethod raising "unimplemented") and
-- `unpackers` (indexed by the first byte, an __index metamethod that makes
-- a new closure for every fixint, fixmap, fixarray and fixstr byte it
-- meets). Round trips of nested data (maps with string keys only, so pairs
-- order is fixed; arrays, floats, negative and 64-bit integers, long
-- strings); the set_array, set_string, set_number and set_integer options
-- swapping packers at run time; a class packed as an ext type by a
-- replaced `table` packer and rebuilt by a replaced m.build_ext; the
-- streaming unpacker fed by a coroutine.wrap generator (called inside the
-- library's pcall around its cursor's underflow), and by a string;
-- truncated input, extra bytes, an unimplemented byte, unpackable types and
-- bad options, all caught by pcall.
local mp = require "MessagePack"

local function hex(s)
  return (s:gsub(".", function(c) return string.format("%02x", c:byte()) end))
end

-- print a decoded value: map keys sorted, so the text does not depend on
-- the order pairs gives
local function show(v)
  local t = type(v)
  if t == "string" then return string.format("%q", v) end
  if t ~= "table" then return tostring(v) end
  local mt = getmetatable(v)
  if mt and mt.__tostring then return tostring(v) end
  local keys, n = {}, #v
  for k in pairs(v) do
    if not (type(k) == "number" and k >= 1 and k <= n and k % 1 == 0) then
      keys[#keys + 1] = k
    end
  end
  table.sort(keys, function(a, b)
    if type(a) ~= type(b) then return type(a) < type(b) end
    return a < b
  end)
  local parts = {}
  for i = 1, n do parts[#parts + 1] = show(v[i]) end
  for _, k in ipairs(keys) do parts[#parts + 1] = tostring(k) .. "=" .. show(v[k]) end
  return "{" .. table.concat(parts, ",") .. "}"
end

local function roundtrip(label, v)
  local packed = mp.pack(v)
  local back = mp.unpack(packed)
  print(label, #packed, show(back))
  return packed
end

-- scalars at the format boundaries
print("small", hex(mp.pack(0)), hex(mp.pack(127)), hex(mp.pack(128)), hex(mp.pack(-32)),
  hex(mp.pack(-33)), hex(mp.pack(65536)), hex(mp.pack(2^40)), hex(mp.pack(-2^35)))
print("floats", hex(mp.pack(0.5)), hex(mp.pack(-1.25e10)), show(mp.unpack(mp.pack(1 / 3))))
print("misc", hex(mp.pack(true)), hex(mp.pack(false)), hex(mp.pack(nil)),
  hex(mp.pack("")), hex(mp.pack("abc")))

-- nested data
roundtrip("record", {
  name = "widget", id = 4711, price = 19.99, tags = {"a", "bb", "ccc"},
  dims = {w = 10, h = -20, d = 0.25}, active = true,
  history = {{at = 1, v = "x"}, {at = 2, v = "y"}, {at = 3, v = string.rep("z", 40)}},
})
local big = {}
for i = 1, 300 do big[i] = i * i - 150 end
roundtrip("array300", {#big, big[1], big[300]})
local packed = mp.pack(big)
local back = mp.unpack(packed)
local same = #back == #big
for i = 1, #big do same = same and back[i] == big[i] end
print("array300", #packed, same)
local wide = {}
for i = 1, 20 do wide["k" .. i] = i % 3 == 0 and {i} or i end
print("map20", #mp.pack(wide), show(mp.unpack(mp.pack(wide))))
print("long string", #mp.pack(string.rep("ab", 200)), #mp.unpack(mp.pack(string.rep("ab", 40000))))

-- options swap the packers
mp.set_array("with_hole")
print("with_hole", hex(mp.pack({1, nil, 3})))
mp.set_array("always_as_map")
print("always_as_map", hex(mp.pack({7, 8})))
mp.set_array("without_hole")
print("without_hole", hex(mp.pack({1, nil, 3})))
mp.set_string("binary")
print("binary", hex(mp.pack("hi")))
mp.set_string("string")
print("string", hex(mp.pack("hi")), hex(mp.pack(string.rep("x", 40)):sub(1, 6)))
mp.set_string("string_compat")
mp.set_number("float")
print("float", hex(mp.pack(0.1)), show(mp.unpack(mp.pack(0.5))))
mp.set_number("double")
mp.set_integer("signed")
print("signed", hex(mp.pack(200)), hex(mp.pack(-200)))
mp.set_integer("unsigned")

-- a class as an ext type: the `table` packer replaced, build_ext replaced
local Point = {}
Point.__index = Point
Point.__tostring = function(p) return "Point(" .. p.x .. "," .. p.y .. ")" end
local function new_point(x, y) return setmetatable({x = x, y = y}, Point) end
local plain_table = mp.packers["table"]
mp.packers["table"] = function(buffer, t)
  if getmetatable(t) == Point then
    mp.packers["ext"](buffer, 7, mp.pack({t.x, t.y}))
  else
    plain_table(buffer, t)
  end
end
local plain_ext = mp.build_ext
mp.build_ext = function(tag, data)
  if tag == 7 then
    local xy = mp.unpack(data)
    return new_point(xy[1], xy[2])
  end
  return plain_ext(tag, data)
end
roundtrip("points", {new_point(1, 2), {inner = new_point(-3, 4.5)}, "after"})
print("fixext", show(mp.unpack(string.char(0xd4, 9, 0x41))))

-- the streaming unpacker: values in a row, read from a string and from a
-- generator yielding chunks of 3 bytes
local stream = mp.pack("first") .. mp.pack({1, 2, 3}) .. mp.pack({k = "v"}) ..
  mp.pack(new_point(5, 6)) .. mp.pack(-1)
for pos, v in mp.unpacker(stream) do print("at", pos, show(v)) end
local chunks = 0
local source = coroutine.wrap(function()
  for i = 1, #stream, 3 do
    chunks = chunks + 1
    coroutine.yield(stream:sub(i, i + 2))
  end
end)
for ok, v in mp.unpacker(source) do print("chunked", ok, show(v)) end
print("chunks", chunks)

-- errors
local function try(label, f, ...)
  local ok, e = pcall(f, ...)
  print(label, ok, (tostring(e):gsub("^.-MessagePack%.lua:%d+: ", "")))
end
try("truncated", mp.unpack, mp.pack({1, 2, 3}):sub(1, 3))
try("extra", mp.unpack, mp.pack(1) .. mp.pack(2))
try("c1", mp.unpack, string.char(0xc1))
try("function", mp.pack, {f = print})
try("nested function", mp.pack, {1, {2, {3, print}}})
try("not a string", mp.unpack, 42)
try("bad option", mp.set_array, "sparse")
try("bad number", mp.set_number, "decimal")
try("bad unpacker", mp.unpacker, true)
try("ext error", mp.unpack, string.char(0xd4, 7, 0xc1))
local failing = coroutine.wrap(function()
  coroutine.yield(stream:sub(1, 4))
  error("source broke")
end)
try("broken source", function()
  local out = {}
  for _, v in mp.unpacker(failing) do out[#out + 1] = show(v) end
  return table.concat(out, " ")
end)
