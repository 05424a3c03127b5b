-- Test backend: writes every record() call, one per line: the kind, then
-- its arguments; the time of a line record is checked (an integer >= 0)
-- and written as "ns".
local out = {}
local B = {}
function B.record(kind, a, b, c)
  if type(kind) == "number" then
    assert(type(a) == "number" and a >= 0 and a == math.floor(a), "bad time " .. tostring(a))
    out[#out + 1] = kind .. " ns"
  else
    local t = { kind }
    for _, v in ipairs({ a, b, c }) do t[#t + 1] = tostring(v) end
    out[#out + 1] = table.concat(t, " ")
  end
end
function B.close(info)
  local f = assert(io.open(info.file or (info.dir .. "/records.txt"), "w"))
  f:write(table.concat(out, "\n"), "\n")
  f:close()
end
return B
