-- Lua 5.4's tail calls: a TAILCALL event puts the callee in its caller's
-- place; Lua and C functions in tail position, chains, and a tail call
-- into a function that errors under pcall.
local function leaf(n) return n * 2 end
local function chain(n)
  if n == 0 then return leaf(21) end
  return chain(n - 1)
end
local function to_c(s) return string.upper(s) end
local function to_select(...) return select("#", ...) end
local function bad(x) if x > 2 then error("bad " .. x) end return x end
local function tail_bad(x) return bad(x) end
local t = {}
for i = 1, 5 do
  t[#t + 1] = chain(i)
  t[#t + 1] = to_c("x" .. i)
  t[#t + 1] = to_select(1, 2, i)
  local ok, e = pcall(tail_bad, i)
  t[#t + 1] = tostring(ok) .. ":" .. tostring(e)
end
local obj = setmetatable({}, {__index = function(_, k) return leaf(#k) end})
local function via_meta(k) return obj[k] end
t[#t + 1] = via_meta("abc")
print(table.concat(t, " "))
