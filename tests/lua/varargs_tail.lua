-- very long varargs through tail calls, vararg functions tail-calling C
-- functions that call back into Lua, pcall as a tail call in recursion
local unpack = unpack or table.unpack
local function count(...) return select("#", ...) end
local function last(...) local n = select("#", ...) return (select(n, ...)) end
local function fwd0(...) return count(...) end
local function fwd1(a, ...) return fwd0(a, ...) end
local function fwd2(...) return fwd1(...) end
local big = {}
for i = 1, 200 do big[i] = i end
print("n", fwd2(unpack(big)))
print("n+nil", fwd2(unpack(big, 1, 210)))
print("last", last(unpack(big)))
-- a vararg function tail-calling C functions with callbacks
local function cb(c) return "<" .. c .. ">" end
local function vgsub(...) return string.gsub(...) end
print(vgsub("abc", "%w", cb))
local function vsort(t, ...) table.sort(t, ...) return t end
local function vsortt(...) return table.sort(...) end
local t = {3, 1, 2, 5, 4}
vsortt(t, function(a, b) return a > b end)
print(table.concat(t, " "))
local function vpcall(...) return pcall(...) end
print(vpcall(function(...) return count(...) end, unpack(big, 1, 150)))
print(vpcall(error, "e1", 0))
print(vpcall(vpcall, vpcall, error, "e2", 0))
-- select with many values through tail calls
local function sel(i, ...) if i > select("#", ...) then return "done" end return sel(i + 50, ...) end
print(sel(1, unpack(big)))
-- pcall as a tail call in a recursion: return pcall(rec, n - 1)
local function rec(n, ...)
  if n == 0 then return count(...), "bottom" end
  return pcall(rec, n - 1, n, ...)
end
local res = {rec(40)}
print(#res, res[1], res[#res])
local function recerr(n)
  if n == 0 then error({depth = n}) end
  return pcall(recerr, n - 1)
end
local r2 = {recerr(30)}
print(#r2, r2[1], type(r2[#r2]))
-- xpcall as a tail call with a vararg handler
local function h(...) return "h:" .. count(...) end
local function xrec(n)
  if n == 0 then error("x bottom", 0) end
  return xpcall(function() return xrec(n - 1) end, h)
end
print(xrec(20))
-- a vararg method tail call through __index chains
local base = {}
function base:sum(...) local s = 0 for i = 1, select("#", ...) do s = s + select(i, ...) end return s end
local mid = setmetatable({}, {__index = base})
local obj = setmetatable({}, {__index = mid})
local function m(...) return obj:sum(...) end
print(m(unpack(big)))
-- unpack as a tail call with a huge range
local function unp(tt, i, j) return unpack(tt, i, j) end
print(count(unp(big, 1, 200)), count(unp(big, 150, 120)))
-- vararg closures made in a loop, each forwarding to the next
local chain = function(...) return count(...) end
for i = 1, 30 do
  local nxt = chain
  chain = function(...) return nxt(i, ...) end
end
print(chain())
-- a vararg coroutine body with many values yielded back and forth
local co = coroutine.wrap(function(...)
  local n = count(...)
  local args = {coroutine.yield(...)}
  return n, #args, count(coroutine.yield(unpack(args)))
end)
print(count(co(unpack(big, 1, 180))))
print(count(co(unpack(big, 1, 190))))
print(co(unpack(big, 1, 100)))
