-- A leak and a churn, for the memory profile (doc/memory.md):
--   recorderd run --memory -- lua5.1 examples/memory.lua
-- remember() keeps every record it makes; render() makes as many strings
-- and drops them at once (the collector frees them).
local sessions = {}

local function remember(id)
  sessions[#sessions + 1] = {id = id, name = "user" .. id, seen = os.time()}
end

local function render(id)
  local parts = {}
  for i = 1, 20 do
    parts[i] = string.format("<td>%d:%d</td>", id, i)
  end
  return table.concat(parts)
end

local function serve(n)
  local bytes = 0
  for id = 1, n do
    remember(id)
    bytes = bytes + #render(id)
  end
  return bytes
end

local bytes = serve(20000)
collectgarbage("collect") -- what render made is freed now: live is the leak
print(bytes, #sessions)
