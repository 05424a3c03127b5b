-- os.exit from an xpcall message handler running inside a gsub callback,
-- inside a coroutine resumed by a wrap inside a sort comparator, under
-- pcalls at every level; output buffered in io.write before the exit
local gen = coroutine.wrap(function()
  for i = 1, 100 do coroutine.yield("g" .. i) end
end)
local function leaf(c)
  io.write("leaf ", c, " ", gen(), "\n")
  if c == "c" then error({code = 5}) end
  return c:upper()
end
local function handler(e)
  io.write("handler sees ", type(e) == "table" and tostring(e.code) or tostring(e), "\n")
  local function bye(n) if n == 0 then os.exit(e.code) end return bye(n - 1) end
  bye(5)
end
local inner = coroutine.create(function(s)
  local ok = pcall(function()
    return xpcall(function() return (string.gsub(s, "%a", leaf)) end, handler)
  end)
  io.write("not reached ", tostring(ok), "\n")
end)
local outer = coroutine.wrap(function()
  local t = {3, 1, 2}
  pcall(table.sort, t, function(a, b)
    io.write("cmp ", a, " ", b, "\n")
    pcall(coroutine.resume, inner, "abcd")
    return a < b
  end)
end)
pcall(outer)
io.write("not reached either\n")
