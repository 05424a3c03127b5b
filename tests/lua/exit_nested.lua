-- os.exit(3) from inside nested calls (inside pcall and a C callback):
-- nothing unwinds, the process exits at once with status 3; buffered
-- output is still flushed.

local function level3()
  print("about to exit")
  os.exit(3)
  print("never printed")
end

local function level2()
  local t = { 2, 1 }
  table.sort(t, function(a, b)
    level3()
    return a < b
  end)
end

local function level1()
  local ok = pcall(level2)
  print("never printed either", ok)
end

print("start")
level1()
