-- The spec busted_suite.lua runs (busted 2.1, Debian's lua-busted): passing,
-- pending, failing and erroring tests; its TAP output is the program's.
local function fib(n) if n < 2 then return n end return fib(n-1) + fib(n-2) end

local Stack = {}
Stack.__index = Stack
function Stack.new() return setmetatable({n = 0}, Stack) end
function Stack:push(v) self.n = self.n + 1; self[self.n] = v end
function Stack:pop()
  if self.n == 0 then error("empty stack") end
  local v = self[self.n]; self[self.n] = nil; self.n = self.n - 1; return v
end

describe("a stack", function()
  local s
  before_each(function() s = Stack.new() end)
  after_each(function() s = nil end)

  it("pushes and pops", function()
    s:push(1); s:push(2)
    assert.are.equal(2, s:pop())
    assert.are.equal(1, s:pop())
  end)

  it("fails on empty pop", function()
    assert.has_error(function() s:pop() end, "empty stack")
    assert.error_matches(function() s:pop() end, "empty")
  end)

  describe("nested", function()
    setup(function() _G.nested_counter = 0 end)
    teardown(function() _G.nested_counter = nil end)
    before_each(function() nested_counter = nested_counter + 1 end)
    it("counts", function() assert.is_true(nested_counter >= 1) end)
    it("tables", function()
      assert.same({a = {1, 2, {3}}}, {a = {1, 2, {3}}})
      assert.are_not.same({1}, {2})
    end)
  end)

  pending("some later feature")
  it("is pending inside", function() pending("not yet") end)
end)

describe("spies and stubs", function()
  it("spies on a function", function()
    local t = {f = function(x) return x * 2 end}
    local sp = spy.on(t, "f")
    t.f(3); t.f(4)
    assert.spy(sp).was.called(2)
    assert.spy(sp).was.called_with(4)
    sp:revert()
  end)
  it("stubs a function", function()
    local t = {g = function() return "real" end}
    stub(t, "g").returns("fake")
    assert.are.equal("fake", t.g())
    assert.stub(t.g).was.called(1)
    t.g:revert()
    assert.are.equal("real", t.g())
  end)
  it("mocks a table", function()
    local m = mock({a = function() return 1 end, b = function() return 2 end})
    m.a(); m.b(); m.b()
    assert.spy(m.b).was.called(2)
  end)
  it("matches arguments", function()
    local s = spy.new(function() end)
    s("x", 1)
    assert.spy(s).was.called_with(match.is_string(), match.is_number())
  end)
end)

describe("coroutines", function()
  it("runs a producer/consumer", function()
    local prod = coroutine.wrap(function()
      for i = 1, 5 do coroutine.yield(fib(i + 5)) end
    end)
    local sum = 0
    for _ = 1, 5 do sum = sum + prod() end
    assert.are.equal(8 + 13 + 21 + 34 + 55, sum)
  end)
  it("catches an error in a coroutine", function()
    local co = coroutine.create(function() coroutine.yield(1); error({code = 7}) end)
    assert.is_true((coroutine.resume(co)))
    local ok, e = coroutine.resume(co)
    assert.is_false(ok); assert.are.equal(7, e.code)
  end)
  it("async-ish done callback", function()
    local queue = {}
    local function later(f) queue[#queue + 1] = f end
    local result
    later(function() result = fib(10) end)
    for _, f in ipairs(queue) do f() end
    assert.are.equal(55, result)
  end)
end)

describe("failures and errors", function()
  it("fails an assertion", function()
    assert.are.equal("one", "two")
  end)
  it("raises an error", function()
    local t = nil
    return t.x
  end)
  it("raises a table error", function() error({reason = "table"}) end)
  it("fails deep", function()
    local function deep(n) if n == 0 then assert.is_true(false, "deep fail") end deep(n - 1) end
    deep(20)
  end)
end)

describe("finally and strings", function()
  it("runs finally", function()
    local cleaned = false
    finally(function() cleaned = true end)
    assert.is_false(cleaned)
  end)
  it("string things", function()
    assert.matches("^%d+$", string.rep("7", 10))
    assert.has_no.errors(function() return ("x"):rep(3) end)
    assert.are.equal("a,b,c", table.concat({"a", "b", "c"}, ","))
  end)
end)
