/* co_tick: sampled time (LUATRACE_TIMING=sample). Every event is traced
 * as with no clock; a POSIX timer of the traced thread's CPU time (or of
 * CLOCK_MONOTONIC: LUATRACE_TICK_CLOCK=wall) sends it a real-time signal
 * every period, whose handler only adds the expirations to a counter. The
 * hook, at its start, writes what the counter holds as a TICK record
 * before the event's own: the ticks landed where the last record left the
 * stack, since only the program ran in between (lt_event.h).
 *
 * The handler never touches the ring. A tick that lands while the hook
 * runs is the hook's: counted apart, charged to nobody. The hook sets
 * co_tick_in while it runs (what it calls outside the collector, as
 * lua_getinfo, included); the entry and the exit around it are found by
 * the interrupted pc, inside the collector's own code.
 * The timer is armed while tracing is on (co_set_active), disarmed at
 * troff and at the end; a fork child has none (POSIX timers are not
 * inherited) until its own trace arms one. CPU time comes from a POSIX
 * CPU-time timer, which the kernel checks only at its tick (every 4 ms at
 * HZ=250: the expirations since the last one count, so a sample weighs
 * the CPU time since the one before); the kernel's task clock
 * (perf_event_open, a signal every period of CPU time) only where
 * LUATRACE_TICK_PERF=1 asks for it (make_perf says why not by default).
 * The signal is SIGRTMIN+6
 * (LUATRACE_TICK_SIGNAL=N another), or the next real-time one whose
 * handler is the default when the program has one of its own there. A
 * CPU-time source fires only while the thread runs, so it never
 * interrupts a sleep; a wall-clock one does (SA_RESTART restarts
 * read, write and the like; poll, select, nanosleep and epoll_wait return
 * EINTR whatever SA_RESTART says: doc/tracing.md). */
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unwind.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "co_state.h"

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

#define CO_TICK_COOKIE 0x4c54 /* our timer's sival_int ("LT") */

volatile uint64_t co_tick_pending; /* ticks of the program since the last TICK */
volatile uint64_t co_tick_pending_c;
volatile int co_tick_in;           /* the hook runs: a tick now is the hook's */
static volatile uint64_t g_hook;   /* ticks that landed in the hook */
static timer_t g_timer;
static int g_made;  /* g_timer or g_perf exists (in this process) */
static int g_perf = -1; /* the task clock's event, else -1: g_timer */
static dev_t g_perf_dev; /* its file's identity: a program that closed it */
static ino_t g_perf_ino; /* (closefrom) may have its own file there now */
static int g_signo; /* the signal our handler is on, 0: none yet */
static struct sigaction g_old; /* what the program had there before */
static uintptr_t g_text, g_text_len; /* the collector's code */

/* The interrupted pc, 0 where not known. */
static uintptr_t pc_of(const void *uc)
{
    const ucontext_t *u = uc;
#if defined(__x86_64__)
    return (uintptr_t)u->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    return (uintptr_t)u->uc_mcontext.pc;
#else
    (void)u;
    return 0;
#endif
}

/* dl_iterate_phdr: the executable segment holding the collector's code. */
static int find_text(struct dl_phdr_info *info, size_t size, void *ud)
{
    (void)size;
    uintptr_t self = (uintptr_t)ud;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && self - a < ph->p_memsz) {
            g_text = a;
            g_text_len = ph->p_memsz;
            return 1;
        }
    }
    return 0;
}

/* {====== lines by sample (LUATRACE_LINES=sample) ======
 * Lua 5.1's line hook costs the program traceexec at every instruction,
 * outside any hook of ours (a loop of long arithmetic lines ran 1.8 times
 * as long with a hook that did nothing), and that cost follows the code,
 * so no calibration takes it off. With lines by sample there is no line
 * hook: a tick says where it landed by a probe. The handler sets a count
 * hook of 1 on the thread of the last record (lua_sethook: Lua's own lua.c
 * calls it from a signal handler); at its next instruction the hook is
 * called with that line, sends it as a LINE record, then the TICK. Every
 * hook first takes the probe off again: the thread's id travels in its
 * count (co_thread.c), kept here meanwhile. */
lua_State *volatile co_probe_L; /* the thread probed, or NULL */
static volatile int g_probe_count;    /* its count before */

static void probe_arm(void)
{
    co_state *s = co_hook_state();
    lua_State *L = s ? s->cur_L : NULL;
    /* not a suspended thread C runs Lua on: Lua 5.1 would take the count
     * hook for one that yielded (co_hook.c's lines_guard); the tick goes
     * without a line */
    if (!L || !s->lines_sampled || !s->active || co_probe_L || co_nchain ||
        lua_gethook(L) != co_hook || lua_gethookmask(L) != CO_MASK ||
        (!s->jit && lua_status(L) == LUA_YIELD))
        return;
    g_probe_count = lua_gethookcount(L);
    co_probe_L = L;
    atomic_signal_fence(memory_order_seq_cst);
    lua_sethook(L, co_hook, CO_MASK | LUA_MASKCOUNT, 1);
}

/* The probe off again, its thread's id back in its count: the thread
 * probed, or NULL if none was. Only if the probe is still what its thread
 * has: the program's debug.sethook may have set another hook since (the
 * tick came in the call, after its hook event), which stays. */
static lua_State *probe_off(void)
{
    lua_State *P = co_probe_L;
    if (P) {
        if (lua_gethook(P) == co_hook && lua_gethookmask(P) == (CO_MASK | LUA_MASKCOUNT) &&
            lua_gethookcount(P) == 1)
            lua_sethook(P, co_hook, CO_MASK, g_probe_count);
        atomic_signal_fence(memory_order_seq_cst);
        co_probe_L = NULL;
    }
    return P;
}

int co_tick_count(const lua_State *T, int c)
{
    /* c read first: a probe set since holds the count c was (its own read) */
    return c == 1 && T == co_probe_L ? g_probe_count : c;
}

int co_tick_unprobe(co_state *s, lua_State *L, const lua_Debug *ar)
{
    lua_State *P = probe_off();
    /* LuaJIT: one hook and count for every thread */
    return P && ar->event == LUA_HOOKCOUNT && (P == L || s->jit);
}

void co_tick_lines_exact(co_state *s)
{
    s->lines_sampled = 0; /* no more probes */
    atomic_signal_fence(memory_order_seq_cst);
    probe_off();
    co_mask = CO_MASK_ALL;
}

void co_tick_freed(lua_State *T)
{
    if (co_probe_L == T)
        co_probe_L = NULL;
}

/* The code that called the hook: a tick there is Lua's work for the
 * hook, the hook's. Lua 5.1: luaD_callhook. LuaJIT: callhook and, one
 * frame up, lj_dispatch_ins or lj_dispatch_call, which the interpreter
 * calls only while a hook is set (each instruction's check for a new
 * line, a call's hook). Each function's bounds come from the unwind table
 * (_Unwind_Find_FDE, libgcc's: its FDE's start as encoded on x86-64 and
 * aarch64, pc-relative 4 bytes, checked against the start libgcc found). */
struct dwarf_eh_bases {
    void *tbase, *dbase, *func;
};
extern const void *_Unwind_Find_FDE(void *pc, struct dwarf_eh_bases *bases);
#define CALLERS 6
/* A LuaJIT hook stub kept: from this many bytes before the return address
 * of its call to this many after it. x64's (LuaJIT 2.1, vm_x64.dasc):
 * vm_rethook and vm_inshook enter 0x5c bytes before theirs and dispatch
 * 0x10 after; vm_callhook 0x2d and 0x28. Its neighbours (vm_record,
 * vm_hotloop, vm_hotcall) run only with the JIT on, never while traced. */
#if defined(__x86_64__)
#define CO_STUB_BEFORE 0x60
#define CO_STUB_AFTER 0x30
#else /* not measured: none kept */
#define CO_STUB_BEFORE 0
#define CO_STUB_AFTER 0
#endif
static struct {
    uintptr_t lo, len;
    int stub; /* a hook stub's instructions (learn_one) */
} g_caller[CALLERS];
/* LuaJIT's interpreter, the function its hook stubs are in: a tick
 * elsewhere ran C code (co_tick_pending_c). 0: not found yet. */
static uintptr_t g_vm_lo, g_vm_len;
static volatile int g_ncaller;
static uintptr_t g_unknown; /* the last return address not found */
uintptr_t co_tick_ra;       /* the last one found: the hook need not look */
unsigned co_tick_walks;     /* LuaJIT, Lua 5.4: events whose callers were looked for */

/* 0 if pc is in no caller kept, else 1 (2: in a stub's) */
static int in_caller(uintptr_t pc)
{
    int n = g_ncaller;
    for (int i = 0; i < n; i++)
        if (pc - g_caller[i].lo < g_caller[i].len)
            return 1 + g_caller[i].stub;
    return 0;
}

/* [lo, lo + len) kept as a caller's code (a stub's). */
static void keep(uintptr_t lo, uintptr_t len, int stub)
{
    int n = g_ncaller;
    g_caller[n].lo = lo;
    g_caller[n].len = len;
    g_caller[n].stub = stub;
    atomic_signal_fence(memory_order_seq_cst);
    g_ncaller = n + 1;
}

/* The function holding ra kept as a caller: 1 (2: a stub's instructions,
 * below), or 0 if it has no unwind entry or is over max bytes (CO_WHOLE:
 * the interpreter's loop, into which a build inlined luaD_callhook: a tick
 * there may be the program's). stub 1: in such a function, the few
 * instructions around ra kept instead (LuaJIT's hook stubs, vm_callhook
 * and vm_inshook, in its interpreter's code: a call of lj_dispatch_call or
 * _ins with what it saves and reloads around it); 2: only those. */
#define CO_WHOLE 4096

static int learn_one(uintptr_t ra, int stub, int32_t max)
{
    int known = in_caller(ra);
    if (known)
        return known;
    if (ra == g_unknown || g_ncaller == CALLERS)
        return 0;
    struct dwarf_eh_bases b = {0, 0, 0};
    const uint8_t *fde = _Unwind_Find_FDE((void *)(ra - 1), &b);
    int32_t rel = 0, len = 0;
    if (fde) {
        memcpy(&rel, fde + 8, 4);
        memcpy(&len, fde + 12, 4);
    }
    if (!fde || (uintptr_t)(fde + 8) + (uintptr_t)(intptr_t)rel != (uintptr_t)b.func || len <= 0 ||
        ra - (uintptr_t)b.func > (uintptr_t)len) {
        g_unknown = ra;
        return 0;
    }
    if (len <= max && stub < 2) {
        keep((uintptr_t)b.func, (uintptr_t)len, 0);
        return 1;
    }
    if (!stub || len <= CO_WHOLE || !CO_STUB_AFTER || ra - (uintptr_t)b.func < CO_STUB_BEFORE ||
        (uintptr_t)b.func + (uintptr_t)len - ra < CO_STUB_AFTER) {
        g_unknown = ra;
        return 0;
    }
    keep(ra - CO_STUB_BEFORE, CO_STUB_BEFORE + CO_STUB_AFTER, 1);
    g_vm_lo = (uintptr_t)b.func;
    atomic_signal_fence(memory_order_seq_cst);
    g_vm_len = (uintptr_t)len;
    return 2;
}

#define CO_UP 2 /* frames above the hook's caller looked at */

struct walk {
    uintptr_t ra, above[CO_UP]; /* the hook's return address; the frames above its caller's */
    int seen; /* frames seen from the caller's on */
};

static _Unwind_Reason_Code walk_frame(struct _Unwind_Context *c, void *arg)
{
    struct walk *w = arg;
    uintptr_t ip = (uintptr_t)_Unwind_GetIP(c);
    if (w->seen) {
        w->above[w->seen - 1] = ip;
        return ++w->seen > CO_UP ? _URC_END_OF_STACK : _URC_NO_REASON;
    }
    w->seen = ip == w->ra;
    return _URC_NO_REASON;
}

#if LUA_VERSION_NUM >= 504
/* Lua 5.4: the function that called luaD_hook kept too, where it runs
 * only while a hook is set: luaD_hookcall (a Lua function's call) and
 * rethook (every return), a few dozen instructions each, and, above a
 * count event (a probe), luaG_traceexec, which 5.4 runs at a function's
 * first instruction and after each return while any hook is set. They
 * are told by their size: a call's or a return's caller of more than
 * CO_SMALL bytes is code every call runs (precallC, a C function's call;
 * luaD_poscall, into which a build may inline rethook) and stays the
 * program's. */
#define CO_SMALL 256

static void learn_54(uintptr_t up, int count)
{
    if (up)
        learn_one(up, 0, count ? CO_WHOLE : CO_SMALL);
}
#endif

/* ra: the hook's return address. up (LuaJIT): the functions further up
 * kept too, up to its hook stub (callhook, then lj_dispatch_call or _ins,
 * then the stub; a build that inlined callhook has one level fewer), for
 * the first CO_TICK_WALKS events (the unwinder runs then only: calls and
 * the other events come from different functions); Lua 5.4: learn_54,
 * for the first CO_TICK_WALKS events and the first as many count events
 * (count). A return address in the collector (its hook before tracing
 * starts) is no caller: its ticks are the hook's already. */
void co_tick_caller_learn(uintptr_t ra, int up, int count)
{
    if (ra - g_text < g_text_len || !learn_one(ra, 0, CO_WHOLE))
        return;
    co_tick_ra = ra;
    if (!up || co_tick_walks >= (count ? 2 : 1) * CO_TICK_WALKS)
        return;
    co_tick_walks++;
    struct walk w = {ra, {0}, 0};
    _Unwind_Backtrace(walk_frame, &w);
#if LUA_VERSION_NUM >= 504
    learn_54(w.above[0], count);
#else
    (void)count;
    /* a function, then only a stub: what called lj_dispatch_call is one */
    if (w.above[0] && learn_one(w.above[0], 1, CO_WHOLE) == 1 && w.above[1])
        learn_one(w.above[1], 2, CO_WHOLE);
#endif
}
/* }====================================================================== */

static void on_tick(int sig, siginfo_t *si, void *uc)
{
    int perf = g_perf >= 0 && si->si_code > 0 && si->si_fd == g_perf; /* POLL_IN */
    if (!perf && (si->si_code != SI_TIMER || si->si_value.sival_int != CO_TICK_COOKIE)) {
        /* not our timer's: the program's, to its own handler if it had one */
        if ((g_old.sa_flags & SA_SIGINFO) && g_old.sa_sigaction)
            g_old.sa_sigaction(sig, si, uc);
        else if (!(g_old.sa_flags & SA_SIGINFO) && g_old.sa_handler != SIG_DFL &&
                 g_old.sa_handler != SIG_IGN)
            g_old.sa_handler(sig);
        return;
    }
    int e = errno;
    int over = perf ? 0 : timer_getoverrun(g_timer); /* async-signal-safe */
    uint64_t n = 1 + (over > 0 ? (uint64_t)over : 0);
    uintptr_t pc = pc_of(uc);
    if (co_tick_in || pc - g_text < g_text_len || in_caller(pc)) {
        __atomic_fetch_add(&g_hook, n, __ATOMIC_RELAXED);
    } else {
        co_tick_pending += n; /* the hook reads it with co_tick_in set */
        if (g_vm_len && pc - g_vm_lo >= g_vm_len)
            co_tick_pending_c += n;
        co_rehook_check(co_hook_state());
        probe_arm();
    }
    errno = e;
}

/* The signal to use: LUATRACE_TICK_SIGNAL, else the first real-time one
 * from SIGRTMIN+6 whose handler is the default. 0 if none. */
static int pick_signal(void)
{
    const char *env = getenv("LUATRACE_TICK_SIGNAL");
    if (env && *env) {
        int n = atoi(env);
        return n >= SIGRTMIN && n <= SIGRTMAX ? n : 0;
    }
    for (int n = SIGRTMIN + 6; n <= SIGRTMAX; n++) {
        struct sigaction sa;
        if (n == co_attach_signal()) /* a dormant collector's */
            continue;
        if (!sigaction(n, NULL, &sa) && !(sa.sa_flags & SA_SIGINFO) && sa.sa_handler == SIG_DFL)
            return n;
    }
    return 0;
}

/* The kernel's task clock of this thread, a signal each period_ns of its
 * CPU time: g_perf, or -1 (not allowed, not there, or not asked for:
 * only LUATRACE_TICK_PERF=1 asks). Its descriptor above 2, as the
 * collector's others. Not the default: its signal is sent as the thread
 * leaves the CPU too, which breaks a nanosleep, poll or select in C code
 * with EINTR; one queued as the process calls execve survives the exec
 * and kills the new program (the handler is gone, the default action of
 * a real-time signal ends a process); and with the user's queue of
 * real-time signals full the kernel sends SIGIO instead, which ends the
 * process too. A POSIX timer has none of these (it fires only while the
 * thread runs, exec deletes it with its signal, its signal is
 * preallocated), at the kernel tick's granularity. */
static int make_perf(uint64_t period_ns)
{
    const char *env = getenv("LUATRACE_TICK_PERF");
    if (!env || strcmp(env, "1"))
        return -1;
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.sample_period = period_ns;
    a.disabled = 1;
    a.wakeup_events = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd >= 0 && fd < 3) {
        int hi = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        close(fd);
        fd = hi;
    }
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    g_perf_dev = st.st_dev;
    g_perf_ino = st.st_ino;
    struct f_owner_ex o = {F_OWNER_TID, (pid_t)syscall(SYS_gettid)};
    if (fcntl(fd, F_SETOWN_EX, &o) || fcntl(fd, F_SETSIG, g_signo) ||
        fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK)) {
        close(fd);
        return -1;
    }
    return fd;
}

/* The handler on g_signo, and the timer of this thread's clock. */
static int make_timer(co_state *s)
{
    struct sigaction now;
    /* a signal kept from an earlier trace (an attach's) whose handler the
     * program has replaced since: its handler got every tick */
    if (g_signo && (sigaction(g_signo, NULL, &now) || now.sa_sigaction != on_tick))
        g_signo = 0;
    if (!g_signo) {
        int n = pick_signal();
        dl_iterate_phdr(find_text, (void *)(uintptr_t)on_tick);
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_tick;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        /* every signal held while it runs: a handler of the program's that
         * sets a hook of its own (luaposix's) landing between our look at
         * the hook and our lua_sethook (probe_arm, co_rehook_check) had its
         * hook overwritten, and its Lua handler waited for the next signal */
        sigfillset(&sa.sa_mask);
        if (!n || sigaction(n, &sa, &g_old))
            return -EBUSY;
        g_signo = n;
    }
    if (s->tick_mode == CO_TICK_CPU && (g_perf = make_perf(s->tick_ns)) >= 0) {
        g_made = 1;
        return 0;
    }
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = g_signo;
    ev.sigev_value.sival_int = CO_TICK_COOKIE;
    ev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
    clockid_t c = s->tick_mode == CO_TICK_WALL ? CLOCK_MONOTONIC : CLOCK_THREAD_CPUTIME_ID;
    if (timer_create(c, &ev, &g_timer))
        return -errno;
    g_made = 1;
    if (c == CLOCK_THREAD_CPUTIME_ID) { /* fires at the kernel's tick: fine ticks come */
        s->tick_fine = 0;               /* as one bunch, and tell no more than 1 ms ones */
        s->tick_ns = co_tick_period_ns();
    }
    return 0;
}

static void settime(uint64_t ns)
{
    if (g_perf >= 0) {
        (void)ioctl(g_perf, ns ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
        return;
    }
    struct itimerspec it;
    it.it_value.tv_sec = it.it_interval.tv_sec = (time_t)(ns / 1000000000u);
    it.it_value.tv_nsec = it.it_interval.tv_nsec = (long)(ns % 1000000000u);
    (void)timer_settime(g_timer, 0, &it, NULL);
}

void co_tick_arm(co_state *s, int on)
{
    if (!s->tick_mode || on == s->tick_on)
        return;
    if (on && !g_made && make_timer(s)) {
        fprintf(stderr, "luatrace: no timer for sampled time (no free real-time signal, or "
                        "timer_create failed): the trace has no time\n");
        s->tick_mode = 0;
        return;
    }
    settime(on ? s->tick_ns : 0);
    s->tick_on = on;
    if (!on)
        probe_off();
}

uint64_t co_tick_period_ns(void)
{
    const char *env = getenv("LUATRACE_TICK_US");
    long us = env && *env ? atol(env) : 1000;
    return (uint64_t)(us >= 100 && us <= 1000000 ? us : 1000) * 1000u;
}

/* A short program would get a few ticks of 1 ms, and a flame graph of a
 * few frames: the first CO_TICK_FINE ticks (20 ms of CPU time) come every
 * 0.1 ms, each TICK record saying its period. A tick costs 20 to 30 us of
 * CPU in the kernel here (a signal), a cost in proportion to the time, not
 * to where it is spent: 500 fine ticks made a 0.1 s program 15% slower,
 * 200 cost about 6 ms. Not with LUATRACE_TICK_US, which fixes the period. */
#define CO_TICK_FINE 200
#define CO_TICK_FINE_NS 100000u

uint64_t co_tick_start_ns(uint32_t *fine)
{
    const char *env = getenv("LUATRACE_TICK_US");
    *fine = env && *env ? 0 : CO_TICK_FINE;
    return *fine ? CO_TICK_FINE_NS : co_tick_period_ns();
}

/* After the fine ticks, the period of the rest (normal context). */
static void coarse(co_state *s, uint64_t n)
{
    s->tick_fine = n >= s->tick_fine ? 0 : s->tick_fine - (uint32_t)n;
    if (s->tick_fine)
        return;
    s->tick_ns = co_tick_period_ns();
    if (g_perf >= 0) {
        uint64_t ns = s->tick_ns;
        (void)ioctl(g_perf, PERF_EVENT_IOC_PERIOD, &ns);
    } else if (g_made && s->tick_on) {
        settime(s->tick_ns);
    }
}

void co_tick_flush(co_state *s)
{
    int was = co_tick_enter();
    uint8_t *p = co_tick_pending ? co_out_hot(s) : NULL;
    if (p) {
        uint64_t n = co_tick_pending, h = __atomic_exchange_n(&g_hook, 0, __ATOMIC_RELAXED);
        co_tick_pending = 0;
        co_tick_pending_c = 0;
        uint8_t *q = lt_put_head(p, LT_EV_TICK, 3);
        q = lt_put_uint(q, n);
        q = lt_put_uint(q, h);
        q = lt_put_uint(q, s->tick_ns);
        co_out_hot_end(s, p, q);
        if (s->tick_fine)
            coarse(s, n + h);
    }
    co_tick_leave(was);
}

void co_tick_flush_c(co_state *s)
{
    int was = co_tick_enter();
    uint64_t n = co_tick_pending_c;
    uint8_t *p = n && n <= co_tick_pending ? co_out_hot(s) : NULL;
    if (p) {
        co_tick_pending -= n;
        co_tick_pending_c = 0;
        uint8_t *q = lt_put_head(p, LT_EV_TICK, 3);
        q = lt_put_uint(q, n);
        q = lt_put_uint(q, 0);
        q = lt_put_uint(q, s->tick_ns);
        co_out_hot_end(s, p, q);
        if (s->tick_fine)
            coarse(s, n);
    }
    co_tick_leave(was);
}

int co_tick_signal(void)
{
    return g_signo;
}

/* The timer gone (its handler stays where it is). */
static void drop_timer(void)
{
    if (g_perf >= 0)
        close(g_perf);
    else
        timer_delete(g_timer);
    g_perf = -1;
    g_made = 0;
}

void co_tick_retake(co_state *s)
{
    struct sigaction now;
    if (!g_made || !g_signo || sigaction(g_signo, NULL, &now) ||
        ((now.sa_flags & SA_SIGINFO) && now.sa_sigaction == on_tick))
        return;
    /* this timer sends g_signo: a new one, on the signal make_timer picks
     * (g_signo's again where the program set the default back) */
    drop_timer();
    s->tick_on = 0;
    co_tick_arm(s, 1);
}

void co_tick_release(co_state *s)
{
    co_tick_arm(s, 0);
    if (!g_made)
        return;
    /* the handler stays: a tick already queued would meet the default
     * action of a real-time signal, which ends the process */
    drop_timer();
    co_tick_pending = 0;
    co_tick_pending_c = 0;
    g_hook = 0;
}

void co_tick_forked(void)
{
    g_made = 0; /* the parent's timer is not the child's */
    struct stat st; /* fstat: async-signal-safe */
    if (g_perf >= 0 && !fstat(g_perf, &st) && st.st_dev == g_perf_dev && st.st_ino == g_perf_ino)
        close(g_perf); /* nor its task clock (unless the program closed it: then not ours) */
    g_perf = -1;
    co_tick_pending = 0;
    g_hook = 0;
    co_probe_L = NULL; /* the child's hooks are set again as its trace begins */
}
