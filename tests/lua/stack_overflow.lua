-- Lua stack overflows ("stack overflow", caught): deep recursion under pcall,
-- in a coroutine, through __index, and pcall nested at every level with the
-- error raised again on the way out; then plain calls again. Each frame
-- holds many locals, so that the overflow comes at a call whose frame does
-- not fit, before any hook, at the same depth traced or not: with small
-- frames the hooks' own stack moves it (a tracer's Lua hook needs far more
-- than a C one), and a hook that overflows itself replaces the program's
-- own error, which the "deepest" marker below would show. (The number of
-- locals, 180, is one where the room left at the overflow fits both
-- tracers' hooks; with a few more or fewer, the reference tracer's hook
-- overflows, or its depth differs by one: its output then differs.)

local function msg(e)
  return (tostring(e):gsub("^.-:%d+: ", ""))
end

-- plain recursion under pcall
local depth = 0
local function down(n)
  local x001, x002, x003, x004, x005, x006, x007, x008, x009, x010, x011, x012
  local x013, x014, x015, x016, x017, x018, x019, x020, x021, x022, x023, x024
  local x025, x026, x027, x028, x029, x030, x031, x032, x033, x034, x035, x036
  local x037, x038, x039, x040, x041, x042, x043, x044, x045, x046, x047, x048
  local x049, x050, x051, x052, x053, x054, x055, x056, x057, x058, x059, x060
  local x061, x062, x063, x064, x065, x066, x067, x068, x069, x070, x071, x072
  local x073, x074, x075, x076, x077, x078, x079, x080, x081, x082, x083, x084
  local x085, x086, x087, x088, x089, x090, x091, x092, x093, x094, x095, x096
  local x097, x098, x099, x100, x101, x102, x103, x104, x105, x106, x107, x108
  local x109, x110, x111, x112, x113, x114, x115, x116, x117, x118, x119, x120
  local x121, x122, x123, x124, x125, x126, x127, x128, x129, x130, x131, x132
  local x133, x134, x135, x136, x137, x138, x139, x140, x141, x142, x143, x144
  local x145, x146, x147, x148, x149, x150, x151, x152, x153, x154, x155, x156
  local x157, x158, x159, x160, x161, x162, x163, x164, x165, x166, x167, x168
  local x169, x170, x171, x172, x173, x174, x175, x176, x177, x178, x179, x180
  depth = n
  local r = down(n + 1)
  return r
end
local ok, e = pcall(down, 1)
print("pcall", ok, msg(e), depth)

-- in a coroutine: the coroutine dies, its resumer goes on
local function down_co(n)
  local x001, x002, x003, x004, x005, x006, x007, x008, x009, x010, x011, x012
  local x013, x014, x015, x016, x017, x018, x019, x020, x021, x022, x023, x024
  local x025, x026, x027, x028, x029, x030, x031, x032, x033, x034, x035, x036
  local x037, x038, x039, x040, x041, x042, x043, x044, x045, x046, x047, x048
  local x049, x050, x051, x052, x053, x054, x055, x056, x057, x058, x059, x060
  local x061, x062, x063, x064, x065, x066, x067, x068, x069, x070, x071, x072
  local x073, x074, x075, x076, x077, x078, x079, x080, x081, x082, x083, x084
  local x085, x086, x087, x088, x089, x090, x091, x092, x093, x094, x095, x096
  local x097, x098, x099, x100, x101, x102, x103, x104, x105, x106, x107, x108
  local x109, x110, x111, x112, x113, x114, x115, x116, x117, x118, x119, x120
  local x121, x122, x123, x124, x125, x126, x127, x128, x129, x130, x131, x132
  local x133, x134, x135, x136, x137, x138, x139, x140, x141, x142, x143, x144
  local x145, x146, x147, x148, x149, x150, x151, x152, x153, x154, x155, x156
  local x157, x158, x159, x160, x161, x162, x163, x164, x165, x166, x167, x168
  local x169, x170, x171, x172, x173, x174, x175, x176, x177, x178, x179, x180
  depth = n
  local r = down_co(n + 1)
  return r
end
local co = coroutine.create(function() return down_co(1) end)
ok, e = coroutine.resume(co)
print("coroutine", ok, msg(e), depth, coroutine.status(co))

-- through __index: each lookup misses into another proxy
local hits = 0
local mt = {}
mt.__index = function(t, k)
  local x001, x002, x003, x004, x005, x006, x007, x008, x009, x010, x011, x012
  local x013, x014, x015, x016, x017, x018, x019, x020, x021, x022, x023, x024
  local x025, x026, x027, x028, x029, x030, x031, x032, x033, x034, x035, x036
  local x037, x038, x039, x040, x041, x042, x043, x044, x045, x046, x047, x048
  local x049, x050, x051, x052, x053, x054, x055, x056, x057, x058, x059, x060
  local x061, x062, x063, x064, x065, x066, x067, x068, x069, x070, x071, x072
  local x073, x074, x075, x076, x077, x078, x079, x080, x081, x082, x083, x084
  local x085, x086, x087, x088, x089, x090, x091, x092, x093, x094, x095, x096
  local x097, x098, x099, x100, x101, x102, x103, x104, x105, x106, x107, x108
  local x109, x110, x111, x112, x113, x114, x115, x116, x117, x118, x119, x120
  local x121, x122, x123, x124, x125, x126, x127, x128, x129, x130, x131, x132
  local x133, x134, x135, x136, x137, x138, x139, x140, x141, x142, x143, x144
  local x145, x146, x147, x148, x149, x150, x151, x152, x153, x154, x155, x156
  local x157, x158, x159, x160, x161, x162, x163, x164, x165, x166, x167, x168
  local x169, x170, x171, x172, x173, x174, x175, x176, x177, x178, x179, x180
  hits = hits + 1
  local v = setmetatable({}, mt)[k]
  return v
end
ok, e = pcall(function() return setmetatable({}, mt).x end)
print("index", ok, msg(e), hits)

-- pcall at every level, the error raised again from each: the deepest
-- level raises its own marker
local function nest(n)
  local x001, x002, x003, x004, x005, x006, x007, x008, x009, x010, x011, x012
  local x013, x014, x015, x016, x017, x018, x019, x020, x021, x022, x023, x024
  local x025, x026, x027, x028, x029, x030, x031, x032, x033, x034, x035, x036
  local x037, x038, x039, x040, x041, x042, x043, x044, x045, x046, x047, x048
  local x049, x050, x051, x052, x053, x054, x055, x056, x057, x058, x059, x060
  local x061, x062, x063, x064, x065, x066, x067, x068, x069, x070, x071, x072
  local x073, x074, x075, x076, x077, x078, x079, x080, x081, x082, x083, x084
  local x085, x086, x087, x088, x089, x090, x091, x092, x093, x094, x095, x096
  local x097, x098, x099, x100, x101, x102, x103, x104, x105, x106, x107, x108
  local x109, x110, x111, x112, x113, x114, x115, x116, x117, x118, x119, x120
  local x121, x122, x123, x124, x125, x126, x127, x128, x129, x130, x131, x132
  local x133, x134, x135, x136, x137, x138, x139, x140, x141, x142, x143, x144
  local x145, x146, x147, x148, x149, x150, x151, x152, x153, x154, x155, x156
  local x157, x158, x159, x160, x161, x162, x163, x164, x165, x166, x167, x168
  local x169, x170, x171, x172, x173, x174, x175, x176, x177, x178, x179, x180
  depth = n
  local ok2, e2 = pcall(nest, n + 1)
  if not ok2 then
    if n == depth then error("deepest", 0) end
    error(e2, 0)
  end
  return e2
end
ok, e = pcall(nest, 1)
print("nested pcall", ok, msg(e), depth)

-- after all of it: plain calls again
local function sum(n) if n == 0 then return 0 end return n + sum(n - 1) end
print("after", sum(100))
