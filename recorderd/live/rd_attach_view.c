/* rd_attach_view: what `dump` and `top` print, from a live session's
 * model and stacks (on its drainer thread). */
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rd_attach.h"
#include "rd_replay.h"
#include "rd_label.h"
#include "rd_report.h"
#include "rd_util.h"

/* "name (file:line)" for a frame: the line it is on, if known. */
static void print_frame(const rd_model *m, const rd_frame *f, FILE *out)
{
    char label[RD_LABEL_MAX]; /* one line per frame, nothing for the terminal */
    rd_label_human(m, f->fid, f->line, label, sizeof label);
    rd_printable(label, label, sizeof label);
    fprintf(out, "    %s\n", label);
}

static void print_thread(const rd_model *m, const rd_stack *st, const rd_thread *t,
                         const char *what, FILE *out)
{
    const char *kind = t->id == st->chain[0] ? "Thread" : "Coroutine";
    if (t->addr) /* as tostring() shows it in the program */
        fprintf(out, "%s 0x%llx (%s):\n", kind, (unsigned long long)t->addr, what);
    else
        fprintf(out, "%s #%llu (%s):\n", kind, (unsigned long long)t->id, what);
    if (!t->n) /* the main thread of a C host outside any Lua call, or a new coroutine */
        fprintf(out, "    %s\n", t->id == st->chain[0] ? "(no Lua call)" : "(not started)");
    for (uint32_t i = t->n; i-- > 0;)
        print_frame(m, &t->f[i], out);
}

/* Prints every thread's stack, as `dump` does: the running thread and
 * the threads that resumed it, then every suspended coroutine; note (if
 * any) says how the stacks were taken, err why none arrived. */
static void rd_attach_print_stacks(FILE *out, pid_t pid, const char *cmd, const rd_model *m,
                            const rd_stack *st, const char *err, const char *note)
{
    char shown[4096];
    fprintf(out, "Process %d: %s\n", (int)pid, rd_printable(cmd, shown, sizeof shown));
    if (note && *note)
        fprintf(out, "  (%s)\n", rd_printable(note, shown, sizeof shown));
    if (!st->nchain) {
        fprintf(out, "  (no stack received%s%s)\n", err && *err ? ": " : "",
                err ? rd_printable(err, shown, sizeof shown) : "");
        fflush(out);
        return;
    }
    /* the running thread and its resumers first, innermost first */
    for (uint32_t c = st->nchain; c-- > 0;)
        for (uint32_t i = 0; i < st->capth; i++)
            if (st->th[i].id == st->chain[c])
                print_thread(m, st, &st->th[i],
                             c + 1 == st->nchain ? "running" : "resumed another", out);
    for (uint32_t i = 0; i < st->capth; i++) {
        int on_chain = 0;
        for (uint32_t c = 0; c < st->nchain; c++)
            on_chain |= st->chain[c] == st->th[i].id;
        if (st->th[i].id && !on_chain)
            print_thread(m, st, &st->th[i], "suspended", out);
    }
    fflush(out);
}

/* Frames show files under the process's working directory relative to
 * it, as every label people read (rd_label.h); none read: whole paths. */
static void label_cwd(rd_model *m, pid_t pid)
{
    char link[64], cwd[PATH_MAX];
    snprintf(link, sizeof link, "/proc/%d/cwd", (int)pid);
    ssize_t len = readlink(link, cwd, sizeof cwd - 1);
    cwd[len > 0 ? len : 0] = 0;
    rd_label_set_cwd(m, cwd);
}

void rd_attach_print_records(FILE *out, pid_t pid, const char *cmd, const uint8_t *p, size_t n,
                             const char *note)
{
    rd_model m;
    rd_stack st;
    char err[256] = "";
    memset(&m, 0, sizeof m);
    memset(&st, 0, sizeof st);
    if (rd_model_init(&m) || rd_stack_init(&st, &m)) {
        snprintf(err, sizeof err, "out of memory");
    } else {
        label_cwd(&m, pid);
        int64_t k = rd_replay_feed(&st, p, n, err, sizeof err);
        if (k >= 0 && (size_t)k != n)
            snprintf(err, sizeof err, "an incomplete record");
        rd_stack_finish(&st);
    }
    rd_attach_print_stacks(out, pid, cmd, &m, &st, err, note);
    rd_stack_free(&st);
    rd_model_free(&m);
}

void rd_attach_dump_view(rd_session *s, void *ud, int last)
{
    (void)ud;
    if (last)
        rd_attach_print_stacks(stdout, s->pid, s->cmd, &s->m, &s->st, s->err, NULL);
}

typedef struct top_row {
    uint32_t fid;
    uint64_t self, total, calls;
} top_row;

static _Atomic int g_by_total; /* the loop's key -> the drainer's view */

void rd_attach_top_sort(int by_total)
{
    atomic_store(&g_by_total, by_total);
}

static int by_self(const void *a, const void *b)
{
    const top_row *x = a, *y = b;
    return x->self < y->self ? 1 : x->self > y->self ? -1 : (x->fid > y->fid) - (x->fid < y->fid);
}

/* The callers of the hot code first: what a person looks for by name. Of
 * equal totals the caller, with the less self time, comes first. */
static int by_total(const void *a, const void *b)
{
    const top_row *x = a, *y = b;
    if (x->total != y->total)
        return x->total < y->total ? 1 : -1;
    if (x->self != y->self)
        return x->self > y->self ? 1 : -1;
    return (x->fid > y->fid) - (x->fid < y->fid);
}

/* Per-function self time and calls in the last interval: this view's
 * totals minus the previous view's. */
typedef struct top_state {
    uint64_t *self, *total, *calls;
    uint32_t n;
    uint64_t ticks, events;
} top_state;

static top_state g_top;

static void draw(const rd_session *s, top_row *rows, uint32_t n, uint64_t dticks,
                 uint64_t devents, FILE *out)
{
    const rd_model *m = &s->m;
    double nspt = rd_model_ns_per_tick(m);
    if (isatty(fileno(out)))
        fprintf(out, "\033[H\033[2J");
    char shown[4096];
    fprintf(out, "luatrace top: process %d: %s\n", (int)s->pid,
            rd_printable(s->cmd, shown, sizeof shown));
    fprintf(out, "%llu events in the last interval, %.1f ms of Lua\nsorted by %s time: t sorts "
                 "by total, s by self; q or Ctrl-C detaches\n\n",
            (unsigned long long)devents, (double)dticks * nspt / 1e6,
            atomic_load(&g_by_total) ? "total" : "self");
    fprintf(out, "%7s %7s %10s %10s  %s\n", "%self", "%total", "self ms", "calls", "function");
    for (uint32_t i = 0; i < n && i < 20 && (rows[i].self || rows[i].total); i++) {
        char label[RD_LABEL_MAX];
        rd_label_human(m, rows[i].fid, 0, label, sizeof label);
        rd_printable(label, label, sizeof label);
        fprintf(out, "%7.2f %7.2f %10.3f %10llu  %s\n",
                dticks ? 100.0 * (double)rows[i].self / (double)dticks : 0.0,
                dticks ? 100.0 * (double)rows[i].total / (double)dticks : 0.0,
                (double)rows[i].self * nspt / 1e6, (unsigned long long)rows[i].calls, label);
    }
    fprintf(out, "\n");
    /* nobody reads (top | head: EPIPE, SIGPIPE ignored): detach as Ctrl-C
     * does, once (this is the drainer's thread; the loop takes the signal) */
    static atomic_int gone;
    if ((fflush(out) == EOF || ferror(out)) && !atomic_exchange(&gone, 1))
        kill(getpid(), SIGTERM);
}

void rd_attach_top_view(rd_session *s, void *ud, int last)
{
    (void)ud;
    top_state *t = &g_top;
    const rd_model *m = &s->m;
    rd_fstat *fs = rd_report_fstats(m);
    top_row *rows = calloc(m->nfunc + 1, sizeof *rows);
    if (!fs || !rows || (m->nfunc > t->n && (!(t->self = realloc(t->self, m->nfunc * 8)) ||
                                               !(t->total = realloc(t->total, m->nfunc * 8)) ||
                                               !(t->calls = realloc(t->calls, m->nfunc * 8))))) {
        free(fs);
        free(rows);
        return;
    }
    for (uint32_t f = t->n; f < m->nfunc; f++)
        t->self[f] = t->total[f] = t->calls[f] = 0;
    t->n = m->nfunc > t->n ? m->nfunc : t->n;
    for (uint32_t f = 0; f < m->nfunc; f++) {
        rows[f] = (top_row){f, fs[f].self - t->self[f], fs[f].total - t->total[f],
                            fs[f].calls - t->calls[f]};
        t->self[f] = fs[f].self;
        t->total[f] = fs[f].total;
        t->calls[f] = fs[f].calls;
    }
    qsort(rows, m->nfunc, sizeof *rows, atomic_load(&g_by_total) ? by_total : by_self);
    if (!last)
        draw(s, rows, m->nfunc, m->ticks_total - t->ticks, m->events - t->events, stdout);
    t->ticks = m->ticks_total;
    t->events = m->events;
    free(fs);
    free(rows);
}
