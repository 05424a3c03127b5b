-- Functions told apart by their code alone: many chunks of one name and
-- shape whose only difference is a constant (a number, or a string whose
-- last byte of an 8-byte word differs), kept alive, each called again
-- later. Each is its own function (the reference keys them by their
-- string.dump); a weak code hash gave two of them one id.
local keep = {}
for i = 1, 1500 do
  -- the main chunks differ by a number constant only; their inner
  -- functions are one function per chunk name
  keep[#keep + 1] = assert(loadstring(("local k = %d return function(x) return x + k end")
    :format(i), "=numchunk" .. (i % 40)))()
end
for i = 1, 600 do
  local s = ("abcdefg%s"):format(string.char(32 + i % 90)) .. ("hijklmn%s"):format(string.char(32 + math.floor(i / 90)))
  keep[#keep + 1] = assert(loadstring(("local s = %q return function(x) return x + #s end"):format(s),
    "=strchunk" .. (i % 7)))()
end
for i = 1, 400 do
  -- one chunk name for all: functions whose constants differ in the
  -- high bytes of a double
  keep[#keep + 1] = assert(loadstring(("return function(x) return x * %d.5 end"):format(i * 1024),
    "=scaled"))()
end
local t = 0
for i = 1, #keep do t = t + keep[i](1) end
for i = #keep, 1, -7 do t = t + keep[i](2) end
print(#keep, t)
