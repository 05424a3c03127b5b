-- Plain calls and recursion: global and local functions, mutual recursion,
-- methods, calls as arguments, multiple returns.

local function add(a, b)
  return a + b
end

local function square(x)
  local y = x * x
  return y
end

function fib(n)
  if n < 2 then
    return n
  end
  return fib(n - 1) + fib(n - 2)
end

local is_odd

local function is_even(n)
  if n == 0 then return true end
  return is_odd(n - 1)
end

function is_odd(n)
  if n == 0 then return false end
  return is_even(n - 1)
end

local function both(n)
  local e = is_even(n)
  local o = is_odd(n)
  return e, o
end

local Counter = {}
Counter.__index = Counter

function Counter.new(start)
  local self = setmetatable({}, Counter)
  self.n = start
  return self
end

function Counter:bump(k)
  self.n = add(self.n, k)
  return self
end

function Counter:get()
  return self.n
end

local function sum_squares(n)
  local s = 0
  for i = 1, n do
    s = add(s, square(i))
  end
  return s
end

print("fib(15) =", fib(15))
print("sum_squares(50) =", sum_squares(50))
print("even/odd 10:", both(10))
print("even/odd 7:", both(7))
local c = Counter.new(3)
c:bump(4):bump(5)
print("counter", c:get())
print("nested", add(square(add(1, 2)), square(square(2))))
