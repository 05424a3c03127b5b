/* rd_inject_call: calling a function inside a thread of another process,
 * held with ptrace (x86-64 Linux).
 *
 * The thread's registers (general and the whole x87/SSE/AVX state) and the
 * stack below its stack pointer (up to RD_CALL_STACK bytes: the memory the
 * call's frames reuse) are saved; its instruction pointer is set to the
 * function with arguments in rdi/rsi and a return address of 0 pushed
 * below the red zone: the return faults at address 0, which ptrace
 * reports as a SIGSEGV stop that is never delivered. Then every register
 * and the stack bytes are put back. orig_rax is -1 during the call, so a
 * system call the thread was stopped in is not restarted under the call;
 * restored, it restarts as after any ptrace stop. The calls run with
 * every signal but SIGSEGV blocked (PTRACE_SETSIGMASK): a signal sent
 * meanwhile stays pending in the kernel, queued as the program would see
 * it, and is delivered after the restore (a process-directed one may go to
 * another thread at once). Dequeued and sent again instead, a real-time
 * signal went back through tgkill, which the per-user queue limit refuses
 * (RLIMIT_SIGPENDING) where the first kill() was let through: lost. A
 * SIGSEGV cannot be blocked (the kernel would reset the program's handler
 * on the return's fault); one that a process sent (si_code <= 0; a fault's
 * is > 0), SIGSTOP, or any signal where the kernel lacks PTRACE_SETSIGMASK
 * (before 3.11), is held and sent again after (send_again). */
#include "rd_inject_call.h"

#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)

enum {
    RED_ZONE = 128,
    SLACK = 256,    /* between the red zone and what the call writes */
    SLOW_MS = 5000, /* a call this long: say recorderd waits for it */
};

static int peek(pid_t pid, uintptr_t at, void *buf, size_t n)
{
    struct iovec l = {buf, n}, r = {(void *)at, n};
    return process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)n ? 0 : -EFAULT;
}

static int poke(pid_t pid, uintptr_t at, const void *buf, size_t n)
{
    struct iovec l = {(void *)buf, n}, r = {(void *)at, n};
    return process_vm_writev(pid, &l, 1, &r, 1, 0) == (ssize_t)n ? 0 : -EFAULT;
}

int rd_call_save(rd_call *c, pid_t pid, pid_t tid)
{
    memset(c, 0, sizeof *c);
    c->pid = pid;
    c->tid = tid;
    struct iovec io = {c->xstate, sizeof c->xstate};
    if (ptrace(PTRACE_GETREGS, tid, NULL, &c->regs) < 0)
        return -errno;
    if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_X86_XSTATE, &io) == 0) {
        c->xlen = io.iov_len;
    } else if (ptrace(PTRACE_GETFPREGS, tid, NULL, c->xstate) == 0) {
        c->xlen = 0; /* no XSAVE: x87 and SSE */
    } else {
        return -errno;
    }
    c->masked = ptrace(PTRACE_GETSIGMASK, tid, (void *)sizeof c->sigmask, &c->sigmask) == 0;
    /* the stack below rsp, as much of RD_CALL_STACK as is mapped */
    for (c->nstack = RD_CALL_STACK; c->nstack >= 4096; c->nstack /= 2)
        if (peek(pid, (uintptr_t)c->regs.rsp - c->nstack, c->stack, c->nstack) == 0)
            break;
    if (c->nstack < 4096)
        return -EFAULT;
    c->sp = (uintptr_t)c->regs.rsp - RED_ZONE - SLACK;
    return 0;
}

int rd_call_push(rd_call *c, const void *data, size_t n, uintptr_t *at)
{
    uintptr_t a = (c->sp - n) & ~(uintptr_t)15;
    if (a < (uintptr_t)c->regs.rsp - c->nstack / 2) /* keep half the saved span for the call */
        return -ENOSPC;
    int e = poke(c->pid, a, data, n);
    if (e)
        return e;
    c->sp = a;
    *at = a;
    return 0;
}

/* Holds a signal that arrived during the call, to deliver after it: 0,
 * or the signal to deliver now (no room left to hold it). */
static int hold(rd_call *c, int sig)
{
    if (c->nheld == RD_CALL_HELD)
        return sig;
    siginfo_t *si = &c->held[c->nheld++];
    if (ptrace(PTRACE_GETSIGINFO, c->tid, NULL, si) < 0) {
        memset(si, 0, sizeof *si);
        si->si_signo = sig;
        si->si_code = SI_USER;
    }
    return 0;
}

static long ms_between(const struct timespec *a, const struct timespec *b)
{
    return (b->tv_sec - a->tv_sec) * 1000 + (b->tv_nsec - a->tv_nsec) / 1000000;
}

/* Waits for the call's end: the SIGSEGV at address 0. */
static int wait_return(rd_call *c, uint64_t *ret)
{
    struct timespec t0, t, last;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    last = t0;
    int said = 0;
    for (;;) {
        int st;
        pid_t w = waitpid(c->tid, &st, __WALL | WNOHANG);
        if (w < 0 || (w == c->tid && (WIFEXITED(st) || WIFSIGNALED(st))))
            return -ESRCH;
        if (w == 0) {
            clock_gettime(CLOCK_MONOTONIC, &t);
            if (ms_between(&t0, &t) > SLOW_MS && !said++)
                fprintf(stderr,
                        "recorderd: waiting for the call in process %d to return "
                        "(it cannot be cut short safely)...\n",
                        (int)c->pid);
            /* the poll is quick for 20 ms after each stop, not only after
             * the call's start: a thread stopped by each signal of a flood
             * would otherwise wait 2 ms a signal, the call run ~10% of the
             * time (an attach of minutes) */
            usleep(ms_between(&last, &t) < 20 ? 100 : 2000);
            continue;
        }
        clock_gettime(CLOCK_MONOTONIC, &last);
        int sig = WSTOPSIG(st), event = st >> 16;
        struct user_regs_struct r;
        if (!event && sig == SIGSEGV && ptrace(PTRACE_GETREGS, c->tid, NULL, &r) == 0 &&
            r.rip == 0) {
            *ret = r.rax;
            return 0;
        }
        siginfo_t si;
        if (!event && sig == SIGSEGV &&
            (ptrace(PTRACE_GETSIGINFO, c->tid, NULL, &si) < 0 || si.si_code > 0))
            return -EFAULT; /* the call itself faulted: restored, it is as if never made */
        /* the program's (a SIGSEGV too, if a process sent it: kill() gives
         * si_code <= 0, where a fault's is > 0): delivered after the restore */
        int now = event ? 0 : hold(c, sig);
        if (ptrace(PTRACE_CONT, c->tid, NULL, (void *)(long)now) < 0)
            return -errno;
    }
}

int rd_call_run(rd_call *c, uintptr_t fn, uint64_t a0, uint64_t a1, uint64_t *ret)
{
    uintptr_t zero[2] = {0, 0}, at;
    int e = rd_call_push(c, zero, sizeof zero, &at); /* 16-aligned */
    if (e)
        return e;
    at += 8; /* the return address: at entry rsp + 8 is 16-aligned, as after a call */
    struct user_regs_struct r = c->regs;
    r.rip = fn;
    r.rdi = a0;
    r.rsi = a1;
    r.rax = 0;
    r.orig_rax = (unsigned long long)-1; /* no syscall restart under the call */
    r.rsp = at;
    uint64_t all_but_segv = ~(1ull << (SIGSEGV - 1));
    if (c->masked &&
        ptrace(PTRACE_SETSIGMASK, c->tid, (void *)sizeof all_but_segv, &all_but_segv) < 0)
        return -errno;
    if (ptrace(PTRACE_SETREGS, c->tid, NULL, &r) < 0 || ptrace(PTRACE_CONT, c->tid, NULL, NULL) < 0)
        return -errno;
    c->sp = at; /* the next call goes below what this one pushed */
    return wait_return(c, ret);
}

int rd_call_restore(rd_call *c)
{
    struct iovec io = {c->xstate, c->xlen};
    int e = poke(c->pid, (uintptr_t)c->regs.rsp - c->nstack, c->stack, c->nstack);
    if (ptrace(PTRACE_SETREGS, c->tid, NULL, &c->regs) < 0)
        e = -errno;
    if (c->masked &&
        ptrace(PTRACE_SETSIGMASK, c->tid, (void *)sizeof c->sigmask, &c->sigmask) < 0)
        e = -errno;
    if (c->xlen ? ptrace(PTRACE_SETREGSET, c->tid, (void *)NT_X86_XSTATE, &io) < 0
                : ptrace(PTRACE_SETFPREGS, c->tid, NULL, c->xstate) < 0)
        e = -errno;
    return e;
}

/* Sends a held signal again, before the thread runs. A kill()'s (SI_USER)
 * goes back through kill(): its si_code kept, and never refused, as the
 * kernel queues kill()'s signals past RLIMIT_SIGPENDING; through tgkill a
 * real-time one was refused (EAGAIN) once the user's queue was full, and
 * lost. Others (sigqueue, tgkill) as they came, to the thread, where the
 * kernel lets us; those are subject to the limit as their first sending
 * was. */
static void send_again(rd_call *c, siginfo_t *si)
{
    if (si->si_code == SI_USER && kill(c->pid, si->si_signo) == 0)
        return;
    if (syscall(SYS_rt_tgsigqueueinfo, c->pid, c->tid, si->si_signo, si) < 0 &&
        syscall(SYS_tgkill, c->pid, c->tid, si->si_signo) < 0) /* SI_TKILL's: not forgeable */
        fprintf(stderr, "recorderd: a signal %d that came during the call in process %d could "
                        "not be sent again: %s\n", si->si_signo, (int)c->pid, strerror(errno));
}

void rd_call_let_go(rd_call *c)
{
    for (int i = 0; i < c->nheld; i++) /* pending on the stopped thread, in order */
        send_again(c, &c->held[i]);
    ptrace(PTRACE_DETACH, c->tid, NULL, NULL);
}

#endif
