-- Test backend: a record() that does nothing (measures the cost of a call).
return { record = function() end }
