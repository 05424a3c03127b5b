-- luacheck: a real program, luacheck (Debian lua-check) linting Penlight
-- (lua-penlight). BENCH_SCALE (default 1, all files) picks the first files,
-- in name order, that make up that fraction of the total size; at least
-- one. Usage: lua5.1 luacheck.lua [LUACHECK_SCRIPT [DIR]]
local scale = tonumber(os.getenv("BENCH_SCALE")) or 1
local script = arg[1] or "/usr/bin/luacheck"
local dir = arg[2] or "/usr/share/lua/5.1/pl"
local lfs = require "lfs"

local files, total = {}, 0
for name in lfs.dir(dir) do
  if name:match("%.lua$") then
    local path = dir .. "/" .. name
    local size = lfs.attributes(path, "size")
    files[#files + 1] = {path = path, size = size}
    total = total + size
  end
end
table.sort(files, function(a, b) return a.path < b.path end)

local args, acc = {}, 0
for _, f in ipairs(files) do
  if #args > 0 and acc + f.size > total * scale then break end
  args[#args + 1] = f.path
  acc = acc + f.size
end
for _, o in ipairs{"--no-config", "--no-cache", "--no-color", "--codes"} do
  args[#args + 1] = o
end

-- Run the luacheck script as `lua5.1 SCRIPT ARGS...` would; it ends with
-- os.exit (0: clean, 1: warnings).
arg = {[0] = script}
for i, a in ipairs(args) do arg[i] = a end
local main = assert(loadfile(script))
main(unpack(args))
