-- global functions with hostile names, each a distinct function
local names = {
  "\255\254", "a\226\130", "\1\t\27\127", 'q"uo\'te\\back',
  "<zzhostile a='1'>&amp;]]>--%s,:@ x", string.rep("L", 5000), "12345", "1e10",
  "\240\159\152\128e\204\129\217\133\216\177", "a;b", "a\nb", "a\rb", "a\0b", " ",
  "-->", "<!--", "</script>", "<![CDATA[", "&#0;", "\194\128", "\239\191\190",
  "\237\160\128", "\192\128", "\244\144\128\128", "%d%s%%", "}{\"]", "a\\u0000",
}
for i, n in ipairs(names) do
  _G[n] = loadstring("return function(x) return x + " .. i .. " end", "=gen" .. i)()
end
local s = 0
for i, n in ipairs(names) do s = s + _G[n](1) end
print(s)
