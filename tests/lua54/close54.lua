-- Lua 5.4's to-be-closed variables: __close runs at a block's end, on
-- break, return and goto out of the block, and during error unwinding
-- (under pcall and xpcall with a message handler), closing in reverse.
local log = {}
local function add(x) log[#log + 1] = tostring(x) end
local function res(name)
  return setmetatable({}, {__close = function(_, e)
    add("close:" .. name .. ":" .. (e and tostring(e):gsub("^.-:%d+: ", "") or "nil"))
  end})
end
local function block()
  do local a <close> = res("block") add("in") end
  for i = 1, 3 do
    local b <close> = res("loop" .. i)
    if i == 2 then break end
  end
  return "block-done"
end
add(block())
local function early(x)
  local c <close> = res("early")
  if x then return "early-ret" end
  local d <close> = res("late")
  return "late-ret"
end
add(early(true)) add(early(false))
local function failing(depth)
  local e <close> = res("f" .. depth)
  if depth == 0 then error("deep failure") end
  return failing(depth - 1) + 1
end
add(pcall(failing, 3))
local function handler(m) add("handler") return "handled: " .. tostring(m):gsub("^.-:%d+: ", "") end
add(select(2, xpcall(failing, handler, 2)))
-- a __close that errors itself replaces the error
local function bad_close()
  local z <close> = setmetatable({}, {__close = function() error("close-error", 0) end})
  error("first", 0)
end
add(select(2, pcall(bad_close)))
-- goto out of a block closes it
local function jumper()
  local n = 0
  ::again::
  do
    local g <close> = res("goto" .. n)
    n = n + 1
    if n < 3 then goto again end
  end
  return n
end
add(jumper())
print(table.concat(log, " "))
