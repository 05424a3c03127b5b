local function leaf() return 1 end
local function tail() return leaf() end
local function bad() error("x") end
local ok = pcall(bad)
local co = coroutine.create(function()
  coroutine.yield()
end)
coroutine.resume(co)
coroutine.resume(co)
tail()
