-- Tail calls: a tail-called function replaces its caller on the stack.
-- Chains of tail calls, tail recursion 10000 deep, tail calls into C
-- functions (which do not replace their caller), tail calls inside pcall,
-- tail calls to vararg functions and methods, tail calls in coroutines.

local function leaf(x)
  local y = x * 2
  return y
end

local function c(x) return leaf(x + 1) end
local function b(x) return c(x + 1) end
local function a(x) return b(x + 1) end

local function count_down(n, acc)
  if n == 0 then
    return acc
  end
  return count_down(n - 1, acc + 1)
end

local function to_string(x)
  return tostring(x)
end

local function pick(...)
  return select("#", ...), select(2, ...)
end

local function to_pick(...)
  return pick(...)
end

local function protected(x)
  return pcall(a, x)
end

local obj = { k = 10 }
function obj:get(d) return self.k + d end
function obj:forward(d) return self:get(d) end

local function ping(n)
  if n == 0 then return "pong" end
  local pong
  function pong(m) return ping(m - 1) end
  return pong(n)
end

local function in_coroutine(n)
  local co = coroutine.create(function(x)
    local v = coroutine.yield(x)
    return count_down(v, 0)
  end)
  local _, first = coroutine.resume(co, n)
  local _, second = coroutine.resume(co, first * 2)
  return second
end

local function tail_into_error(msg)
  return error(msg, 0)
end

print("chain", a(1))
print("tail recursion", count_down(10000, 0))
print("into C", to_string(42), to_pick(1, 2, 3))
print("in pcall", protected(5))
print("pcall tail", pcall(to_pick, "x", "y"))
print("method", obj:forward(5))
print("ping", ping(50))
print("coroutine", in_coroutine(100))
print("tail error", pcall(tail_into_error, "tail-called error"))
print("unpack", (function(t) return unpack(t) end)({ 1, 2, 3 }))
