/* rd_peekdump: `recorderd dump PID` of a Lua 5.1 process that never
 * loaded the collector, read from outside (a Lua 5.4 one's: rd_peek54.c).
 *
 * What takes time is done while the process runs: finding its Lua states
 * (a scan of its heap, rd_peek_find_states), their threads (a walk of each
 * state's GC list, rd_gcwalk: millions of objects in a big heap) and the
 * names of the functions (the globals and package.loaded). The process is
 * stopped only to copy the stacks: of each main thread, of the threads the
 * walk found (checked to be live threads still) and of the threads the
 * running ones resume (made since the walk, maybe), under a deadline of
 * its own. Every step has a deadline, so a forged state or a list that
 * loops ends in a one-line message, never a long stop. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lt_attach.h"
#include "rd_attach.h"
#include "rd_gcwalk.h"
#include "rd_peek.h"
#include "rd_peek54.h"

enum {
    FIND_MS = 6000, /* finding the states and their threads, the process running */
    STOP_MS = 1000, /* the stacks' read, the process stopped */
    WALK_STOPPED_MS = 250, /* a walk redone stopped, when every walk as it ran failed */
    NAME_MS = 1500, /* naming the functions, the process running */
    STOP_TRIES = 5  /* stops for a read that catches a thread mid-call */
};

/* One Lua state of the process: what was found and read of it. */
typedef struct state {
    const void *main;
    const void *g; /* its global_State, NULL if unread */
    lr_sr *d;
    const void **th; /* its threads, from the walk */
    size_t nth;
    int walk_end; /* RD_GCWALK_* */
    int tries;    /* walks of its list */
    char why[256];
} state;

typedef struct dump {
    pid_t pid;
    state st[RD_PEEK_MAX_STATES];
    int n;
    uint64_t stopped_us;
} dump;

static uint64_t in_ms(unsigned ms)
{
    return rd_gcwalk_now_us() + (uint64_t)ms * 1000;
}

/* The threads walk w found for s, and why it ended short. -ENOMEM or 0. */
static int keep_walk(state *s, const rd_gcwalk *w)
{
    s->walk_end = w->end;
    s->tries = w->tries;
    if (w->end != RD_GCWALK_END)
        rd_gcwalk_why(w, s->why, sizeof s->why);
    free(s->th);
    s->th = NULL;
    s->nth = 0;
    if (w->nth && !(s->th = malloc(w->nth * sizeof *s->th)))
        return -ENOMEM;
    s->nth = w->nth;
    if (w->nth)
        memcpy(s->th, w->th, w->nth * sizeof *s->th);
    return 0;
}

/* The states and, walking their GC lists, their threads; the process
 * runs. Returns how many states, or -ENOMEM. */
static int find(dump *x, lr_sr *scan, rd_gcwalk *w)
{
    const void *found[RD_PEEK_MAX_STATES];
    uint64_t deadline = in_ms(FIND_MS);
    scan->deadline_us = deadline;
    int n = rd_peek_find_states(scan, found);
    for (int i = 0; i < n; i++) {
        state *s = &x->st[i];
        if (!(s->d = calloc(1, sizeof *s->d)))
            return -ENOMEM;
        x->n = i + 1;
        rd_peek_init(s->d, x->pid);
        s->main = found[i];
        s->d->deadline_us = deadline;
        lr_sr_find_specials(s->d, s->main);
        uint8_t ls[LS_READ];
        s->g = lr_sr_peek(s->d, s->main, ls, sizeof ls) ? NULL : lr_ptr_at(ls, LS_G);
        *w = (rd_gcwalk){.pid = x->pid, .deadline_us = deadline, .max_objects = (size_t)1 << 28};
        if (s->g)
            rd_gcwalk_threads(w, s->g, s->main);
        else
            w->end = RD_GCWALK_BAD;
        if (keep_walk(s, w))
            return -ENOMEM;
    }
    return x->n;
}

/* Walks again, the process stopped, the lists whose walks as it ran all
 * met objects being freed: stopped, the list holds still. */
static void walk_stopped(dump *x, rd_gcwalk *w)
{
    for (int i = 0; i < x->n; i++) {
        state *s = &x->st[i];
        if (!s->g || (s->walk_end != RD_GCWALK_LOOP && s->walk_end != RD_GCWALK_BAD))
            continue;
        *w = (rd_gcwalk){.pid = x->pid, .deadline_us = in_ms(WALK_STOPPED_MS),
                         .max_objects = (size_t)1 << 28, .tries = s->tries};
        rd_gcwalk_threads_stopped(w, s->g, s->main);
        if (keep_walk(s, w))
            return; /* out of memory: the running threads are still read */
    }
}

/* Whether a thread's read stopped short of its base: stopped halfway
 * through a call or a return (a few instructions of luaD_precall or
 * luaD_poscall), its top CallInfo not yet its frame. */
static int torn(const dump *x)
{
    for (int i = 0; i < x->n; i++)
        for (uint32_t j = 0; j < x->st[i].d->nth; j++)
            if (x->st[i].d->th[j].torn)
                return 1;
    return 0;
}

/* LUATRACE_TEST_TEAR=N (tests only): the first N reads lose the main
 * thread's frames as a read caught mid-call does. */
static void test_tear(dump *x, int *tear)
{
    if (*tear > 0 && x->n && x->st[0].d->nth) {
        (*tear)--;
        x->st[0].d->th[0].torn = 1;
        x->st[0].d->th[0].n = 0;
    }
}

/* The stacks of every state, the process stopped meanwhile. A read that
 * caught a thread halfway through a call is done again at the next stop,
 * the process let run a moment between (a few tries within STOP_MS, in
 * all). Returns 0, or rd_peek_stop_all's -errno. */
static int read_stopped(dump *x, rd_gcwalk *w, rd_peek_stop *stop)
{
    const char *t = getenv("LUATRACE_TEST_TEAR");
    int tear = t ? atoi(t) : 0;
    uint64_t deadline = in_ms(STOP_MS);
    x->stopped_us = 0;
    for (int k = 0; k < STOP_TRIES; k++) {
        uint64_t t0 = rd_gcwalk_now_us();
        int e = rd_peek_stop_all(x->pid, stop);
        if (e)
            return k ? 0 : e; /* a later stop refused (exited): the last read stands */
        if (!k)
            walk_stopped(x, w);
        for (int i = 0; i < x->n; i++) {
            state *s = &x->st[i];
            s->d->deadline_us = deadline;
            lr_sr_read_threads(s->d, s->main, s->th, s->nth);
        }
        rd_peek_let_go(stop);
        x->stopped_us += rd_gcwalk_now_us() - t0;
        test_tear(x, &tear);
        if (!torn(x) || rd_gcwalk_now_us() >= deadline)
            break;
        usleep(200); /* the thread past those few instructions */
    }
    return 0;
}

static int print(dump *x, FILE *out)
{
    char cmd[4096];
    int rc = 0;
    rd_peek_cmdline(x->pid, cmd, sizeof cmd);
    for (int i = 0; i < x->n; i++) {
        state *s = &x->st[i];
        char note[256];
        s->d->deadline_us = in_ms(NAME_MS);
        lr_sr_finish(s->d, s->main);
        int cut = 0;
        for (uint32_t j = 0; j < s->d->nth; j++)
            cut |= s->d->th[j].torn;
        snprintf(note, sizeof note, "read from outside, the process stopped %.1f ms for it%s%s%s%s",
                 (double)x->stopped_us / 1000.0,
                 x->n > 1 ? "; one of its Lua states" : "",
                 s->d->flags & LT_DUMP_TRUNCATED ? "; too many threads or frames, cut short" : "",
                 s->d->late ? "; cut short: the read took too long" : "",
                 cut && !s->d->late ? "; a thread caught mid-call at every stop: its stack cut short" : "");
        rd_attach_print_records(out, x->pid, cmd, s->d->out, s->d->nout, note);
        if (s->walk_end != RD_GCWALK_END) {
            fflush(out);
            fprintf(stderr, "recorderd: process %d: %s\n", (int)x->pid, s->why);
            rc = 1;
        }
    }
    return rc;
}

/* No state found: the reason, the kernel's refusal first. */
static int none(pid_t pid, rd_peek_stop *stop)
{
    char cmd[4096];
    int e = rd_peek_stop_all(pid, stop);
    if (e)
        return rd_peek_refusal(pid, e);
    rd_peek_let_go(stop);
    rd_peek_cmdline(pid, cmd, sizeof cmd);
    fprintf(stderr,
            "recorderd: process %d has no Lua 5.1 state that recorderd can find "
            "(not a Lua 5.1 or 5.4 program, or its Lua not started yet): %s\n",
            (int)pid, cmd);
    return 1;
}

static int run(dump *x, lr_sr *scan, rd_gcwalk *w, rd_peek_stop *stop, FILE *out)
{
    char jit[PATH_MAX + 256], v[8];
    if (rd_peek_release(x->pid, v, jit, sizeof jit) && !strcmp(v, "5.4"))
        return rd_peek54_dump(x->pid, jit, out); /* jit: the library */
    if (rd_peek_other_lua(x->pid, jit, sizeof jit))
        return fprintf(stderr, "recorderd: %s\n", jit), 1;
    int n = find(x, scan, w);
    if (n < 0)
        return fprintf(stderr, "recorderd: out of memory\n"), 1;
    if (!n && rd_peek_gone(x->pid))
        return rd_peek_refusal(x->pid, -ESRCH);
    if (!n)
        return none(x->pid, stop);
    int e = read_stopped(x, w, stop);
    return e ? rd_peek_refusal(x->pid, e) : print(x, out);
}

int rd_peek_dump(pid_t pid, FILE *out)
{
    dump *x = calloc(1, sizeof *x);
    lr_sr *scan = calloc(1, sizeof *scan);
    rd_gcwalk *w = malloc(sizeof *w);
    rd_peek_stop *stop = calloc(1, sizeof *stop);
    int rc = 1;
    if (!x || !scan || !w || !stop) {
        fprintf(stderr, "recorderd: out of memory\n");
    } else {
        x->pid = pid;
        rd_peek_init(scan, pid);
        rc = run(x, scan, w, stop, out);
    }
    for (int i = 0; x && i < x->n; i++) {
        free(x->st[i].d);
        free(x->st[i].th);
    }
    free(stop);
    free(w);
    free(scan);
    free(x);
    return rc;
}
