-- A module required as "corpus_pkg.util" by module_paths.lua: its functions
-- are named by their package.loaded path, corpus_pkg.util.split.
local M = {}

local function trim(s)
  return (s:gsub("^%s+", ""):gsub("%s+$", ""))
end

function M.split(s, sep)
  local out, from = {}, 1
  while true do
    local at = s:find(sep, from, true)
    out[#out + 1] = trim(s:sub(from, (at or 0) - 1))
    if not at then return out end
    from = at + #sep
  end
end

function M.join(t, sep)
  return table.concat(t, sep)
end

M.text = {}
function M.text.upper(s) return s:upper() end  -- one level deeper: no path

return M
