-- Lua 5.1's module() and setfenv: functions defined in a module table
-- environment, called through package.loaded and through locals.
package.preload["shapes"] = function(...)
  module(...)
  function area(w, h) return w * h end
  function square(s) return area(s, s) end
  return _M
end
local shapes = require "shapes"
print(shapes.square(4), shapes.area(2, 3))
local env = setmetatable({}, {__index = _G})
local chunk = loadstring("function helper(x) return x + 1 end return helper(41)")
setfenv(chunk, env)
print(chunk(), env.helper(1))
local t = setmetatable({}, {__tostring = function(s) return "T!" end,
                            __concat = function(a, b) return "cat" end,
                            __call = function(self, x) return x * 3 end})
print(tostring(t), t .. "x", t(5))
