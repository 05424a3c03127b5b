-- Test backend that does not compile.
local B = {}
function B.record(kind
return B
