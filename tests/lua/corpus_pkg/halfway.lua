-- Required by require_errors.lua: fails halfway through loading on its
-- first two loads (after defining and calling functions), loads on the
-- third. Its attempts are counted in a global the program reads.
local M = {}

local function scale(x) return x * 10 end

function M.big(x) return scale(x) + 1 end

HALFWAY_TRIES = (HALFWAY_TRIES or 0) + 1
local warm = M.big(HALFWAY_TRIES)

if HALFWAY_TRIES == 1 then
  error("halfway: first load fails at " .. warm)
elseif HALFWAY_TRIES == 2 then
  local function deeper(n)
    if n == 0 then error({ code = warm }) end
    return deeper(n - 1) + 1
  end
  deeper(4)
end

M.tries = HALFWAY_TRIES
return M
