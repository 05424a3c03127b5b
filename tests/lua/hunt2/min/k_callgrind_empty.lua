loadstring("return 1", "@")()
