-- Real library code (Debian's lua-uri, lua-mediator and lua-fifo): lua-uri's
-- classes, where uri:new parses, then init requires the scheme's module
-- (pcall(require) at every init, failing for schemes without one) and switches the object's metatable to
-- that subclass, whose init runs in turn (http, https, ftp, urn with its
-- isbn/issn/oid subclasses, data, file, telnet); percent-encoding
-- normalised by gsub callbacks that raise errors with levels 3 and 5
-- (through string.gsub) caught by our pcall; accessors that rebuild the
-- object through uri._util (a subclass change), relative references
-- resolved against bases and made relative again, __tostring and eq.
-- lua-mediator's channels (a tree of closures made per channel, publish
-- walking up to the parents by tail calls), subscribers with priorities,
-- predicates and stop/continue results, removed again, one raising an
-- error caught around publish; the mediator made by a __call metamethod.
-- lua-fifo's queue with a raising __newindex, a custom empty handler and
-- insert/remove in the middle, feeding the URIs to the mediator.
local URI = require "uri"
local Mediator = require "mediator"
local new_fifo = require "fifo" -- the module is fifo.new

local first_line = require("corpus_util").first_line

local function show(u)
  if not u then return "nil" end
  return tostring(u) .. " (" .. (u._NAME or "?") .. ")"
end

-- parsing and normalisation, one scheme class after another
local inputs = {
  "HTTP://Example.COM:80/a/./b/../c?q=1#frag",
  "https://user@host.example:443/%7euser/%41%2f",
  "ftp://ftp.example.org/pub/file.txt;type=i",
  "urn:ISBN:0-395-36341-1",
  "urn:issn:0027-9633",
  "urn:oid:1.3.6.1.4.1",
  "urn:example:Some-Thing",
  "data:text/plain;charset=utf-8,hello%20world",
  "file:///etc/hosts",
  "telnet://host.example:23/",
  "mailto:someone@example.org",
  "x-custom:opaque/path",
}
for _, s in ipairs(inputs) do
  local u, err = URI:new(s)
  print(u and show(u) or ("error: " .. err))
end
local bad = {
  "http://host/%zz",            -- raised in the gsub callback (level 5)
  "http://host/%4",              -- raised before it (level 3)
  "http://ho st/",
  "urn:isbn:0-395-36341-2",      -- bad checksum
  "urn:urn:x",
  "http://[::1/",
}
for _, s in ipairs(bad) do
  local ok, u, err = pcall(URI.new, URI, s)
  if not ok then print("raised", first_line(u))
  else print("refused", u and show(u) or err) end
end

-- accessors: setting parts, the scheme switching the class
local u = assert(URI:new("http://www.example.com/one/two?x=y"))
print(u:host(), u:port(), u:path(), u:query(), u:fragment())
u:path("/three/./four/../five")
u:query("a=1&b=2")
u:fragment("top")
u:port(8080)
print(show(u))
u:scheme("https")
print(show(u), u:port())
u:port(443)
print(show(u), u:default_port())
print("bad port", pcall(u.port, u, -1))
print("bad scheme", pcall(u.scheme, u, "1abc"))
print("eq", URI.eq(URI:new("http://A.com/"), URI:new("http://a.com:80/")),
  URI:new("http://x.org/") == URI:new("http://x.org/"))

-- relative references
local base = assert(URI:new("http://a/b/c/d;p?q"))
local rels = {"g", "./g", "g/", "/g", "//g", "?y", "g?y", "#s", "g#s", "..", "../g",
              "../..", "../../g", "../../../g", ".", "g;x?y#s", ""}
local out = {}
for _, r in ipairs(rels) do
  out[#out + 1] = r .. " -> " .. tostring(URI:new(r, base))
end
print(table.concat(out, "\n"))
local rel = assert(URI:new("../x/y?z"))
print(show(rel), rel:is_relative())
rel:resolve(base)
print(show(rel), rel:is_relative())
local abs = assert(URI:new("http://a/b/c/g/h?k"))
abs:relativize(base)
print("relativized", show(abs))
print("bad base", URI:new("x", "relative/base"))

-- a mediator made by __call; channels and priorities
local m = Mediator()
local log = {}
local function note(s) log[#log + 1] = s end
local sub_all = m:subscribe({"uri"}, function(u) note("all " .. u:scheme()); return "all", true end)
m:subscribe({"uri", "http"}, function(u) note("http " .. u:host()); return u:path(), true end)
m:subscribe({"uri", "http"}, function(u) note("first " .. u:host()); return nil, true end,
  {priority = 1})
local sub_secure = m:subscribe({"uri", "http"}, function(u) note("secure " .. u:host()); return "secure", false end,
  {predicate = function(u) return u:scheme() == "https" end, priority = 2})
m:subscribe({"uri", "urn"}, function(u) note("urn " .. u:nid()); return u:nss(), true end)
local sub_bad = m:subscribe({"uri", "urn"}, function(u)
  if u:nid() == "oid" then error("no oids here: " .. u:nss()) end
  return nil, true
end)

-- a fifo of URIs, drained into the mediator
local q = new_fifo("http://www.example.com/index.html", "urn:issn:0027-9633")
q:push("https://secure.example.com/login")
q:push("urn:oid:2.5.4.3")
q:insert(2, "http://mid.example.com/inserted")
q:push("ftp://ftp.example.org/skip")
print("removed", q:remove(6), q:length())
print("set field", pcall(function() q.extra = 1 end))
q:setempty(function(self) return "<empty>" end)
while true do
  local s = q:pop()
  if s == "<empty>" then break end
  local uu = assert(URI:new(s))
  local channel = {"uri", (uu:scheme():gsub("s$", ""))}
  local ok, res = pcall(m.publish, m, channel, uu)
  if ok then
    print("published", s, table.concat(res, ","))
  else
    print("publish failed", s, first_line(res))
  end
end
print(table.concat(log, "; "))
print("peek empty", q:peek(1))
-- subscribers removed and found again
print("found", m:getSubscriber(sub_all.id, {"uri"}).index)
m:removeSubscriber(sub_bad.id, {"uri", "urn"})
m:removeSubscriber(sub_all.id, {"uri"})
log = {}
local res = m:publish({"uri", "urn"}, assert(URI:new("urn:oid:1.2")))
print("after removal", #res, res[1], table.concat(log, "; "))
m:getChannel({"uri", "http"}):setPriority(sub_secure.id, 1)
log = {}
res = m:publish({"uri", "http"}, assert(URI:new("https://again.example.com/")))
print("reordered", table.concat(res, ","), table.concat(log, "; "))
print("set priority of a removed one", pcall(m.getChannel(m, {"uri"}).setPriority,
  m:getChannel({"uri"}), sub_all.id, 1))
print("channel", m:getChannel({"uri"}):hasChannel("http"), m:getChannel({"uri"}):hasChannel("gopher"))
