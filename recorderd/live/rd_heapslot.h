/* rd_heapslot: a slot of a Lua 5.1 thread's stack in another process,
 * named after the local variable and the function of the frame holding
 * it, for heap's paths. */
#ifndef RD_HEAPSLOT_H
#define RD_HEAPSLOT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Writes slot's name in thread (a lua_State in pid) into out: "(local
 * NAME of function (FILE:LINE))", "(stack: a temporary of ...)", or
 * "(stack N)" when the frames cannot be read. */
void rd_heapslot_name(pid_t pid, uintptr_t thread, size_t slot, char *out, size_t cap);

#endif
