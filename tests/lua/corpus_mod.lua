-- A module required by modules.lua: its functions are named
-- corpus_mod.<key> once require has stored the table in package.loaded.

local M = {}

local function helper(x)
  return x + 1
end

function M.inc(x)
  return helper(x)
end

function M.sum(...)
  local s = 0
  for i = 1, select("#", ...) do
    s = s + select(i, ...)
  end
  return s
end

function M.apply(f, x)
  local r = f(x)
  return r
end

M.loaded_with = helper(41)

return M
