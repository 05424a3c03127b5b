-- Test backend that compiles but returns no table.
return 42
