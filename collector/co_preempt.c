/* co_preempt: time the traced thread spent runnable but waiting for a CPU
 * (preempted by other work) is neither the program's nor the hook's, yet
 * it lands in whichever interval it fell in, mostly on the code with the
 * most events. The kernel counts it per thread: run_delay, the second
 * figure of /proc/thread-self/schedstat, in ns. A preemption is long (a
 * time slice, milliseconds), so only an interval over CO_PREEMPT_MIN_NS
 * pays for a read (about 0.5 us): the wait since the last read comes off
 * it. Shorter waits stay where they fell. Once per ring batch, hooks
 * that took far longer than a batch's do had a wait inside them: it comes
 * off the hooks' measured sum (the HOOK record, which scales the
 * compensation), at no cost to each hook. Else the baseline is read again
 * once a millisecond at most, so that an interval of the program's own, a
 * sleep, never pays for short waits from long before. */
#include "co_clock.h"
#include "co_preempt.h"
#include "co_state.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CO_PREEMPT_MIN_NS 20000u
#define CO_PREEMPT_REFRESH_NS 1000000u
/* A batch's hooks measured over this (about 80 us a batch here) held a wait */
#define CO_PREEMPT_HOOKS_NS 300000u

/* One thread runs Lua at a time; its file (follow_thread). */
static int g_fd = -1;
static pid_t g_tid;
static dev_t g_dev; /* g_fd's file, as opened: a program may close it */
static ino_t g_ino;
static double g_tpn; /* TSC ticks a ns, measured once; 0 unknown */

static pid_t this_tid(void)
{
    return (pid_t)syscall(SYS_gettid);
}

/* ns the thread of g_fd has waited runnable, or -1. The line must be
 * exactly three numbers: a program that closed our file and opened
 * another under its number must not feed us its bytes. */
static int64_t run_delay(void)
{
    char buf[128];
    ssize_t n = pread(g_fd, buf, sizeof buf - 1, 0);
    if (n <= 0 || buf[n - 1] != '\n')
        return -1;
    buf[n] = 0;
    long long v[3];
    char *p = buf, *end;
    for (int i = 0; i < 3; i++) {
        if (*p < '0' || *p > '9')
            return -1;
        v[i] = strtoll(p, &end, 10);
        if (*end != (i < 2 ? ' ' : '\n') || v[i] < 0)
            return -1;
        p = end + 1;
    }
    return *p ? -1 : v[1];
}

/* TSC ticks a ns over 50 us: within 0.2% (co_clock_pair's midpoints). */
static double tsc_rate(void)
{
    uint64_t t0, n0, t1, n1;
    co_clock_pair(1, &t0, &n0);
    do
        co_clock_pair(1, &t1, &n1);
    while (n1 - n0 < 50000);
    return (double)(t1 - t0) / (double)(n1 - n0);
}

/* Whether g_fd is still the file we opened (co_fd_is): a daemon closes
 * every descriptor and opens its own files, one of them under our number:
 * we must neither close it (its writes would fail, in a child of fork that
 * reopens ours) nor keep reading it. */
static int open_for_this_thread(void)
{
    pid_t tid = this_tid();
    int ours = co_fd_is(g_fd, g_dev, g_ino);
    if (ours && g_tid == tid)
        return 0;
    if (ours)
        close(g_fd);
    g_fd = co_fd_above_std(open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC));
    g_tid = tid;
    if (g_fd >= 0 && co_fd_id(g_fd, &g_dev, &g_ino)) {
        close(g_fd);
        g_fd = -1;
    }
    if (g_fd < 0)
        g_dev = g_ino = 0;
    return g_fd >= 0 ? 0 : -1;
}

/* The end of a trace closes the file: a program attached to and detached
 * keeps no descriptor of ours (doc/attach.md: nothing but the dormant
 * handler is left). One that the program closed and reused is its own. */
void co_preempt_end(co_state *s)
{
    s->pre_min = CO_PREEMPT_NEVER;
    if (co_fd_is(g_fd, g_dev, g_ino))
        close(g_fd);
    g_fd = -1;
    g_tid = 0;
    g_dev = g_ino = 0;
}

void co_preempt_begin(co_state *s)
{
    s->pre_min = CO_PREEMPT_NEVER;
#ifdef CO_FAKE_CLOCK
    return; /* scripts/bench's counter for a clock: no time to take waits off */
#endif
    const char *env = getenv("LUATRACE_COMPENSATE");
    if (s->no_clock || (env && !strcmp(env, "0")) || open_for_this_thread())
        return;
    int64_t d = run_delay();
    if (d < 0)
        return;
    if (s->use_tsc && g_tpn == 0)
        g_tpn = tsc_rate();
    s->pre_tpn = s->use_tsc ? g_tpn : 1.0;
    if (!(s->pre_tpn > 0))
        return;
    s->pre_delay = (uint64_t)d;
    s->pre_read = co_clock_ticks(s->use_tsc);
    s->pre_min = (uint64_t)(CO_PREEMPT_MIN_NS * s->pre_tpn);
}

/* The file follows the thread that runs Lua: a host may hand its state to
 * another thread (a worker pool), whose waits are its own, and a thread
 * that gets it back has waited meanwhile for work of its own, not Lua's.
 * Returns 1 when the file was for another thread: this thread's is open
 * and its baseline read now (nothing to take off before it), else 0. */
static int follow_thread(co_state *s)
{
    if (this_tid() == g_tid)
        return 0;
    int64_t d = open_for_this_thread() ? -1 : run_delay();
    s->pre_delay = d < 0 ? UINT64_MAX : (uint64_t)d; /* unreadable: never more */
    s->pre_read = co_clock_ticks(s->use_tsc);
    return 1;
}

/* The hooks measured over CO_PREEMPT_HOOKS_NS since the last HOOK record:
 * they held a wait. */
static int hooks_waited(const co_state *s)
{
    return s->hook_sum > (uint64_t)(CO_PREEMPT_HOOKS_NS * s->pre_tpn);
}

/* What the thread waited since the last read, in ticks (0: nothing, or
 * the figure could not be read), the baseline moved to now. */
static uint64_t waited_since(co_state *s, uint64_t now)
{
    s->pre_read = now;
    int64_t d = follow_thread(s) ? -1 : run_delay();
    if (d < 0 || (uint64_t)d <= s->pre_delay)
        return 0;
    uint64_t waited = (uint64_t)((double)((uint64_t)d - s->pre_delay) * s->pre_tpn);
    s->pre_delay = (uint64_t)d;
    return waited;
}

/* As much of waited as the hooks took comes off their sum, when they held
 * a wait. Returns what is left of waited. */
static uint64_t off_hooks(co_state *s, uint64_t waited)
{
    if (!hooks_waited(s))
        return waited;
    uint64_t h = waited < s->hook_sum ? waited : s->hook_sum;
    s->hook_sum -= h;
    s->hook_line = s->hook_nline = 0; /* which hooks held it is not known */
    s->pre_sum += h;
    return waited - h;
}

uint64_t co_preempt_take(co_state *s, uint64_t ticks)
{
    /* a wait inside a hook since the last read is the hooks', not this
     * interval's, which may be a sleep of the program's own */
    uint64_t waited = off_hooks(s, waited_since(s, co_clock_ticks(s->use_tsc)));
    uint64_t left = co_preempt_left(ticks, waited, (uint64_t)s->pre_tpn + 1);
    s->pre_sum += ticks - left; /* the rest fell where no interval was read */
    return left;
}

void co_preempt_batch(co_state *s)
{
    uint64_t now = co_clock_ticks(s->use_tsc);
    if (hooks_waited(s) || now - s->pre_read >= (uint64_t)(CO_PREEMPT_REFRESH_NS * s->pre_tpn))
        (void)off_hooks(s, waited_since(s, now)); /* else short waits: left where they fell */
}
