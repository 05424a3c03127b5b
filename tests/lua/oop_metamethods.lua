-- idiomatic OOP: classes, inheritance chains, metamethods
local function class(parent)
  local c = {}
  c.__index = c
  if parent then setmetatable(c, {__index = parent, __call = function(cls, ...) return cls.new(...) end})
  else setmetatable(c, {__call = function(cls, ...) return cls.new(...) end}) end
  return c
end

local Animal = class()
function Animal.new(name, sound)
  local self = setmetatable({}, Animal)
  self.name, self.sound = name, sound
  return self
end
function Animal:speak() return self.name .. " says " .. self:getsound() end
function Animal:getsound() return self.sound end
Animal.__tostring = function(a) return "Animal(" .. a.name .. ")" end
Animal.__eq = function(a, b) return a.name == b.name end
Animal.__lt = function(a, b) return a.name < b.name end
Animal.__le = function(a, b) return a.name <= b.name end
Animal.__concat = function(a, b)
  local sa = type(a) == "table" and a.name or tostring(a)
  local sb = type(b) == "table" and b.name or tostring(b)
  return sa .. "&" .. sb
end

local Dog = class(Animal)
Dog.__tostring = Animal.__tostring
Dog.__eq = Animal.__eq
Dog.__lt = Animal.__lt
Dog.__le = Animal.__le
Dog.__concat = Animal.__concat
function Dog.new(name)
  local self = Animal.new(name, "woof")
  return setmetatable(self, Dog)
end
function Dog:getsound() return Animal.getsound(self):upper() end
function Dog:fetch(n) if n == 0 then return "done" end return self:fetch(n - 1) end

local Puppy = class(Dog)
for k, v in pairs({__tostring=1, __eq=1, __lt=1, __le=1, __concat=1}) do Puppy[k] = Dog[k] end
function Puppy.new(name)
  local self = Dog.new(name)
  return setmetatable(self, Puppy)
end
function Puppy:getsound() return Dog.getsound(self) .. "!" end

local a = Animal("cat", "meow")
local d = Dog("rex")
local p = Puppy("bit")
print(a:speak(), d:speak(), p:speak())
print(tostring(a), tostring(d), tostring(p))
print(d == Dog("rex"), d == p, d < p, p <= d, a .. d, d .. "x", 1 .. p)
print(d:fetch(5), p:fetch(3))

local list = {}
for i, n in ipairs({"zed", "amy", "kim", "bob", "lee", "dan"}) do
  list[i] = (i % 2 == 0) and Dog(n) or Puppy(n)
end
table.sort(list, function(x, y) return x < y end)
local names = {}
for i, x in ipairs(list) do names[i] = tostring(x) end
print(table.concat(names, " "))
table.sort(list, function(x, y) return y <= x end)
names = {}
for i, x in ipairs(list) do names[i] = x.name end
print(table.concat(names, " "))

-- userdata with __len, __index, __call, __gc via newproxy
local proxy = newproxy(true)
local mt = getmetatable(proxy)
local store = {1, 2, 3}
mt.__len = function(u) return #store * 10 end
mt.__index = function(u, k) return store[k] or ("missing " .. tostring(k)) end
mt.__newindex = function(u, k, v) store[k] = v end
mt.__call = function(u, x, y) return x + y, #u end
mt.__unm = function(u) return -#store end
mt.__tostring = function() return "proxy" end
print(#proxy, proxy[2], proxy.foo, proxy(3, 4), -proxy, tostring(proxy))
proxy[4] = 40
print(#proxy, proxy[4])

-- __index chain of functions
local base = setmetatable({}, {__index = function(t, k) return "base:" .. k end})
local mid = setmetatable({}, {__index = function(t, k)
  if k == "m" then return "mid" end
  return base[k]
end})
local top = setmetatable({}, {__index = mid})
print(top.m, top.x, top.y)

-- __newindex with rawset, read-only tables
local function readonly(t)
  return setmetatable({}, {__index = t, __newindex = function(_, k) error("readonly: " .. k, 2) end})
end
local ro = readonly({a = 1})
print(ro.a, pcall(function() ro.b = 2 end))

-- __gc via newproxy, collected deterministically at a full collect
local finalized = {}
do
  local u = newproxy(true)
  getmetatable(u).__gc = function() finalized[#finalized + 1] = "gc ran" end
end
collectgarbage()
collectgarbage()
print(#finalized)
