/* earlytick: an LD_PRELOAD that makes a POSIX timer expire at once each
 * time it is armed: before the arming asked for, timer_settime arms it at
 * an absolute time long past (1 ns), which a CPU-time clock's timer
 * signals within the call (the kernel's posix_cpu_timer_set), so that its
 * signal lands as the call returns, in the caller's next instructions.
 * The ticks of sampled time (collector/co_tick.c) are such a timer: a
 * tick then lands right where tracing begins, every time (ticks.py,
 * case earlytick). */
#include <dlfcn.h>
#include <time.h>

int timer_settime(timer_t t, int flags, const struct itimerspec *v, struct itimerspec *old)
{
    static int (*real)(timer_t, int, const struct itimerspec *, struct itimerspec *);
    if (!real)
        real = (int (*)(timer_t, int, const struct itimerspec *, struct itimerspec *))dlsym(
            RTLD_NEXT, "timer_settime");
    if (v && (v->it_value.tv_sec || v->it_value.tv_nsec)) {
        struct itimerspec past = {{0, 0}, {0, 1}};
        (void)real(t, TIMER_ABSTIME, &past, NULL);
    }
    return real(t, flags, v, old);
}
