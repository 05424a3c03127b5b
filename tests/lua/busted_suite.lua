-- needs: busted.runner (lua-busted)
-- Busted (Debian's lua-busted) runs busted_spec/ in this process, as
-- `busted -o TAP --no-auto-insulate busted_spec` would: describe/it blocks,
-- setup/teardown, before_each/after_each, pending, finally, luassert's
-- assertions and their failures, spies, stubs, mocks and matchers, errors
-- (strings, tables, runtime, 20 frames deep), coroutines. Not insulated:
-- insulation copies _G and package.loaded and restores them with pairs,
-- and the reference tracer's own module is one entry more there.
arg = {[0] = "busted_suite.lua", "-o", "TAP", "--no-auto-insulate", "busted_spec"}
require("busted.runner")({standalone = false})
