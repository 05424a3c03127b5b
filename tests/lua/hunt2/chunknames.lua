-- loadstring chunks with hostile chunk names ("=x", "@x" and "x" forms)
local names = {
  "", "=", "@", "\255\254", "a\226\130", "\1\t\27\127", 'q"uo\'te\\back',
  "<zzhostile a='1'>&amp;]]>--%s,:@ x", string.rep("C", 5000), "12345",
  "\240\159\152\128e\204\129\217\133\216\177", "a;b", "a\nb", "a\rb", "a\0b", " ",
  "</script>", "<!--", "\194\128", "\239\191\190", "\237\160\128", "x:12",
}
local n = 0
for i, nm in ipairs(names) do
  for _, pre in ipairs({ "", "=", "@" }) do
    local f = assert(loadstring("local function inner" .. i .. "(x) return x + 1 end\nreturn inner" .. i .. "(" .. i .. ")", pre .. nm))
    n = n + f()
  end
end
print(n)
