-- Lua 5.4's luaL_Buffer: past LUAL_BUFFERSIZE its bytes move into a boxed
-- userdata, and luaL_pushresult closes the box (lua_closeslot), a call of
-- its C __close (_UBOX*'s) under the C function building the string:
-- require's not-found message over a long package.path, table.concat,
-- string.rep, string.gsub and string.format results past the size, and a
-- box left to the error unwinding (a gsub callback failing). Whether a
-- message crosses the size depends on the paths' lengths: set here, as
-- the reference's run has longer ones than the traced run's by default.
local parts = {}
for i = 1, 40 do parts[#parts + 1] = "/nonexistent/dir" .. i .. "/?.lua" end
package.path = table.concat(parts, ";")
package.cpath = "/nonexistent/lib/?.so"
local ok, err = pcall(require, "no_such_module")
print("require", ok, #err)

local words = {}
for i = 1, 300 do words[i] = "word" .. i end
print("concat", #table.concat(words, " "))
print("rep", #string.rep("ab", 1000, ","))
local long = string.rep("x", 2000)
print("gsub", #(long:gsub("x", "yz")))
print("format", #string.format("%s-%s", long, long))
print("failing callback", pcall(string.gsub, long, "x", function(c)
  if c then error("stop", 0) end
end))
local n = 0
print("late failure", pcall(string.gsub, long, "x", function()
  n = n + 1
  if n == 1500 then error("late", 0) end
  return "yz"
end))
