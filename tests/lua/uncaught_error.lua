-- An uncaught runtime error: lua5.1 prints the message and a traceback on
-- stderr and exits with status 1. The interpreter's traceback handler and
-- debug.traceback run as C calls on top of the failing stack.

local function divide(t, k)
  return t[k].value / 2
end

local function compute(t)
  local r = divide(t, "missing")
  return r
end

print("before the error")
local ok, e = pcall(compute, { present = { value = 4 } })
print("caught once", ok, e)
compute({ present = { value = 4 } })
print("never printed")
