-- many functions named with multi-byte characters, of many widths, so the flame graph cuts labels at every byte offset
local chars = { "\240\159\152\128", "\228\184\173", "\195\169", "e\204\129", "\217\133" }
local n = 0
for i = 1, 60 do
  local c = chars[i % #chars + 1]
  local name = string.rep(c, 5 + i % 17) .. i
  _G[name] = loadstring("return function(k) local s = 0 for j = 1, k do s = s + j end return s end", "=w" .. i)()
  n = n + _G[name](i * 400)
end
print(n)
