-- Prototypes recycled: chunks loaded one after the other and collected in
-- between, so that the next chunk's Proto, and its name's string, take the
-- freed addresses (a name made at run time is freed with its chunk). Each
-- must keep its own name, its code and its lines, even where only its
-- constants differ from the chunk before.

local function run(code, name, ...)
  return assert(loadstring(code, name))(...)
end

local total = 0
-- one code, names that differ: only the name tells them apart
for i = 1, 12 do
  collectgarbage()
  total = total + run("local a = ...\nreturn a + 1", "=chunk" .. i, i)
end
-- one name, other code (of another size: code of one size under one name
-- is one function to recorderd, doc/reports.md "Frame labels")
for i = 1, 12 do
  collectgarbage()
  total = total + run("local a = ... return a" .. string.rep(" * a", i % 4), "=same", i)
end
-- a function inside, on the same line each time, ending on another
for i = 1, 12 do
  collectgarbage()
  local code = "local k = ...\nlocal function inner(v)\n" .. string.rep("v = v + 1\n", i % 3)
               .. "return v * k end\nreturn inner(2)"
  total = total + run(code, "=inner" .. i % 4, i)
end
-- one name, code of one size and one line span, other constants: the
-- chunks differ in the name of the global their function goes to (ha, hb,
-- ...) and in a number, so only their constants tell them apart; each
-- function is named after its own global
for i = 1, 12 do
  collectgarbage()
  local g = "h" .. string.char(96 + i)
  run("function " .. g .. "(v) return v + " .. i .. " end", "=gen")
  total = total + _G[g](i)
  _G[g] = nil
end
print("total", total)
