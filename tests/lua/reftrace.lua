-- reftrace: the reference tracer, the "truth" luatrace is tested against.
-- Usage: REFTRACE_OUT=out.txt lua5.1 -lreftrace prog.lua
-- Stacks are computed from debug.getinfo on the real stacks only; see
-- doc/reports.md for the label rules and tests/lua/README.md for the output.
--
-- Design. Walking a whole stack with debug.getinfo costs O(depth^2) (each
-- lua_getstack walks from the top), far too slow for 3000-deep recursion at
-- every event. So each thread keeps a cache of its frames by position (from
-- the bottom; tail pseudo-levels are positions too) and re-reads with getinfo
-- only the positions that may have changed since its last event. Between two
-- events of one thread the stack can only: lose frames (return events, or an
-- error unwinding down to a catching C function, after which the next event
-- is at most one above the catcher and is then a call); gain one frame (whose
-- call event is the next event); or have the caller of a just-called Lua
-- function turned into a tail pseudo-level (a tail call). Everything at or
-- above the top that may differ is re-read. The depth itself is found with
-- getinfo probes (galloping search from the previous depth).
--
-- Output (fully buffered; exit() flushes it, also on os.exit and uncaught
-- errors):
--   N <id> <parent> <label>   stack node <id> = stack <parent> + frame <label>
--                             (parent 0 is the empty stack)
--   L <id>                    a line event with full stack <id>
--   C <id>                    a call, stack <id> has the called function as leaf

local out_path = os.getenv("REFTRACE_OUT")
if not out_path or out_path == "" then
  error("reftrace: set REFTRACE_OUT to the output file")
end
local out = assert(io.open(out_path, "w"))
out:setvbuf("full")

-- debug.getupvalue refuses C functions in 5.1; a wrap closure's coroutine
-- is its first upvalue, so a tiny C helper reads it (reftrace_c.c).
local has_c, rc = pcall(require, "reftrace_c")
if not has_c then
  error("reftrace: needs reftrace_c.so (tests/lua/reftrace_c.c) on LUA_CPATH: "
        .. tostring(rc))
end
local cupvalue, cfid, cbase, csym, cmod = rc.cupvalue, rc.cfid, rc.cbase, rc.csym, rc.cmod

local getinfo, getlocal = debug.getinfo, debug.getlocal
local sethook, gethook = debug.sethook, debug.gethook
-- LuaJIT has one hook for the whole VM: every coroutine has it already, and
-- unhooking a dead one would unhook them all
local ONE_HOOK = rawget(_G, "jit") ~= nil
local running, co_resume = coroutine.running, coroutine.resume
-- 5.4's coroutine.close runs the pending __close of the coroutine it
-- closes in that coroutine: its caller stands as the resumer
local co_close = rawget(coroutine, "close")
local co_status = coroutine.status
local rawequal, rawget, next, type, tostring = rawequal, rawget, next, type, tostring
local dump = string.dump
-- the table of globals (5.4 has no getfenv)
local G = rawget(_G, "getfenv") and getfenv(0) or _G
local REGISTRY = debug.getregistry()
local LOADED = REGISTRY._LOADED  -- package.loaded
local SELF = getinfo(1, "S").source

-- REFTRACE_NAIVE=1: re-read the whole stack at every event (slow; checks the
-- cache against the plain definition).
local NAIVE = os.getenv("REFTRACE_NAIVE") == "1"

-- stands for the main thread (coroutine.running() is nil in 5.1; 5.4 says
-- true after it)
local MAIN = {}

-- {======================================================================
-- Frame labels, fixed per function at first sight.

local labels = {}  -- first-sight key -> label
local taken = {}   -- label given -> the last number tried from it as a base

local function clean(s)
  return (s:gsub(";", ","):gsub("[\r\n%z]", " "))
end
local by_closure = setmetatable({}, { __mode = "k" })  -- Lua closure -> label

-- Lua 5.1's compatibility aliases of string.gmatch and math.fmod lose to
-- any other name.
local ALIAS = { ["string.gfind"] = true, ["math.mod"] = true }

local function shorter(best, c)
  if best == nil then return c end
  if ALIAS[c] ~= ALIAS[best] then return ALIAS[c] and best or c end
  if #c < #best or (#c == #best and c < best) then return c end
  return best
end

-- v is the function f: the same closure for Lua, the same C function for C.
local function same(v, f, cf)
  if cf then return type(v) == "function" and cfid(v) == cf end
  return rawequal(v, f)
end

-- Shortest name of f among the globals and the tables in package.loaded.
local function global_name(f)
  local best
  local cf = cfid(f)
  for k, v in next, G do
    if type(k) == "string" and same(v, f, cf) then best = shorter(best, k) end
  end
  for m, t in next, LOADED do
    if type(m) == "string" and m ~= "_G" and type(t) == "table" then
      for k, v in next, t do
        if type(k) == "string" and same(v, f, cf) then
          best = shorter(best, m .. "." .. k)
        end
      end
    end
  end
  return best
end

-- The standard library's iterators, by their C function (LuaJIT's
-- ipairs iterator, a fast function, by its one closure): what ipairs,
-- string.gmatch and io.lines return, found at load
local ITERATORS = {}
for _, probe in ipairs { { "ipairs iterator", ipairs, {} },
    { "string.gmatch iterator", string.gmatch, "", "" }, { "io.lines iterator", io.lines } } do
  local ok, it = pcall(probe[2], (unpack or table.unpack)(probe, 3))
  if ok and type(it) == "function" and cfid(it) then ITERATORS[cfid(it)] = probe[1] end
end

-- require and the first four package loaders (searchers in 5.4), by their
-- C function, found at load: a frame of one is named by the module it
-- loads, its first argument (require "a.b"), as the collector names it
local BYARG = {}
do
  local req, pkg = rawget(G, "require"), rawget(LOADED, "package")
  local list = type(pkg) == "table" and (rawget(pkg, "loaders") or rawget(pkg, "searchers"))
  if type(req) == "function" and cfid(req) then BYARG[cfid(req)] = true end
  for i = 1, 4 do
    local v = type(list) == "table" and rawget(list, i)
    if type(v) == "function" and cfid(v) then BYARG[cfid(v)] = true end
  end
end

-- The module name a frame of require or a loader at level (label_of's
-- caller's) was called with, or nil.
local function module_arg(key, level)
  if not level or not BYARG[key] then return nil end
  local _, a = getlocal(level + 2, 1)  -- past label_of and this function
  if type(a) == "string" and #a > 0 and #a <= 200 and not a:find("%z") then return a end
  return nil
end

-- A C function no global or module holds: a library iterator (above),
-- else the shortest of package.loaders[N] (searchers in 5.4) and KEY:k, k a string key of a
-- table held by the registry under the string KEY (a metatable:
-- FILE*:read), or of that table's __index table; else its exported C
-- symbol (luaopen_lfs).
local function c_name(f)
  local best
  local cf = cfid(f)
  if cf and ITERATORS[cf] then return ITERATORS[cf] end
  local function scan(t, key)
    for k, v in next, t do
      if type(k) == "string" and same(v, f, cf) then best = shorter(best, key .. ":" .. k) end
    end
  end
  local pkg = rawget(LOADED, "package")
  local lname = type(pkg) == "table" and (rawget(pkg, "loaders") and "loaders" or "searchers")
  local loaders = lname and rawget(pkg, lname) -- package.searchers in Lua 5.4
  if type(loaders) == "table" then
    for i = 1, 64 do
      local v = rawget(loaders, i)
      if v == nil then break end
      if same(v, f, cf) then best = shorter(best, "package." .. lname .. "[" .. i .. "]") end
    end
  end
  for key, mt in next, REGISTRY do
    if type(key) == "string" and key ~= "_LOADED" and type(mt) == "table" then
      scan(mt, key)
      local index = rawget(mt, "__index")
      if type(index) == "table" and not rawequal(index, mt) then scan(index, key) end
    end
  end
  if best then return best end
  -- else KEY (upvalue N), a global C function's upvalue (ipairs's iterator)
  for key, v in next, G do
    if type(key) == "string" and type(v) == "function" and cfid(v) then
      for i = 1, 8 do
        if select("#", cupvalue(v, i)) == 0 then break end
        if same(cupvalue(v, i), f, cf) then best = shorter(best, key .. " (upvalue " .. i .. ")") end
      end
    end
  end
  return best or csym(f)
end

-- Every wrap closure is one C function; each coroutine body is one
-- function to a reader: the key of the body the closure's coroutine runs
-- (its deepest frame, or the function at its base before it starts).
local WRAP_CF = cfid(coroutine.wrap(function() end))
local function wrap_body_key(f)
  local co = cupvalue(f, 1)
  if type(co) ~= "thread" then return nil end
  -- the deepest frame: a tail pseudo-level (func nil) is no frame, and
  -- when the body tail-called, the deepest frame is its callee
  local body, level = cbase(co), 0
  while true do
    local info = getinfo(co, level, "f")
    if not info then break end
    body = info.func or body
    level = level + 1
  end
  if type(body) ~= "function" or cfid(body) then return nil end
  local b = getinfo(body, "S")
  -- the name when the call site gives none to look up: where the body is
  local file = b.source:sub(1, 1) == "@" and b.source:sub(2):match("[^/]*$") or b.short_src
  local place = "coroutine.wrap(" .. file .. ":" .. (b.linedefined > 0 and b.linedefined or 0) .. ")"
  return "wrap\0" .. b.source .. ":" .. b.linedefined .. "\0" .. dump(body), place
end

-- A wrap frame's body, kept per position of its thread (st.wrap_f,
-- st.wrap_key, st.wrap_place) while that frame lives. Lua 5.4's wrap
-- function resets its coroutine when the body fails (lua_closethread),
-- before the error reaches a handler running on top of the frame: read
-- again then, the frame would lose the body it was called with, which
-- 5.1 still shows (a dead coroutine keeps its frames there). Only the
-- frame that read it gets it back: a call at position p (another frame
-- there) forgets it, so a later call of the dead wrap stays generic.
-- Read again while it lives, the frame keeps it whatever the coroutine
-- now shows: a body that tail-called and then died leaves its callee at
-- the coroutine's base (5.1, LuaJIT), which is not the body it was called
-- with.
local function wrap_remembered(st, p, f, key, place)
  if not st then return key, place end
  if rawequal(st.wrap_f[p], f) then
    return st.wrap_key[p], st.wrap_place[p]
  end
  if key then
    st.wrap_f[p], st.wrap_key[p], st.wrap_place[p] = f, key, place
  end
  return key, place
end

-- LuaJIT's FFI makes every call of a C function (ffi.C.qsort(...), a
-- callback's caller) through one function, the cdata metatable's __call;
-- the collector names it "ffi C call" (doc/tracing.md), as the call site
-- would name only its first use: a C frame at level (label_of's caller's)
-- whose first argument is a cdata with f as its __call.
local getmetatable_raw = debug.getmetatable
local function ffi_call(f, level)
  if not ONE_HOOK or not level then return false end
  local _, a = getlocal(level + 2, 1)  -- past label_of and this function
  if type(a) ~= "cdata" then return false end
  local mt = getmetatable_raw(a)
  return type(mt) == "table" and rawequal(rawget(mt, "__call"), f)
end

-- The names Lua gives any function a generic for calls (5.1, LuaJIT).
local FOR_SITE = {["(for generator)"] = true, ["for iterator"] = true}

-- info: getinfo fields "Snf" of a frame that is not a tail pseudo-level;
-- level: its level, as the caller would pass it to getinfo (require's
-- argument is read there); st, p: its thread's state and its position
-- there (a wrap frame's remembered body), nil for a call's first sight
local function label_of(info, level, st, p)
  local what, f, key, where = info.what, info.func
  local generic_wrap, place, arg
  if what == "C" then
    key = cfid(f)  -- one C function, however many closures (pairs)
    arg = module_arg(key, level)
    if arg then key = tostring(key) .. "\0" .. arg end
    if key == WRAP_CF then
      key, place = wrap_remembered(st, p, f, wrap_body_key(f))
      generic_wrap = not key
      key = key or WRAP_CF
    end
    where = "[C]"
  else
    local label = by_closure[f]
    if label then return label end
    local src = info.source
    if src:sub(1, 1) == "@" then src = src:sub(2) else src = info.short_src end
    -- LuaJIT's built-in Lua functions (table.remove) say -1: the label
    -- rule's line is 0 then (the trace's lines are never negative)
    where = src .. ":" .. (info.linedefined > 0 and info.linedefined or 0)
    -- the function's prototype: closures of one function share it, two
    -- functions defined on one line do not
    key = where .. "\0" .. dump(f)
  end
  local label = labels[key]
  if label then return label end
  local name
  if what == "main" then
    name = "main chunk"
  elseif generic_wrap then
    name = "coroutine.wrap function"
  else
    -- LuaJIT names a slot of stripped bytecode "": no name; last, a C
    -- function's file: lua.c's pmain is "lua5.1"
    -- Lua 5.1 names a call through a variable key "?": no name either
    local site = info.name ~= "" and info.name ~= "?" and info.name or nil
    if place and site and FOR_SITE[site] then site = nil end
    name = (what == "C" and ffi_call(f, level) and "ffi C call") or global_name(f)
      or (what == "C" and c_name(f)) or site or place
      or (what == "C" and cmod(f)) or "function"
    if arg then name = name .. ' "' .. arg .. '"' end
  end
  name, where = clean(name:sub(1, 1023)), clean(where)  -- names are cut at 1023 bytes
  -- two keys with one label: the second is NAME#2, the third NAME#3...,
  -- passing over a label a function holds already (one named "g#2");
  -- taken: label given -> the last number tried from it as a base
  local base = name .. "@" .. where
  label = base
  if taken[base] then
    local n = taken[base]
    repeat
      n = n + 1
      label = name .. "#" .. n .. "@" .. where
    until not taken[label]
    taken[base] = n
  end
  taken[label] = 1
  labels[key] = label
  if what ~= "C" then by_closure[f] = label end
  return label
end

-- }======================================================================

-- {======================================================================
-- Stack nodes: a trie of stacks, each node written once.

local children = { [0] = {} }  -- node id -> { label -> child node id }
local nnodes = 0

local function child(parent, label)
  local kids = children[parent]
  local id = kids[label]
  if not id then
    nnodes = nnodes + 1
    id = nnodes
    kids[label] = id
    children[id] = {}
    out:write("N ", id, " ", parent, " ", label, "\n")
  end
  return id
end

-- }======================================================================

-- {======================================================================
-- Threads: per-thread frame caches and the chain of resumers.

local weak = { __mode = "k" }
local states = setmetatable({}, weak)  -- thread -> cache of its stack
local pending = setmetatable({}, weak) -- thread -> resumer's stack node
local chain, in_chain = { MAIN }, setmetatable({ [MAIN] = 1 }, weak)
-- Threads we hooked, held until they die: a collected thread's hook stays
-- registered under its address in 5.1, and a new coroutine allocated there
-- would inherit it (new threads copy their creator's C hook).
local hooked = {}
local last = MAIN

local function state_of(T)
  local st = states[T]
  if not st then
    st = {
      depth = 0,         -- frames (levels, tail pseudo-levels included)
      valid = 0,         -- positions 1..valid of labels/nodes are right
      labels = {},       -- position -> label, or false for a tail level
      nodes = {},        -- position -> stack node
      prefix = 0,        -- node of the resumer's stack
      nodes_prefix = 0,  -- prefix the nodes were computed from
      call = false,      -- a Lua function was called: count it at its line
      -- position -> a wrap frame's closure (weak: a live frame holds it),
      -- the key and place of its body (wrap_remembered)
      wrap_f = setmetatable({}, { __mode = "v" }), wrap_key = {}, wrap_place = {},
    }
    states[T] = st
  end
  return st
end

local function switch_to(T)
  local i = in_chain[T]
  if i then  -- a yield or a death gave control back to T
    for j = #chain, i + 1, -1 do
      local co = chain[j]
      -- still "normal": not left, but T runs while co does, called from
      -- C on T (luv's callbacks run on the main thread while uv.run runs
      -- in a coroutine); co and the chain above T stay as they are
      if co_status(co) == "normal" then break end
      in_chain[co] = nil
      chain[j] = nil
      if co_status(co) == "dead" then
        hooked[co] = nil
        if not ONE_HOOK then sethook(co) end
      end
    end
  else       -- T was resumed by the last thread
    chain[#chain + 1] = T
    in_chain[T] = #chain
    state_of(T).prefix = pending[T] or child(0, "?@[unknown resumer]")
    pending[T] = nil
  end
  last = T
end

-- }======================================================================

-- {======================================================================
-- Stack reading. Levels are counted as in the hook (1 = the hook,
-- 2 = the running function); helpers called from the hook add one.

-- Highest level that exists, searched from hint.
local function top_level(hint)
  local lo, hi, step = nil, nil, 1  -- level lo exists, level hi does not
  if getinfo(hint + 1, "l") then
    lo, hi = hint, hint + 1
    while getinfo(hi + 1, "l") do
      lo = hi
      step = step * 2
      hi = hi + step
    end
  else
    hi, lo = hint, hint - 1
    while lo > 1 and not getinfo(lo + 1, "l") do
      hi = lo
      step = step * 2
      lo = lo - step
    end
    if lo < 1 then lo = 1 end
  end
  while hi - lo > 1 do
    local mid = math.floor((lo + hi) / 2)
    if getinfo(mid + 1, "l") then lo = mid else hi = mid end
  end
  return lo
end

-- Re-read positions from..D of the running thread (D frames; position p
-- is at hook level D - p + 2), then recompute their stack nodes.
local function refresh(st, from, D)
  local labs, nodes = st.labels, st.nodes
  for p = from, D do
    local info = getinfo(D - p + 3, "Snf")
    labs[p] = info.what ~= "tail" and label_of(info, D - p + 3, st, p)
  end
  if st.nodes_prefix ~= st.prefix then
    from = 1
    st.nodes_prefix = st.prefix
  end
  local node = from == 1 and st.prefix or nodes[from - 1]
  for p = from, D do
    local l = labs[p]
    if l then node = child(node, l) end
    nodes[p] = node
  end
end

-- }======================================================================

-- {======================================================================
-- The hook.

local hook

local function note_resume(info, node)
  local f, co = info.func, nil
  if rawequal(f, co_resume) or (co_close and rawequal(f, co_close)) then
    local _
    _, co = getlocal(3, 1)  -- resume's (close's) first argument
  else
    co = cupvalue(f, 1)  -- a wrap closure's coroutine
  end
  if type(co) == "thread" then
    pending[co] = node
    if not ONE_HOOK and gethook(co) ~= hook then sethook(co, hook, "crl") end
    hooked[co] = true
  end
end

-- Lua 5.4 reports a tail call as "tail call": the callee in its caller's
-- place, as 5.1's tail pseudo-level leaves the caller no label
hook = function(event)
  if event == "tail call" then event = "call" end
  if event ~= "line" and event ~= "call" and event ~= "return" then return end
  local info = getinfo(2, "Slf")
  if info.source == SELF then return end
  local co, main = running()
  local T = (co == nil or main) and MAIN or co
  if T ~= last then switch_to(T) end
  local st = states[T] or state_of(T)
  local D = top_level(st.depth + 1) - 1
  st.depth = D
  if event == "call" then st.wrap_f[D] = nil end  -- a new frame at D
  local valid = st.valid
  if event == "return" then
    if st.call then out:write("X return before the first line\n") end
    if valid >= D then st.valid = D - 1 end
    return
  end
  if event == "call" and info.what ~= "C" then
    if st.call then out:write("X call before the first line\n") end
    label_of(getinfo(2, "Snf"))  -- first sight of a Lua function: its call
    if valid > D - 2 then  -- a tail call turns the caller into a tail level
      st.valid = D > 2 and D - 2 or 0
    end
    st.call = true
    return
  end
  if event == "call" then
    if valid > D - 1 then valid = D - 1 end
  elseif valid > D then
    valid = D
  end
  if NAIVE then valid = 0 end
  if valid < D or st.nodes_prefix ~= st.prefix then refresh(st, valid + 1, D) end
  st.valid = D
  local node = st.nodes[D]
  if event == "line" then
    if st.call then
      st.call = false
      out:write("C ", node, "\n")
    end
    -- line 0: a function without line information (luac -s) runs, on
    -- no known line: its first such event still counts its call
    if info.currentline > 0 then out:write("L ", node, "\n") end
  else
    if st.call then out:write("X C call before the first line\n") end
    out:write("C ", node, "\n")
    note_resume(info, node)
  end
end

sethook(hook, "crl")

-- }======================================================================
