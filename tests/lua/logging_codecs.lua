-- Real library code (Debian's lua-logging, lua-say and lua-basexx):
-- lua-logging's loggers, where every level method is one of five closures of
-- one prototype (named by call site: debug, info, warn...) that tail-calls
-- LOG_MSG, which tail-calls our appender; messages given as format strings,
-- as functions called by the library, and as tables turned to text by
-- logging.tostring (recursive, keys sorted by table.sort); setLevel
-- disabling levels and logging its own change, bad levels raising through
-- its own assert (level 2), an appender that raises (caught by pcall), and
-- an appender that yields: a logger used inside a coroutine, suspended in
-- the library's tail-called frames and resumed from another function.
-- lua-say's string table called through __call and read through __index,
-- with namespaces and a fallback; basexx's encoders and decoders, nearly
-- all string.gsub with Lua callbacks (bits, hex, base32, Crockford,
-- base64, url64, z85), bad input refused.
local logging = require "logging"
local say = require "say"
local basexx = require "basexx"

local first_line = require("corpus_util").first_line

-- messages in two languages
say:set_namespace("en")
say:set("greet", "hello %s, you have %s messages")
say:set("bye", "goodbye")
say:set("codec", "%s of %s is %s")
say:set_namespace("fr")
say:set("greet", "bonjour %s, vous avez %s messages")
say:set_fallback("en")

-- an appender keeping lines, through logging.prepareLogMsg
local lines = {}
local function keep(self, level, message)
  lines[#lines + 1] = logging.prepareLogMsg("[%level] %message", "-", level, message)
  return true
end

local log = logging.new(keep)
log:info("plain message")
log:debug("formatted %d%% of %s", 50, "work")
log:warn(say("greet", {"Ada", 3}))
log:info(say("bye"))        -- from the fallback namespace
log:error(function(a, b) return "computed " .. (a * b) end, 6, 7)
log:info({name = "cfg", list = {3, 1, 2}, nested = {b = true, a = "x"}})
log:log(logging.FATAL, "via log %s", "fatal")
log:setLevel(logging.WARN)
log:debug("filtered out")
log:info(function() error("never called") end)
log:warn("kept %s", "warning")
print(table.concat(lines, "\n"))
print("bad level", pcall(log.setLevel, log, "LOUD"))
print("bad log", pcall(log.log, log, "NOPE", "x"))
print("no appender", logging.new("not a function"))
print("say errors", pcall(say, "greet", "not a table"))
print("say missing", say("nothing here"), say.en.bye, say.fr.greet ~= nil)
say:set_namespace("en")

-- an appender that raises
local strict = logging.new(function(self, level, msg)
  if msg:find("secret") then error("refusing to log a secret") end
  lines[#lines + 1] = msg
end)
strict:info("fine")
print("appender error", pcall(strict.error, strict, "the secret is %d", 42))
print("message error", pcall(strict.info, strict, function() return nil .. "x" end))

-- an appender that yields: the coroutine sleeps inside logging's frames
local queued = logging.new(function(self, level, msg)
  local reply = coroutine.yield(level .. ": " .. msg)
  return reply
end)
local function worker(n)
  for i = 1, n do
    queued:info("step %d of %d", i, n)
    if i == 2 then queued:warn(function() return "halfway" end) end
  end
  return "worker done"
end
local co = coroutine.create(worker)
local function drain(c, arg)
  local got = {}
  while true do
    local ok, v = coroutine.resume(c, arg)
    if coroutine.status(c) == "dead" then
      got[#got + 1] = tostring(v)
      return got
    end
    got[#got + 1] = v
  end
end
print(table.concat(drain(co, 3), " | "))

-- codecs: round trips through gsub callbacks
local samples = {"", "f", "fo", "foo", "foob", "fooba", "foobar", "Lua 5.1!\0\255"}
local codecs = {
  {"bit", basexx.to_bit, basexx.from_bit},
  {"hex", basexx.to_hex, basexx.from_hex},
  {"base32", basexx.to_base32, basexx.from_base32},
  {"crockford", basexx.to_crockford, basexx.from_crockford},
  {"base64", basexx.to_base64, basexx.from_base64},
  {"url64", basexx.to_url64, basexx.from_url64},
}
for _, c in ipairs(codecs) do
  local name, enc, dec = c[1], c[2], c[3]
  local ok, shown = 0, {}
  for _, s in ipairs(samples) do
    local e = enc(s)
    if dec(e) == s then ok = ok + 1 end
    if s == "foob" then shown[#shown + 1] = e end
  end
  log:warn(say("codec", {name, "foob", shown[1]}))
  print(name, ok .. "/" .. #samples)
end
local z = basexx.to_z85("86\79\255\159\13\11\6")
print("z85", z, basexx.from_z85(z) == "86\79\255\159\13\11\6")
print("z85 bad length", basexx.to_z85("abc"))
print("ignore", basexx.from_hex("48 65-6c 6c 6f", " -"), basexx.from_base64("SGVs\nbG8=", "\n"))
print("crockford aliases", basexx.from_crockford("CSQPYRK1E8"), basexx.from_crockford("CSQPYRKIE8"))
print("bit aliases", basexx.from_bit("oiooiooo"))
for _, bad in ipairs({{"from_hex", "4x"}, {"from_base64", "S$=="}, {"from_z85", "ab"},
                       {"from_base32", "1"}, {"from_bit", "0102"}}) do
  local ok, r, why = pcall(basexx[bad[1]], bad[2])
  print("decode", bad[1], ok, ok and tostring(r) or first_line(r), tostring(why))
end
print(table.concat(lines, "\n", #lines - 6))
