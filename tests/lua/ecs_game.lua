-- A game-style program: an entity-component system stepped at a fixed
-- rate, many small methods through metatables (inheritance 3 deep,
-- __index functions, __newindex proxies), a state machine of tail calls,
-- vector arithmetic through metamethods, string building for a frame log.
local unpack = unpack or table.unpack

local Vec = {}
Vec.__index = Vec
local function vec(x, y) return setmetatable({x = x, y = y}, Vec) end
Vec.__add = function(a, b) return vec(a.x + b.x, a.y + b.y) end
Vec.__sub = function(a, b) return vec(a.x - b.x, a.y - b.y) end
Vec.__mul = function(a, k)
  if type(a) == "number" then a, k = k, a end
  return vec(a.x * k, a.y * k)
end
Vec.__unm = function(a) return vec(-a.x, -a.y) end
Vec.__eq = function(a, b) return a.x == b.x and a.y == b.y end
Vec.__tostring = function(a) return string.format("(%g,%g)", a.x, a.y) end
Vec.__len = function(a) return math.abs(a.x) + math.abs(a.y) end
function Vec:dot(o) return self.x * o.x + self.y * o.y end
function Vec:clamp(lo, hi)
  local function c(v) if v < lo then return lo elseif v > hi then return hi end return v end
  return vec(c(self.x), c(self.y))
end

-- classes with inheritance
local function class(parent)
  local c = {}
  c.__index = c
  if parent then setmetatable(c, {__index = parent}) end
  c.new = function(...)
    local o = setmetatable({}, c)
    if o.init then o:init(...) end
    return o
  end
  return c
end

local Component = class()
function Component:init(name) self.name = name end
function Component:update() end
function Component:describe() return self.name end

local Transform = class(Component)
function Transform:init(x, y)
  Component.init(self, "transform")
  self.pos, self.vel = vec(x, y), vec(0, 0)
end
function Transform:update(e, dt)
  self.pos = (self.pos + self.vel * dt):clamp(-50, 50)
end

local Physics = class(Component)
function Physics:init(g) Component.init(self, "physics"); self.g = g end
function Physics:update(e, dt)
  local t = e:get("transform")
  t.vel = t.vel + vec(0, -self.g) * dt
  if t.pos.y <= -50 then t.vel = vec(t.vel.x, -t.vel.y * 0.5) end
end

local Brain = class(Component)
function Brain:init(state) Component.init(self, "brain"); self.state = state; self.timer = 0 end

-- the state machine: each state tail-calls the next one's entry
local states = {}
function states.idle(b, e, t)
  if t.timer > 3 then t.timer = 0; return states.wander(b, e, t) end
  return "idle"
end
function states.wander(b, e, t)
  local tr = e:get("transform")
  tr.vel = vec((e.id % 3) - 1, 1)
  if t.timer > 2 then t.timer = 0; return states.chase(b, e, t) end
  return "wander"
end
function states.chase(b, e, t)
  local tr = e:get("transform")
  local d = b.target - tr.pos
  if #d < 5 then return states.attack(b, e, t) end
  tr.vel = d * 0.1
  if t.timer > 4 then t.timer = 0; return states.idle(b, e, t) end
  return "chase"
end
function states.attack(b, e, t)
  e.hits = (e.hits or 0) + 1
  t.timer = 0
  return states.idle(b, e, t)
end
function Brain:update(e, dt)
  self.timer = self.timer + dt
  self.state = states[self.state](self, e, self)
end

-- entities whose components are reached through an __index function
local Entity = {}
local next_id = 0
Entity.__index = function(e, k)
  local m = rawget(Entity, k)
  if m then return m end
  local comps = rawget(e, "comps")
  return comps and comps[k]
end
function Entity.new(...)
  next_id = next_id + 1
  local e = setmetatable({id = next_id, comps = {}, order = {}}, Entity)
  for _, c in ipairs({...}) do e:add(c) end
  return e
end
function Entity:add(c) self.comps[c.name] = c; self.order[#self.order + 1] = c end
function Entity:get(name) return self.comps[name] end
function Entity:update(dt)
  for _, c in ipairs(self.order) do c:update(self, dt) end
end

-- a read-only config proxy with __newindex raising
local config = setmetatable({}, {
  __index = {dt = 0.25, frames = 60, target = vec(10, 10)},
  __newindex = function(t, k) error("config is read-only: " .. k, 2) end,
})

local world = {}
for i = 1, 8 do
  local b = Brain.new(i % 2 == 0 and "idle" or "wander")
  b.target = config.target
  world[i] = Entity.new(Transform.new(i, i * 2), Physics.new(i % 3 + 1), b)
end

local frame_log = {}
local function frame(n)
  local parts = {}
  for _, e in ipairs(world) do
    e:update(config.dt)
    parts[#parts + 1] = e.brain.state:sub(1, 1)
  end
  if n % 10 == 0 then
    local line = {"frame ", n, ": ", table.concat(parts)}
    for _, e in ipairs(world) do
      line[#line + 1] = " " .. tostring(e.transform.pos)
    end
    frame_log[#frame_log + 1] = table.concat(line)
  end
end

-- the fixed-step loop: accumulated virtual time, steps of dt
local acc, t, n = 0, 0, 0
local deltas = {0.3, 0.1, 0.5, 0.2, 0.25}
while n < config.frames do
  acc = acc + deltas[n % #deltas + 1]
  while acc >= config.dt and n < config.frames do
    n = n + 1
    frame(n)
    acc = acc - config.dt
    t = t + config.dt
  end
end
for _, l in ipairs(frame_log) do print(l) end
local hits = 0
for _, e in ipairs(world) do hits = hits + (e.hits or 0) end
print("hits", hits, "t", t)
print(pcall(function() config.dt = 1 end))
print(vec(1, 2) == vec(1, 2), -vec(1, 2), 2 * vec(1, 1), vec(3, 4):dot(vec(1, 1)))
print(Transform.new(0, 0):describe(), Brain.new("idle"):describe())
