-- Real library code (Debian's lua-expat): Expat's C parser calling Lua
-- callbacks from inside lxp's parse method. Our own callbacks (elements,
-- text, comments, processing instructions, CDATA, namespaces, the XML
-- declaration, a Default handler) building a document and counting, with
-- nested calls, a metamethod and a coroutine resumed from inside a
-- callback; a document fed in pieces by a coroutine.wrap generator; a
-- parser re-entered (a second parser run from inside a callback); errors
-- raised inside callbacks (strings, tables, runtime errors) crossing
-- XML_Parse and caught by pcall, and a malformed document; parser:stop from
-- a callback. lxp.lom and lxp.totable build trees from their own Lua
-- callbacks (a string, a table of pieces, an iterator function), and
-- lxp.threat wraps every callback in a checking closure that stops the
-- parser on too deep, too wide or too long input (lom's own assert then
-- failing inside a callback, through Expat, caught by our pcall).
local lxp = require "lxp"
local lom = require "lxp.lom"
local totable = require "lxp.totable"

local first_line = require("corpus_util").first_line

local function attrs(a)
  local out = {}
  for i = 1, #a do out[#out + 1] = a[i] .. "=" .. a[a[i]] end
  return table.concat(out, ",")
end

local doc = [=[<?xml version="1.0" encoding="UTF-8"?>
<?style sheet="plain"?>
<library xmlns:b="urn:books" open="yes">
  <!-- a comment -->
  <b:book id="1" lang="en"><title>Lua</title><pages>328</pages></b:book>
  <b:book id="2"><title>Expat &amp; C</title><pages>120</pages>
    <note><![CDATA[raw <text> & more]]></note></b:book>
  <shelf><empty/><empty kind="x"/></shelf>
</library>]=]

-- a full set of callbacks, depth tracked, text joined
local log = {}
local function emit(s) log[#log + 1] = s end
local depth = 0
local counts = setmetatable({}, {__index = function(t, k) return 0 end})
local function bump(k) counts[k] = counts[k] + 1 end
local function indent() return string.rep(" ", depth) end

local cbs = {
  StartElement = function(p, name, a)
    bump("start")
    emit(indent() .. "<" .. name .. (#a > 0 and " " .. attrs(a) or "") .. ">")
    depth = depth + 1
  end,
  EndElement = function(p, name)
    depth = depth - 1
    bump("end")
  end,
  CharacterData = function(p, s)
    if s:find("%S") then emit(indent() .. "text " .. s) end
  end,
  Comment = function(p, s) emit(indent() .. "comment" .. s) end,
  ProcessingInstruction = function(p, target, data) emit("pi " .. target .. " " .. data) end,
  StartCdataSection = function(p) emit(indent() .. "cdata[") end,
  EndCdataSection = function(p) emit(indent() .. "]cdata") end,
  StartNamespaceDecl = function(p, prefix, uri) emit("ns " .. tostring(prefix) .. " " .. uri) end,
  EndNamespaceDecl = function(p, prefix) bump("nsend") end,
  XmlDecl = function(p, version, encoding, standalone)
    emit("xml " .. version .. " " .. tostring(encoding))
  end,
}
local p = lxp.new(cbs, "|")
print("parse", p:parse(doc) == p)
print("close", p:parse() == p, p:close() == p)
print(table.concat(log, "\n"))
print("starts", counts.start, "ends", counts["end"], "nsend", counts.nsend)

-- the same document fed 7 bytes at a time by a wrap generator
local function pieces(s, n)
  return coroutine.wrap(function()
    for i = 1, #s, n do coroutine.yield(s:sub(i, i + n - 1)) end
  end)
end
log, depth = {}, 0
local p2 = lxp.new(cbs)
local npieces = 0
for piece in pieces(doc, 7) do
  npieces = npieces + 1
  assert(p2:parse(piece))
end
p2:parse(); p2:close()
print("pieces", npieces, "lines", #log, log[#log])

-- a coroutine resumed from inside callbacks: a consumer of element names
local consumer = coroutine.create(function(name)
  local seen = {}
  while name do
    seen[#seen + 1] = name:upper()
    name = coroutine.yield(#seen)
  end
  return table.concat(seen, " ")
end)
local p3 = lxp.new({
  StartElement = function(p, name) assert(coroutine.resume(consumer, name)) end,
})
p3:parse("<a><b/><c><d/></c></a>"); p3:parse(); p3:close()
print("consumer", coroutine.resume(consumer, nil))

-- a parser run from inside another parser's callback
local inner_names = {}
local inner_cbs = {StartElement = function(p, name) inner_names[#inner_names + 1] = name end}
local outer = lxp.new({
  StartElement = function() end, -- lxp joins text until another callback runs
  CharacterData = function(p, s)
    if s:find("<") then
      local q = lxp.new(inner_cbs)
      assert(q:parse(s)); q:parse(); q:close()
    end
  end,
})
outer:parse("<wrap><s><![CDATA[<x><y/><z/></x>]]></s><s><![CDATA[<w/>]]></s></wrap>")
outer:parse(); outer:close()
print("inner", table.concat(inner_names, ","))

-- errors inside callbacks cross the C parser
local function fails_at(tag, how)
  return lxp.new({
    StartElement = function(p, name)
      if name == tag then
        if how == "string" then error("bad element " .. name)
        elseif how == "table" then error({tag = name})
        elseif how == "runtime" then local n = nil; return n + 1
        end
      end
    end,
  })
end
for _, how in ipairs({"string", "table", "runtime"}) do
  local q = fails_at("bad", how)
  local ok, e = pcall(q.parse, q, "<r><ok/><bad/></r>")
  print("callback error", how, ok, type(e) == "table" and e.tag or first_line(e))
end
local q = fails_at("never", "string")
print("malformed", q:parse("<r><unclosed></r>"))
print("close after error", pcall(q.close, q))
-- parser:stop from a callback
local stopped = {}
local ps = lxp.new({StartElement = function(p, name)
  stopped[#stopped + 1] = name
  if name == "stop" then p:stop() end
end})
print("stop", ps:parse("<r><a/><stop/><after/></r>"))
print("seen before stop", table.concat(stopped, ","))
print("close stopped", pcall(ps.close, ps))

-- lxp.lom: a tree from a string, from pieces, from an iterator
local tree = lom.parse(doc)
local function walk(node, d, out)
  out[#out + 1] = string.rep(".", d) .. node.tag
  for i = 1, #node do
    if type(node[i]) == "table" then walk(node[i], d + 1, out) end
  end
  return out
end
print(table.concat(walk(tree, 0, {}), " "))
local book = lom.find_elem(tree, "title")
print("first title", book[1])
local shelf = lom.find_elem(tree, "shelf")
for child in lom.list_children(shelf, "empty") do
  print("empty", child.attr.kind or "-")
end
local tbl = lom.parse({"<a x='1'>", "<b>t", "ext</b>", "</a>"})
print("lom pieces", tbl.tag, tbl.attr.x, tbl[1].tag, tbl[1][1])
local src = {"<n>", "<m>1</m>", "<m>2</m>", "</n>"}
local idx = 0
local t2 = lom.parse(function() idx = idx + 1; return src[idx] end)
print("lom iterator", t2.tag, #t2, t2[2][1])
print("lom error", lom.parse("<a><b></a>"))

-- lxp.totable
local tt = totable.parse("<cfg v='2'><item k='a'>one</item><item k='b'>two</item></cfg>")
print("totable", tt[0], tt.v, tt[1][0], tt[1].k, tt[1][1], tt[2][1])
totable.clean(tt)
totable.torecord(tt)
print("record", tt.item)

-- lxp.threat: checks wrapped around every callback
-- (once stopped, lom's EndElement may still run and fail its assert: an
-- error raised by library code inside a callback, through Expat)
local function threat_parse(xml, checks)
  local okp, ok, err = pcall(lom.parse, xml, {threat = checks})
  if not okp then return "raised: " .. first_line(ok) end
  if ok then return "ok " .. ok.tag end
  return "refused: " .. tostring(err)
end
print(threat_parse(doc, {depth = 10}))
print(threat_parse("<a><b><c><d><e/></d></c></b></a>", {depth = 3}))
local wide = {"<w>"}
for i = 1, 12 do wide[#wide + 1] = "<i/>" end
wide[#wide + 1] = "</w>"
print(threat_parse(table.concat(wide), {maxChildren = 10}))
print(threat_parse("<a>" .. string.rep("z", 80) .. "</a>", {text = 64}))
print(threat_parse("<a><!--" .. string.rep("c", 50) .. "--></a>", {comment = 20}))
print(threat_parse("<a p='1' q='2' r='3' s='4'/>", {maxAttributes = 3}))
