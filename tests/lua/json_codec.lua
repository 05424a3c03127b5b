-- a small JSON encoder/decoder
local json = {}
local escapes = { ['"'] = '\\"', ['\\'] = '\\\\', ['\b'] = '\\b', ['\f'] = '\\f', ['\n'] = '\\n', ['\r'] = '\\r', ['\t'] = '\\t' }
local function escape_char(c) return escapes[c] or string.format("\\u%04x", c:byte()) end
local function encode_string(s) return '"' .. s:gsub('[%c"\\]', escape_char) .. '"' end
local function is_array(t)
  local n = 0
  for k in pairs(t) do
    if type(k) ~= "number" then return false end
    n = n + 1
  end
  return n == #t
end
local encode
local function encode_table(t, stack)
  if stack[t] then error("circular reference") end
  stack[t] = true
  local out = {}
  if is_array(t) then
    for i, v in ipairs(t) do out[i] = encode(v, stack) end
    stack[t] = nil
    return "[" .. table.concat(out, ",") .. "]"
  end
  local keys = {}
  for k in pairs(t) do
    if type(k) ~= "string" then error("invalid key type: " .. type(k)) end
    keys[#keys + 1] = k
  end
  table.sort(keys)
  for i, k in ipairs(keys) do out[i] = encode_string(k) .. ":" .. encode(t[k], stack) end
  stack[t] = nil
  return "{" .. table.concat(out, ",") .. "}"
end
function encode(v, stack)
  local ty = type(v)
  if ty == "nil" then return "null"
  elseif ty == "boolean" then return tostring(v)
  elseif ty == "number" then
    if v ~= v or v == math.huge or v == -math.huge then error("invalid number") end
    return string.format("%.14g", v)
  elseif ty == "string" then return encode_string(v)
  elseif ty == "table" then return encode_table(v, stack or {})
  end
  error("cannot encode " .. ty)
end
json.encode = encode

local decode_value
local function skip(s, i) return (s:find("[^ \t\r\n]", i)) or #s + 1 end
local function decode_error(s, i, msg) error(string.format("%s at char %d", msg, i), 0) end
local function decode_string(s, i)
  local out, j = {}, i + 1
  while true do
    local c = s:sub(j, j)
    if c == "" then decode_error(s, j, "unterminated string") end
    if c == '"' then return table.concat(out), j + 1 end
    if c == "\\" then
      local e = s:sub(j + 1, j + 1)
      local map = { b = "\b", f = "\f", n = "\n", r = "\r", t = "\t", ['"'] = '"', ["\\"] = "\\", ["/"] = "/" }
      if e == "u" then
        out[#out + 1] = string.char(tonumber(s:sub(j + 2, j + 5), 16) % 256)
        j = j + 6
      elseif map[e] then out[#out + 1] = map[e]; j = j + 2
      else decode_error(s, j, "bad escape") end
    else
      out[#out + 1] = c; j = j + 1
    end
  end
end
local function decode_number(s, i)
  local num = s:match("^-?%d+%.?%d*[eE]?[-+]?%d*", i)
  if not num then decode_error(s, i, "bad number") end
  return tonumber(num), i + #num
end
local function decode_array(s, i)
  local arr = {}
  i = skip(s, i + 1)
  if s:sub(i, i) == "]" then return arr, i + 1 end
  while true do
    local v
    v, i = decode_value(s, i)
    arr[#arr + 1] = v
    i = skip(s, i)
    local c = s:sub(i, i)
    if c == "]" then return arr, i + 1 end
    if c ~= "," then decode_error(s, i, "expected ','") end
    i = skip(s, i + 1)
  end
end
local function decode_object(s, i)
  local obj = {}
  i = skip(s, i + 1)
  if s:sub(i, i) == "}" then return obj, i + 1 end
  while true do
    if s:sub(i, i) ~= '"' then decode_error(s, i, "expected key") end
    local k
    k, i = decode_string(s, i)
    i = skip(s, i)
    if s:sub(i, i) ~= ":" then decode_error(s, i, "expected ':'") end
    local v
    v, i = decode_value(s, skip(s, i + 1))
    obj[k] = v
    i = skip(s, i)
    local c = s:sub(i, i)
    if c == "}" then return obj, i + 1 end
    if c ~= "," then decode_error(s, i, "expected ','") end
    i = skip(s, i + 1)
  end
end
local literals = { ["true"] = true, ["false"] = false }
function decode_value(s, i)
  i = skip(s, i)
  local c = s:sub(i, i)
  if c == "{" then return decode_object(s, i)
  elseif c == "[" then return decode_array(s, i)
  elseif c == '"' then return decode_string(s, i)
  elseif c == "-" or c:match("%d") then return decode_number(s, i)
  end
  for lit, v in pairs(literals) do
    if s:sub(i, i + #lit - 1) == lit then return v, i + #lit end
  end
  if s:sub(i, i + 3) == "null" then return nil, i + 4 end
  decode_error(s, i, "unexpected character '" .. c .. "'")
end
function json.decode(s)
  local v, i = decode_value(s, 1)
  i = skip(s, i)
  if i <= #s then decode_error(s, i, "trailing garbage") end
  return v
end

local doc = { name = "luatrace", version = 1.5, tags = {"a", "b\n", "c\"q"}, nested = { deep = { deeper = { 1, 2, { x = true, y = false } } } }, empty = {} }
local s = json.encode(doc)
print(s)
local back = json.decode(s)
print(json.encode(back) == s)
for i = 1, 20 do
  local t = {}
  for j = 1, i do t[j] = { id = j, label = "item" .. j, ok = j % 2 == 0 } end
  local enc = json.encode(t)
  assert(json.encode(json.decode(enc)) == enc)
end
print(json.encode(json.decode('  [1, -2.5e3, "x\\u0041y", {"k": [true, false, null]}] ')))
for _, bad in ipairs({ "[1,2", '{"a" 1}', '"abc', "[1,]x", "tru", "[1] 2" }) do
  print(pcall(json.decode, bad))
end
local circ = {}; circ.self = circ
print(pcall(json.encode, circ))
print(pcall(json.encode, { [{}] = 1 }))
print(pcall(json.encode, { f = print }))
