-- String-heavy work done in C: string.rep, string.format, table.concat,
-- string.byte/char/sub/find/lower, tostring/tonumber, called from loops and
-- through method syntax.

local parts = {}
for i = 1, 200 do
  parts[#parts + 1] = string.format("%03d:%s", i, string.rep("ab", i % 7))
end
local joined = table.concat(parts, ",")
print("joined", #joined, joined:sub(1, 30))

local big = string.rep("xyz", 20000)
print("rep", #big, big:find("zx", 1, true))

local codes = {}
for i = 1, #"luatrace" do
  codes[i] = ("luatrace"):byte(i)
end
print("bytes", table.concat(codes, " "))
print("chars", string.char(unpack(codes)):upper())

local function csv_line(t)
  local out = {}
  for i, v in ipairs(t) do
    out[i] = string.format("%q", tostring(v))
  end
  return table.concat(out, ";")
end
print("csv", csv_line({ 1, "two", 3.5, true }))

local n = 0
for i = 1, 100 do
  n = n + tonumber(string.format("%d", i * 3))
end
print("sum", n)
print("lower", ("MiXeD CaSe"):lower(), ("%d items"):format(5))
print("rep sep", string.rep("ab", 3, "-") == "ababab" and "5.1 ignores sep" or "sep")
