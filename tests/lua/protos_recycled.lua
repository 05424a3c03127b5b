-- Prototypes recycled: chunks loaded one after the other and collected in
-- between, so that the next chunk's Proto, and its name's string, take the
-- freed addresses (a name made at run time is freed with its chunk). Each
-- must keep its own name, its code and its lines.

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
-- is one function to recorderd, README "Frame labels")
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
print("total", total)
