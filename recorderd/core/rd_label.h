/* rd_label: the one label people read. profile.txt, the summary, the
 * flame graph, report.html, top, dump, callgrind's and pprof's function
 * names show a function as `name (file:line)` (`name [C]`), the name first
 * so that a label cut to its frame keeps it; a file under a Lua library
 * root (PREFIX/share/lua/5.N/, PREFIX/lib/lua/5.N/: Debian's, /usr/local's,
 * a LuaRocks tree's, ./lua_modules's too) relative to that root, as
 * require names it (luacheck/stages/linearize.lua), unless another source
 * of the trace would be shown the same; else a file under the program's
 * working directory relative to it; else whole. The folded stacks keep
 * their form, NAME@SRC:LINE, with SRC shown the same way: whole paths made
 * luacheck's over 64 MiB. */
#ifndef RD_LABEL_H
#define RD_LABEL_H

#include <stddef.h>
#include <stdint.h>

#include "rd_model.h"

/* Keeps a copy of the program's working directory (NULL or not absolute:
 * none; paths are then shown as traced). Returns 0 or -ENOMEM. */
int rd_label_set_cwd(rd_model *m, const char *cwd);

/* src as shown: past its Lua library root when no other source of m's is
 * shown the same, else past "CWD/" when it starts so, else src itself.
 * Any thread: the names of m's sources are worked out once for each size
 * of m, under a lock. */
const char *rd_label_src(const rd_model *m, const char *src);

struct rd_label_names;
void rd_label_names_free(struct rd_label_names *n);

/* "name (file:line)", "name [C]" or "? (unknown frame)" into buf; line 0:
 * the function's linedefined (a frame's current line otherwise). */
void rd_label_human(const rd_model *m, uint32_t fid, uint32_t line, char *buf, size_t cap);

/* "NAME@SRC:LINEDEFINED" (NAME@[C], ?@?), SRC as rd_label_src shows it,
 * into buf: a frame of stacks.folded. */
void rd_label_folded(const rd_model *m, uint32_t fid, char *buf, size_t cap);

#endif
