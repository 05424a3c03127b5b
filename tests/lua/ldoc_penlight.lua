-- needs: ldoc.doc (lua-ldoc), pl.List (lua-penlight), lfs (lua-filesystem)
-- ldoc (Debian's lua-ldoc) over four small Penlight modules' sources in this process, as
-- `ldoc -d out src` would: its parsing of comments and code, Markdown,
-- templates and warnings on stderr. The temporary directory's name is
-- taken out of the output.
local lfs = require "lfs"
local dir = os.tmpname()
os.remove(dir)
assert(lfs.mkdir(dir))
-- the temporary directory's name changes from run to run: out of the output
local real_print, real_stderr = print, io.stderr
io.stderr = {write = function(self, ...)
  local t = {...}
  for i = 1, select("#", ...) do t[i] = (tostring(t[i]):gsub(dir, "DOCS", 1, true)) end
  real_stderr:write(unpack(t, 1, select("#", ...)))
  return self
end}
print = function(...)
  local t = {...}
  for i = 1, select("#", ...) do t[i] = (tostring(t[i]):gsub(dir, "DOCS", 1, true)) end
  real_print(unpack(t, 1, select("#", ...)))
end
local src = dir .. "/src"
assert(lfs.mkdir(src))
for _, m in ipairs {"class", "MultiMap", "OrderedMap", "Set"} do
  local f = assert(io.open("/usr/share/lua/5.1/pl/" .. m .. ".lua", "rb"))
  local text = f:read("*a"); f:close()
  f = assert(io.open(src .. "/" .. m .. ".lua", "wb")); f:write(text); f:close()
end
local here = lfs.currentdir()
assert(lfs.chdir(dir))
arg = {[0] = "/usr/bin/ldoc", "-d", "out", "src"}
local ok, err = pcall(dofile, "/usr/bin/ldoc")
print, io.stderr = real_print, real_stderr
assert(lfs.chdir(here))
local function rmtree(p)
  for f in lfs.dir(p) do
    if f ~= "." and f ~= ".." then
      local q = p .. "/" .. f
      if lfs.attributes(q, "mode") == "directory" then rmtree(q) else os.remove(q) end
    end
  end
  lfs.rmdir(p)
end
rmtree(dir)
print(ok, err)
