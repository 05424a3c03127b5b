-- load() with a reader function: the reader is a Lua function called from
-- C (lua_load) several times; chunks compiled from it run; a reader that
-- errors; loadstring and string.dump round trips.
local parts = {"local a, b = ...\n", "local function f(x) return x * 2 end\n",
               "return f(a) + ", "b\n"}
local function reader_of(t)
  local i = 0
  return function()
    i = i + 1
    return t[i]
  end
end
local chunk = assert(load(reader_of(parts), "=reader"))
print("chunk", chunk(3, 4))
print("bad", pcall(load, function() error("reader failed") end))
local f = assert(loadstring("return function(n) local s = 0 for i = 1, n do s = s + i end return s end", "=gen"))()
print("gen", f(10))
local g = assert(loadstring(string.dump(f)))
print("dump", g(20))
