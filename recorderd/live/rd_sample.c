/* rd_sample: `recorderd top PID` of a process that never loaded the
 * collector: a live view built from samples read from outside. Each sample
 * stops the process (rd_peek) for one read of its running chain (main and
 * the coroutines it resumes, in turn; not the GC list), lets it go, then
 * names any function not seen before (the state is then running: the
 * naming reads are checked as any, a global's or module's name at worst
 * stale; never another call's, see lr_stackread's call_name). The leaf
 * function of the running thread gets the sample's self count; each
 * function on the chain its total, once per sample. */
#include "rd_sample.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "rd_peek.h"
#include "rd_peek54.h"
#include "rd_util.h"

typedef struct row {
    const void *key; /* Proto* or lua_CFunction */
    int linedef;
    uint32_t stamp; /* the last sample that counted its total */
    uint64_t self, total;
    char label[256];
    uint8_t fallback; /* labelled by a fallback name (r54_func_named): labelled again */
} row;

typedef struct sampler {
    pid_t pid;
    const void *L;
    lr_sr *d;
    r54 *d54; /* a Lua 5.4 process's reader, instead of d */
    rd_peek_stop stop;
    row *rows;
    uint32_t n, cap, stamp;
    uint64_t samples, in_lua; /* in this interval */
    uint64_t dropped;         /* reads caught mid-change, in this interval: no sample */
    uint64_t stopped_us;      /* how long the process was held stopped, in this interval */
    int stop_each;            /* --stop: hold the process stopped for each read */
    int by_total;             /* rows by total samples (key t), else by self (key s) */
    int redraw;               /* the sort changed: draw the interval so far now */
    char cwd[4096];           /* the process's: files under it are shown relative to it */
} sampler;

static volatile sig_atomic_t g_quit;

static void on_quit(int sig)
{
    (void)sig;
    g_quit = 1;
}

static uint64_t now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000 + (uint64_t)t.tv_nsec / 1000;
}

static uint64_t now_ms(void)
{
    return now_us() / 1000;
}

/* The row of function key (its linedefined too: a Proto's address may be
 * another's later), added (unnamed: label "") if new. */
static row *row_at(sampler *sm, const void *key, int linedef)
{
    for (uint32_t i = 0; i < sm->n; i++)
        if (sm->rows[i].key == key && sm->rows[i].linedef == linedef)
            return &sm->rows[i];
    if (sm->n == sm->cap) {
        uint32_t cap = sm->cap ? sm->cap * 2 : 64;
        row *r = realloc(sm->rows, cap * sizeof *r);
        if (!r)
            return NULL;
        sm->rows = r;
        sm->cap = cap;
    }
    row *r = &sm->rows[sm->n++];
    memset(r, 0, sizeof *r);
    r->key = key;
    r->linedef = linedef;
    return r;
}

static row *row_of(sampler *sm, const lr_sr_func *f)
{
    return row_at(sm, f->key, f->linedef);
}

/* Row r's label: name (file:line), as every label people read, file
 * relative to the process's directory when under it. */
static void label(const sampler *sm, row *r, const char *name, const char *src, int isC)
{
    char raw[sizeof r->label + 512];
    size_t k = strlen(sm->cwd);
    const char *shown = k && !strncmp(src, sm->cwd, k) && src[k] == '/' ? src + k + 1 : src;
    shown += !strncmp(shown, "./", 2) ? 2 : 0;
    if (isC)
        snprintf(raw, sizeof raw, "%.128s [C]", name);
    else
        snprintf(raw, sizeof raw, "%.128s (%.300s:%d)", name, shown, r->linedef);
    rd_printable(raw, r->label, sizeof r->label);
}

static void name_rows(sampler *sm)
{
    lr_sr *d = sm->d;
    int named = 0;
    for (uint32_t i = 0; i < d->nfn; i++) {
        row *r = row_of(sm, &d->fn[i]);
        if (!r || r->label[0])
            continue;
        if (!named++)
            lr_sr_name_functions(d, sm->L);
        char src[512], nb[256];
        lr_sr_func_source(d, &d->fn[i], src, sizeof src);
        label(sm, r, lr_sr_func_name(d, &d->fn[i], nb, sizeof nb), src, d->fn[i].isC);
    }
}

/* Counts the sample read into sm->d. */
static void account(sampler *sm)
{
    lr_sr *d = sm->d;
    sm->samples++;
    sm->stamp++;
    if (!d->nchain)
        return; /* no Lua running */
    name_rows(sm);
    const lr_sr_thread *run = &d->th[d->chain[d->nchain - 1]];
    if (run->n) {
        row *r = row_of(sm, &d->fn[d->fr[run->first].fn]);
        if (r)
            r->self++;
        sm->in_lua++;
    }
    for (uint32_t c = 0; c < d->nchain; c++) {
        const lr_sr_thread *t = &d->th[d->chain[c]];
        for (uint32_t k = 0; k < t->n; k++) {
            row *r = row_of(sm, &d->fn[d->fr[t->first + k].fn]);
            if (r && r->stamp != sm->stamp) {
                r->stamp = sm->stamp;
                r->total++;
            }
        }
    }
}

/* The rows of a Lua 5.4 sample's functions, those new named. */
static void name_rows54(sampler *sm)
{
    r54 *d = sm->d54;
    int named = 0;
    for (uint32_t i = 0; i < d->nfn; i++) {
        row *r = row_at(sm, (const void *)d->fn[i].key, d->fn[i].linedef);
        /* a fallback name is given again once the function has a name of
         * its own: its call read by a later sample (the first one saw it
         * tail called, say), as the trace names it by its first call */
        if (!r || (r->label[0] && !(r->fallback && r54_func_named(&d->fn[i]))))
            continue;
        if (!r->label[0] && !named++)
            r54_name_functions(d);
        char src[512], nb[256];
        r54_func_source(d, &d->fn[i], src, sizeof src);
        label(sm, r, r54_func_name(d, &d->fn[i], nb, sizeof nb), src, d->fn[i].isC);
        r->fallback = !r54_func_named(&d->fn[i]);
    }
}

/* account() of a Lua 5.4 sample (sm->d54). */
static void account54(sampler *sm)
{
    r54 *d = sm->d54;
    sm->samples++;
    sm->stamp++;
    name_rows54(sm);
    const r54_thread *run = &d->th[d->chain[d->nchain - 1]];
    if (run->n) {
        const r54_fn *f = &d->fn[d->fr[run->first].fn];
        row *r = row_at(sm, (const void *)f->key, f->linedef);
        if (r)
            r->self++;
        sm->in_lua++;
    }
    for (uint32_t c = 0; c < d->nchain; c++) {
        const r54_thread *t = &d->th[d->chain[c]];
        for (uint32_t k = 0; k < t->n; k++) {
            const r54_fn *f = &d->fn[d->fr[t->first + k].fn];
            row *r = row_at(sm, (const void *)f->key, f->linedef);
            if (r && r->stamp != sm->stamp) {
                r->stamp = sm->stamp;
                r->total++;
            }
        }
    }
}

/* One sample: 0, or -errno (the process is gone or refuses). */
static int sample(sampler *sm)
{
    int e = sm->d54 ? r54_sample(sm->d54, &sm->stop, sm->stop_each, &sm->stopped_us)
                    : rd_peek_sample(sm->d, sm->L, &sm->stop, sm->stop_each, &sm->stopped_us);
    if (e == -EAGAIN) {
        sm->dropped++; /* said: a part often caught moving gets fewer samples */
        return 0;
    }
    if (!e && sm->d54)
        account54(sm);
    else if (!e)
        account(sm);
    return e;
}

static int by_self(const void *a, const void *b)
{
    const row *x = a, *y = b;
    if (x->self != y->self)
        return x->self < y->self ? 1 : -1;
    return x->total < y->total ? 1 : x->total > y->total ? -1 : 0;
}

/* The callers of the hot code first: what a person looks for by name. Of
 * equal totals (every sample in a callee: 100% each) the caller, with the
 * less self time, comes first. */
static int by_total(const void *a, const void *b)
{
    const row *x = a, *y = b;
    if (x->total != y->total)
        return x->total < y->total ? 1 : -1;
    return x->self > y->self ? 1 : x->self < y->self ? -1 : 0;
}

/* Prints the interval's rows (clearing a terminal first), then starts the
 * next interval. */
static void draw(sampler *sm, const char *cmd, unsigned hz, FILE *out)
{
    if (sm->n)
        qsort(sm->rows, sm->n, sizeof *sm->rows, sm->by_total ? by_total : by_self);
    if (isatty(fileno(out)))
        fprintf(out, "\033[H\033[2J");
    fprintf(out, "luatrace top: process %d: %s\n", (int)sm->pid, cmd);
    char held[64] = "read running";
    if (sm->stop_each)
        snprintf(held, sizeof held, "the process held stopped %.1f ms",
                 (double)sm->stopped_us / 1000.0);
    fprintf(out, "%llu samples at %u Hz in the last interval, %llu in Lua, %llu reads dropped "
                 "(read from outside, %s)\nsorted by %s time: t sorts by total, s by self; q or Ctrl-C stops\n\n",
            (unsigned long long)sm->samples, hz, (unsigned long long)sm->in_lua,
            (unsigned long long)sm->dropped, held,
            sm->by_total ? "total" : "self");
    fprintf(out, "%7s %7s %8s  %s\n", "%self", "%total", "samples", "function");
    for (uint32_t i = 0; i < sm->n && i < 20 && (sm->rows[i].self || sm->rows[i].total); i++) {
        const row *r = &sm->rows[i];
        fprintf(out, "%7.2f %7.2f %8llu  %s\n", 100.0 * (double)r->self / (double)sm->samples,
                100.0 * (double)r->total / (double)sm->samples, (unsigned long long)r->self,
                r->label);
    }
    fprintf(out, "\n");
    if (fflush(out) == EOF || ferror(out))
        g_quit = 1; /* nobody reads (top | head: EPIPE, SIGPIPE ignored): stop */
    for (uint32_t i = 0; i < sm->n; i++)
        sm->rows[i].self = sm->rows[i].total = 0;
    sm->samples = sm->in_lua = sm->dropped = sm->stopped_us = 0;
}

/* Waits up to ms for a key: 1 if it asks to stop (q, Q, Ctrl-C); t and s
 * sort the rows by total or self, redrawn at once. */
static int key_quit(sampler *sm, int tty, int ms)
{
    struct pollfd p = {.fd = 0, .events = POLLIN};
    if (!tty) {
        if (ms > 0)
            usleep((useconds_t)ms * 1000);
        return 0;
    }
    char c;
    if (poll(&p, 1, ms) != 1 || read(0, &c, 1) != 1)
        return 0;
    if (c == 't' || c == 'T' || c == 's' || c == 'S') {
        sm->by_total = c == 't' || c == 'T';
        sm->redraw = 1;
    }
    return c == 'q' || c == 'Q' || c == 3;
}

static int run_loop(sampler *sm, const rd_sample_opts *o, const char *cmd)
{
    struct termios old, raw;
    int tty = isatty(0) && tcgetattr(0, &old) == 0;
    if (tty) {
        raw = old;
        raw.c_lflag &= (tcflag_t) ~(ICANON | ECHO | ISIG);
        tcsetattr(0, TCSANOW, &raw);
    }
    uint64_t t0 = now_ms(), next_draw = t0 + 1000, period = 1000 / o->hz;
    int e = 0;
    uint64_t busy = 0; /* since when another reader holds it (--stop) */
    int read_once = 0;
    for (uint64_t next = t0; !g_quit && !e;) {
        if ((e = sample(sm)) && read_once && sm->stop_each && rd_peek_skip_busy(e, &busy))
            e = 0; /* a dump's moment: this sample is skipped */
        else if (e)
            break;
        else
            busy = 0, read_once = 1;
        uint64_t t = now_ms();
        if (t >= next_draw || (sm->redraw && sm->samples)) {
            draw(sm, cmd, o->hz, stdout);
            next_draw = t >= next_draw ? next_draw + 1000 : t + 1000;
            sm->redraw = 0;
        }
        if (o->duration_ms && t - t0 >= o->duration_ms)
            break;
        next += period;
        if (key_quit(sm, tty, next > t ? (int)(next - t) : 0))
            break;
    }
    if (tty)
        tcsetattr(0, TCSANOW, &old);
    if (sm->samples)
        draw(sm, cmd, o->hz, stdout);
    if (e == -ESRCH || e == -ENOENT)
        fprintf(stderr, "recorderd: process %d exited\n", (int)sm->pid);
    return e && e != -ESRCH && e != -ENOENT ? rd_peek_refusal(sm->pid, e) : 0;
}

/* top of a Lua 5.4 process (rd_peek54), its lua_ident's file in lib. */
static int top54(sampler *sm, const rd_sample_opts *o, const char *lib)
{
    char cmd[4096], shown[4096];
    int rc = r54_open(o->pid, lib, &sm->stop, &sm->d54);
    if (!rc) {
        rd_peek_cmdline(o->pid, cmd, sizeof cmd);
        rd_printable(cmd, shown, sizeof shown);
        signal(SIGINT, on_quit);
        signal(SIGTERM, on_quit);
        signal(SIGHUP, on_quit);
        rc = run_loop(sm, o, shown);
        r54_close(sm->d54);
    }
    free(sm->rows);
    free(sm->d);
    return rc;
}

int rd_sample_top(const rd_sample_opts *o)
{
    sampler sm = {.pid = o->pid, .stop_each = o->stop};
    const void *found[RD_PEEK_MAX_STATES];
    char cmd[4096], shown[4096];
    if (!(sm.d = calloc(1, sizeof *sm.d)))
        return fprintf(stderr, "recorderd: out of memory\n"), 1;
    rd_peek_init(sm.d, o->pid);
    char link[64];
    snprintf(link, sizeof link, "/proc/%d/cwd", (int)o->pid);
    ssize_t k = readlink(link, sm.cwd, sizeof sm.cwd - 1);
    sm.cwd[k > 0 ? k : 0] = 0;
    char v[8];
    if (rd_peek_release(o->pid, v, shown, sizeof shown) && !strcmp(v, "5.4"))
        return top54(&sm, o, shown);
    if (rd_peek_other_lua(o->pid, shown, sizeof shown)) {
        fprintf(stderr, "recorderd: %s\n", shown);
        free(sm.d);
        return 1;
    }
    int n = rd_peek_find_running(sm.d, found, &sm.stop), e = n < 0 ? n : 0;
    if (!n && rd_peek_gone(o->pid)) /* exited as its state was looked for */
        e = -ESRCH;
    rd_peek_cmdline(o->pid, cmd, sizeof cmd);
    rd_printable(cmd, shown, sizeof shown);
    int rc = 1;
    if (e)
        rc = rd_peek_refusal(o->pid, e);
    else if (!n)
        fprintf(stderr, "recorderd: process %d has no Lua 5.1 state that recorderd can find "
                        "(not a Lua 5.1 or 5.4 program, or its Lua not started yet): %s\n", (int)o->pid, shown);
    else {
        sm.L = found[0];
        lr_sr_find_specials(sm.d, sm.L);
        signal(SIGINT, on_quit);
        signal(SIGTERM, on_quit);
        signal(SIGHUP, on_quit);
        rc = run_loop(&sm, o, shown);
    }
    free(sm.rows);
    free(sm.d);
    return rc;
}
