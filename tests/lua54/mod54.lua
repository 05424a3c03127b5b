-- A module required by require54.lua (from this directory: ./?.lua).
local M = {}
function M.twice(x) return 2 * x end
return M
