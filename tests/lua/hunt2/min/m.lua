local one = 1
return one
