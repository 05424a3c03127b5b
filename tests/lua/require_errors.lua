-- require of modules that fail while loading (corpus_pkg/halfway.lua,
-- cycle_a.lua, cycle_b.lua, chain_top.lua): an error string and a table
-- error raised halfway through a module's main chunk after it defined and
-- called functions, caught by pcall around require; Lua 5.1's sentinel
-- left behind ("loop or previous error"), cleared and the module loaded
-- again; a failure crossing two nested requires made from helpers; a
-- cyclic require caught inside the inner module; a Lua searcher added to
-- package.loaders whose loaders come from loadstring (one failing at
-- load, one with a syntax error, one that tail-calls into another
-- module's function); require inside a coroutine (its module yields:
-- refused across require's C call) and inside xpcall with a traceback
-- handler; a preload loader that errors with a level.
local util = require "corpus_util"

local function try_require(name)
  local ok, v = pcall(require, name)
  if ok then return "ok", type(v) end
  if type(v) == "table" then return "table", v.code end
  return "err", util.first_line(v)
end

-- the first load fails with a string, halfway through
print("halfway 1", try_require("corpus_pkg.halfway"))
print("tries", HALFWAY_TRIES)
-- Lua 5.1 left its sentinel in package.loaded: a second require fails at once
print("halfway again", try_require("corpus_pkg.halfway"))
print("tries", HALFWAY_TRIES)
package.loaded["corpus_pkg.halfway"] = nil
-- the second load fails with a table, from a recursion in the module
print("halfway 2", try_require("corpus_pkg.halfway"))
package.loaded["corpus_pkg.halfway"] = nil
-- through chain_top: halfway's third load succeeds inside another require
local ok, top = pcall(require, "corpus_pkg.chain_top")
print("chain_top", ok, ok and top.tries, ok and top.big(7))
print("halfway now", try_require("corpus_pkg.halfway"))

-- a failure crossing two requires: halfway fails again under chain_top
package.loaded["corpus_pkg.halfway"] = nil
package.loaded["corpus_pkg.chain_top"] = nil
HALFWAY_TRIES = 0
print("chain fails", try_require("corpus_pkg.chain_top"))
print("chain sentinel", try_require("corpus_pkg.chain_top"))

-- a cycle: cycle_b's require of cycle_a, still loading, is refused
local A = require "corpus_pkg.cycle_a"
print("cycle", A.greet())

-- a searcher of our own, its loaders compiled by loadstring
local sources = {
  ["virt.square"] = "local M = {} function M.sq(x) return x * x end return M",
  ["virt.fails"] = "local n = 0 for i = 1, 3 do n = n + i end error('virt fails at ' .. n)",
  ["virt.syntax"] = "local function x( return 1 end",
  ["virt.tail"] = "local sq = require('virt.square').sq\n"
    .. "local M = {}\nfunction M.quad(x) return sq(sq(x)) end\n"
    .. "return setmetatable(M, { __call = function(self, x) return self.quad(x) end })",
}
local function virtual_searcher(name)
  local src = sources[name]
  if not src then return "\n\tno virtual module '" .. name .. "'" end
  local chunk, err = loadstring(src, "=" .. name)
  if not chunk then error(err, 0) end
  return chunk
end
table.insert(package.loaders, 2, virtual_searcher)
print("virt.square", require("virt.square").sq(9))
print("virt.fails", try_require("virt.fails"))
print("virt.syntax", try_require("virt.syntax"))
local tail = require "virt.tail"
print("virt.tail", tail(3), tail.quad(2))
print("virt.none", (select(2, pcall(require, "virt.none")):match("no virtual module 'virt.none'")))
table.remove(package.loaders, 2)

-- require inside a coroutine: the module's main chunk runs on the
-- coroutine's stack; a module that yields is refused at require's C call
package.preload["yields"] = function(name)
  local ok, err = pcall(coroutine.yield, "from " .. name)
  return { refused = not ok }
end
package.preload["quiet"] = function(name)
  return { name = name, len = #name }
end
local co = coroutine.create(function()
  local q = require "quiet"
  local y = require "yields"
  coroutine.yield(q.len)
  return y.refused
end)
print("co 1", coroutine.resume(co))
print("co 2", coroutine.resume(co))
print("co 3", coroutine.resume(co))

-- a preload loader raising with a level (blame its caller: require)
package.preload["leveled"] = function(name)
  local function check(v)
    if type(v) ~= "number" then error("leveled wants a number", 2) end
  end
  check(name)
end
print("leveled", try_require("leveled"))

-- require under xpcall with a handler that builds a traceback
package.loaded["corpus_pkg.halfway"] = nil
HALFWAY_TRIES = 0
local ok2, tb = xpcall(function() return require("corpus_pkg.halfway") end, function(e)
  local t = debug.traceback(tostring(e), 2)
  return #t > 0 and util.first_line(t) or "empty"
end)
print("xpcall require", ok2, tb)
print("done", HALFWAY_TRIES)
