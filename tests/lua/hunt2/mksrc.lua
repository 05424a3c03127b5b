-- writes source files whose lines hold hostile bytes, into /tmp/hunt2/src
local root = arg[1] or "/tmp/hunt2/src"
os.execute("rm -rf '" .. root .. "' && mkdir -p '" .. root .. "'")
local function w(name, s) local f = assert(io.open(root .. "/" .. name, "wb")) f:write(s) f:close() end
-- 1: hostile bytes in comments and strings, one function per line
w("bytes.lua", table.concat({
  "-- \255\254 invalid utf-8, truncated \226\130 and \240\159 end",
  "local s1 = '\1\t\27\127 controls' -- \0 nul in a comment",
  "local s2 = \"<zzhostile a='1'>&amp;]]></script><!-- --> %s %d \\\\ \\\"\"",
  "local s3 = '\240\159\152\128 e\204\129 \217\133\216\177\216\173 \226\128\174rtl'",
  "local s4 = '\194\128\194\159 c1 and \239\191\190 nonchar and \237\160\128 surrogate'",
  "local function f1() return s1 .. s2 end   -- ]]> <![CDATA[ x ]]>",
  "local function f2() return s3 .. s4 end\t\t-- tabs\t",
  "local long = '" .. string.rep("W", 20000) .. "'",
  "local function f3() return #long end",
  "print(#f1(), #f2(), f3())",
}, "\n") .. "\n")
-- 2: CRLF line endings
w("crlf.lua", "local function a(x)\r\n  return x + 1\r\nend\r\n\r\nprint(a(1))\r\n")
-- 3: shebang
w("shebang.lua", "#!/usr/bin/env lua5.1 -- <zzhostile>\nlocal function b() return 2 end\nprint(b())\n")
-- 4: no newline at the end
w("nonl.lua", "local function c() return 3 end\nprint(c())")
-- 5: empty file
w("empty.lua", "")
-- 6: only comments
w("comments.lua", "-- just a comment\n--[[ long\ncomment ]]\n")
-- 7: error at once
w("err.lua", "error('boom <zzhostile> \\255')\n")
-- 8: zero functions called, no calls at all
w("nocall.lua", "local x = 1\nlocal y = x + 1\n")
-- 9: CR only line endings (old Mac)
w("cronly.lua", "local function d()\r  return 4\rend\rprint(d())\r")
-- 10: a line with 100000 bytes of code
local parts = {}
for i = 1, 8000 do parts[i] = "x=x+" .. i end
w("longcode.lua", "local x = 0 local function e() " .. table.concat(parts, " ") .. " return x end print(e())\n")
-- 11: form feed, vertical tab as whitespace
w("ffvt.lua", "local\12function g()\11return 5 end\nprint(g())\n")
-- 12: shebang + CRLF + no trailing newline
w("mix.lua", "#!lua\r\nlocal function h() return 6 end\r\nprint(h())")
-- 13: BOM (Lua 5.1 rejects a BOM? test that untraced == traced)
w("bom.lua", "\239\187\191print(7)\n")
-- 14: a syntax error
w("syntax.lua", "local function (\n")
-- 15: os.exit inside a function with an odd exit code
w("exit.lua", "local function q() os.exit(3) end\nq()\n")
