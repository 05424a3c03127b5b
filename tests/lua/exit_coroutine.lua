-- os.exit(3) from inside a coroutine nested in another coroutine, with a
-- wrap generator on the stack.

local function finish(code)
  io.write("exiting with ", code, "\n")
  os.exit(code)
end

local inner = coroutine.create(function(x)
  coroutine.yield(x + 1)
  finish(3)
end)

local gen = coroutine.wrap(function()
  local _, v = coroutine.resume(inner, 1)
  coroutine.yield(v)
  coroutine.resume(inner)
  coroutine.yield("unreachable")
end)

print("first", gen())
print("second", gen())
print("never printed")
