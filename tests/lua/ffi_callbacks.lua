-- LuaJIT only (corpus-luajit-ffi_callbacks): Lua functions turned into C
-- function pointers by the FFI (ffi.cast) and called back from libc:
-- qsort comparators that call Lua helpers, tail-call and catch their own
-- errors with pcall; a qsort inside another qsort's comparator; bsearch;
-- tsearch/twalk walking a tree in C and calling Lua at every node (twalk
-- recursing in C between the calls); a callback called from Lua through
-- its pointer; cb:set swapping the Lua function behind one pointer; qsort
-- run inside a coroutine whose comparator resumes another coroutine; a
-- comparator that tries to yield (refused across the C call); errors
-- raised in callbacks unwinding through libc's frames, caught by pcall
-- outside them or ending a coroutine; a comparator resuming a generator
-- that sorts with another callback on its own coroutine.

local ffi = require "ffi"

ffi.cdef [[
typedef int (*cmp_fn)(const void *, const void *);
void qsort(void *base, size_t n, size_t size, cmp_fn cmp);
void *bsearch(const void *key, const void *base, size_t n, size_t size, cmp_fn cmp);
typedef enum { preorder, postorder, endorder, leaf } VISIT;
typedef void (*walk_fn)(const void *node, VISIT which, int depth);
void *tsearch(const void *key, void **rootp, cmp_fn cmp);
void *tfind(const void *key, void *const *rootp, cmp_fn cmp);
void twalk(const void *root, walk_fn action);
]]

local C = ffi.C
local intp = ffi.typeof("const int *")

local function ival(p) return ffi.cast(intp, p)[0] end

local function compare(a, b)
  if a < b then return -1 elseif a > b then return 1 end
  return 0
end

-- a comparator calling helpers, one tail call deep
local calls = 0
local function asc(pa, pb)
  calls = calls + 1
  return compare(ival(pa), ival(pb))
end
local function desc(pa, pb)
  return asc(pb, pa)
end

local function sorted(arr, fn)
  local n = #arr
  local buf = ffi.new("int[?]", n)
  for i = 1, n do buf[i - 1] = arr[i] end
  C.qsort(buf, n, ffi.sizeof("int"), fn)
  local out = {}
  for i = 0, n - 1 do out[#out + 1] = buf[i] end
  return out, buf
end

local asc_cb = ffi.cast("cmp_fn", asc)
local desc_cb = ffi.cast("cmp_fn", desc)
local data = { 42, 7, 19, 3, 88, 23, 5, 61, 14, 30, 2, 77 }
print("asc", table.concat((sorted(data, asc_cb)), " "))
print("desc", table.concat((sorted(data, desc_cb)), " "))
print("comparisons > 0", calls > 0)

-- bsearch over the sorted buffer with the same callback
local s, buf = sorted(data, asc_cb)
for _, want in ipairs({ 19, 4, 88, 2 }) do
  local key = ffi.new("int[1]", want)
  local hit = C.bsearch(key, buf, #s, ffi.sizeof("int"), asc_cb)
  print("bsearch", want, hit ~= nil and ffi.cast(intp, hit)[0] or "none")
end

-- a comparator that catches its own errors: pcall inside the callback
local odd_cb = ffi.cast("cmp_fn", function(pa, pb)
  local a, b = ival(pa), ival(pb)
  local ok, r = pcall(function()
    if a % 7 == 0 or b % 7 == 0 then error("seven") end
    return compare(a % 10, b % 10)
  end)
  if not ok then return compare(a, b) end
  if r == 0 then return compare(a, b) end
  return r
end)
print("by last digit", table.concat((sorted(data, odd_cb)), " "))

-- qsort inside a qsort comparator: each key is the sum of its sorted digits
local digit_cb = ffi.cast("cmp_fn", function(pa, pb) return compare(ival(pa), ival(pb)) end)
local function digit_key(v)
  local ds = {}
  local str = tostring(v * 37)
  for i = 1, #str do ds[i] = str:byte(i) - 48 end
  local out = sorted(ds, digit_cb)
  return tonumber(table.concat(out))
end
local outer_cb = ffi.cast("cmp_fn", function(pa, pb)
  local ka, kb = digit_key(ival(pa)), digit_key(ival(pb))
  if ka ~= kb then return compare(ka, kb) end
  return compare(ival(pa), ival(pb))
end)
print("nested qsort", table.concat((sorted({ 12, 5, 31, 8, 27, 40 }, outer_cb)), " "))

-- tsearch builds a tree in C; twalk calls back into Lua at each node
local keys = ffi.new("int[10]", { 50, 20, 70, 10, 30, 60, 80, 25, 65, 5 })
local root = ffi.new("void *[1]")
local tree_cmp = ffi.cast("cmp_fn", function(pa, pb)
  return compare(ival(pa), ival(pb))
end)
for i = 0, 9 do C.tsearch(keys + i, root, tree_cmp) end
local seen, depths = {}, {}
local function visit(node, which, depth)
  if which == C.postorder or which == C.leaf then
    local key = ffi.cast("const int **", node)[0][0]
    seen[#seen + 1] = key
    depths[#depths + 1] = depth
  end
end
local walk_cb = ffi.cast("walk_fn", visit)
C.twalk(root[0], walk_cb)
print("twalk", table.concat(seen, " "))
print("depths", table.concat(depths, " "))
local probe = ffi.new("int[1]", 65)
print("tfind 65", C.tfind(probe, root, tree_cmp) ~= nil)
probe[0] = 66
print("tfind 66", C.tfind(probe, root, tree_cmp) ~= nil)

-- a callback called from Lua through its pointer (Lua -> C stub -> Lua)
local a, b = ffi.new("int[1]", 3), ffi.new("int[1]", 9)
print("direct", asc_cb(a, b), desc_cb(a, b), asc_cb(b, b))

-- one pointer, its Lua function swapped
local swap_cb = ffi.cast("cmp_fn", asc)
print("set asc", table.concat((sorted({ 3, 1, 2 }, swap_cb)), " "))
swap_cb:set(desc)
print("set desc", table.concat((sorted({ 3, 1, 2 }, swap_cb)), " "))
swap_cb:set(function(pa, pb) return desc(pa, pb) end)
print("set closure", table.concat((sorted({ 6, 9, 4 }, swap_cb)), " "))

-- qsort inside a coroutine; the comparator resumes a counter coroutine
local counter = coroutine.create(function()
  local n = 0
  while true do
    n = n + 1
    coroutine.yield(n)
  end
end)
local co_cb = ffi.cast("cmp_fn", function(pa, pb)
  local _, n = coroutine.resume(counter)
  return compare(ival(pa), ival(pb))
end)
local worker = coroutine.create(function(arr)
  local out = sorted(arr, co_cb)
  local got = coroutine.yield(table.concat(out, " "))
  return got * 2
end)
print("in coroutine", coroutine.resume(worker, { 9, 4, 7, 1, 8 }))
print("resumed", coroutine.resume(worker, 21))
print("counter ran", select(2, coroutine.resume(counter)) > 1)

-- a comparator trying to yield: refused across the C call
local y_cb = ffi.cast("cmp_fn", function(pa, pb)
  local ok, e = pcall(coroutine.yield, 1)
  return compare(ival(pa), ival(pb))
end)
local yco = coroutine.create(function()
  return table.concat((sorted({ 2, 3, 1 }, y_cb)), " ")
end)
print("yield refused", coroutine.resume(yco))

-- errors raised in callbacks unwind through qsort's C frames (LuaJIT
-- unwinds C code with unwind tables): caught by pcall around the C call,
-- a table error, an error two callbacks deep, one killing a coroutine
local fails = 0
local fail_cb = ffi.cast("cmp_fn", function(pa, pb)
  fails = fails + 1
  if fails % 5 == 0 then error("comparison " .. fails) end
  return compare(ival(pa), ival(pb))
end)
local tfail_cb = ffi.cast("cmp_fn", function(pa, pb)
  local a, b = ival(pa), ival(pb)
  -- the same error whichever pair holds the 4: the pairs a qsort compares
  -- are its own (AddressSanitizer's qsort, preloaded, compares others)
  if a == 4 or b == 4 then error({ bad = 4 }) end
  return compare(a, b)
end)
print("fail 1", pcall(sorted, { 5, 1, 4, 2, 3, 9 }, fail_cb))
print("fail 2", pcall(function() return sorted({ 8, 6, 7, 5, 3, 0, 9 }, fail_cb) end))
local okt, et = pcall(sorted, { 9, 4, 1, 7 }, tfail_cb)
print("table error", okt, type(et) == "table" and et.bad)
local deep_cb = ffi.cast("cmp_fn", function(pa, pb)
  local inner = sorted({ ival(pa), ival(pb), 4 }, tfail_cb)
  return compare(inner[1], inner[2])
end)
local okd, ed = pcall(sorted, { 3, 2, 1 }, deep_cb)
print("two deep", okd, type(ed) == "table" and ed.bad)
local dying = coroutine.create(function() return sorted({ 4, 3, 2, 1 }, tfail_cb) end)
local okc, ec = coroutine.resume(dying)
print("coroutine dies", okc, type(ec) == "table" and ec.bad, coroutine.status(dying))
print("after errors", table.concat((sorted({ 3, 1, 2 }, asc_cb)), " "))

-- a comparator resuming a wrap generator that runs qsort with another
-- callback on its own coroutine: callbacks of two threads interleaved,
-- from the main thread and from a coroutine suspended between sorts
local inner_cb = ffi.cast("cmp_fn", function(pa, pb) return compare(ival(pb), ival(pa)) end)
local sorter = coroutine.wrap(function()
  local k = 0
  while true do
    k = k + 1
    coroutine.yield(sorted({ k, 3, 1, 2 }, inner_cb)[1])
  end
end)
local cross_cb = ffi.cast("cmp_fn", function(pa, pb)
  sorter()
  return compare(ival(pa), ival(pb))
end)
print("cross", table.concat((sorted({ 5, 2, 4, 1 }, cross_cb)), " "))
local xco = coroutine.create(function()
  local r = sorted({ 9, 7, 8 }, cross_cb)
  coroutine.yield(table.concat(r, " "))
  return table.concat((sorted({ 6, 4 }, cross_cb)), " ")
end)
print("cross co", coroutine.resume(xco))
print("cross main", table.concat((sorted({ 3, 2 }, cross_cb)), " "))
print("cross co", coroutine.resume(xco))

for _, cb in ipairs({ inner_cb, cross_cb, fail_cb, tfail_cb, deep_cb, asc_cb, desc_cb, odd_cb, digit_cb, outer_cb, tree_cmp, walk_cb,
                      swap_cb, co_cb, y_cb }) do
  cb:free()
end
print("done")
