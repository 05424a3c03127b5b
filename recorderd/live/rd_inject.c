/* rd_inject: loading luatrace.so into a Lua 5.1 process that never loaded
 * it, for `recorderd attach PID`.
 *
 * The safe point. Every thread is stopped (PTRACE_SEIZE, PTRACE_INTERRUPT)
 * and the calls (dlopen, then luatrace_inject) are made in one thread that
 * holds no lock of the C library:
 * - either it is stopped in the code of the executable or of the library
 *   that exports the Lua API (the Lua VM, the host's own code): the C
 *   library is not on the top of its stack;
 * - or it is blocked in one of the waiting system calls below (read, poll,
 *   epoll_wait, nanosleep...), interrupted (it will restart it), which the
 *   C library never makes while holding a lock dlopen or malloc take (a
 *   stdio lock may be held, as by fgets in read: nothing we call uses
 *   stdio).
 * and its SIGSEGV is neither blocked nor ignored (the call's end is a
 * fault that ptrace catches). The other threads are let go before the
 * calls: any lock they hold is released as they run, so the calls cannot
 * wait on a stopped thread. With no such thread, the process is let go and
 * stopped again later, up to TRIES times; then recorderd gives up, the
 * process untouched.
 * Limits: a thread running Lua from inside a C library callback that holds
 * a lock (dl_iterate_phdr, a fopencookie stream), or from a signal handler
 * that interrupted the C library, is taken for a safe point. */
#include "rd_inject.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "lr_stackread.h"
#include "rd_elf.h"
#include "rd_inject_call.h"
#include "rd_peek.h"
#include "rd_run.h"
#include "rd_util.h"

#if defined(__x86_64__) /* the registers and system call numbers below are */

enum {
    TRIES = 200, /* stops of the process looking for a safe point */
    RTLD_NOW_ = 2,
};

/* Blocking waits of a thread stopped in them (x86-64 numbers). */
/* clang-format off */
#define W(name) {SYS_##name, #name}
/* clang-format on */
static const struct {
    long nr;
    const char *name;
} WAITS[] = {
    W(read),        W(readv),     W(pread64),         W(poll),
    W(ppoll),       W(select),    W(pselect6),        W(epoll_wait),
    W(epoll_pwait), W(nanosleep), W(clock_nanosleep), W(accept),
    W(accept4),     W(recvfrom),  W(recvmsg),         W(wait4),
    W(waitid),      W(pause),     W(rt_sigsuspend),   W(rt_sigtimedwait),
};
#undef W

typedef struct target {
    pid_t pid;
    char exe[PATH_MAX], lua_lib[PATH_MAX], so[PATH_MAX];
    uintptr_t dlopen_at, dlerror_at;
    int reused; /* luatrace.so was loaded already */
    const void *L;
    char where[PATH_MAX + 64]; /* the safe point taken, said once loaded */
    /* why stops were no safe point, said if none was */
    int n_busy, n_masked, n_lib, n_other;
    char lib[PATH_MAX]; /* the last library a thread was stopped in */
} target;

/* A line "Key:\tvalue" of /proc/PID[/task/TID]/status. */
static int status_field(pid_t pid, pid_t tid, const char *key, char *val, size_t cap)
{
    char name[64], buf[4096];
    snprintf(name, sizeof name, tid ? "task/%d/status" : "status", (int)tid);
    rd_proc_read(pid, name, buf, sizeof buf);
    size_t k = strlen(key);
    for (char *p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (!strncmp(p, key, k) && p[k] == ':') {
            p += k + 1;
            p += strspn(p, " \t");
            snprintf(val, cap, "%.*s", (int)strcspn(p, "\n"), p);
            return 0;
        }
    return -ENOENT;
}

static int have_cap_ptrace(void)
{
    char v[64];
    return status_field(getpid(), 0, "CapEff", v, sizeof v) == 0 &&
           (strtoull(v, NULL, 16) >> 19 & 1); /* CAP_SYS_PTRACE */
}

/* Whether pid descends from recorderd (Yama's scope 1 allows those). */
static int our_descendant(pid_t pid)
{
    char v[32];
    for (int depth = 0; pid > 1 && depth < 64; depth++) {
        if (pid == getpid())
            return 1;
        if (status_field(pid, 0, "PPid", v, sizeof v))
            return 0;
        pid = (pid_t)atoi(v);
    }
    return 0;
}

/* Yama's ptrace_scope (LUATRACE_TEST_PTRACE_SCOPE stands in for the file
 * in tests: it can only add a refusal). -1 without Yama. */
static int ptrace_scope(void)
{
    const char *t = getenv("LUATRACE_TEST_PTRACE_SCOPE");
    char buf[16];
    if (t && *t)
        return atoi(t);
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    int v = f && fgets(buf, sizeof buf, f) ? atoi(buf) : -1;
    if (f)
        fclose(f);
    return v;
}

/* The signal the collector will listen on in pid: LUATRACE_ATTACH_SIGNAL
 * of its environment (as it started), else SIGRTMIN+7 (co_attach.c). */
static int attach_signal(pid_t pid)
{
    static char env[1 << 16];
    size_t n = rd_proc_read(pid, "environ", env, sizeof env);
    const char *key = "LUATRACE_ATTACH_SIGNAL=";
    for (size_t i = 0; i < n; i += strlen(env + i) + 1)
        if (!strncmp(env + i, key, strlen(key))) {
            int s = atoi(env + i + strlen(key));
            return s >= SIGRTMIN && s <= SIGRTMAX ? s : SIGRTMIN + 7;
        }
    return SIGRTMIN + 7;
}

/* The refusals that need no ptrace: another debugger, Yama, a stopped
 * process. 0, or -errno with the reason in err. */
static int refusals(pid_t pid, char *err, size_t cap)
{
    char v[64];
    if (status_field(pid, 0, "TracerPid", v, sizeof v) == 0 && atoi(v) != 0) {
        snprintf(err, cap,
                 "process %d is being traced by process %s (a debugger): recorderd "
                 "will not load luatrace into it; detach the debugger first",
                 (int)pid, v);
        return -EBUSY;
    }
    int scope = ptrace_scope(), cap_ok = have_cap_ptrace();
    if (scope >= 3 || (scope == 2 && !cap_ok) || (scope == 1 && !cap_ok && !our_descendant(pid))) {
        snprintf(err, cap,
                 "cannot attach to process %d: Yama's ptrace_scope is %d "
                 "(/proc/sys/kernel/yama/ptrace_scope): %s",
                 (int)pid, scope,
                 scope >= 3   ? "no process may be traced until reboot"
                 : scope == 2 ? "only with CAP_SYS_PTRACE (run recorderd as root)"
                              : "only your own children, or with CAP_SYS_PTRACE (run recorderd "
                                "as root, or set it to 0)");
        return -EPERM;
    }
    if (status_field(pid, 0, "State", v, sizeof v) == 0 && (v[0] == 'T' || v[0] == 't')) {
        snprintf(err, cap,
                 "process %d is stopped (SIGSTOP, or a debugger): continue it "
                 "first (kill -CONT %d)",
                 (int)pid, (int)pid);
        return -EBUSY;
    }
    return 0;
}

/* Why ptrace was refused (rd_peek_stop_all's -EPERM). */
static void eperm(pid_t pid, char *err, size_t cap)
{
    if (!have_cap_ptrace())
        snprintf(err, cap,
                 "cannot attach to process %d: the kernel refused ptrace, and "
                 "recorderd lacks CAP_SYS_PTRACE (a container without it, or a "
                 "process with privileges recorderd has not): add CAP_SYS_PTRACE",
                 (int)pid);
    else
        snprintf(err, cap,
                 "cannot attach to process %d: the kernel refused ptrace (a "
                 "security module, or another tracer)",
                 (int)pid);
}

/* The Lua API, dlopen and our luatrace.so: where each is. */
static int find_parts(target *t, char *err, size_t cap)
{
    uintptr_t a;
    char lib[PATH_MAX], mod[PATH_MAX], path[PATH_MAX + 16];
    struct stat st;
    snprintf(path, sizeof path, "/proc/%d/root/", (int)t->pid);
    if (stat(path, &st) < 0 && (errno == EACCES || errno == EPERM)) {
        eperm(t->pid, err, cap); /* the same check as ptrace's, for reading */
        return -EPERM;
    }
    if (rd_peek_other_lua(t->pid, err, cap))
        return -ENOEXEC; /* it exports lua_sethook too: the layout says no */
    if (rd_elf_find(t->pid, "lua_sethook", NULL, &a, t->lua_lib, sizeof t->lua_lib)) {
        snprintf(err, cap,
                 "process %d exports no Lua 5.1 API (lua_sethook) that luatrace could "
                 "use: its Lua is linked in without its symbols, or it is not Lua",
                 (int)t->pid);
        return -ENOENT;
    }
    if (rd_elf_find(t->pid, "dlopen", "libc.so", &t->dlopen_at, lib, sizeof lib) &&
        rd_elf_find(t->pid, "dlopen", NULL, &t->dlopen_at, lib, sizeof lib)) {
        snprintf(err, cap, "cannot find dlopen in process %d (not glibc?)", (int)t->pid);
        return -ENOENT;
    }
    if (rd_elf_find(t->pid, "dlerror", lib, &t->dlerror_at, lib, sizeof lib))
        t->dlerror_at = 0;
    if (rd_elf_find(t->pid, "luatrace_inject", NULL, &a, t->so, sizeof t->so) == 0)
        return t->reused = 1, 0; /* loaded already (an earlier attach): reused */
    int sig = attach_signal(t->pid); /* not ours: the program's own handler */
    if (status_field(t->pid, 0, "SigCgt", lib, sizeof lib) == 0 &&
        (strtoull(lib, NULL, 16) >> (sig - 1) & 1)) {
        snprintf(err, cap,
                 "process %d handles signal %d, which luatrace would listen on: the "
                 "program handles the attach signal; start it with "
                 "LUATRACE_ATTACH_SIGNAL=N naming a free real-time signal",
                 (int)t->pid, sig);
        return -EADDRINUSE;
    }
    if (rd_elf_find(t->pid, "luatrace_listen", NULL, &a, lib, sizeof lib) == 0) {
        snprintf(err, cap,
                 "process %d loaded a luatrace without attach by injection (%s) and "
                 "does not listen: start it with LUATRACE_ATTACH=1",
                 (int)t->pid, lib);
        return -EBUSY;
    }
    rd_run_module_dir(mod, sizeof mod);
    snprintf(path, sizeof path, "%s/luatrace.so", mod);
    if (!realpath(path, t->so)) {
        snprintf(err, cap, "cannot find luatrace.so (%s): %s", path, strerror(errno));
        return -ENOENT;
    }
    return 0;
}

/* The name of a waiting system call, NULL for any other. */
static const char *wait_name(long nr)
{
    for (size_t i = 0; i < sizeof WAITS / sizeof *WAITS; i++)
        if (WAITS[i].nr == nr)
            return WAITS[i].name;
    return NULL;
}

/* Whether tid (stopped) is at a safe point (the rule at the top); if so,
 * which, in t->where. */
static int safe_thread(target *t, pid_t tid)
{
    struct user_regs_struct r;
    char v[64], file[PATH_MAX];
    if (ptrace(PTRACE_GETREGS, tid, NULL, &r) < 0)
        return 0;
    unsigned long long segv = 1ull << (SIGSEGV - 1);
    if (status_field(t->pid, tid, "SigBlk", v, sizeof v) || (strtoull(v, NULL, 16) & segv) ||
        status_field(t->pid, tid, "SigIgn", v, sizeof v) || (strtoull(v, NULL, 16) & segv)) {
        t->n_masked++;
        return 0;
    }
    long long rax = (long long)r.rax;
    if ((long long)r.orig_rax >= 0) { /* in a system call: an interrupted wait only */
        const char *name = wait_name((long)r.orig_rax);
        snprintf(t->where, sizeof t->where, "thread %d, waiting in %s()", (int)tid,
                 name ? name : "a system call");
        int ok = name && (rax == -512 || rax == -513 || rax == -514 || rax == -516);
        t->n_busy += !ok;
        return ok;
    }
    if (rd_elf_range(t->pid, r.rip, file, sizeof file)) {
        t->n_other++; /* code of no mapped file: a JIT's, a trampoline */
        return 0;
    }
    snprintf(t->where, sizeof t->where, "thread %d, running the code of %s", (int)tid, file);
    int ok = !strcmp(file, t->exe) || !strcmp(file, t->lua_lib);
    if (!ok) {
        t->n_lib++;
        snprintf(t->lib, sizeof t->lib, "%s", file);
    }
    return ok;
}

/* Why no stop was a safe point, in err. */
static void no_safe_point(const target *t, char *err, size_t cap)
{
    snprintf(err, cap,
             "no safe point in process %d: in %d stops, no thread was in Lua or the "
             "program's code, nor waiting in a system call such as read or poll "
             "(%d in the code of %s, %d in another system call, %d with SIGSEGV blocked "
             "or ignored, %d in code of no file); it was left as it was",
             (int)t->pid, TRIES, t->n_lib, t->n_lib ? t->lib : "a library", t->n_busy,
             t->n_masked, t->n_other);
}

/* Whether the Lua state L is still one of d->pid's. */
static int still_there(lr_sr *d, const void *L)
{
    const void *found[RD_PEEK_MAX_STATES];
    int n = rd_peek_find_states(d, found);
    for (int i = 0; i < n; i++)
        if (found[i] == L)
            return 1;
    return 0;
}

/* Stops the process until one thread is at a safe point: that thread,
 * the others let go; 0 if none came within TRIES stops (nothing held).
 * Finds the Lua state at the first stop. */
static pid_t safe_point(target *t, int *e)
{
    rd_peek_stop *s = calloc(1, sizeof *s);
    lr_sr *d = calloc(1, sizeof *d);
    pid_t chosen = 0;
    *e = s && d ? 0 : -ENOMEM;
    for (int k = 0; k < TRIES && !*e && !chosen; k++) {
        if (k)
            usleep(1000u + 500u * (unsigned)(k % 16)); /* out of step with a periodic program */
        if ((*e = rd_peek_stop_all(t->pid, s)))
            break;
        const void *found[RD_PEEK_MAX_STATES];
        d->pid = t->pid;
        if (!t->L && rd_peek_find_states(d, found) > 0)
            t->L = found[0];
        if (!t->L) {
            *e = -ENOENT;
            rd_peek_let_go(s);
            break;
        }
        for (int i = 0; i < s->n && !chosen; i++)
            if (!s->sig[i] && safe_thread(t, s->tid[i])) { /* not one taking a signal */
                chosen = s->tid[i];
                s->n--; /* held: not let go below */
                s->tid[i] = s->tid[s->n];
                s->sig[i] = s->sig[s->n];
            }
        if (chosen && k && !still_there(d, t->L)) { /* closed since the first stop? */
            ptrace(PTRACE_DETACH, chosen, NULL, NULL);
            chosen = 0;
            *e = -ENOENT;
        }
        rd_peek_let_go(s);
    }
    free(s);
    free(d);
    return chosen;
}

/* dlerror's text in the process, after a failed dlopen. */
static void remote_dlerror(const target *t, rd_call *c, char *msg, size_t cap)
{
    uint64_t at = 0;
    snprintf(msg, cap, "no reason given");
    if (!t->dlerror_at || rd_call_run(c, t->dlerror_at, 0, 0, &at) || !at)
        return;
    char buf[256] = "";
    struct iovec l = {buf, sizeof buf - 1}, r = {(void *)(uintptr_t)at, sizeof buf - 1};
    if (process_vm_readv(t->pid, &l, 1, &r, 1, 0) > 0)
        snprintf(msg, cap, "%s", buf);
}

/* In the held thread: dlopen unless mapped, then luatrace_inject(L). */
static int calls(const target *t, rd_call *c, char *err, size_t cap)
{
    uintptr_t entry, path;
    uint64_t ret;
    int e;
    if (rd_elf_mapped_sym(t->pid, t->so, NULL, NULL)) { /* not loaded yet */
        if ((e = rd_call_push(c, t->so, strlen(t->so) + 1, &path)) ||
            (e = rd_call_run(c, t->dlopen_at, path, RTLD_NOW_, &ret))) {
            snprintf(err, cap, "the call of dlopen in process %d failed: %s", (int)t->pid,
                     strerror(-e));
            return e;
        }
        if (!ret || rd_elf_mapped_sym(t->pid, t->so, NULL, NULL)) {
            char why[256];
            remote_dlerror(t, c, why, sizeof why);
            snprintf(err, cap, "process %d could not load %s: %s", (int)t->pid, t->so, why);
            return -ENOEXEC;
        }
    }
    if ((e = rd_elf_mapped_sym(t->pid, t->so, "luatrace_inject", &entry)) ||
        (e = rd_call_run(c, entry, (uintptr_t)t->L, 0, &ret))) {
        snprintf(err, cap, "the call of luatrace_inject in process %d failed: %s", (int)t->pid,
                 strerror(-e));
        return e;
    }
    if ((int)ret) {
        snprintf(err, cap, "luatrace in process %d refused to listen: %s", (int)t->pid,
                 (int)ret == -EBUSY    ? "another Lua state of it listens or traces"
                 : (int)ret == -ENOSYS ? "no Lua 5.1 API bound"
                 : (int)ret == -EADDRINUSE
                     ? "the program handles the attach signal (SIGRTMIN+7); start it with "
                       "LUATRACE_ATTACH_SIGNAL=N naming a free real-time signal"
                     : strerror(-(int)ret));
        return (int)ret;
    }
    return 0;
}

/* The signals that would end recorderd while it holds a thread in a call:
 * blocked until the thread is restored (SIGKILL cannot be: then the
 * thread's return to address 0 is its death). */
static void hold_signals(int on, sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP, SIGPIPE};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
        sigaddset(&set, sigs[i]);
    if (on)
        sigprocmask(SIG_BLOCK, &set, old);
    else
        sigprocmask(SIG_SETMASK, old, NULL);
}

static int held_calls(const target *t, pid_t tid, char *err, size_t cap)
{
    rd_call *c = malloc(sizeof *c);
    int e;
    if (!c || (e = rd_call_save(c, t->pid, tid))) {
        ptrace(PTRACE_DETACH, tid, NULL, NULL);
        free(c);
        snprintf(err, cap, "cannot save thread %d of process %d: %s", (int)tid, (int)t->pid,
                 strerror(c ? -e : ENOMEM));
        return c ? e : -ENOMEM;
    }
    e = calls(t, c, err, cap);
    int r = rd_call_restore(c);
    if (r && !e) {
        snprintf(err, cap, "cannot restore thread %d of process %d: %s", (int)tid, (int)t->pid,
                 strerror(-r));
        e = r;
    }
    rd_call_let_go(c);
    free(c);
    return e;
}

/* A refusal of a process that exited as it was looked at: said as such.
 * As it exits its mappings go (no lua_sethook, no dlopen found) and its
 * Lua state is freed (no state found) before it becomes a zombie, so
 * "exports no Lua 5.1 API" or "has no Lua 5.1 state" was said of a
 * lua5.1 that had just ended; those get 300 ms to end, as
 * rd_peek_find_running gives its scan. */
static int exited_meanwhile(pid_t pid, int e, char *err, size_t cap)
{
    int wait = e == -ENOENT || e == -ESRCH ? 30 : 0;
    for (int k = 0; k < wait && !rd_peek_gone(pid); k++)
        usleep(10000);
    if (!rd_peek_gone(pid))
        return e;
    snprintf(err, cap, "process %d exited", (int)pid);
    return -ESRCH;
}

int rd_inject(pid_t pid, int *reused, char *err, size_t cap)
{
    target t = {.pid = pid};
    int e = refusals(pid, err, cap);
    char link[64];
    snprintf(link, sizeof link, "/proc/%d/exe", (int)pid);
    ssize_t n = readlink(link, t.exe, sizeof t.exe - 1);
    t.exe[n > 0 ? n : 0] = 0;
    if (e || (e = find_parts(&t, err, cap)))
        return exited_meanwhile(pid, e, err, cap);
    sigset_t old;
    hold_signals(1, &old);
    pid_t tid = safe_point(&t, &e);
    if (e == -EPERM)
        eperm(pid, err, cap);
    else if (e == -EBUSY) /* a debugger came since refusals() looked */
        rd_peek_refusal_msg(pid, e, err, cap);
    else if (e == -ENOENT)
        snprintf(err, cap, "process %d has no Lua 5.1 state that recorderd can find", (int)pid);
    else if (e)
        snprintf(err, cap, "cannot stop process %d: %s", (int)pid, strerror(-e));
    else if (!tid)
        no_safe_point(&t, err, cap);
    if (!e && tid)
        e = held_calls(&t, tid, err, cap);
    hold_signals(0, &old);
    if (!e && !tid)
        e = -EAGAIN;
    if (!e)
        snprintf(err, cap, "%s", t.where);
    else
        e = exited_meanwhile(pid, e, err, cap);
    *reused = t.reused;
    return e;
}

#else /* not x86-64 */

int rd_inject(pid_t pid, int *reused, char *err, size_t cap)
{
    *reused = 0;
    snprintf(err, cap,
             "process %d has no dormant luatrace collector, and loading one into a "
             "running process is only done on x86-64",
             (int)pid);
    return -ENOSYS;
}

#endif
