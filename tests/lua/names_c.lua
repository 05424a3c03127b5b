-- C functions no global reaches, named as a person looks them up:
-- require's loaders (package.loaders[N]), a C module's luaopen_ (its
-- exported symbol), methods of registry metatables (FILE*:read, lfs's
-- "directory metatable:next"), a C module's functions through
-- package.loaded (lpeg.match, also as a pattern's method).
local lfs = require "lfs"
local lpeg = require "lpeg"
local fh = assert(io.open(arg[0]))
print("first line", fh:read("*l"))
fh:seek("set", 0)
local n = 0
for _ in fh:lines() do n = n + 1 end
fh:close()
print("lines", n > 5)
print("tostring", tostring(fh):match("^file") ~= nil)
local seen = 0
for name in lfs.dir(".") do
  if name == "names_c.lua" then seen = seen + 1 end
end
print("dir", seen)
local p = lpeg.P("a") * lpeg.C(lpeg.R("09") ^ 1)
print("lpeg", lpeg.match(p, "a42"), p:match("a7"))
io.stdout:write("write\n")

-- package.loaded.package and package.loaders replaced by strings while
-- a C function is first seen (FILE*:setvbuf, FILE*:flush): no name is
-- read through them, nothing fails
local loaded = package.loaded
local pkg, loaders = loaded.package, package.loaders
loaded.package = "replaced"
io.stdout:setvbuf("line")
loaded.package = pkg
package.loaders = "replaced"
io.stdout:flush()
package.loaders = loaders
print("replaced", type(loaded.package), type(package.loaders))
local s = 0 for _, v in ipairs({1, 2}) do s = s + v end print("ipairs", s)
