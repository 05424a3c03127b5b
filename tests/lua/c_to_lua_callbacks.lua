-- C functions calling back into Lua, beyond c_callbacks.lua and
-- errors_c_callbacks.lua: table.sort on __lt (no comparator), comparators
-- that tail-call or fail in a helper, gsub nested in a gsub callback, gsub
-- with a table whose __index is a function, load() with a reader function
-- (and a failing reader), print through a Lua global tostring, __tostring
-- that errors or returns a non-string, xpcall handlers that call functions
-- and metamethods, select/unpack/varargs through pcall, require through a
-- package.preload whose __index is a function, module() in a preload
-- loader, a Lua searcher in package.loaders, string.dump + loadstring,
-- setfenv/getfenv (also setfenv(1)), a callable table as xpcall handler.

-- table.sort without a comparator: __lt as a Lua function
local P = {}
P.__lt = function(a, b) return a.k < b.k end
local ps = {}
for i, k in ipairs({ 5, 2, 8, 1, 9, 3 }) do ps[i] = setmetatable({ k = k }, P) end
table.sort(ps)
local ks = {}
for i, p in ipairs(ps) do ks[i] = p.k end
print("sort __lt", table.concat(ks, " "))

-- a comparator that tail-calls, one that calls a failing helper
local function less(a, b) return a < b end
local function tail_cmp(a, b) return less(b, a) end
local t = { 4, 1, 3, 2 }
table.sort(t, tail_cmp)
print("sort tail", table.concat(t, " "))
local function check(v)
  if v == 13 then error("unlucky " .. v) end
  return v
end
local function checked_cmp(a, b) return check(a) < check(b) end
local function sort_list(list, cmp)
  table.sort(list, cmp)
  return table.concat(list, " ")
end
print("sort helper ok", pcall(sort_list, { 3, 1, 2 }, checked_cmp))
print("sort helper err", pcall(sort_list, { 3, 13, 2, 7 }, checked_cmp))

-- gsub inside a gsub callback
local function inner(c) return c:upper() end
local function outer(word)
  return (word:gsub("[aeiou]", inner)) .. "-" .. #word
end
print("nested gsub", (string.gsub("one two three", "%a+", outer)))

-- gsub with a table replacement whose __index is a function
local vars = setmetatable({ name = "lua" }, {
  __index = function(t, k) return "<" .. k .. ">" end,
})
print("gsub table index", (("$name uses $ver and $name"):gsub("%$(%a+)", vars)))

-- load() with a reader function, and a reader that fails
local function reader_of(parts)
  local i = 0
  return function()
    i = i + 1
    return parts[i]
  end
end
local chunk = load(reader_of({ "local a, b = ...\n", "return a * b", nil }), "=reader chunk")
print("load reader", chunk(6, 7))
local function bad_reader()
  error("reader broke")
end
print("load bad reader", load(bad_reader, "=bad"))
local pieces = 0
print("load reader syntax", load(function()
  pieces = pieces + 1
  if pieces == 1 then return "return +" end
end, "=syntax"))

-- print calls the global tostring: make it a Lua function for a while
local real_tostring = tostring
function tostring(v)
  if type(v) == "number" then return "#" .. real_tostring(v) end
  return real_tostring(v)
end
print("custom tostring", 1, "x", 2.5)
tostring = real_tostring

-- __tostring that errors, and one that returns a number
local broken = setmetatable({}, { __tostring = function() error("no text") end })
print("tostring error", pcall(tostring, broken))
print("print error", pcall(print, "a", broken))
local numeric = setmetatable({}, { __tostring = function() return 12 end })
print("tostring number", tostring(numeric))
print("print number", pcall(print, numeric))

-- xpcall handlers that call functions and metamethods
local Err = { __tostring = function(e) return "Err(" .. e.code .. ")" end }
local function describe(e)
  if type(e) == "table" then return "table " .. tostring(e) end
  return "string " .. e
end
local function handler(e)
  return "handled: " .. describe(e)
end
local function raise_table() error(setmetatable({ code = 5 }, Err)) end
print("xpcall table", xpcall(raise_table, handler))
print("xpcall string", xpcall(function() local n = nil; return n + 1 end, handler))
print("xpcall in meta", xpcall(function() return vars.x .. strict_missing.y end, handler))

-- select/unpack/varargs through pcall
local function pack(...) return { n = select("#", ...), ... } end
local packed = pack(pcall(select, 2, "a", "b", "c"))
print("pcall select", packed.n, packed[1], packed[2], packed[3])
print("pcall unpack", pcall(unpack, { 1, 2, 3 }, 2))
local function fwd(...) return pcall(function(...) return select("#", ...), ... end, ...) end
print("pcall varargs", fwd(nil, 2, nil))
print("pcall pcall select", pcall(pcall, select, "#", 1, 2))

-- require through a package.preload whose __index is a function, with
-- module() inside the loader
setmetatable(package.preload, {
  __index = function(t, name)
    if name == "virtual_mod" then
      return function(modname)
        module(modname)
        function greet(who) return "hi " .. who end
        local function helper(x) return x * 2 end
        function twice(x) return helper(x) end
      end
    end
  end,
})
local vm = require("virtual_mod")
print("preload module", vm.greet("you"), vm.twice(21), virtual_mod == vm)
print("preload missing", (pcall(require, "no_such_virtual_mod")))
setmetatable(package.preload, nil)

-- string.dump + loadstring of a function
local function dumped(a) return a .. "!" end
local copy = loadstring(string.dump(dumped))
print("dump", dumped("orig"), copy("copy"))

-- setfenv/getfenv on functions
local function env_reader() return who_am_i end
setfenv(env_reader, { who_am_i = "sandboxed" })
print("setfenv", env_reader(), getfenv(env_reader).who_am_i)
local sandbox = setmetatable({}, { __index = function(t, k) return "env:" .. k end })
local sandboxed = loadstring("return some_global, other")
setfenv(sandboxed, sandbox)
print("env index", sandboxed())

-- a Lua searcher in package.loaders (require -> searcher -> loader)
table.insert(package.loaders, 1, function(name)
  if name == "searched_mod" then
    return function(n) return { name = n, f = function() return "found" end } end
  end
  return "\n\tno searched '" .. name .. "'"
end)
local sm = require("searched_mod")
print("searcher", sm.name, sm.f())
table.remove(package.loaders, 1)

-- a callable table as xpcall handler (5.1 wants a function: error in
-- error handling, the handler never runs)
local handler_tbl = setmetatable({}, { __call = function(self, e) return "handled " .. e end })
print("xpcall callable handler", xpcall(function() error("boom", 0) end, handler_tbl))

-- setfenv(1, env) inside a function: its globals go to env
local function set_own_env()
  local env = setmetatable({}, { __index = _G })
  setfenv(1, env)
  function env_fn(v) return v * 3 end
  return env_fn(2), env
end
local r6, own_env = set_own_env()
print("setfenv 1", r6, own_env.env_fn(3), rawget(_G, "env_fn"))
