-- slowcalls.lua: a recorderd user backend (recorderd ... --backend lua:slowcalls.lua).
-- Logs every call that took longer than a threshold (inclusive traced time,
-- callees included), in the order the calls ended, to slowcalls.txt in the
-- session directory (or -o FILE with `--format lua:slowcalls.lua`).
-- The threshold is LUATRACE_SLOW_MS in recorderd's environment (default 1).
--
--   MS  DEPTH  HOW  FUNCTION (file:linedefined)  CALLED FROM
-- HOW is how the call ended: return, error (unwound), tail (replaced by a
-- tail call) or stop (still running when tracing stopped).

local threshold_ns = (tonumber(os.getenv("LUATRACE_SLOW_MS")) or 1) * 1e6
local stacks = {}          -- thread id -> { {frame, t0}, ... }
local out = {}

local B = {}

function B.enter(frame, how, ns)
  local s = stacks[frame.thread]
  if not s then s = {}; stacks[frame.thread] = s end
  -- frame tables are shared by every call of a function: keep what we need
  s[frame.depth] = { label = frame.label, t0 = ns }
end

function B.leave(frame, how, ns)
  local s = stacks[frame.thread]
  local e = s and s[frame.depth]
  if not e then return end
  s[frame.depth] = nil
  local dt = ns - e.t0
  if dt >= threshold_ns then
    local caller = s[frame.depth - 1]
    out[#out + 1] = ("%12.3f %5d  %-6s  %s  %s"):format(dt / 1e6, frame.depth, how, e.label,
                                                        caller and caller.label or "-")
  end
end

function B.close(info)
  -- whole, 0600, through the session directory (info.write); -o FILE of
  -- report --format lua:... names a file of the user's own choosing
  local text = {}
  local f = { write = function(_, ...) for _, s in ipairs({...}) do text[#text + 1] = s end end }
  f:write(("# calls of %g ms or more\n"):format(threshold_ns / 1e6))
  f:write(("%12s %5s  %-6s  %s  %s\n"):format("MS", "DEPTH", "HOW", "FUNCTION", "CALLED FROM"))
  for _, l in ipairs(out) do f:write(l, "\n") end
  if info.file then
    local file = assert(io.open(info.file, "w"))
    file:write(table.concat(text))
    file:close()
  else
    assert(info.write("slowcalls.txt", table.concat(text)))
  end
end

return B
