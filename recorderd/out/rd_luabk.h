/* rd_luabk: user backends written in Lua (`--backend lua:FILE`). FILE runs
 * in recorderd, in a lua_State of its own per backend, never in the traced
 * program; it sees the rebuilt stacks as the original luatrace recorder API
 * (record(kind, ...)) and, if it asks, as enter/leave/line/thread callbacks.
 * The API is documented in doc/backends.md, "User backends in Lua". */
#ifndef RD_LUABK_H
#define RD_LUABK_H

#include <stddef.h>

#include "rd_backend.h"

/* The rd_backend_create_fn of "lua:": arg is FILE. Loads and runs FILE,
 * which must return a table. NULL with the reason (Lua's message and
 * traceback) in err when it does not. The backend, its lua_State included,
 * is then used by one thread only: the one that feeds its listener. */
rd_backend *rd_luabk_create(const char *arg, const rd_model *m, char *err, size_t cap);

/* Startup check for the command line: FILE exists and compiles (it is not
 * run: sessions run it when they start). Returns 0 or -EINVAL with the
 * reason in err. Any thread. */
int rd_luabk_check(const char *arg, char *err, size_t cap);

#endif
