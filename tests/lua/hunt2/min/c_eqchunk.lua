loadstring("local a = 1\nlocal b = 2\nlocal c = 3", "=m.lua")()
