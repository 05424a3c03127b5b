-- Required by require_errors.lua: requires corpus_pkg.halfway from a
-- helper two calls deep, so halfway's load error crosses both requires.
local function pull(name) return require(name) end
local function via(name) return pull(name) end
local H = via("corpus_pkg.halfway")
return { tries = H.tries, big = H.big }
