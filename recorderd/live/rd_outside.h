/* rd_outside: the server's sampling of a process from outside (a hello
 * asking for it: Lua 5.1's run --sample), with rd_record. Loop thread. */
#ifndef RD_OUTSIDE_H
#define RD_OUTSIDE_H

#include "rd_server.h"

/* What run and listen give their server (rd_server.h). */
extern const rd_outside_ops rd_outside_sampler;

#endif
