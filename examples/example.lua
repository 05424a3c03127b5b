-- A small program to profile: a word-frequency count over generated text,
-- with a coroutine producer, a pcall'd parser and a sort with a comparator.

local function make_text(n)
  local words = {"lua", "trace", "ring", "stack", "frame", "hook", "time", "line"}
  local out = {}
  for i = 1, n do
    out[#out + 1] = words[(i * 7 + i % 5) % #words + 1]
  end
  return table.concat(out, " ")
end

local function producer(text)
  return coroutine.wrap(function()
    for w in text:gmatch("%a+") do
      coroutine.yield(w)
    end
  end)
end

local function count(next_word)
  local freq = {}
  for w in next_word do
    freq[w] = (freq[w] or 0) + 1
  end
  return freq
end

local function parse_number(s)
  local n = tonumber(s)
  if not n then error("not a number: " .. s) end
  return n
end

local function sorted(freq)
  local keys = {}
  for k in pairs(freq) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b)
    if freq[a] ~= freq[b] then return freq[a] > freq[b] end
    return a < b
  end)
  return keys
end

local text = make_text(2000000) -- some 0.6 s of CPU: sampled time samples it every 4 ms
local freq = count(producer(text))
for _, k in ipairs(sorted(freq)) do
  print(string.format("%-6s %d", k, freq[k]))
end
local ok, err = pcall(parse_number, "12x")
print("parse:", ok, (err:gsub("^.-: ", "")))
