/* rd_inject_call: a function call made inside a ptrace-stopped thread of
 * another process (x86-64), every register and the stack it used put back
 * afterwards (rd_inject_call.c says how). */
#ifndef RD_INJECT_CALL_H
#define RD_INJECT_CALL_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

enum {
    RD_CALL_STACK = 64 << 10, /* stack bytes below rsp saved and put back */
    RD_CALL_XSTATE = 16 << 10,
    RD_CALL_HELD = 1024, /* past this many, a signal is delivered during the call */
};

typedef struct rd_call {
    pid_t pid, tid;
    struct user_regs_struct regs; /* as the thread was stopped */
    uint8_t xstate[RD_CALL_XSTATE] __attribute__((aligned(64)));
    size_t xlen; /* 0: xstate holds user_fpregs_struct */
    uint64_t sigmask; /* the thread's blocked signals, put back at the restore */
    int masked;       /* sigmask was read: the calls run with all but SIGSEGV blocked */
    uint8_t stack[RD_CALL_STACK];
    size_t nstack;
    uintptr_t sp;                 /* where the next push goes below */
    siginfo_t held[RD_CALL_HELD]; /* signals that came during the calls */
    int nheld;
} rd_call;

/* Saves tid's registers and stack (tid is ptrace-stopped). 0 or -errno. */
int rd_call_save(rd_call *c, pid_t pid, pid_t tid);

/* Copies n bytes onto the thread's stack, below the red zone: their
 * address into *at. 0 or -errno. */
int rd_call_push(rd_call *c, const void *data, size_t n, uintptr_t *at);

/* Calls fn(a0, a1) in the thread, waits for its return: rax into *ret.
 * 0, -ESRCH if the process died, -EFAULT if the call faulted, or -errno. */
int rd_call_run(rd_call *c, uintptr_t fn, uint64_t a0, uint64_t a1, uint64_t *ret);

/* Puts back the registers and stack saved. 0 or -errno. */
int rd_call_restore(rd_call *c);

/* Lets the thread run on, the signals held during the calls queued to it
 * again, in order, with their siginfo (a kill()'s sender becomes
 * recorderd: the kernel lets no process forge another's). */
void rd_call_let_go(rd_call *c);

#endif
