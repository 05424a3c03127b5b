-- A wrap whose body tail-calls a function that raises: the coroutine dies
-- with the callee at its base, and the error's handler runs on top of the
-- wrap frame. The wrap frame keeps the body it was called with (F4), in
-- luatrace and in the reference tracer alike; the reference once read the
-- dead coroutine again at the handler's call and named the frame after
-- the callee (F2). Found by a hunt's random programs.
local F2
local function H0(e) return type(e) end
local function F4(d)
  return F2(d - 1) -- the wrap body tail-calls F2
end
F2 = function(d)
  if d == 1 then error({}) end
  return coroutine.wrap(F4)(d)
end
print(xpcall(function() return F2(2) end, H0))
-- deeper: the body tail-calls through two levels before the error
local function G3(d) if d == 0 then error("deep", 0) end return G3(d - 1) end
local function G1(d) return G3(d) end
local function handler(e) return "caught " .. tostring(e) end
for _ = 1, 3 do
  print(xpcall(function() return coroutine.wrap(G1)(2) end, handler))
end
