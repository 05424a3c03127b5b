-- Test backend: folded stacks weighted by line events, rebuilt from the
-- stack callbacks alone (enter/leave/line/thread). They must equal
-- `recorderd report S --format folded --weight lines`. Writes info.file or
-- DIR/luabk.folded.
local pre = {}     -- thread -> { [depth] = path of the frames 1..depth }
local labs = {}    -- thread -> { [depth] = label }
local base = {}    -- thread -> path its stack hangs under ("" = the root)
local chain = {}   -- resume chain, current last
local counts = {}

local function join(a, b) return a == "" and b or a .. ";" .. b end

local function top_path(th)
  local p = pre[th]
  return p and p[#p] or base[th] or ""
end

local function rebase(th, b)
  base[th] = b
  local p, l = pre[th] or {}, labs[th] or {}
  for i = 1, #p do p[i] = join(i == 1 and b or p[i - 1], l[i]) end
end

local B = {}

function B.enter(frame, how, ns)
  local th, d = frame.thread, frame.depth
  local p = pre[th]
  if not p then p = {}; pre[th] = p; labs[th] = {} end
  assert(#p == d - 1, "enter at depth " .. d .. " over " .. #p .. " frames")
  labs[th][d] = frame.label
  p[d] = join(d == 1 and (base[th] or "") or p[d - 1], frame.label)
end

function B.leave(frame, how, ns)
  local p = pre[frame.thread]
  assert(p and #p == frame.depth, "leave of a frame not on top")
  p[frame.depth] = nil
end

function B.line(frame, line, ns)
  local k = pre[frame.thread][frame.depth]
  counts[k] = (counts[k] or 0) + 1
end

function B.thread(id, how, ns)
  if how == "start" then
    chain = { id }
    rebase(id, "")
  elseif how == "yield" then
    while chain[#chain] ~= id do chain[#chain] = nil end
  else -- resume: hangs under the resumer's current frame
    local under = top_path(chain[#chain])
    chain[#chain + 1] = id
    rebase(id, under)
  end
end

function B.close(info)
  local f = assert(io.open(info.file or (info.dir .. "/luabk.folded"), "w"))
  for k, n in pairs(counts) do f:write(k, " ", n, "\n") end
  f:close()
end

return B
