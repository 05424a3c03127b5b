-- Real code: luacheck's (Debian lua-check) decoder, lexer and recursive
-- descent parser over two Penlight sources, a syntax error raised from
-- deep inside the parser and caught, and a walk of the trees it built.
local decoder = require "luacheck.decoder"
local parser = require "luacheck.parser"

local function parse(src)
  return pcall(parser.parse, decoder.decode(src), {}, {})
end

local function count(t, depth)
  if type(t) ~= "table" or depth > 300 then return 0 end
  local n = 1
  for i = 1, #t do n = n + count(t[i], depth + 1) end
  return n
end

for _, name in ipairs({"List", "stringx"}) do
  local f = assert(io.open("/usr/share/lua/5.1/pl/" .. name .. ".lua"))
  local ok, ast, comments, code_lines = parse(f:read("*a"))
  f:close()
  print(name, ok, count(ast, 0), #comments)
end
local ok, err = parse("local function f()\n  return {a = (1 + }\nend\n")
print("error", ok, type(err) == "table" and err.msg or tostring(err))
