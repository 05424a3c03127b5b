-- linehits.lua: a recorderd user backend (recorderd ... --backend lua:linehits.lua).
-- A per-line hit histogram: how many times each source line ran (its line
-- events, the hits of coverage.lcov) and the time spent on it, busiest line
-- first, with a bar. Written to linehits.txt in the session directory (or
-- to -o FILE with `recorderd report TRACE --format lua:linehits.lua -o FILE`).
--
--   HITS  MS  FILE:LINE  BAR

local hits, ms = {}, {}   -- "file:line" -> count, -> time (ms)
local last_key, last_t    -- the line running, and since when (ns)

local B = {}

-- line(frame, line, ns): frame's function reached line at traced time ns.
-- Time runs on a line until the next event of any kind: a line is charged
-- what ran on top of the stack, not the callees it calls.
local function stop(ns)
  if last_key then ms[last_key] = ms[last_key] + (ns - last_t) / 1e6 end
  last_key = nil
end

function B.line(frame, line, ns)
  stop(ns)
  local key = frame.file .. ":" .. line
  if not hits[key] then hits[key], ms[key] = 0, 0 end
  hits[key] = hits[key] + 1
  last_key, last_t = key, ns
end

function B.enter(frame, how, ns) stop(ns) end
function B.leave(frame, how, ns) stop(ns) end

function B.close(info)
  stop(info.traced_ns)
  local keys, most = {}, 1
  for k, n in pairs(hits) do
    keys[#keys + 1] = k
    if n > most then most = n end
  end
  table.sort(keys, function(a, b)
    if hits[a] ~= hits[b] then return hits[a] > hits[b] end
    return a < b
  end)
  local path = info.file or (info.dir .. "/linehits.txt")
  local f = assert(io.open(path, "w"))
  f:write(("%10s %12s  %s\n"):format("HITS", "MS", "FILE:LINE"))
  for _, k in ipairs(keys) do
    local bar = ("#"):rep(math.ceil(40 * hits[k] / most))
    f:write(("%10d %12.3f  %s  %s\n"):format(hits[k], ms[k], k, bar))
  end
  f:close()
end

return B
