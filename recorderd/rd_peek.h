/* rd_peek: reading a Lua 5.1 process that never loaded the collector,
 * from outside (ptrace stop, process_vm_readv). */
#ifndef RD_PEEK_H
#define RD_PEEK_H

#include <stdio.h>
#include <sys/types.h>

/* `recorderd dump PID` of such a process: prints the stacks of each of its
 * Lua states to out, or says on stderr why it cannot. Returns the exit
 * code. Main thread. */
int rd_peek_dump(pid_t pid, FILE *out);

#endif
