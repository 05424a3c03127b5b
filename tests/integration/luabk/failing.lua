-- Test backend: raises in record() at its 50th call (LUABK_FAIL_AT).
local n, at = 0, tonumber(os.getenv("LUABK_FAIL_AT")) or 50
local B = {}
local function explode(kind)
  error("exploding on record " .. n .. " (" .. tostring(kind) .. ")")
end
function B.record(kind)
  n = n + 1
  if n == at then explode(kind) end
  assert(n < at, "called after its error")
end
function B.close(info)
  error("close must not be called after an error")
end
return B
