-- pcall and error: string errors, nested pcall, table error objects,
-- error levels, runtime errors raised by the VM, errors through several
-- frames; nothing stale must be left on the stack after each unwind.

local function fail(msg)
  error(msg)
end

local function fail_level2(msg)
  error(msg, 2)
end

local function middle(f, msg)
  local r = f(msg)
  return r
end

local function runtime_error()
  local t = nil
  return t.field
end

local function arith_error(x)
  return x + {}
end

local function report(tag, ok, e)
  if type(e) == "table" then
    print(tag, ok, "table error", e.code, e.msg)
  else
    print(tag, ok, e)
  end
end

report("plain", pcall(fail, "boom"))
report("level2", pcall(middle, fail_level2, "blame caller"))
report("runtime", pcall(runtime_error))
report("arith", pcall(arith_error, 1))
report("table", pcall(fail, { code = 42, msg = "structured" }))
report("nil", pcall(error))
report("number", pcall(error, 17))

local function inner()
  local ok, e = pcall(middle, fail, "inner failure")
  report("inner", ok, e)
  error({ code = 7, msg = "outer failure" })
end

local function outer()
  local ok, e = pcall(inner)
  report("outer", ok, e)
  local ok2, e2 = pcall(pcall, fail, "doubly protected")
  print("pcall(pcall)", ok2, e2)
  return "outer done"
end

report("nested", pcall(outer))

-- unwinding through many frames, then normal calls again
local function chain(n)
  if n == 0 then fail("end of chain") end
  local v = chain(n - 1)
  return v
end
for i = 1, 3 do
  report("chain" .. i, pcall(chain, i * 5))
end
print("after", middle(function(x) return x .. "!" end, "fine"))
