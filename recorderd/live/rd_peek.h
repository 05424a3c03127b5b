/* rd_peek: reading a Lua 5.1 process that never loaded the collector,
 * from outside (ptrace stop, process_vm_readv): finding its states, its
 * stacks, dump (rd_peekdump.c; a Lua 5.4 process's: rd_peek54.h). */
#ifndef RD_PEEK_H
#define RD_PEEK_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "lr_stackread.h"

enum { RD_PEEK_MAX_STATES = 16, RD_PEEK_MAX_TASKS = 4096 };

/* The tasks of a process held stopped for a read. */
typedef struct rd_peek_stop {
    pid_t tid[RD_PEEK_MAX_TASKS];
    int sig[RD_PEEK_MAX_TASKS]; /* a signal the task stopped to take: its own, given back */
    int n;
} rd_peek_stop;

/* `recorderd dump PID` of such a process: prints the stacks of each of its
 * Lua states to out, or says on stderr why it cannot. Returns the exit
 * code. */
int rd_peek_dump(pid_t pid, FILE *out);

/* Stops every task of pid (PTRACE_SEIZE, PTRACE_INTERRUPT): 0, or -errno
 * of the first refusal, nothing left stopped. rd_peek_let_go lets them run
 * on (PTRACE_DETACH). */
int rd_peek_stop_all(pid_t pid, rd_peek_stop *s);
void rd_peek_let_go(rd_peek_stop *s);

/* A sampler that stops the process for each read (--stop) and met e: 1
 * if the sample is to be skipped, 0 if e ends the sampling. Another
 * reader holding the process for a moment (a dump: -EBUSY, or -EPERM
 * once it let go before its tracer could be named) is skipped for up to
 * RD_PEEK_BUSY_MS in a row; *since (0 at first) is when the run of
 * refusals began, reset by the caller after a sample that succeeds. */
#define RD_PEEK_BUSY_MS 2000
int rd_peek_skip_busy(int e, uint64_t *since_ms);

/* One sample of the running chain of the state whose main thread is L
 * (lr_sr_read without the GC list). With stop, the process is held
 * stopped for the read (exact, about 2 ms of the process's time a sample:
 * PTRACE_DETACH waits for it to be off the CPU) and *stopped_us grows by
 * how long; without, it is read running (nothing asked of it; a frame may
 * come from a moment later than the one below it). Returns 0, or -errno:
 * -ESRCH when the process or its state is gone, -EAGAIN when a read of a
 * running process caught its stack mid-change (no sample: try again). */
int rd_peek_sample(lr_sr *d, const void *L, rd_peek_stop *s, int stop, uint64_t *stopped_us);

/* The main threads of d->pid's Lua states (at most RD_PEEK_MAX_STATES):
 * how many were found. A scan of its heap: read as it runs, it ends at
 * d->deadline_us if set. */
int rd_peek_find_states(lr_sr *d, const void **found);

/* The same for top and record, the process running: stopped for a moment
 * first (rd_peek_stop_all, s) to learn whether the kernel lets recorderd
 * read it, then scanned as it runs; a process that started under 2 s ago
 * with no state yet (about to exec lua5.1, or loading it) is scanned again
 * until it has one or is 2 s old; with none, 300 ms are given to a process
 * that may be exiting (its state closed: rd_peek_gone then says so).
 * Returns how many, or the stop's -errno. */
int rd_peek_find_running(lr_sr *d, const void **found, rd_peek_stop *s);

/* 1 once process pid has exited (a zombie, or gone), else 0. */
int rd_peek_gone(pid_t pid);

/* Says on stderr why pid cannot be read (e: rd_peek_stop_all's).
 * Returns 1, the exit code. */
int rd_peek_refusal(pid_t pid, int e);
/* The same one-line message (no "recorderd: ", no newline) into buf. */
void rd_peek_refusal_msg(pid_t pid, int e, char *buf, size_t cap);

/* The release PUC Lua's lua_ident gives ("$Lua: Lua 5.1.5 ..." in 5.1,
 * "$LuaVersion: Lua 5.4.4 ..." later) in process pid: 1 with "5.N" in v
 * (8 bytes) and the file that defines it in lib, 0 where no file it maps
 * defines lua_ident or it reads as no release. */
int rd_peek_release(pid_t pid, char *v, char *lib, size_t cap);

/* 1 after writing why into buf when pid runs a Lua other than 5.1:
 * LuaJIT (a file it maps defines luaJIT_setmode) or a PUC Lua whose
 * lua_ident names another release (5.4: what to do instead). Its state
 * is not laid out as Lua 5.1's, so it can be neither read nor injected.
 * 0 otherwise, a process with no lua_ident to read included. Nothing is
 * stopped. */
int rd_peek_other_lua(pid_t pid, char *buf, size_t cap);

/* Sets d up to read pid: a C function with no other name is named after
 * the file mapped there that defines it, as the collector names it
 * ("lua5.1" for lua.c's pmain). */
void rd_peek_init(lr_sr *d, pid_t pid);

/* pid's command line, its arguments joined by spaces. */
void rd_peek_cmdline(pid_t pid, char *buf, size_t cap);

#endif
