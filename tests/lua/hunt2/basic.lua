local function f(n) if n < 1 then return 0 end return n + f(n-1) end
print(f(10))
