-- Functions without line information: a chunk compiled by `luac5.1 -s`
-- (LuaJIT: string.dump(f, true)). Lua fires their line events with line
-- 0 (at a function's start and at every backward jump): no line is known.

-- no temporary file: os.tmpname reads the clock, which the no-clock
-- coverage test (nocov.py) forbids
local function stripped(path)
  if jit then
    return assert(loadstring(string.dump(assert(loadfile(path)), true), "=stripped"))
  end
  local p = assert(io.popen("luac5.1 -s -o - " .. path))
  local bytes = p:read("*a")
  p:close()
  return assert(loadstring(bytes, "=stripped"))
end

local function times10(i) return i * 10 end

local M = stripped("corpus_pkg/stripped.lua")()
print(M.run(times10))
print(M.run(function(i) return i + 1 end))
local info = debug.getinfo(M.run, "S")
print(info.what, info.short_src)
