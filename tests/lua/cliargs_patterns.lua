-- needs: cliargs (lua-cliargs), lpeg_patterns.uri (lua-lpeg-patterns)
-- Real library code: lua_cliargs (Debian's lua-cliargs) parsing argument
-- lists with our callbacks on arguments, options, flags and splats, a
-- command with its own action, errors it reports and one a callback
-- raises (caught by pcall); lpeg_patterns (lua-lpeg-patterns), grammars
-- built of LPeg with Lua functions as captures (IPv6's embedded IPv4, e-mail
-- comments, HTTP's quoted strings through lpeg.Cmt): URIs, IPv4 and IPv6
-- addresses, e-mail addresses and HTTP header values matched, some refused.

local seen = {}
local function note(what) seen[#seen + 1] = what end

local function make_cli()
  local cli = require "cliargs"
  cli:set_name("tool")
  cli:argument("INPUT", "input file", function(key, value)
    note("arg " .. key .. "=" .. value)
    if value == "bad.txt" then return nil, "bad input " .. value end
  end)
  cli:option("-o, --output=FILE", "output file", "out.txt", function(key, value)
    note("opt " .. key .. "=" .. tostring(value))
  end)
  cli:option("-n, --count=N", "count", "1")
  cli:flag("-v, --verbose", "verbose", false, function(key, value) note("flag " .. key) end)
  cli:flag("--[no-]color", "color", true)
  cli:splat("REST", "the rest", nil, 3, function(key, value, altkey, opts)
    note("splat " .. tostring(value))
  end)
  return cli
end

local lists = {
  { "in.txt" },
  { "in.txt", "-o", "x.txt", "-v", "a", "b" },
  { "--output=y.txt", "in.txt", "--no-color", "-n", "5" },
  { "bad.txt" },
  { "in.txt", "--nope" },
  {},
  { "in.txt", "1", "2", "3", "4" },
}
for i, argv in ipairs(lists) do
  package.loaded.cliargs = nil -- a fresh parser each time: its state is a module
  local cli = make_cli()
  seen = {}
  local args, err = cli:parse(argv, true)
  if args then
    print("cliargs", i, args.INPUT, args.output, args.count, tostring(args.verbose),
          tostring(args.color), args.REST and #args.REST or 0, table.concat(seen, ","))
  else
    print("cliargs", i, "error", (err:match("^[^\n]*")), table.concat(seen, ","))
  end
end

-- a callback that raises, a command with an action
package.loaded.cliargs = nil
local cli = require "cliargs"
cli:argument("X", "x", function(k, v) error("callback refuses " .. v, 0) end)
print("cliargs raise", pcall(cli.parse, cli, { "boom" }, true))
package.loaded.cliargs = nil
cli = require "cliargs"
local ran
local cmd = cli:command("run", "run it")
cmd:argument("WHAT", "what")
cmd:action(function(options) ran = options.WHAT return "ran " .. options.WHAT end)
local res = cli:parse({ "run", "fast" }, true)
print("cliargs command", ran, type(res))

-- lpeg_patterns
local lpeg = require "lpeg"
local uri = require "lpeg_patterns.uri"
local IPv4 = require "lpeg_patterns.IPv4"
local IPv6 = require "lpeg_patterns.IPv6"
local email = require "lpeg_patterns.email"
local http = require "lpeg_patterns.http"
local EOF = lpeg.P(-1)
local uri_p = uri.uri * EOF
for _, u in ipairs({ "http://user@example.com:8080/a/b?q=1#f", "mailto:x@y.z", "urn:isbn:123",
                     "http://[::1]:80/", "http://%zz/", "not a uri" }) do
  local t = uri_p:match(u)
  if t then
    print("uri", u, t.scheme, t.host or "", t.port or "", t.path or "", t.query or "", t.fragment or "")
  else
    print("uri", u, "refused")
  end
end
local v4 = IPv4.IPv4address * EOF
local v6 = IPv6.IPv6address * EOF
for _, a in ipairs({ "192.168.1.20", "256.1.1.1", "::1", "fe80::1:2", "::ffff:10.0.0.1", "1:2:3" }) do
  local r4, r6 = v4:match(a), v6:match(a)
  print("ip", a, r4 and tostring(r4) or "-", r6 and tostring(r6) or "-")
end
local mail = email.email * EOF
for _, m in ipairs({ "a.b@example.com", "(comment)x@y.org", "bad@", "\"quoted name\"@host.net" }) do
  local l, d = mail:match(m)
  print("email", m, l or "refused", d or "")
end
local te = lpeg.Ct(http.TE) * EOF
for _, h in ipairs({ "gzip;q=0.5, chunked", "trailers", "deflate;q=2" }) do
  local t = te:match(h)
  print("TE", h, t and #t or "refused")
end
local cc = lpeg.Ct(http.Cache_Control) * EOF
for _, h in ipairs({ 'no-cache, max-age=60, private="x"', 'a="b\\"c"', ',,' }) do
  local t = cc:match(h)
  print("Cache-Control", h, t and #t or "refused")
end
