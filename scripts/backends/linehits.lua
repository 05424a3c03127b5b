-- linehits.lua: a recorderd user backend (recorderd ... --backend lua:linehits.lua).
-- A per-line hit histogram: how many times each source line ran (its line
-- events, the hits of coverage.lcov) and the time spent on it, busiest line
-- first, with a bar. Written to linehits.txt in the session directory (or
-- to -o FILE with `recorderd report TRACE --format lua:linehits.lua -o FILE`).
--
--   HITS  MS  FILE:LINE  BAR

local hits, ms = {}, {}   -- file -> { [line] = count }, -> { [line] = time (ns) }
local last_ms, last_line, last_t  -- the line running (its file's ms table), since when

local B = {}

-- line(frame, line, ns): frame's function reached line at traced time ns.
-- Time runs on a line until the next event of any kind: a line is charged
-- what ran on top of the stack, not the callees it calls.
local function stop(ns)
  if last_ms then last_ms[last_line] = last_ms[last_line] + (ns - last_t) end
  last_ms = nil
end

function B.line(frame, line, ns)
  stop(ns)
  local file = frame.file
  local h, m = hits[file], ms[file]
  if not h then h, m = {}, {}; hits[file], ms[file] = h, m end
  h[line] = (h[line] or 0) + 1
  m[line] = m[line] or 0
  last_ms, last_line, last_t = m, line, ns
end

function B.enter(frame, how, ns) stop(ns) end
function B.leave(frame, how, ns) stop(ns) end

function B.close(info)
  stop(info.traced_ns)
  local rows, most = {}, 1
  for file, h in pairs(hits) do
    for line, n in pairs(h) do
      rows[#rows + 1] = { key = file .. ":" .. line, hits = n, ms = ms[file][line] / 1e6 }
      if n > most then most = n end
    end
  end
  table.sort(rows, function(a, b)
    if a.hits ~= b.hits then return a.hits > b.hits end
    return a.key < b.key
  end)
  -- whole, 0600, through the session directory (info.write); -o FILE of
  -- report --format lua:... names a file of the user's own choosing
  local text = {}
  local f = { write = function(_, ...) for _, s in ipairs({...}) do text[#text + 1] = s end end }
  f:write(("%10s %12s  %s\n"):format("HITS", "MS", "FILE:LINE"))
  for _, r in ipairs(rows) do
    local bar = ("#"):rep(math.ceil(40 * r.hits / most))
    f:write(("%10d %12.3f  %s  %s\n"):format(r.hits, r.ms, r.key, bar))
  end
  if info.file then
    local file = assert(io.open(info.file, "w"))
    file:write(table.concat(text))
    file:close()
  else
    assert(info.write("linehits.txt", table.concat(text)))
  end
end

return B
