-- LuaJIT only (corpus-luajit-ffi_metatype): methods and metamethods of a
-- C struct (ffi.metatype), which the FFI's own cdata metamethods (C
-- functions) call: __add making new cdata, __eq, __len, __tostring,
-- __call, __concat, __lt, methods through an __index table, an __index
-- function, a __newindex that raises (caught by pcall), 50 additions in a
-- loop, and a __gc finalizer (run by the collector with hooks off).
local ffi = require "ffi"
ffi.cdef [[ typedef struct { double x, y; } point; ]]
local point
local mt = {
  __add = function(a, b) return point(a.x + b.x, a.y + b.y) end,
  __eq = function(a, b) return a.x == b.x and a.y == b.y end,
  __len = function(a) return math.sqrt(a.x * a.x + a.y * a.y) end,
  __tostring = function(a) return "(" .. a.x .. "," .. a.y .. ")" end,
  __call = function(a, k) return a.x * k end,
  __index = {
    scale = function(a, k) return point(a.x * k, a.y * k) end,
    norm = function(a) return #a end,
  },
  __newindex = function(a, k, v) error("no field " .. k) end,
  __concat = function(a, b) return tostring(a) .. tostring(b) end,
  __lt = function(a, b) return #a < #b end,
  __gc = function(a) end,
}
point = ffi.metatype("point", mt)
local p, q = point(3, 4), point(1, 1)
print(tostring(p + q), #p, p == point(3, 4), p(2), p:scale(2):norm())
print(p .. q, q < p, pcall(function() p.z = 1 end))
local s = point(0, 0)
for i = 1, 50 do s = s + point(i, -i) end
print(tostring(s))
local dyn = ffi.metatype("struct { int n; }", { __index = function(c, k) return k .. c.n end })
print(dyn(7).abc)
