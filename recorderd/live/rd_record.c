/* rd_record: `recorderd record PID`: a sampled session of a process that
 * never loaded the collector. A sampler thread reads the process's running
 * chain from outside (rd_peek, as `top` does) HZ times a second and plays
 * producer: it writes into a ring of its own what a collector would have
 * sent had the program moved from one sample's stack to the next (RET and
 * CALL records for the frames that changed, a LINE for the top frame's
 * line, each sample's time in the first record after it). A session of
 * the usual kind (rd_session: drainer, trace.ltr, reports, session.json)
 * consumes it. The running chain (main, then the coroutines it resumes, in
 * turn) is one stack, as the folded stacks of a traced session show it;
 * times are sample periods and call counts are the entries the samples saw,
 * so session.json says the session is sampled, and at what rate. */
#include "rd_record.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lt_event.h"
#include "lt_ring.h"
#include "rd_outdir.h"
#include "rd_peek.h"
#include "rd_peek54.h"
#include "rd_util.h"

enum { MAX_DEPTH = 4096, CUT_ROOT = 100, RING_SIZE = 4u << 20 };

typedef struct fn_id {
    const void *key, *srcp; /* srcp: a Lua function's Proto.source (TString*) */
    int linedef, lastline;
    uint32_t fid;
    uint8_t fallback; /* its FUNC named it by a fallback (r54_func_named): sent again */
    char *label; /* a Lua function's NAME@SRC (malloc), or NULL */
} fn_id;

struct rd_recording {
    const rd_record_opts *o;
    lr_sr *d;
    r54 *d54; /* a Lua 5.4 process's reader, instead of d */
    const void *L;
    rd_peek_stop stop;
    lt_ring ring;
    rd_session_opts so; /* the caller's, with the out directory open */
    rd_session *s;
    uv_async_t done;
    uv_signal_t sigint, sigterm;
    uv_thread_t thread;
    _Atomic int quit;
    _Atomic int go; /* a held sampler may begin (rd_record_go) */
    uint32_t held_n, held_top; /* the held process's stack: its depth and top fid */
    int nothread; /* the sampler could not start */
    uv_loop_t *loop;
    uv_work_t work;  /* finding the state, off the loop */
    int start_err;   /* why sampling never began (-errno), with msg */
    int end_pending; /* start failed after the async handle was made: its close ends */
    char msg[1024];
    char name[LT_RING_NAME_MAX + 16], cmd[4096], cwd[4096]; /* read with the state */
    fn_id *fns;
    uint32_t nfn, capfn, next_sid, next_fid;
    uint32_t fid[MAX_DEPTH], line[MAX_DEPTH], n; /* the last sample's stack, bottom first */
    uint32_t cur_fid[MAX_DEPTH], cur_line[MAX_DEPTH], cur_n;
    /* each frame's function as read (a Proto, a C function): a chunk
     * loaded again shares its id with the last load (fid_at), but a frame
     * of another load is another call */
    const void *key[MAX_DEPTH], *cur_key[MAX_DEPTH];
    uint64_t last_ns, samples; /* last_ns: the step clock's (step_ns) */
    /* samples dropped after their tries (stacks caught moving), said in
     * session.json. Their time stays with the sample before, as a part
     * of the program often caught moving is most often the one read
     * last: left out, it took fib in Lua 5.1 from 43% to 26-34% */
    uint64_t dropped;
    int cpu_fd; /* o->cpu_tid's schedstat, or -1: steps are wall time */
    int err; /* why sampling ended early (-errno), 0 if it did not */
    void (*on_end)(rd_recording *, void *);
    void *ud;
};

typedef struct rd_recording rec;

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The clock of the steps: the CPU time of o->cpu_tid (the first field of
 * its schedstat, ns on a CPU), else the monotonic clock. A thread gone
 * reads as its last value: its steps from then on are 0. */
static uint64_t step_ns(rec *r)
{
    char buf[96];
    if (r->cpu_fd < 0)
        return now_ns();
    ssize_t n = pread(r->cpu_fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return r->last_ns;
    buf[n] = 0;
    unsigned long long v = strtoull(buf, NULL, 10);
    return v > r->last_ns ? v : r->last_ns;
}

/* {====== writing records into the ring */

/* Room for n bytes: waits while the drainer catches up (we are not the
 * traced program: waiting costs it nothing). */
static uint8_t *room(rec *r, size_t n)
{
    uint8_t *p;
    while (!(p = lt_ring_reserve(&r->ring, n))) {
        lt_ring_publish(&r->ring);
        usleep(1000);
    }
    return p;
}

static void commit(rec *r, const uint8_t *p, const uint8_t *q)
{
    lt_ring_commit(&r->ring, (uint64_t)(q - p));
}

static uint32_t put_str(rec *r, const char *s)
{
    size_t n = strlen(s);
    if (n > LT_STR_MAX)
        n = LT_STR_MAX;
    uint8_t *p = room(r, n + 16), *q = lt_put_head(p, LT_EV_STR, 2);
    q = lt_put_uint(q, ++r->next_sid);
    q = lt_put_str(q, s, (uint32_t)n);
    commit(r, p, q);
    return r->next_sid;
}

/* A sampled function as its FUNC says it. */
typedef struct fn_desc {
    const void *key, *srcp;
    int linedef, lastline;
    unsigned what; /* LT_WHAT_* */
    const char *src, *name;
    int fallback; /* name is a fallback, a later sample may find its own */
} fn_desc;

/* Whether fns[i] is function f: its key, and for a Lua function the
 * source and lines of its Proto (whose address a later one may take). */
static int same_fn(const fn_id *i, const fn_desc *f)
{
    return i->key == f->key && i->srcp == f->srcp && i->linedef == f->linedef &&
           i->lastline == f->lastline;
}

/* Whether function f has an id already. */
static int known(const rec *r, const fn_desc *f)
{
    for (uint32_t i = 0; i < r->nfn; i++)
        if (same_fn(&r->fns[i], f))
            return 1;
    return 0;
}

/* f's STR records and its FUNC, with id fid. */
static void put_func(rec *r, const fn_desc *f, uint32_t fid)
{
    uint32_t src_sid = put_str(r, f->src), name_sid = put_str(r, f->name);
    uint8_t *p = room(r, 64);
    /* flags 0: no pcall or resume to rebuild, the samples say all */
    uint8_t *q = lt_put_func(p, fid, f->what, src_sid, name_sid, f->linedef, f->lastline, 0);
    commit(r, p, q);
}

/* The entry of function f in r->fns, or NULL. */
static fn_id *entry(rec *r, const fn_desc *f)
{
    for (uint32_t i = 0; i < r->nfn; i++)
        if (same_fn(&r->fns[i], f))
            return &r->fns[i];
    return NULL;
}

/* Whether function f has an id named by a fallback, so that its name is
 * to be made again (fid_of54). */
static int renamable(rec *r, const fn_desc *f)
{
    const fn_id *e = entry(r, f);
    return e && e->fallback;
}

/* The id of function f, its STR and FUNC written if new; written again,
 * the same id, where it was named by a fallback and f has a name of its
 * own now (the model takes the later FUNC's name). */
static uint32_t fid_at(rec *r, const fn_desc *f)
{
    fn_id *e = entry(r, f);
    if (e && e->fallback && f->name && !f->fallback) {
        put_func(r, f, e->fid);
        e->fallback = 0;
    }
    if (e)
        return e->fid;
    if (r->nfn == r->capfn) {
        uint32_t cap = r->capfn ? r->capfn * 2 : 256;
        fn_id *n = realloc(r->fns, cap * sizeof *n);
        if (!n)
            return 0;
        r->fns = n;
        r->capfn = cap;
    }
    /* A Lua function of a chunk loaded again (a module reloaded: require
     * after package.loaded.mod = nil, dofile in a loop) is a new Proto of
     * the same code: the id of the one before of the same name, source and
     * lines, as the trace gives it one id (it is known by its code).
     * Each load had an id, and a label of its own: main chunk#2, #3... */
    char *label = NULL;
    if (f->what != LT_WHAT_C && f->name && f->src &&
        (label = malloc(strlen(f->name) + strlen(f->src) + 2)))
        sprintf(label, "%s@%s", f->name, f->src);
    uint32_t fid = 0;
    for (uint32_t i = 0; label && i < r->nfn && !fid; i++) {
        const fn_id *o = &r->fns[i];
        if (o->label && o->linedef == f->linedef && o->lastline == f->lastline &&
            !strcmp(o->label, label))
            fid = o->fid;
    }
    if (!fid) {
        fid = ++r->next_fid;
        put_func(r, f, fid);
    }
    r->fns[r->nfn++] = (fn_id){f->key,  f->srcp,          f->linedef, f->lastline,
                               fid,     (uint8_t)f->fallback, label};
    return fid;
}

/* fid_at of a Lua 5.1 sample's function. */
static uint32_t fid_of(rec *r, const lr_sr_func *f)
{
    char src[LT_STR_MAX + 64], name[256], nb[256];
    fn_desc fd = {f->key, f->src, f->linedef, f->lastline,
                  f->isC ? LT_WHAT_C : f->main ? LT_WHAT_MAIN : LT_WHAT_LUA, src, name, 0};
    if (known(r, &fd))
        return fid_at(r, &fd);
    lr_sr_func_source(r->d, f, src, sizeof src);
    snprintf(name, sizeof name, "%s", lr_sr_func_name(r->d, f, nb, sizeof nb));
    return fid_at(r, &fd);
}

/* fid_at of a Lua 5.4 sample's function. */
static uint32_t fid_of54(rec *r, const r54_fn *f)
{
    char src[LT_STR_MAX + 64], name[256], nb[256];
    fn_desc fd = {(const void *)f->key, (const void *)f->src, f->linedef, f->lastline,
                  f->isC ? LT_WHAT_C : !f->linedef ? LT_WHAT_MAIN : LT_WHAT_LUA, src, name,
                  !r54_func_named(f)};
    if (known(r, &fd) && (fd.fallback || !renamable(r, &fd)))
        return fid_at(r, &fd);
    r54_func_source(r->d54, f, src, sizeof src);
    snprintf(name, sizeof name, "%s", r54_func_name(r->d54, f, nb, sizeof nb));
    return fid_at(r, &fd);
}

/* A record of kind k (CALL, RET, LINE, STOP) with its args. */
static void put(rec *r, unsigned k, int nargs, uint64_t a0, uint64_t a1, uint64_t a2)
{
    uint8_t *p = room(r, LT_EVENT_HOT_MAX), *q = lt_put_head(p, k, (uint32_t)nargs);
    uint64_t a[3] = {a0, a1, a2};
    for (int i = 0; i < nargs; i++)
        q = lt_put_uint(q, a[i]);
    commit(r, p, q);
}

/* The first records: the clock (ticks are nanoseconds), the thread, and
 * the first sample's stack as a snapshot. */
static void put_begin(rec *r)
{
    put(r, LT_EV_CLOCK, 3, now_ns(), now_ns(), 0);
    put(r, LT_EV_THREAD, 2, 1, (uint64_t)(uintptr_t)r->L, 0);
    put(r, LT_EV_START, 2, 1, LT_R_BEGIN, 0);
    for (uint32_t i = r->cur_n; i-- > 0;)
        put(r, LT_EV_FRAME, 3, i + 1, r->cur_fid[i], r->cur_line[i]);
    memcpy(r->fid, r->cur_fid, r->cur_n * sizeof r->fid[0]);
    memcpy(r->key, r->cur_key, r->cur_n * sizeof r->key[0]);
    memcpy(r->line, r->cur_line, r->cur_n * sizeof r->line[0]);
    r->n = r->cur_n;
    r->last_ns = step_ns(r);
    lt_ring_publish(&r->ring);
}

/* From the last sample's stack to this one's: RET for the frames gone,
 * CALL for the new ones, a LINE for the top one. The elapsed time goes in
 * the first record: to the stack the last sample saw. */
static void put_step(rec *r, uint64_t t)
{
    uint32_t k = 0, m = r->cur_n;
    while (k < r->n && k < m && r->fid[k] == r->cur_fid[k] && r->key[k] == r->cur_key[k])
        k++;
    uint64_t dt = t - r->last_ns;
    for (uint32_t i = r->n; i-- > k; dt = 0)
        put(r, LT_EV_RET, 2, i + 1, dt, 0);
    for (uint32_t i = k; i < m; i++, dt = 0)
        put(r, LT_EV_CALL, 3, i + 1, dt, r->cur_fid[i]);
    if (m)
        put(r, LT_EV_LINE, 3, m, dt, r->cur_line[m - 1]);
    memcpy(r->fid, r->cur_fid, m * sizeof r->fid[0]);
    memcpy(r->key, r->cur_key, m * sizeof r->key[0]);
    memcpy(r->line, r->cur_line, m * sizeof r->line[0]);
    r->n = m;
    r->last_ns = t;
    lt_ring_publish(&r->ring); /* a sample at a time: a window (rd_tap) ends where it ends */
}

/* }====== */

/* The frame that stands for those a sample left out of a deep stack. */
static uint32_t gap_fid(rec *r)
{
    static const char key; /* no function's */
    fn_desc fd = {&key, NULL, 0, 0, LT_WHAT_C, "[C]", "[...]", 0};
    return fid_at(r, &fd);
}

/* The "[...]" frame into the sample being flattened. */
static void put_gap(rec *r)
{
    uint32_t gid = r->cur_n + 1 < MAX_DEPTH ? gap_fid(r) : 0;
    if (gid) {
        r->cur_fid[r->cur_n] = gid;
        r->cur_key[r->cur_n] = NULL;
        r->cur_line[r->cur_n++] = 0;
    }
}

/* Whether the frame at i (from the bottom) of a sample of total frames is
 * left out: one deeper than MAX_DEPTH keeps its CUT_ROOT bottom frames
 * and its top ones, a "[...]" frame between (put where i is CUT_ROOT),
 * so that its time stays on the frames running. */
static int cut_out(uint32_t i, uint32_t total)
{
    return total > MAX_DEPTH && i >= CUT_ROOT && i < total - (MAX_DEPTH - CUT_ROOT - 1);
}

/* The running chain of the sample read into r->d, bottom first. */
static void flatten(rec *r)
{
    lr_sr *d = r->d;
    int named = 0;
    uint32_t total = 0, i = 0;
    r->cur_n = 0;
    for (uint32_t c = 0; c < d->nchain; c++)
        total += d->th[d->chain[c]].n;
    for (uint32_t c = 0; c < d->nchain; c++) {
        const lr_sr_thread *t = &d->th[d->chain[c]];
        for (uint32_t k = t->n; k-- > 0 && r->cur_n < MAX_DEPTH; i++) {
            if (cut_out(i, total)) {
                if (i == CUT_ROOT)
                    put_gap(r);
                continue;
            }
            const lr_sr_frame *fr = &d->fr[t->first + k];
            const lr_sr_func *f = &d->fn[fr->fn];
            if (!known(r, &(fn_desc){.key = f->key, .srcp = f->src, .linedef = f->linedef,
                                     .lastline = f->lastline}) && !named++)
                lr_sr_name_functions(d, r->L);
            uint32_t fid = fid_of(r, f);
            if (!fid)
                continue;
            r->cur_fid[r->cur_n] = fid;
            r->cur_key[r->cur_n] = f->key;
            r->cur_line[r->cur_n++] = fr->line;
        }
    }
}

/* flatten() of a Lua 5.4 sample (r->d54); a thread's frames left out
 * between its top and bottom ones (a deep stack) are one "[...]" frame. */
static void flatten54(rec *r)
{
    r54 *d = r->d54;
    int named = 0;
    r->cur_n = 0;
    for (uint32_t c = 0; c < d->nchain; c++) {
        const r54_thread *t = &d->th[d->chain[c]];
        for (uint32_t k = t->n; k-- > 0 && r->cur_n < MAX_DEPTH;) {
            if (t->gap && k + 1 == t->gap)
                put_gap(r);
            const r54_frame *fr = &d->fr[t->first + k];
            const r54_fn *f = &d->fn[fr->fn];
            if (!known(r, &(fn_desc){.key = (const void *)f->key, .srcp = (const void *)f->src,
                                     .linedef = f->linedef, .lastline = f->lastline}) && !named++)
                r54_name_functions(d);
            uint32_t fid = fid_of54(r, f);
            if (!fid)
                continue;
            r->cur_fid[r->cur_n] = fid;
            r->cur_key[r->cur_n] = (const void *)f->key;
            r->cur_line[r->cur_n++] = fr->line > 0 ? (uint32_t)fr->line : 0;
        }
    }
}

static int sample(rec *r)
{
    uint64_t stopped = 0;
    int e = r->d54 ? r54_sample(r->d54, &r->stop, r->o->stop, &stopped)
                   : rd_peek_sample(r->d, r->L, &r->stop, r->o->stop, &stopped);
    if (e)
        return e;
    if (r->d54)
        flatten54(r);
    else
        flatten(r);
    r->samples++;
    return 0;
}

/* Whether the sampling is over: asked to quit, or the duration passed. */
static int over(rec *r, uint64_t t0)
{
    return atomic_load(&r->quit) ||
           (r->o->duration_ms && now_ns() - t0 >= (uint64_t)r->o->duration_ms * 1000000u);
}

/* The first sample: reads caught mid-change are tried again until one is
 * whole, the sampling is over or the process refuses. 0, or -errno
 * (-EAGAIN: no read succeeded in 100 tries, a tenth of a second, before
 * the end: the stack is not what a Lua 5.1 stack should be). Fewer tries
 * end with no samples and nothing wrong (-ECANCELED): a short program
 * (run --sample) whose state closed while its first read was caught
 * mid-change. */
static int first_sample(rec *r, uint64_t t0)
{
    int e, tries = 0;
    while ((e = sample(r)) == -EAGAIN && !over(r, t0) && ++tries)
        usleep(1000);
    return e == -EAGAIN && tries < 100 ? -ECANCELED : e;
}

/* A held process (o->held) waits in its collector's hello for the ack:
 * that wait, and the moments before the process runs again, are not its
 * time. read_held reads the stack it waits with, before the ack; after
 * rd_record_go, wait_held reads on until the stack has moved on (up to 50
 * ms: one that stays where it was is sampled there). */
static void read_held(rec *r)
{
    if (sample(r) == 0 && r->cur_n)
        r->held_n = r->cur_n, r->held_top = r->cur_fid[r->cur_n - 1];
}

static void wait_held(rec *r)
{
    uint32_t n = r->held_n;
    while (!atomic_load(&r->go) && !atomic_load(&r->quit))
        usleep(100);
    for (uint64_t t0 = now_ns(); n && !atomic_load(&r->quit) && now_ns() - t0 < 50000000u;
         usleep(100))
        if (sample(r) == 0 && (r->cur_n != n || r->cur_fid[n - 1] != r->held_top))
            break;
    r->samples = 0;
}

static void sampler(void *arg)
{
    rec *r = arg;
    if (r->o->held)
        wait_held(r);
    uint64_t t0 = now_ns(), period = 1000000000u / r->o->hz, next = t0, busy = 0;
    int e = first_sample(r, t0);
    if (!e)
        put_begin(r);
    while (!e && !atomic_load(&r->quit)) {
        next += period;
        uint64_t t = now_ns();
        if (next > t)
            usleep((useconds_t)((next - t) / 1000));
        if (over(r, t0))
            break;
        /* a read caught mid-change is tried again, a few times */
        for (int k = 0; (e = sample(r)) == -EAGAIN && k < 3; k++)
            ;
        if (!e)
            put_step(r, step_ns(r)), busy = 0;
        else if (e == -EAGAIN) /* still moving: the next sample */
            r->dropped++, e = 0;
        else if (r->o->stop && rd_peek_skip_busy(e, &busy))
            e = 0; /* another reader's moment (a dump): the next sample */
    }
    r->err = e;
    if (r->samples)
        put(r, LT_EV_STOP, 2, step_ns(r) - r->last_ns, e ? LT_R_EXIT : LT_R_DETACH, 0);
    r->s->m.sampled_dropped = r->dropped; /* for session.json, written once the session ends */
    lt_ring_publish(&r->ring);
    atomic_store_explicit(&r->ring.hdr->prod_state, LT_PROD_DONE, memory_order_release);
    rd_session_conn_closed(r->s);
}

static void on_signal(uv_signal_t *h, int sig)
{
    (void)sig;
    rd_record_quit(h->data);
}

void rd_record_go(rd_recording *r)
{
    atomic_store(&r->go, 1);
}

void rd_record_quit(rd_recording *r)
{
    atomic_store(&r->quit, 1);
}

/* The handle is closed: r may be freed now (by on_end). */
static void done_closed(uv_handle_t *h)
{
    rec *r = h->data;
    if (r->on_end)
        r->on_end(r, r->ud);
}

static void on_done(uv_async_t *h)
{
    rec *r = h->data;
    if (!r->s || !atomic_load_explicit(&r->s->done, memory_order_acquire))
        return;
    uv_close((uv_handle_t *)&r->done, done_closed);
}

/* The session's name: the script the process runs (as a traced process
 * names its ring), else its program. */
static void session_name(pid_t pid, char *name, size_t cap)
{
    char buf[8192], *argv[64];
    int argc = 0;
    size_t n = rd_proc_read(pid, "cmdline", buf, sizeof buf);
    for (size_t i = 0; i < n && argc < 64; i += strlen(buf + i) + 1)
        argv[argc++] = buf + i;
    lt_ring_name_of_args(argc, argv, name, cap);
    if (!name[0])
        snprintf(name, cap, "record");
}

/* The ring the sampler writes and the session reads: NAME, else NAME.PID,
 * NAME.PID.2... (another ring of that name exists: the endpoint may sample
 * one process for several clients at once). */
static int make_ring(rec *r, char *name, size_t cap)
{
    snprintf(name, cap, "%s", r->name);
    int e = lt_ring_create(&r->ring, name, RING_SIZE);
    size_t k = strlen(name);
    for (int i = 1; e == -EEXIST && i < 100; i++) {
        snprintf(name + k, cap - k, ".%d%s%.0d", (int)r->o->pid, i > 1 ? "." : "", i > 1 ? i : 0);
        e = lt_ring_create(&r->ring, name, RING_SIZE);
    }
    return e;
}

/* The session and the sampler: 0, or -errno with a message in err. */
static int start(rec *r, uv_loop_t *loop, char *err, size_t cap)
{
    char name[LT_RING_NAME_MAX + 16];
    if (make_ring(r, name, sizeof name) < 0)
        return snprintf(err, cap, "cannot make a ring for the samples"), -ENOMEM;
    r->so = r->o->so;
    if (r->o->cpu_tid) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/task/%d/schedstat", (int)r->o->pid,
                 (int)r->o->cpu_tid);
        r->cpu_fd = open(path, O_RDONLY | O_CLOEXEC); /* none: wall time, as record's */
        r->so.sample_cpu = r->cpu_fd >= 0;
    }
    if (!r->so.no_files && (r->so.out_fd = rd_out_open(r->so.out, 1, err, cap)) < 0) {
        lt_ring_unlink(name);
        lt_ring_close(&r->ring);
        return -EINVAL; /* refused as run refuses it: a bad option */
    }
    uv_async_init(loop, &r->done, on_done);
    r->done.data = r;
    r->s = rd_session_start(&r->so, name, geteuid(), r->o->pid, r->cmd, r->cwd, 0, &r->done, err,
                            cap);
    if (!r->s) {
        lt_ring_unlink(name);
        lt_ring_close(&r->ring);
        r->end_pending = 1; /* the handle's close calls on_end */
        uv_close((uv_handle_t *)&r->done, done_closed);
        return -EIO;
    }
    if (r->o->held) /* on the loop: the ack (o->started) comes after it */
        read_held(r);

    if (uv_thread_create(&r->thread, sampler, r)) {
        /* the session ends at once, with nothing */
        atomic_store_explicit(&r->ring.hdr->prod_state, LT_PROD_DONE, memory_order_release);
        rd_session_conn_closed(r->s);
        r->err = -EAGAIN;
        r->nothread = 1;
        return snprintf(err, cap, "cannot start the sampler"), 0;
    }
    return 0;
}

/* The session's name, the command line and the working directory, read
 * with the state, while the process surely runs: the session starts on the
 * loop later (a process that exits meanwhile must not give an empty name). */
static void read_process(rec *r)
{
    char link[64];
    session_name(r->o->pid, r->name, sizeof r->name);
    rd_peek_cmdline(r->o->pid, r->cmd, sizeof r->cmd);
    snprintf(link, sizeof link, "/proc/%d/cwd", (int)r->o->pid);
    ssize_t n = readlink(link, r->cwd, sizeof r->cwd - 1);
    r->cwd[n > 0 ? n : 0] = 0;
}

/* find_state of a Lua 5.4 process (lib defines its lua_ident). */
static int find54(rec *r, const char *lib, char *err, size_t cap)
{
    /* a hello's (run --sample): recorderd may be its parent, waiting for it */
    int e = r54_find(r->o->pid, lib, r->o->state ? NULL : &r->stop, &r->d54, err, cap);
    if (e == -ESRCH && r->cmd[0])
        return 0; /* ran when record began, exited since: a session, no samples */
    if (!e)
        r->L = (const void *)r->d54->L;
    return e;
}

/* Finds the process's Lua state: 0, or -errno with a message in err
 * (-ENOEXEC: no Lua 5.1 state). */
static int find_state(rec *r, char *err, size_t cap)
{
    const void *found[RD_PEEK_MAX_STATES];
    read_process(r); /* before it can exit: a zombie's command line is empty */
    char v[8], lib[4096];
    /* 5.4: found by its own scan, a hello's state (run --sample) too */
    if (rd_peek_release(r->o->pid, v, lib, sizeof lib) && !strcmp(v, "5.4"))
        return find54(r, lib, err, cap);
    if (rd_peek_other_lua(r->o->pid, err, cap))
        return -ENOEXEC;
    if (r->o->state) { /* its hello's: the process waits for the ack, unstopped */
        r->L = r->o->state;
        lr_sr_find_specials(r->d, r->L);
        return 0;
    }
    int n = rd_peek_find_running(r->d, found, &r->stop);
    if ((n == -ESRCH || (!n && rd_peek_gone(r->o->pid))) && r->cmd[0])
        return 0; /* ran when record began, exited since: a session, no samples */
    if (n < 0)
        return rd_peek_refusal_msg(r->o->pid, n, err, cap), n;
    if (!n) {
        snprintf(err, cap, "process %d has no Lua 5.1 state that recorderd can find "
                           "(not a Lua 5.1 or 5.4 program, or its Lua not started yet)", (int)r->o->pid);
        return -ENOEXEC;
    }
    r->L = found[0];
    lr_sr_find_specials(r->d, r->L);
    read_process(r); /* what it runs now, if it exec'd lua5.1 since */
    return 0;
}

static void rec_free(rec *r)
{
    if (!r)
        return;
    if (r->so.out_fd > 0)
        close(r->so.out_fd);
    if (r->cpu_fd >= 0)
        close(r->cpu_fd);
    for (uint32_t i = 0; i < r->nfn; i++)
        free(r->fns[i].label);
    free(r->fns);
    free(r->d);
    if (r->d54)
        r54_close(r->d54);
    free(r);
}

/* On a thread of libuv's pool: finding the state stops the process and
 * may read much of its heap; the loop (a daemon's) goes on meanwhile. */
static void find_work(uv_work_t *w)
{
    rec *r = w->data;
    r->start_err = find_state(r, r->msg, sizeof r->msg);
}

static void find_after(uv_work_t *w, int status)
{
    rec *r = w->data;
    if (!r->start_err && (status || atomic_load(&r->quit))) {
        r->start_err = -ECANCELED;
        snprintf(r->msg, sizeof r->msg, "given up before sampling began");
    }
    if (!r->start_err)
        r->start_err = start(r, r->loop, r->msg, sizeof r->msg);
    if (r->start_err && !r->end_pending)
        r->on_end(r, r->ud);
    else if (!r->start_err && r->o->started)
        r->o->started(r->s, r->ud);
}

int rd_record_start(const rd_record_opts *o, uv_loop_t *loop,
                    void (*on_end)(rd_recording *, void *), void *ud, rd_recording **out)
{
    rec *r = calloc(1, sizeof *r);
    if (r)
        r->cpu_fd = -1;
    if (!r || !(r->d = calloc(1, sizeof *r->d))) {
        rec_free(r);
        return -ENOMEM;
    }
    r->o = o;
    r->loop = loop;
    r->on_end = on_end;
    r->ud = ud;
    rd_peek_init(r->d, o->pid);
    r->work.data = r;
    int e = uv_queue_work(loop, &r->work, find_work, find_after);
    if (e) {
        rec_free(r);
        return e;
    }
    *out = r;
    return 0;
}

int rd_record_free(rd_recording *r, char *err, size_t cap)
{
    int e = r->start_err;
    snprintf(err, cap, "%s", e ? r->msg : "");
    if (e) {
        rec_free(r);
        return e;
    }
    if (!r->nothread)
        uv_thread_join(&r->thread);
    if (r->err == -ECANCELED) /* ended before a first sample: no samples */
        snprintf(err, cap, "process %d: no samples", (int)r->o->pid);
    else if (r->err == -ESRCH || r->err == -ENOENT)
        snprintf(err, cap, "process %d exited; %llu samples recorded", (int)r->o->pid,
                 (unsigned long long)r->samples);
    else if (r->err == -EAGAIN && !r->nothread)
        snprintf(err, cap, "process %d: no read of its Lua stack succeeded (a stack changing "
                 "under every read, or memory that is not Lua 5.1's): no samples", (int)r->o->pid),
            e = -EAGAIN;
    else if (r->err)
        rd_peek_refusal_msg(r->o->pid, e = r->err, err, cap);
    if (r->s->err[0]) { /* its reports' (a full disk), as a listening server says them */
        char shown[sizeof r->s->err + 64];
        fprintf(stderr, "recorderd: session %s (pid %d): %s\n", r->s->name, (int)r->o->pid,
                rd_printable(r->s->err, shown, sizeof shown));
    }
    rd_session_free(r->s);
    rec_free(r);
    return e;
}

/* rd_record's: the signals end the sampling, the session's end the loop. */
typedef struct cli_rec {
    uv_signal_t sigint, sigterm, sighup;
} cli_rec;

static void cli_end(rd_recording *r, void *ud)
{
    (void)r;
    cli_rec *c = ud;
    uv_close((uv_handle_t *)&c->sigint, NULL);
    uv_close((uv_handle_t *)&c->sigterm, NULL);
    uv_close((uv_handle_t *)&c->sighup, NULL);
}

int rd_record(const rd_record_opts *o)
{
    char err[1024];
    cli_rec c;
    rd_recording *r = NULL;
    uv_loop_t *loop = uv_default_loop();
    if (rd_record_start(o, loop, cli_end, &c, &r))
        return fprintf(stderr, "recorderd: out of memory\n"), 1;
    uv_signal_init(loop, &c.sigint);
    uv_signal_init(loop, &c.sigterm);
    uv_signal_init(loop, &c.sighup);
    c.sigint.data = c.sigterm.data = c.sighup.data = r;
    uv_signal_start(&c.sigint, on_signal, SIGINT);
    uv_signal_start(&c.sigterm, on_signal, SIGTERM);
    uv_signal_start(&c.sighup, on_signal, SIGHUP); /* a lost terminal: as SIGTERM */
    uv_run(loop, UV_RUN_DEFAULT);
    int e = rd_record_free(r, err, sizeof err);
    if (err[0])
        fprintf(stderr, e == -EINVAL ? "recorderd record: --out %s\n" : "recorderd: %s\n",
                rd_printable(err, err, sizeof err));
    uv_loop_close(loop);
    return e == -EINVAL ? 2 : e ? 1 : 0;
}
