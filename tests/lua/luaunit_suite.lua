-- Real library code (Debian's lua-unit): LuaUnit 3.4 runs a suite of test
-- classes named in the globals (methods listed by sortedPairs: table.sort
-- with a Lua comparator), each test, setUp and tearDown inside xpcall with
-- LuaUnit's error handler (debug.traceback on top of the failing stack,
-- then its own stack-trace stripping). Passing tests,
-- failures (assertEquals on strings, long lists and nested tables: LuaUnit's
-- deep diff analysis; assertItemsEquals, assertAlmostEquals, a custom
-- message), errors (string, table, runtime, deep recursion, inside a sort
-- comparator, inside a coroutine, inside __index and __add), assertError
-- variants (pcall around the tested function), skip, fail, success from a
-- nested call, a failing setUp and tearDown, os.exit caught by LuaUnit's
-- wrapper, a second runner with a pattern filter and repeated execution.
-- Output goes through our own output class (no durations or dates).
local lu = require "luaunit"

local first_line = require("corpus_util").first_line

-- our output class, derived as LuaUnit documents
local Out = lu.genericOutput.new()
local Out_MT = {__index = Out}
function Out.new(runner)
  return setmetatable(lu.genericOutput.new(runner, lu.VERBOSITY_DEFAULT), Out_MT)
end
function Out:startSuite()
  print(("suite: %d selected, %d filtered out"):format(
    self.result.selectedCount, self.result.nonSelectedCount))
end
function Out:startClass(name) print("class " .. name) end
function Out:updateStatus(node)
  local msg = node.msg
  if type(msg) == "string" then
    -- strip the "file:line: " prefix LuaUnit keeps, and long diffs
    msg = msg:gsub("^[%w_%.]+:%d+: ", "")
  end
  print(("  %s %s: %s"):format(node.status, node.testName, first_line(msg)))
  if node.stackTrace and node.testName == "TestErrors.test_deep" then
    local n = 0
    node.stackTrace:gsub("\n", function() n = n + 1 end)
    print("  trace lines > 5:", n > 5)
  end
end
function Out:endTest(node)
  if node:isSuccess() then print("  ok " .. node.testName) end
end
function Out:endSuite()
  local r = self.result
  print(("ran %d: %d ok, %d failures, %d errors, %d skipped"):format(
    r.runCount, r.successCount, r.failureCount, r.errorCount, r.skippedCount))
end

local function fact(n) if n <= 1 then return 1 end return n * fact(n - 1) end
local function sq(x) return x * x end

TestMath = {}
function TestMath:setUp() self.xs = {5, 3, 8, 1, 9, 2} end
function TestMath:tearDown() self.xs = nil end
function TestMath:test_fact() lu.assertEquals(fact(10), 3628800) end
function TestMath:test_sort()
  table.sort(self.xs, function(a, b) return sq(a) > sq(b) end)
  lu.assertEquals(self.xs, {9, 8, 5, 3, 2, 1})
end
function TestMath:test_almost() lu.assertAlmostEquals(math.sqrt(2) ^ 2, 2, 1e-9) end
function TestMath:test_almost_fails() lu.assertAlmostEquals(1.5, 2, 0.1) end
function TestMath:test_items()
  lu.assertItemsEquals({1, 2, 3, {a = 1}}, {3, {a = 1}, 2, 1})
end
function TestMath:test_items_fail() lu.assertItemsEquals({1, 2, 3}, {1, 2, 4}) end
function TestMath:test_list_diff()
  local a, b = {}, {}
  for i = 1, 15 do a[i] = i * 2; b[i] = i * 2 end
  b[7] = 0; b[16] = 99
  lu.assertEquals(a, b)
end
function TestMath:test_table_diff()
  lu.assertEquals({name = "x", tags = {"a", "b"}, n = 1, deep = {k = {1, 2}}},
                  {name = "x", tags = {"a", "c"}, n = 2, deep = {k = {1, 3}}})
end

TestStrings = {}
function TestStrings:test_upper() lu.assertEquals(("abc"):upper(), "ABC") end
function TestStrings:test_match() lu.assertStrMatches("hello42", "%a+%d+") end
function TestStrings:test_contains() lu.assertStrContains("a long sentence", "long") end
function TestStrings:test_multiline()
  lu.assertEquals("line one\nline two\nline three", "line one\nline 2\nline three")
end
function TestStrings:test_msg()
  lu.assertEquals(#"four", 5, "length of four")
end
function TestStrings:test_types()
  lu.assertIsString("s"); lu.assertIsNumber(1); lu.assertIsTable({})
  lu.assertIsFunction(print); lu.assertNil(nil); lu.assertNotNil(0)
  lu.assertIsNumber("1")
end

local proxy = setmetatable({}, {__index = function(t, k)
  if k == "bad" then error("no field bad") end
  return k .. "!"
end})
local vec = setmetatable({1}, {__add = function(a, b) return a[1] + b.missing.x end})

local function recurse(n) if n == 0 then error("bottom reached") end return 1 + recurse(n - 1) end

TestErrors = {}
function TestErrors:test_string() error("plain failure text") end
function TestErrors:test_table() error({code = 42}) end
function TestErrors:test_runtime() local t = nil; return t.field end
function TestErrors:test_deep() recurse(40) end
function TestErrors:test_comparator()
  table.sort({3, 1, 2}, function(a, b)
    if a == 1 or b == 1 then error("cannot compare one") end
    return a < b
  end)
end
function TestErrors:test_coroutine()
  local co = coroutine.create(function(x)
    local y = coroutine.yield(x + 1)
    error("co failed with " .. y)
  end)
  local _, a = coroutine.resume(co, 1)
  local ok, e = coroutine.resume(co, a * 10)
  lu.assertTrue(ok, first_line(e))
end
function TestErrors:test_index() return proxy.good .. proxy.bad end
function TestErrors:test_add() return vec + vec end
function TestErrors:test_assert_error()
  lu.assertError(recurse, 3)
  lu.assertErrorMsgContains("bottom", recurse, 2)
  lu.assertErrorMsgMatches(".*: no field bad", function() return proxy.bad end)
  lu.assertErrorMsgEquals("exact", error, "exact", 0)
  lu.assertErrorMsgContentEquals("content", function() error("content", 2) end)
end
function TestErrors:test_assert_error_fails()
  lu.assertError(function() return 1 end)
end
function TestErrors:test_assert_error_msg_fails()
  lu.assertErrorMsgContains("nothing like it", recurse, 1)
end
function TestErrors:test_exit() os.exit(3) end

TestControl = {}
local function skip_helper(msg) lu.skip(msg) end
function TestControl:test_skip() skip_helper("not today") end
function TestControl:test_skip_if() lu.skipIf(1 + 1 == 2, "always skipped") end
function TestControl:test_run_only_if() lu.runOnlyIf(false, "never run") end
function TestControl:test_fail() lu.fail("explicit fail") end
function TestControl:test_fail_if() lu.failIf(fact(3) == 6, "six") end
function TestControl:test_success()
  local function deep(n) if n == 0 then lu.success() end deep(n - 1) end
  deep(5)
  error("not reached")
end
function TestControl:test_success_if() lu.successIf(true); error("not reached") end

TestBrokenSetup = {}
function TestBrokenSetup:setUp() error("setUp broke") end
function TestBrokenSetup:test_never() print("never printed") end

TestBrokenTeardown = {}
function TestBrokenTeardown:tearDown() local x = nil; return #x end
function TestBrokenTeardown:test_body() lu.assertEquals(1, 1) end
function TestBrokenTeardown:test_body_fails() lu.assertEquals(1, 2) end

function test_function_style() lu.assertTrue(fact(5) == 120) end
function test_function_fails() lu.assertFalse(fact(0) == 1) end

local runner = lu.LuaUnit.new()
runner.outputType = Out
-- the classes by name (collectTests would walk pairs(_G), whose size
-- differs under each tracer)
print("failures+errors:", runner:runSuite("-v", "TestStrings", "TestMath",
  "TestErrors", "TestControl", "TestBrokenSetup", "TestBrokenTeardown",
  "test_function_style", "test_function_fails"))

-- explicit instances, a pattern filter and each test run three times
local counter = 0
local Repeated = {
  test_count = function() counter = counter + 1; lu.assertTrue(counter < 100) end,
  test_third = function()
    counter = counter + 1
    if counter % 3 == 0 then error("every third " .. counter) end
  end,
  test_filtered = function() error("filtered out, never run") end,
}
local r2 = lu.LuaUnit.new()
r2.outputType = Out
print("second:", r2:runSuiteByInstances({{"Repeated", Repeated}, {"fact_is", function()
  lu.assertEquals(fact(4), 24)
end}}))
print("counter", counter)
Repeated_G = Repeated
local r3 = lu.LuaUnit.new()
r3.outputType = Out
print("third:", r3:runSuite("--pattern", "third", "--repeat", "3", "Repeated_G"))
