dofile("a;b/m.lua")
