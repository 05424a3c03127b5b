/* rd_inject: loads luatrace.so into a Lua 5.1 process that never loaded it
 * (`recorderd attach PID`), with ptrace, and makes its collector dormant
 * (luatrace_inject), so that the attach handshake of a dormant collector
 * (proto/lt_attach.h) proceeds. */
#ifndef RD_INJECT_H
#define RD_INJECT_H

#include <stddef.h>
#include <sys/types.h>

/* Makes pid's collector dormant: loads recorderd's luatrace.so unless it is
 * mapped already, then calls its luatrace_inject with the Lua state the
 * reader finds. Every register and byte touched is restored. Returns 0
 * with the safe point used in err ("thread N, waiting in system call M"),
 * (*reused: luatrace.so was loaded already, by an earlier attach),
 * or -errno with a one-line reason in err (the process left as it was). */
int rd_inject(pid_t pid, int *reused, char *err, size_t cap);

#endif
