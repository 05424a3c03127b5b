-- needs: argparse (lua-argparse), dkjson (lua-dkjson), re (lua-lpeg), lxp (lua-expat), rex_pcre2 (lua-rex-pcre2), cjson (lua-cjson), pl.List (lua-penlight)
-- Real library code under Lua 5.4 (Debian's 5.4 builds of the libraries
-- the 5.1 corpus drives): argparse's classes and pparse (xpcall, error
-- handlers, __call), dkjson's pure-Lua encoder and scanner with keyorder
-- and failing input, LPeg's C matcher calling Lua (re grammars with
-- function definitions, Cmt, a capture raising through lpeg.match), Expat
-- calling Lua callbacks (one failing through XML_Parse, one resuming a
-- coroutine), lrexlib's gsub with Lua replacements (one failing), cjson
-- errors, and Penlight's List, class, stringx, tablex and template (load
-- with an environment). Output is printed from fixed key lists: Lua 5.4
-- seeds its string hashes per run, so pairs order over string keys varies.

local function first_line(s)
  if type(s) ~= "string" then return type(s) end
  return (s:match("^[^\n]*"))
end

-- argparse
do
  local argparse = require "argparse"
  local parser = argparse("tool", "A tool.")
  parser:option("-n --count", "How many."):convert(tonumber):default("2")
  parser:flag("-v --verbose"):count("*")
  local build = parser:command("build b", "Build it.")
  build:argument("target"):choices({ "all", "lib", "docs" })
  build:option("-j --jobs"):convert(function(s)
    local n = tonumber(s)
    if not n then return nil, "jobs must be a number" end
    return n
  end)
  local run = parser:command("run")
  run:argument("args"):args("*")
  run:flag("--dry"):action(function(res, target, val) res.dry = "yes" end)
  local cases = {
    { "build", "all" }, { "b", "lib", "-j", "4" }, { "-vv", "run", "x", "y" },
    { "run", "--dry" }, { "build", "nope" }, { "build", "all", "-j", "x" },
    { "bild", "all" }, { "-n", "7", "run" }, {},
  }
  for i, argv in ipairs(cases) do
    local ok, res = parser:pparse(argv)
    if ok then
      print("argparse", i, res.count, res.verbose, res.build and "build" or "", res.run and "run" or "",
            res.target or "", res.jobs or "", res.args and #res.args or "", res.dry or "")
    else
      print("argparse", i, "error", first_line(res))
    end
  end
  print("usage", #parser:get_usage() > 0, #parser:get_help() > 0)
end

-- dkjson
do
  local json = require "dkjson"
  local doc = { name = "x", list = { 1, 2.5, "three", { deep = { true, false } } }, count = 3 }
  local s = json.encode(doc, { keyorder = { "name", "count", "list", "deep" }, indent = true })
  print("dkjson", (s:gsub("%s+", " ")))
  local back = json.decode(s)
  print("round", back.name, back.count, back.list[3], back.list[4].deep[2])
  for _, bad in ipairs({ '{"a": 1,', '[1, 2', '"open', '{"a" 1}', '[1, @]' }) do
    local v, pos, err = json.decode(bad)
    print("bad json", type(v), pos, err)
  end
  local T = setmetatable({ v = 4 }, { __tojson = function(self, state)
    return json.encode({ wrapped = self.v })
  end })
  print("tojson", json.encode({ T, T }))
  print("exception", json.encode({ f = print }, { exception = function(reason, value, state, msg)
    return '"<' .. reason .. '>"'
  end }))
end

-- LPeg and re
do
  local lpeg, re = require "lpeg", require "re"
  local calc = re.compile([[
    expr <- (term (op term)*) -> fold
    term <- num / '(' expr ')'
    num <- { [0-9]+ } -> tonumber
    op <- { [-+*/] }
  ]], { fold = function(a, ...)
    local args = { ... }
    for i = 1, #args, 2 do
      local o, b = args[i], args[i + 1]
      if o == "+" then a = a + b elseif o == "-" then a = a - b
      elseif o == "*" then a = a * b else a = a // b end
    end
    return a
  end, tonumber = tonumber })
  for _, e in ipairs({ "1+2*3", "(1+2)*3", "((4))", "8/(1+1)-1" }) do
    print("calc", e, calc:match(e))
  end
  local seen = 0
  local word = lpeg.Cmt(lpeg.R("az") ^ 1, function(s, i, w)
    seen = seen + 1
    if w == "stop" then return false end
    return i, w:upper()
  end)
  local words = lpeg.Ct((word + lpeg.P(1)) ^ 0)
  print("cmt", table.concat(words:match("abc de stop fg"), ","), seen)
  local boom = lpeg.C(lpeg.P("x")) / function(c) error("capture " .. c) end
  print("capture error", pcall(lpeg.match, boom, "x"))
  print("re.gsub", re.gsub("a1b22c333", "[0-9]+", function(d) return "<" .. #d .. ">" end))
end

-- Expat
do
  local lxp = require "lxp"
  local events = {}
  local co = coroutine.wrap(function()
    local n = 0
    while true do n = n + 1; coroutine.yield(n) end
  end)
  local p = lxp.new({
    StartElement = function(parser, name, attrs)
      events[#events + 1] = "<" .. name .. (attrs.id and ("#" .. attrs.id) or "") .. ":" .. co()
    end,
    EndElement = function(parser, name) events[#events + 1] = "/" .. name end,
    CharacterData = function(parser, text)
      if text:match("%S") then events[#events + 1] = "'" .. text end
    end,
  })
  assert(p:parse('<doc><a id="1">hi</a><b><c id="2"/>there</b>'))
  assert(p:parse('</doc>'))
  p:close()
  print("expat", table.concat(events, " "))
  local bad = lxp.new({ StartElement = function(parser, name)
    if name == "bad" then error("no bad elements") end
  end })
  print("expat error", pcall(bad.parse, bad, "<x><bad/></x>"))
  local broken = lxp.new({})
  print("malformed", broken:parse("<x><y></x>"))
end

-- lrexlib (PCRE2) and cjson
do
  local rex, cjson = require "rex_pcre2", require "cjson"
  print("rex", rex.gsub("one two three", "(\\w+)", function(w) return w:reverse() end))
  print("rex table", rex.gsub("a-b-c", "(\\w)", { a = "1", c = "3" }))
  local okr, er = pcall(rex.gsub, "xyz", "y", function() error({ code = 7 }) end)
  print("rex error", okr, er.code)
  print("rex nested", rex.gsub("[1,2] [3]", "\\[([^]]*)\\]", function(body)
    local arr = cjson.decode("[" .. body .. "]")
    return tostring(#arr)
  end))
  print("cjson", cjson.encode({ 1, 2, { 3 } }), pcall(cjson.decode, "{bad"))
  print("cjson sort", (function()
    local items = { '{"k":3}', '{"k":1}', '{"k":2}' }
    table.sort(items, function(a, b) return cjson.decode(a).k < cjson.decode(b).k end)
    return table.concat(items, " ")
  end)())
end

-- Penlight
do
  local List = require "pl.List"
  local class = require "pl.class"
  local stringx = require "pl.stringx"
  local tablex = require "pl.tablex"
  local template = require "pl.template"
  local l = List({ 5, 3, 8, 1 }):map(function(x) return x * 2 end):filter(function(x) return x > 4 end)
  l:sort(function(a, b) return a > b end)
  print("List", l:join(","), l:reduce("+"), List.range(1, 5):slice(2, 4):join(","))
  local Animal = class()
  function Animal:_init(name) self.name = name end
  function Animal:speak() return self.name .. " makes " .. self:sound() end
  function Animal:sound() return "a sound" end
  local Dog = class(Animal)
  function Dog:_init(name) self:super(name) end
  function Dog:sound() return "woof" end
  print("class", Dog("rex"):speak(), Animal("x"):speak(), Dog:class_of(Dog("y")))
  print("stringx", stringx.split("a, b,c", ","):join("|"), stringx.strip("  x  "),
        stringx.replace("aaa", "a", "bb", 2), stringx.count("banana", "an"))
  print("tablex", table.concat(tablex.map(function(x) return x + 1 end, { 1, 2, 3 }), ","),
        tablex.reduce(function(a, b) return a * b end, { 1, 2, 3, 4 }),
        table.concat(tablex.zip({ 1, 2 }, { 3, 4 })[2], ","))
  local out, err = template.substitute([[
# for i, v in ipairs(items) do
$(i): $(upper(v))
# end
]], { items = { "a", "b" }, upper = string.upper, ipairs = ipairs, _parent = _G })
  print("template", out and (out:gsub("\n", "|")) or err)
  local tv, terr = template.substitute("$(boom())", { boom = function() error("tpl") end, _parent = _G })
  print("template error", tv, first_line(terr))
end
