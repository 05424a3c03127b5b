-- Helpers shared by the corpus programs that drive real libraries.

local M = {}

-- An error's first line (a traceback's or a message's), or its type when
-- it is not a string (a table raised as an error).
function M.first_line(s)
  if type(s) ~= "string" then return type(s) end
  return (s:match("^[^\n]*"))
end

return M
