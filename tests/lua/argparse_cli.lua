-- Real library code (Debian's lua-argparse): a parser built from argparse's
-- classes (properties set through __call metamethods and chained setters),
-- commands with aliases and nested commands, options with argument counts,
-- counted flags, choices, defaults, mutually exclusive groups, help groups,
-- converters and actions as Lua callbacks (a converter that fails, an action
-- that raises), several argument lists parsed with parser:pparse (its xpcall
-- and error handlers) including failing ones with "did you mean" tips, the
-- usage and help text, and the bash, zsh and fish completion scripts.
local argparse = require "argparse"

local parser = argparse("cli", "A made-up command line tool.", "See the manual for more.")
parser:add_help(false)
parser:option("-o --output", "Where to write.", "out.txt")
  :argname "<file>"
parser:option("-I --include", "Include directories.")
  :count "*"
  :target "includes"
parser:flag("-v --verbose", "More output (repeatable).")
  :count "0-3"
  :target "verbosity"
parser:option("--level", "A level between 1 and 9.", "5")
  :convert(function(s)
    local n = tonumber(s)
    if not n then return nil, "level must be a number, got '" .. s .. "'" end
    if n < 1 or n > 9 then return nil, "level out of range: " .. n end
    return n
  end)
parser:option("--mode")
  :choices {"fast", "slow", "auto"}
  :default "auto"
parser:option("--pair", "Two values.")
  :args(2)
  :convert {string.upper, tonumber}
parser:option("--color")
  :convert {red = 1, green = 2, blue = 3}
parser:mutex(
  parser:flag "--json",
  parser:flag "--xml",
  parser:flag "--text"
)
local seen = {}
parser:option "--tag"
  :args "*"
  :count "*"
  :action(function(result, target, values)
    result[target] = result[target] or {}
    for _, v in ipairs(values) do
      if v == "boom" then error("tag action failed on " .. v, 0) end
      seen[#seen + 1] = v
      table.insert(result[target], v:lower())
    end
  end)
parser:group("Debugging",
  parser:flag("--trace", "Trace everything."),
  parser:option("--dump", "Dump to a file."):args "?")
parser:require_command(false)
parser:command_target "command"

local add = parser:command("add a", "Add files.")
add:argument("files", "Files to add."):args "+"
add:flag "-f --force"
add:option "--mode":choices {"copy", "link"}:default "copy"

local rm = parser:command "rm remove"
  :summary "Remove files."
  :description "Remove files from the index; with --cached keep them on disk."
rm:argument "file"
rm:flag "--cached"
rm:flag "-r --recursive"
rm:mutex(rm:flag "--dry", rm:flag "--wet")

local remote = parser:command("remote", "Manage remotes.")
remote:require_command(true)
local radd = remote:command "add"
radd:argument "name"
radd:argument("url"):convert(function(u)
  if not u:find("^%a+://") then return nil, "not a url: " .. u end
  return {scheme = u:match("^(%a+)://"), rest = u:match("://(.*)$")}
end)
remote:command("list ls"):flag "--long"

local calls = {}
parser:command "run"
  :action(function(args, name)
    calls[#calls + 1] = "run action for " .. name
  end)
  :argument "script"
  :args "?"

-- results, printed field by field from a fixed list: the order of pairs
-- over a result table depends on the GC (argparse first sets every target
-- to nil, and a key assigned again after a collection made its node dead
-- lands in another node), so pairs only counts the keys here
local FIELDS = {"add", "cached", "color", "command", "dry", "dump", "file", "files", "force",
  "includes", "json", "level", "list", "long", "mode", "name", "output", "pair", "recursive",
  "remote", "rest", "rm", "run", "scheme", "script", "tag", "text", "trace", "url",
  "verbosity", "wet", "xml"}
local function show(v)
  if type(v) ~= "table" then return tostring(v) end
  local parts, n, total = {}, 0, 0
  for _ in pairs(v) do total = total + 1 end
  for _, x in ipairs(v) do parts[#parts + 1] = show(x); n = n + 1 end
  for _, k in ipairs(FIELDS) do
    if v[k] ~= nil then parts[#parts + 1] = k .. "=" .. show(v[k]); n = n + 1 end
  end
  if n ~= total then parts[#parts + 1] = "(" .. (total - n) .. " more)" end
  return "{" .. table.concat(parts, " ") .. "}"
end

local lists = {
  {},
  {"-vv", "--level", "7", "-I", "inc1", "-Iinc2", "--include=inc3", "--json"},
  {"--output=x.log", "-v", "--mode", "fast", "--pair", "ab", "12", "--color", "green"},
  {"add", "-f", "a.lua", "b.lua", "--mode", "link"},
  {"a", "only.lua"},
  {"remove", "--cached", "-r", "dir"},
  {"remote", "add", "origin", "https://example.org/repo"},
  {"remote", "ls", "--long"},
  {"--tag", "X", "Y", "--tag", "Z", "run", "script.lua"},
  {"run"},
  {"--trace", "--dump", "--", "-not-an-option"},
  {"--dump", "d.txt", "--text"},
  -- failing ones
  {"--level", "12"},
  {"--level", "abc"},
  {"--mode", "quick"},
  {"--json", "--xml"},
  {"-vvvv"},
  {"--verbos"},
  {"--outptu", "f"},
  {"ad", "x"},
  {"add"},
  {"rm", "--dry", "--wet", "f"},
  {"rm", "a", "b"},
  {"remote"},
  {"remote", "add", "origin", "not a url"},
  {"--pair", "one"},
  {"--color", "purple"},
  {"--tag", "ok", "boom"},
  {"--output"},
  {"stray"},
}
for i, list in ipairs(lists) do
  -- an error raised by an action is no parse error: pparse raises it again,
  -- with the original traceback appended by its xpcall handler
  local okp, ok, res = pcall(parser.pparse, parser, list)
  if not okp then
    print(i, "raised", (ok:match("^[^\n]*")), ok:find("\noriginal stack traceback:", 1, true) ~= nil)
  elseif ok then
    print(i, "ok", show(res))
  else
    print(i, "error", (res:gsub("\n", " | ")))
  end
end
print(table.concat(seen, ","), table.concat(calls, ","))

-- a bug in argparse itself (not a parse error) propagates through pparse
local bad = argparse("bad"):add_help(false)
bad:option "--x":convert(function(s) return s .. nil end)
local okb, eb = pcall(bad.pparse, bad, {"--x", "1"})
print("converter bug", okb, (tostring(eb):match("attempt to concatenate[^\n]*")))
-- a bad property is an error when the parser is built
local okp, ep = pcall(function() return bad:option "--z":args "lots" end)
print("bad property", okp, (ep:gsub("^.-:%d+: ", "")))

print(parser:get_usage())
print(parser:get_help())
print(add:get_help())
print(rm:get_help())
print(radd:get_usage())

local small = argparse("small", "Completion demo."):add_complete()
small:flag("-q --quiet", "Quiet.")
small:option("--fmt", "Format."):choices {"a", "b"}
small:command("go", "Go somewhere."):argument "where"
small:command("stop", "Stop.")
print(small:get_bash_complete())
print(small:get_zsh_complete())
print(small:get_fish_complete())
