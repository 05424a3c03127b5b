-- makes /tmp/hunt2/tree: Lua files at hostile paths, and main.lua that dofile()s them
local root = arg[1] or "/tmp/hunt2/tree"
local paths = {
  "dir with spaces/it's \"q\".lua",
  "nl\ndir/x.lua",
  "semi;colon/a;b.lua",
  "<zzhostile>&amp;/]]>.lua",
  "\255\254/bad.lua",
  "trunc\226\130/t.lua",
  "emoji\240\159\152\128/e\204\129.lua",
  "a,b/c:d.lua",
  "tab\tdir/x.lua",
  "ctl\1\27\127/x.lua",
  "%41%s/x.lua",
  "SF:x/end_of_record.lua",
  "cr\rdir/x.lua",
  "--/--.lua",
  "@at/@.lua",
  "12345/67890.lua",
  string.rep("L", 200) .. "/" .. string.rep("M", 200) .. ".lua",
  "</script><!--/x.lua",
}
local deep = {}
for i = 1, 14 do deep[i] = string.rep(string.char(96 + i), 250) end
paths[#paths + 1] = table.concat(deep, "/") .. "/deep.lua"
local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
os.execute("rm -rf " .. q(root))
local main = { "local n = 0" }
for i, p in ipairs(paths) do
  local dir = p:match("^(.*)/[^/]*$")
  assert(os.execute("mkdir -p " .. q(root .. "/" .. dir)) == 0)
  local f = assert(io.open(root .. "/" .. p, "wb"))
  f:write("local function body", i, "(x)\n  if x > 0 then\n    return x + ", i, "\n  end\n  return 0\nend\n")
  f:write("F", i, " = body", i, "\nreturn body", i, "(1)\n")
  f:close()
  main[#main + 1] = string.format("n = n + dofile(%q)", p)
end
main[#main + 1] = "for i = 1, " .. #paths .. " do n = n + _G['F' .. i](2) end"
main[#main + 1] = "print(n)"
local f = assert(io.open(root .. "/main.lua", "wb"))
f:write(table.concat(main, "\n"), "\n")
f:close()
