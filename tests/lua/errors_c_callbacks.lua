-- Errors raised inside Lua callbacks called from C functions: they unwind
-- through the C frames (table.sort, string.gsub, a metamethod) to pcall.

local function bad_cmp(a, b)
  if a == 3 or b == 3 then
    error("cannot compare 3")
  end
  return a < b
end

local function sort_with(cmp)
  local t = { 5, 1, 4, 3, 2 }
  table.sort(t, cmp)
  return table.concat(t, ",")
end

print("sort ok", sort_with(function(a, b) return a > b end))
print("sort error", pcall(sort_with, bad_cmp))

local function bad_repl(w)
  if w == "two" then error({ word = w }) end
  return w:upper()
end
local ok, e = pcall(string.gsub, "one two three", "%a+", bad_repl)
print("gsub error", ok, type(e), e.word)

local strict = setmetatable({}, {
  __index = function(t, k)
    error("no field " .. k, 2)
  end,
})
local function read_field(k)
  return strict[k]
end
print("index error", pcall(read_field, "missing"))

-- an error in a comparator nested in another sort's comparator
local function outer_cmp(a, b)
  if a == 1 then
    local ok2 = pcall(sort_with, bad_cmp)
    assert(not ok2)
  end
  return a < b
end
print("nested sort", sort_with(outer_cmp))
print("done")
