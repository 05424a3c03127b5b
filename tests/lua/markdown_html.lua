-- Real library code (Debian's lua-markdown): markdown.lua turns Markdown
-- into HTML in pure Lua, almost all of it string.gsub and string.find with
-- Lua functions as replacements (gsub callbacks calling gsub again, nested
-- three deep for emphasis inside links inside list items). Its functions
-- live in a private environment (setfenv), so they are named by call site.
-- The documents cover setext and atx headers, nested and ordered lists,
-- nested blockquotes (block_transform called again on their insides), code
-- blocks and code spans (escaping), inline and reference links and images,
-- auto links and the e-mail obfuscation (closures in a table chosen per
-- character), HTML blocks protected by hashing, backslash escapes, rulers
-- and line breaks; a runtime error inside the library caught by pcall, and
-- the same converter wrapped by a small table-of-contents builder that runs
-- its own gsub callbacks over the HTML.
local markdown = require "markdown"

local docs = {}

docs[1] = [[
Project title
=============

A paragraph with *emphasis*, __strong text__ and `inline code`,
continued on a second line.  
After a forced break: a [link](http://example.com/a "Title") and an
![image](img/pic.png "Pic").

Section two
-----------

* first item
* second item with **bold**
    * nested item one
    * nested item two
* third item

1. one
2. two
3. three
]]

docs[2] = [[
# Atx header #

> A quote with *emphasis*.
>
> > A nested quote
> > on two lines.
>
> Back in the outer quote.

    local function f(x)
      return x < 10 and "<small>" or "&big"
    end

Use `a < b && c` and ``code with ` backtick``.

---

Reference links: [the site][site], [another] [ref2] and [site][].

[site]: http://example.org/  "Example Site"
[ref2]: http://example.net/path?a=1&b=2
]]

docs[3] = [[
### Escapes and HTML

Literal \*stars\*, \_underscores\_, \`ticks\` and 1\. not a list.

<div>
  <p>This block is <em>protected</em> and passed through.</p>
</div>

<http://auto.example.com/x> and <someone@example.com> and
<mailto:other@example.org>.

AT&T and 4 < 5 and &copy; stay right.

* * *

- a
- b

  with a second paragraph

- c
]]

for i, doc in ipairs(docs) do
  print("== document " .. i)
  print(markdown(doc))
end

-- runtime errors inside the library
print(pcall(markdown, nil))
print(pcall(markdown, {}))

-- a table of contents built over the HTML with gsub callbacks of our own
local function slug(text)
  return (text:lower():gsub("<[^>]+>", ""):gsub("[^%w]+", "-"):gsub("^-+", ""):gsub("-+$", ""))
end
local function with_toc(src)
  local html = markdown(src)
  local toc = {}
  html = html:gsub("<h(%d)>(.-)</h%d>", function(level, text)
    local id = slug(text)
    toc[#toc + 1] = string.rep("  ", tonumber(level) - 1) .. "- " .. id
    return ("<h%s id=\"%s\">%s</h%s>"):format(level, id, text, level)
  end)
  return table.concat(toc, "\n"), html
end
local toc, html = with_toc(docs[1] .. "\n" .. docs[2] .. "\n" .. docs[3])
print("== toc")
print(toc)
print("== html length", #html)
