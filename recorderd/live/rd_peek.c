/* rd_peek: reading a Lua 5.1 process that never loaded the collector,
 * from outside: stopping it (ptrace: PTRACE_SEIZE and PTRACE_INTERRUPT, no
 * signal the program or its parent can see), finding its Lua states, one
 * sample of a running chain, and the refusals. `dump` is rd_peekdump.c's.
 *
 * Its Lua states are found by a scan of its private writable memory, as it
 * runs: lua_newstate allocates the main thread and the global_State in one
 * block, so a main thread is an object tagged a thread whose l_G points
 * just past it and whose global_State's mainthread points back.
 * lr_stackread (the collector's own reader, on another pid) copies the
 * stacks with process_vm_readv. Nothing is written to the process. */
#include "rd_peek.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <lua.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lt_attach.h"
#include "rd_attach.h"
#include "rd_elf.h"
#include "rd_util.h"

#define MAP_SKIP (1ull << 40) /* mappings larger than this are not scanned */

enum {
    CHUNK = 1 << 20,         /* bytes copied per read of a mapping */
    SCAN_LIMIT = 1u << 31,   /* bytes scanned in all: a bound on a huge heap */
    PER_MAP = 256u << 20,    /* bytes scanned from the start of one mapping */
    STOP_WAIT_MS = 2000,
    SAMPLE_MAX_MS = 200, /* one sample's reads, from the process's stop */
    FIND_MAX_MS = 4000,  /* one scan of the heap for the Lua states */
    YOUNG_MS = 2000,     /* a process this new may not have made its state yet */
    ENDING_MS = 300      /* a process with no state may be exiting: waited for */
};

/* {====== stopping the process for the read */

/* Waits for task tid's ptrace stop after PTRACE_INTERRUPT: it comes within
 * microseconds for a task that runs or sleeps interruptibly, so the wait
 * yields the CPU before it sleeps, and gives up after STOP_WAIT_MS (a task
 * in uninterruptible sleep). */
static int wait_stop(pid_t tid, int *sig)
{
    uint64_t waited_us = 0;
    for (unsigned k = 0; waited_us < STOP_WAIT_MS * 1000u; k++) {
        int st;
        pid_t w = waitpid(tid, &st, __WALL | WNOHANG);
        /* a signal that came first stops the task to be delivered: kept, or
         * the detach would drop it */
        if (w == tid && WIFSTOPPED(st))
            *sig = st >> 16 ? 0 : WSTOPSIG(st);
        if (w == tid)
            return WIFSTOPPED(st) ? 0 : -ESRCH;
        if (w < 0)
            return -errno;
        if (k < 64) {
            sched_yield();
        } else {
            usleep(50);
            waited_us += 50;
        }
    }
    return -ETIMEDOUT;
}

/* Whether task tid of pid has exited (a zombie, or gone): ptrace refuses
 * one with EPERM. */
static int task_ended(pid_t pid, pid_t tid)
{
    char name[64], buf[512];
    snprintf(name, sizeof name, "task/%d/stat", (int)tid);
    rd_proc_read(pid, name, buf, sizeof buf);
    char st = rd_proc_state(buf);
    return !st || st == 'Z' || st == 'X';
}

int rd_peek_gone(pid_t pid)
{
    return task_ended(pid, pid);
}

void rd_peek_let_go(rd_peek_stop *s)
{
    for (int i = 0; i < s->n; i++)
        ptrace(PTRACE_DETACH, s->tid[i], NULL, (void *)(long)s->sig[i]);
    s->n = 0;
}

/* The process tracing task tid of pid (its TracerPid), or 0. */
static long tracer_of(pid_t pid, pid_t tid)
{
    char name[64], buf[2048];
    snprintf(name, sizeof name, "task/%d/status", (int)tid);
    size_t n = rd_proc_read(pid, name, buf, sizeof buf - 1);
    buf[n] = 0;
    const char *t = strstr(buf, "\nTracerPid:");
    return t ? strtol(t + 11, NULL, 10) : 0;
}

/* Stops every task of pid. Returns 0, or -errno of the first refusal
 * (-EBUSY: another process traces it). */
static int stop_once(pid_t pid, rd_peek_stop *s)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *dir = opendir(path);
    if (!dir)
        return -errno;
    int e = 0;
    struct dirent *de;
    s->n = 0;
    while (!e && (de = readdir(dir)) && s->n < RD_PEEK_MAX_TASKS) {
        pid_t tid = (pid_t)atoi(de->d_name);
        if (tid <= 0)
            continue;
        if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) < 0) {
            e = errno == ESRCH || task_ended(pid, tid) ? 0 : -errno; /* a task that just ended */
            if (e == -EPERM && tracer_of(pid, tid) > 0) /* a debugger, another reader */
                e = -EBUSY;
            continue;
        }
        s->sig[s->n] = 0;
        s->tid[s->n++] = tid;
        if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) < 0 ||
            wait_stop(tid, &s->sig[s->n - 1]) == -ETIMEDOUT)
            e = -ETIMEDOUT;
    }
    closedir(dir);
    if (!e && !s->n) /* every task gone: the process exited */
        e = -ESRCH;
    if (e)
        rd_peek_let_go(s);
    return e;
}

/* stop_once, again while another reader holds the process for a moment
 * (a dump, another recorderd's sample under --stop: 2 ms or so), up to
 * BUSY_WAIT_MS; a refusal (-EPERM) is asked once more, as that reader may
 * have let go between our PTRACE_SEIZE and our look at its TracerPid. */
#define BUSY_WAIT_MS 100
int rd_peek_stop_all(pid_t pid, rd_peek_stop *s)
{
    int e = stop_once(pid, s);
    if (e == -EPERM)
        e = stop_once(pid, s);
    for (int ms = 0; e == -EBUSY && ms < BUSY_WAIT_MS; ms++) {
        usleep(1000);
        e = stop_once(pid, s);
    }
    return e;
}

int rd_peek_skip_busy(int e, uint64_t *since_ms)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    uint64_t now = (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
    if (e != -EBUSY && e != -EPERM)
        return 0;
    if (!*since_ms)
        *since_ms = now;
    return now - *since_ms < RD_PEEK_BUSY_MS;
}

static uint64_t now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000 + (uint64_t)t.tv_nsec / 1000;
}

int rd_peek_sample(lr_sr *d, const void *L, rd_peek_stop *s, int stop, uint64_t *stopped_us)
{
    uint64_t t0 = now_us();
    int e = stop ? rd_peek_stop_all(d->pid, s) : 0;
    if (e)
        return e;
    d->deadline_us = now_us() + SAMPLE_MAX_MS * 1000; /* a forged chain: held no longer */
    d->running = !stop;
    lr_sr_read(d, L, 0);
    d->deadline_us = 0;
    if (stop) {
        rd_peek_let_go(s);
        *stopped_us += now_us() - t0; /* an upper bound: from the first stop asked to the last let go */
    }
    /* Read as it runs, a frame that changed under the walk stops it short:
     * what it kept would root the sample at a callee. Such a read is
     * dropped, as one caught mid-change is; held stopped too, a process
     * caught halfway through a call or a return (lr_stackread's checks). */
    for (uint32_t i = 0; i < d->nth; i++)
        if (d->th[i].torn)
            return -EAGAIN;
    if (d->late) /* reads cut short: nothing to say of the state */
        return -EAGAIN;
    if (d->nth)
        return 0;
    char buf[512], st = 0;
    if (rd_proc_read(d->pid, "stat", buf, sizeof buf))
        st = rd_proc_state(buf);
    /* alive: a read caught mid-change (running) or a state gone (stopped) */
    return !st || st == 'Z' || st == 'X' || stop ? -ESRCH : -EAGAIN;
}

/* }====== */

/* {====== finding the Lua states */

/* Whether the thread object at addr (whose first bytes are b) is a main
 * thread: l_G just past it, and the global_State's mainthread back at it. */
static int is_main_thread(const lr_sr *d, uintptr_t addr, const uint8_t *b)
{
    const void *mt;
    size_t total;
    if (b[LS_TT] != LUA_TTHREAD || (uintptr_t)lr_ptr_at(b, LS_G) != addr + LS_SIZE)
        return 0;
    /* a closed state's block, freed but not yet reused (an allocator that
     * leaves freed blocks as they were: AddressSanitizer's), has every
     * pointer still right; lua_close freed all else, so its totalbytes is
     * the block's own size, a live state's more */
    return !lr_sr_peek(d, (const char *)(addr + LS_SIZE + G_MAINTHREAD), &mt, sizeof mt) &&
           (uintptr_t)mt == addr && b[LS_STATUS] <= LUA_ERRERR &&
           !lr_sr_peek(d, (const char *)(addr + LS_SIZE + G_TOTALBYTES), &total, sizeof total) &&
           total > LG_SIZE;
}

/* Scans [lo, hi) of d->pid for main threads, adding them to found. */
static void scan_range(lr_sr *d, uintptr_t lo, uintptr_t hi, uint8_t *buf, const void **found,
                       int *n, size_t *budget)
{
    for (uintptr_t a = lo; a < hi && *n < RD_PEEK_MAX_STATES && *budget; a += CHUNK) {
        if (d->deadline_us && now_us() >= d->deadline_us)
            break;
        size_t len = hi - a < CHUNK + 64 ? hi - a : CHUNK + 64; /* 64: a thread across the cut */
        if (len > *budget)
            len = *budget;
        *budget -= len < CHUNK ? len : CHUNK;
        struct iovec l = {buf, len}, r = {(void *)a, len};
        ssize_t got = process_vm_readv(d->pid, &l, 1, &r, 1, 0);
        for (ssize_t o = 0; o + LS_G + 8 <= got && o < CHUNK && *n < RD_PEEK_MAX_STATES; o += 8)
            if (buf[o + LS_TT] == LUA_TTHREAD && is_main_thread(d, a + (uintptr_t)o, buf + o))
                found[(*n)++] = (const void *)(a + (uintptr_t)o);
    }
}

/* The main threads of pid's Lua states, in its heap and anonymous private
 * writable mappings. Returns how many (at most RD_PEEK_MAX_STATES). */
int rd_peek_find_states(lr_sr *d, const void **found)
{
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)d->pid);
    FILE *f = fopen(path, "r");
    uint8_t *buf = malloc(CHUNK + 64);
    int n = 0;
    size_t budget = SCAN_LIMIT;
    while (f && buf && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perm[8], name[256] = "";
        if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %255s", &lo, &hi, perm, name) < 3)
            continue;
        if (strcmp(perm, "rw-p") || (name[0] && strcmp(name, "[heap]")))
            continue; /* a file's data or a stack holds no lua_newstate block */
        if (hi - lo > MAP_SKIP)
            continue; /* a reservation, not a heap (AddressSanitizer's shadow: terabytes) */
        /* lua_newstate's block comes early in its arena: the start of each */
        scan_range(d, lo, hi - lo > PER_MAP ? lo + PER_MAP : hi, buf, found, &n, &budget);
    }
    free(buf);
    if (f)
        fclose(f);
    return n;
}

/* How long ago pid started, in ms (-1 if unknown): field 22 of its stat,
 * in clock ticks since boot, against /proc/uptime. */
static long age_ms(pid_t pid)
{
    char buf[1024], up[64];
    unsigned long long start = 0;
    double uptime = 0;
    size_t n = rd_proc_read(pid, "stat", buf, sizeof buf - 1);
    FILE *f = fopen("/proc/uptime", "r");
    int ok = f && fgets(up, sizeof up, f) && sscanf(up, "%lf", &uptime) == 1;
    if (f)
        fclose(f);
    buf[n] = 0;
    const char *p = strrchr(buf, ')');
    if (!ok || !p || sscanf(p + 2, "%*c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
                                   "%*s %*s %*s %*s %llu", &start) != 1)
        return -1;
    return (long)(uptime * 1000.0 - (double)start * 1000.0 / (double)sysconf(_SC_CLK_TCK));
}

/* 0, after waiting up to ENDING_MS for pid to exit (it may have closed its
 * Lua state on its way out: then rd_peek_gone says so). */
static int ending(pid_t pid)
{
    for (int k = 0; k < ENDING_MS / 10 && !rd_peek_gone(pid); k++)
        usleep(10000);
    return 0;
}

int rd_peek_find_running(lr_sr *d, const void **found, rd_peek_stop *s)
{
    int e = rd_peek_stop_all(d->pid, s); /* may recorderd read it? a moment's stop says */
    if (e)
        return e;
    rd_peek_let_go(s);
    for (;;) {
        d->deadline_us = now_us() + FIND_MAX_MS * 1000;
        int n = rd_peek_find_states(d, found);
        d->deadline_us = 0;
        long age = n ? -1 : age_ms(d->pid);
        if (n || age < 0 || age >= YOUNG_MS)
            return n ? n : ending(d->pid);
        usleep(20000); /* exec'ing lua5.1, or loading it: its state comes in milliseconds */
    }
}

/* }====== */

/* lr_sr's c_module: the file of d->pid's mapping that holds cf. */
static int c_module(const lr_sr *d, const void *cf, char *out, size_t cap)
{
    char file[4096];
    if (rd_elf_range(d->pid, (uintptr_t)cf, file, sizeof file) || !file[0])
        return 0;
    const char *base = strrchr(file, '/');
    snprintf(out, cap, "%s", base ? base + 1 : file);
    return 1;
}

void rd_peek_init(lr_sr *d, pid_t pid)
{
    d->pid = pid;
    d->c_module = c_module;
}

void rd_peek_cmdline(pid_t pid, char *buf, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
    /* a command line longer than buf ends with "...", as the collector's
     * own does: cut without a mark, it read as the whole command */
    int cut = f && n == cap - 1 && cap > 4 && fgetc(f) != EOF;
    if (f)
        fclose(f);
    buf[n] = 0;
    for (size_t i = 0; i + 1 < n; i++)
        if (!buf[i])
            buf[i] = ' ';
    if (cut)
        memcpy(buf + n - 3, "...", 3);
}

/* The uid of process pid, or -1. */
static long proc_uid(pid_t pid)
{
    char proc[64];
    struct stat st;
    snprintf(proc, sizeof proc, "/proc/%d", (int)pid);
    return stat(proc, &st) < 0 ? -1 : (long)st.st_uid;
}

/* Whether pid is a kernel thread (PF_KTHREAD in /proc/PID/stat's flags):
 * ptrace refuses it with EPERM, which was said as a debugger or Yama. */
static int kernel_thread(pid_t pid)
{
    char buf[1024];
    size_t n = rd_proc_read(pid, "stat", buf, sizeof buf - 1);
    buf[n] = 0;
    const char *p = strrchr(buf, ')');
    unsigned long flags = 0;
    return p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %lu", &flags) == 1 &&
           (flags & 0x00200000ul);
}

void rd_peek_refusal_msg(pid_t pid, int e, char *buf, size_t cap)
{
    long tracer;
    long uid = e == -EPERM && geteuid() ? proc_uid(pid) : -1;
    if (e == -EPERM && kernel_thread(pid))
        snprintf(buf, cap, "process %d is a kernel thread: it runs no Lua", (int)pid);
    else if (uid >= 0 && uid != (long)geteuid()) /* the common reason, said first */
        snprintf(buf, cap, "process %d belongs to uid %ld: read only your own processes "
                 "(or run recorderd as root)", (int)pid, uid);
    else if (e == -EPERM)
        snprintf(buf, cap,
                 "cannot read process %d: the kernel refused (ptrace: %s). "
                 "Another debugger may be attached, or ptrace is restricted: "
                 "/proc/sys/kernel/yama/ptrace_scope above 0 lets you read only your own "
                 "children (run recorderd as root or with CAP_SYS_PTRACE, or set it to 0); "
                 "in a container, add CAP_SYS_PTRACE",
                 (int)pid, strerror(-e));
    else if (e == -EBUSY && (tracer = tracer_of(pid, pid)) > 0) {
        char comm[64];
        size_t n = rd_proc_read((pid_t)tracer, "comm", comm, sizeof comm - 1);
        comm[n && comm[n - 1] == '\n' ? n - 1 : n] = 0;
        snprintf(buf, cap, "process %d is being traced by process %ld (%s: a debugger, or "
                 "another recorderd reading it): one at a time; try again when it is done",
                 (int)pid, tracer, rd_printable(comm, comm, sizeof comm));
    } else if (e == -ESRCH || e == -ENOENT)
        snprintf(buf, cap, "process %d exited", (int)pid);
    else
        snprintf(buf, cap, "cannot stop process %d for the read: %s", (int)pid, strerror(-e));
}

int rd_peek_release(pid_t pid, char *v, char *lib, size_t cap)
{
    uintptr_t at;
    char ident[64] = {0};
    if (rd_elf_find(pid, "lua_ident", NULL, &at, lib, cap))
        return 0;
    struct iovec l = {ident, sizeof ident - 1}, r = {(void *)at, sizeof ident - 1};
    if (process_vm_readv(pid, &l, 1, &r, 1, 0) != (ssize_t)(sizeof ident - 1))
        return 0;
    const char *rel = strstr(ident, "Lua 5.");
    if (!rel || rel[6] < '0' || rel[6] > '9')
        return 0;
    snprintf(v, 8, "5.%c", rel[6]);
    return 1;
}

int rd_peek_other_lua(pid_t pid, char *buf, size_t cap)
{
    char lib[PATH_MAX], v[8];
    uintptr_t at;
    const char *how = " (record reads Lua 5.1 and 5.4 only, heap Lua 5.1 only)";
    if (!rd_elf_find(pid, "luaJIT_setmode", NULL, &at, lib, sizeof lib)) {
        snprintf(buf, cap, "process %d runs LuaJIT (%s). recorderd cannot read a LuaJIT "
                           "process from outside, nor load luatrace into it: start it with "
                           "LUATRACE_ATTACH=1 luajit -lluatrace ... (or have it call "
                           "require(\"luatrace\").listen()), and attach, dump and top work "
                           "on it%s",
                 (int)pid, lib, how);
        return 1;
    }
    if (!rd_peek_release(pid, v, lib, sizeof lib) || !strcmp(v, "5.1"))
        return 0;
    if (!strcmp(v, "5.4"))
        snprintf(buf, cap, "process %d runs Lua 5.4 (%s). recorderd dump, top and record "
                           "read it from outside; heap reads only Lua 5.1, and attach "
                           "cannot load luatrace into a running Lua 5.4: "
                           "start it with LUATRACE_ATTACH=1 lua5.4 -lluatrace ... (or have it "
                           "call require(\"luatrace\").listen()), and attach, dump and top "
                           "work on it; or trace it from its start: recorderd run -- "
                           "lua5.4 ...",
                 (int)pid, lib);
    else
        snprintf(buf, cap, "process %d runs Lua %s (%s): luatrace reads and traces Lua "
                           "5.1, LuaJIT and Lua 5.4 only",
                 (int)pid, v, lib);
    return 1;
}

int rd_peek_refusal(pid_t pid, int e)
{
    char msg[512];
    rd_peek_refusal_msg(pid, e, msg, sizeof msg);
    fprintf(stderr, "recorderd: %s\n", msg);
    return 1;
}
