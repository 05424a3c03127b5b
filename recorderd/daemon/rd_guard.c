/* rd_guard: see rd_guard.h. */
#include "rd_guard.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>

/* The innermost rd_guard_call of this thread, NULL outside one. */
static __thread sigjmp_buf *bus_guard;

static void on_sigbus(int sig, siginfo_t *si, void *ctx)
{
    (void)si;
    (void)ctx;
    if (bus_guard)
        siglongjmp(*bus_guard, 1);
    signal(sig, SIG_DFL); /* a real fault elsewhere: die as we would have */
    raise(sig);
}

void rd_guard_init(void)
{
    struct sigaction sa = {0};
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, NULL);
}

int rd_guard_call(int (*fn)(void *ud), void *ud)
{
    sigjmp_buf jb;
    sigjmp_buf *volatile outer = bus_guard;
    if (sigsetjmp(jb, 1)) {
        bus_guard = outer;
        return -EFAULT;
    }
    bus_guard = &jb;
    int r = fn(ud);
    bus_guard = outer;
    return r;
}
