/* rd_session: draining one ring and writing one session's reports. */
#include "rd_session.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lt_file.h"
#include "rd_backend.h"
#include "rd_callgrind.h"
#include "rd_cov.h"
#include "rd_flame.h"
#include "rd_html.h"
#include "rd_pprof.h"
#include "rd_replay.h"
#include "rd_annotate.h"
#include "rd_report.h"
#include "rd_speedscope.h"
#include "rd_util.h"

/* Picks out/<shm>, or out/<shm>.<pid>[.N] when taken; creates it. */
static int make_dir(rd_session *s, const char *out, char *err, size_t cap)
{
    int e = rd_mkdir_p(out);
    for (int i = 0; !e && i < 1000; i++) {
        if (i == 0)
            snprintf(s->dir, sizeof s->dir, "%s/%s", out, s->name);
        else
            snprintf(s->dir, sizeof s->dir, "%s/%s.%d%s%.0d", out, s->name, (int)s->pid,
                     i > 1 ? "." : "", i > 1 ? i : 0);
        if (mkdir(s->dir, 0755) == 0) { /* the session is named as its directory */
            snprintf(s->name, sizeof s->name, "%s", strrchr(s->dir, '/') + 1);
            return 0;
        }
        if (errno != EEXIST)
            e = -errno;
    }
    snprintf(err, cap, "cannot create a session directory in %s: %s", out,
             strerror(e ? -e : EEXIST));
    return e ? e : -EEXIST;
}

static void pause_drain(unsigned idle)
{
    struct timespec ts = {0, idle < 10 ? 50000 : idle < 100 ? 200000 : 1000000};
    nanosleep(&ts, NULL);
}

/* Moves everything readable from the ring through the model. Returns 1 if
 * there was data, 0 if none, -1 on a corrupt ring. */
static int drain_once(rd_session *s)
{
    const uint8_t *p;
    int64_t n = lt_ring_peek(&s->ring, &p);
    if (n < 0) {
        snprintf(s->err, sizeof s->err, "ring corrupt: impossible head position");
        return -1;
    }
    if (n == 0)
        return 0;
    int64_t used = rd_replay_feed(&s->st, p, (size_t)n, s->err, sizeof s->err);
    if (used < 0)
        return -1;
    if (used == 0 && n == (int64_t)s->ring.size) {
        snprintf(s->err, sizeof s->err, "ring corrupt: record larger than the ring");
        return -1;
    }
    /* a failed write ends the file, not the session: the stacks and the
     * reports come from the ring */
    rd_tracefile_write(&s->trace, p, (size_t)used);
    s->bytes += (uint64_t)used;
    lt_ring_consume(&s->ring, (uint64_t)used);
    /* relaxed: statistics for status, read by the loop thread */
    atomic_store_explicit(&s->stat_events, s->m.events, memory_order_relaxed);
    atomic_store_explicit(&s->stat_fill, (uint64_t)n, memory_order_relaxed);
    atomic_store_explicit(&s->stat_drops,
                          atomic_load_explicit(&s->ring.hdr->drops, memory_order_relaxed),
                          memory_order_relaxed);
    return used > 0;
}

/* A producer of the same uid could shrink its shm object under us: reading
 * the mapping then raises SIGBUS. A drainer reads the ring only inside this
 * guard, so the fault ends that session, not the daemon. */
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

void rd_session_guard_init(void)
{
    struct sigaction sa = {0};
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, NULL);
}

static void drain_loop(rd_session *s);

static void drain(rd_session *s)
{
    sigjmp_buf jb;
    if (sigsetjmp(jb, 1)) {
        bus_guard = NULL;
        s->ring_lost = 1;
        s->truncated = 1;
        snprintf(s->err, sizeof s->err, "the ring shrank under recorderd (SIGBUS): session cut");
        return;
    }
    bus_guard = &jb;
    drain_loop(s);
    bus_guard = NULL;
}

/* The live view's turn, about every live_ms. */
static void maybe_live(rd_session *s, unsigned long long *next)
{
    if (!s->opts->live)
        return;
    unsigned long long now = rd_now_ns();
    if (now < *next)
        return;
    *next = now + (unsigned long long)s->opts->live_ms * 1000000ull;
    s->opts->live(s, s->opts->live_ud, 0);
}

static void drain_loop(rd_session *s)
{
    unsigned long long next_live = rd_now_ns() + (unsigned long long)s->opts->live_ms * 1000000ull;
    for (unsigned idle = 0;; maybe_live(s, &next_live)) {
        int r = drain_once(s);
        if (r < 0) {
            s->truncated = 1;
            return;
        }
        if (r > 0) {
            idle = 0;
            continue;
        }
        /* acquire: pairs with the producer's release of DONE */
        if (atomic_load_explicit(&s->ring.hdr->prod_state, memory_order_acquire) ==
            LT_PROD_DONE) {
            if (drain_once(s) == 0)
                return;
            continue;
        }
        if (atomic_load_explicit(&s->conn_closed, memory_order_acquire)) {
            if (drain_once(s) == 0) {
                s->truncated = 1; /* gone without saying goodbye */
                return;
            }
            continue;
        }
        pause_drain(idle++);
    }
}

/* {======================================================================
 * Reports. Each is written on its own: one that fails is named in
 * session.json's error and the others are written all the same. */

/* A report file of the session directory (annotate/ is a directory). */
enum { R_PROFILE, R_FOLDED, R_FLAME, R_SPEEDSCOPE, R_CALLGRIND, R_PPROF, R_ANNOTATE,
       R_LCOV, R_LUACOV, R_COVTEXT, R_COBERTURA, R_HTML, R_COUNT };

/* What the report writers share: the session, the traced program's
 * working directory (relative sources are resolved against it), the
 * coverage (NULL if it could not be built: cov_err) and how each report
 * went (0 or a negative errno). */
typedef struct report_ctx {
    rd_session *s;
    const char *cwd;
    rd_cov *cov;
    int cov_err;
    int err[R_COUNT];
} report_ctx;

static int write_profile(FILE *f, void *ud)
{
    rd_session *s = ((report_ctx *)ud)->s;
    return rd_report_profile(&s->m, s->name, s->cmd, 0, f);
}

static int write_folded(FILE *f, void *ud)
{
    return rd_report_folded(&((report_ctx *)ud)->s->m, RD_W_TIME, f);
}

static int write_flame(FILE *f, void *ud)
{
    rd_session *s = ((report_ctx *)ud)->s;
    return rd_flame_write_svg(&s->m, s->name, f);
}

static int write_speedscope(FILE *f, void *ud)
{
    rd_session *s = ((report_ctx *)ud)->s;
    return rd_speedscope_write(&s->m, s->name, f);
}

static int write_callgrind(FILE *f, void *ud)
{
    const report_ctx *r = ud;
    return rd_callgrind_write(&r->s->m, r->s->cmd, r->cwd, f);
}

/* When tracing began, on the wall clock: now less the time since t0. */
static int64_t start_wall_ns(const rd_session *s)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    return now - (int64_t)(rd_now_ns() - s->t0);
}

static int write_pprof(FILE *f, void *ud)
{
    const report_ctx *r = ud;
    rd_pprof_info info = {r->s->cmd, r->cwd, start_wall_ns(r->s)};
    return rd_pprof_write(&r->s->m, &info, f);
}

static int write_lcov(FILE *f, void *ud)
{
    return rd_cov_write_lcov(((report_ctx *)ud)->cov, f);
}

static int write_luacov(FILE *f, void *ud)
{
    return rd_cov_write_luacov(((report_ctx *)ud)->cov, f);
}

static int write_covtext(FILE *f, void *ud)
{
    report_ctx *r = ud;
    return rd_cov_write_text(r->cov, r->s->name, f);
}

static int write_cobertura(FILE *f, void *ud)
{
    return rd_cov_write_cobertura(((report_ctx *)ud)->cov, "luatrace " RD_VERSION, rd_wall_ms(),
                                  f);
}

static int write_html(FILE *f, void *ud)
{
    report_ctx *r = ud;
    rd_session *s = r->s;
    rd_html_info info = {s->name, s->cmd, r->cwd, s->t1 - s->t0, r->cov, 0};
    return rd_html_write(&s->m, &info, f);
}

static const struct {
    const char *name;
    int (*write)(FILE *, void *); /* NULL: annotate/ */
    int cov;                      /* needs the coverage */
} report_files[R_COUNT] = {
    [R_PROFILE] = {"profile.txt", write_profile, 0},
    [R_FOLDED] = {"stacks.folded", write_folded, 0},
    [R_FLAME] = {"flamegraph.svg", write_flame, 0},
    [R_SPEEDSCOPE] = {"profile.speedscope.json", write_speedscope, 0},
    [R_CALLGRIND] = {"callgrind.out", write_callgrind, 0},
    [R_PPROF] = {"profile.pb.gz", write_pprof, 0},
    [R_ANNOTATE] = {"annotate/", NULL, 0},
    [R_LCOV] = {"coverage.lcov", write_lcov, 1},
    [R_LUACOV] = {"luacov.stats.out", write_luacov, 1},
    [R_COVTEXT] = {"coverage.txt", write_covtext, 1},
    [R_COBERTURA] = {"coverage.xml", write_cobertura, 1},
    /* report.html shows the same coverage: from the same model */
    [R_HTML] = {"report.html", write_html, 1},
};

static int write_report(report_ctx *r, int i)
{
    char dir[PATH_MAX + 16], err[256];
    if (report_files[i].cov && !r->cov)
        return r->cov_err;
    if (report_files[i].write)
        return rd_write_atomic(r->s->dir, report_files[i].name, report_files[i].write, r);
    snprintf(dir, sizeof dir, "%s/annotate", r->s->dir);
    return rd_report_annotate(&r->s->m, r->cov, r->cwd, dir, err, sizeof err);
}

/* Writes every report, or with retry only those that failed before. */
static void write_reports(report_ctx *r, int retry)
{
    for (int i = 0; i < R_COUNT; i++)
        if (!retry || r->err[i])
            r->err[i] = write_report(r, i);
}

static int no_space(int e)
{
    return e == -ENOSPC || e == -EDQUOT;
}

/* A cut trace.ltr holds space that reports short of it need: they are worth
 * more (they cover the whole run; the cut trace replays only its start). A
 * complete trace stays: every report can be rebuilt from it. Returns 1 if
 * the trace was removed. */
static int make_room(rd_session *s)
{
    if (!s->trace.err || s->trace.size < LT_FILE_HDR_SIZE || s->trace_removed)
        return 0;
    s->trace_removed = unlink(s->trace.path) == 0;
    return s->trace_removed;
}

/* {======================================================================
 * session.json, and its error. */

static void append(char *buf, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void append(char *buf, size_t cap, const char *fmt, ...)
{
    size_t n = strlen(buf);
    va_list ap;
    va_start(ap, fmt);
    if (n < cap)
        vsnprintf(buf + n, cap - n, fmt, ap);
    va_end(ap);
}

/* What became of trace.ltr, when it did not hold the whole trace. */
static void trace_error(const rd_session *s, char *buf, size_t cap)
{
    const rd_tracefile *t = &s->trace;
    if (!t->err)
        return;
    append(buf, cap, "trace.ltr: %s", strerror(-t->err));
    if (s->trace_removed)
        append(buf, cap, ": the partial trace was removed to make room for the reports");
    else if (t->size >= LT_FILE_HDR_SIZE)
        append(buf, cap, ": cut at its last complete record (%llu of %llu bytes of records)",
               (unsigned long long)t->raw, (unsigned long long)s->bytes);
}

/* "cannot write A, B: reason" for each reason, in the order of the reports;
 * session.json (failed: its errno, or 0) last. */
static void report_errors(const report_ctx *r, int failed, char *buf, size_t cap)
{
    int errs[R_COUNT + 1];
    memcpy(errs, r->err, sizeof r->err);
    errs[R_COUNT] = failed;
    for (int i = 0; i <= R_COUNT; i++) {
        if (!errs[i])
            continue;
        int e = errs[i];
        append(buf, cap, "%scannot write ", buf[0] ? "; " : "");
        for (int j = i, first = 1; j <= R_COUNT; j++) {
            if (errs[j] != e)
                continue;
            append(buf, cap, "%s%s", first ? "" : ", ",
                   j < R_COUNT ? report_files[j].name : "session.json");
            errs[j] = first = 0;
        }
        append(buf, cap, ": %s", strerror(-e));
    }
}

/* Sets s->err to session.json's error: the trace's, the session's own
 * problem (own), then the files that could not be written. */
static void compose_error(rd_session *s, const report_ctx *r, const char *own, int failed)
{
    char *buf = s->err;
    buf[0] = 0;
    trace_error(s, buf, sizeof s->err);
    if (own[0])
        append(buf, sizeof s->err, "%s%s", buf[0] ? "; " : "", own);
    report_errors(r, failed, buf, sizeof s->err);
}

/* session.json's trace: what trace.ltr holds. */
static const char *trace_state(const rd_session *s)
{
    if (s->opts->no_trace)
        return "none";
    if (!s->trace.err)
        return "complete";
    return s->trace_removed || s->trace.size < LT_FILE_HDR_SIZE ? "none" : "partial";
}

static int write_json(FILE *f, void *ud)
{
    const report_ctx *r = ud;
    rd_session *s = r->s;
    double ns = (double)s->m.ticks_total * rd_model_ns_per_tick(&s->m);
    fprintf(f, "{\n  \"session\": ");
    rd_json_str(f, s->name);
    fprintf(f, ",\n  \"status\": \"%s\",\n  \"pid\": %d,\n  \"command\": ",
            s->truncated ? "truncated" : "complete", (int)s->pid);
    rd_json_str(f, s->cmd);
    fprintf(f,
            ",\n  \"events\": %llu,\n  \"bytes\": %llu,\n  \"drops\": %llu,\n"
            "  \"traced_ns\": %.0f,\n  \"wall_ns\": %llu,\n  \"functions\": %u,\n"
            "  \"stacks\": %u,\n  \"unwinds\": %llu,\n  \"tail_calls\": %llu,\n"
            "  \"bad_records\": %llu,\n  \"cwd\": ",
            (unsigned long long)s->m.events, (unsigned long long)s->bytes,
            (unsigned long long)s->drops, ns, s->t1 - s->t0, s->m.nfunc - 1, rd_model_stacks(&s->m),
            (unsigned long long)s->st.unwinds, (unsigned long long)s->st.tails,
            (unsigned long long)s->st.bad);
    rd_json_str(f, r->cwd);
    fprintf(f, ",\n  \"trace\": \"%s\",\n  \"error\": ", trace_state(s));
    rd_json_str(f, s->err);
    fprintf(f, "\n}\n");
    return 0;
}

/* session.json, last; its error names what went wrong before. */
static void write_session_json(report_ctx *r, const char *own)
{
    rd_session *s = r->s;
    compose_error(s, r, own, 0);
    int e = rd_write_atomic(s->dir, "session.json", write_json, r);
    if (no_space(e) && make_room(s)) {
        compose_error(s, r, own, 0);
        e = rd_write_atomic(s->dir, "session.json", write_json, r);
    }
    if (e)
        compose_error(s, r, own, e); /* for the log and status */
}

/* {======================================================================
 * The end of a session. */

/* The traced process's working directory, read while it runs (its
 * sources are named relative to it); ours if it is gone already. */
static void program_cwd(pid_t pid, char *buf, size_t cap)
{
    char link[64];
    snprintf(link, sizeof link, "/proc/%d/cwd", (int)pid);
    ssize_t n = readlink(link, buf, cap - 1);
    if (n > 0 && buf[0] == '/') {
        buf[n] = 0;
        return;
    }
    if (!getcwd(buf, cap))
        snprintf(buf, cap, "/");
}

/* Every report, then session.json. When the disk is full, a trace it cut
 * is given up for the reports that did not fit, and they are tried again. */
static void write_all(rd_session *s, const char *cwd)
{
    char own[sizeof s->err];
    rd_cov cov;
    report_ctx r = {s, cwd, NULL, 0, {0}};
    snprintf(own, sizeof own, "%s", s->err);
    r.cov_err = rd_cov_init(&cov, NULL);
    if (!r.cov_err && !(r.cov_err = rd_cov_add_model(&cov, &s->m, cwd))) {
        cov.truncated = s->truncated != 0;
        rd_cov_finish(&cov);
        r.cov = &cov;
    }
    write_reports(&r, 0);
    int short_of_space = 0;
    for (int i = 0; i < R_COUNT; i++)
        short_of_space |= no_space(r.err[i]);
    if (short_of_space && make_room(s))
        write_reports(&r, 1);
    write_session_json(&r, own);
    rd_cov_free(&cov);
}

void rd_session_summary(const rd_model *m, const char *dir, FILE *out)
{
    fprintf(out, "\n");
    rd_report_profile(m, NULL, NULL, 20, out);
    fprintf(out, "\nreports: %s/\n", dir);
}

static void drainer(void *arg)
{
    rd_session *s = arg;
    char cwd[PATH_MAX];
    if (s->cwd[0])
        snprintf(cwd, sizeof cwd, "%s", s->cwd);
    else
        program_cwd(s->pid, cwd, sizeof cwd);
    if (!s->opts->no_files && !s->opts->no_trace)
        rd_tracefile_open(&s->trace, s->dir); /* an error is told with the reports' */
    rd_backends bk;
    char err[256] = "";
    if (rd_backends_open(&bk, s->backends, s->nbackends, &s->m, err, sizeof err)) {
        fprintf(stderr, "recorderd: session %s: %s\n", s->name, err); /* e.g. a lua: error */
        if (!s->err[0])
            snprintf(s->err, sizeof s->err, "%s", err); /* traced all the same, without them */
    }
    rd_backend_info info = {s->name, s->cmd, (long)s->pid, s->dir};
    rd_backends_info(&bk, &info);
    rd_backends_attach(&bk, &s->st);
    drain(s);
    rd_stack_finish(&s->st);
    if (rd_backends_finish(&bk, &s->m, s->dir, NULL, err, sizeof err) && !s->err[0])
        snprintf(s->err, sizeof s->err, "%s", err);
    rd_backends_close(&bk);
    s->st.ls = NULL;
    rd_tracefile_close(&s->trace);
    if (!s->ring_lost) {
        /* relaxed: a statistic */
        s->drops = atomic_load_explicit(&s->ring.hdr->drops, memory_order_relaxed);
        /* release: the producer may stop waiting for space */
        atomic_store_explicit(&s->ring.hdr->cons_state, LT_CONS_GONE, memory_order_release);
    }
    s->drops = s->st.dropped > s->drops ? s->st.dropped : s->drops;
    s->t1 = rd_now_ns();
    atomic_store_explicit(&s->stat_events, s->m.events, memory_order_relaxed);
    atomic_store_explicit(&s->stat_writing, 1, memory_order_relaxed);
    if (s->opts->live)
        s->opts->live(s, s->opts->live_ud, 1);
    if (!s->opts->no_files)
        write_all(s, cwd);
    if (s->summary)
        rd_session_summary(&s->m, s->dir, stderr);
    atomic_store_explicit(&s->done, 1, memory_order_release);
    uv_async_send(s->wake);
}

rd_session *rd_session_start(const rd_session_opts *opts, const char *shm, uid_t uid,
                             pid_t pid, const char *cmd, const char *cwd, uv_async_t *wake,
                             char *err, size_t cap)
{
    rd_session *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, cap, "out of memory");
        return NULL;
    }
    snprintf(s->name, sizeof s->name, "%s", shm);
    snprintf(s->cmd, sizeof s->cmd, "%s", cmd);
    snprintf(s->cwd, sizeof s->cwd, "%s", cwd && cwd[0] == '/' ? cwd : "");
    s->pid = pid;
    s->wake = wake;
    s->trace.fd = -1;
    s->summary = opts->summary;
    s->backends = opts->backends;
    s->nbackends = opts->nbackends;
    s->t0 = rd_now_ns();
    int e = lt_ring_open(&s->ring, shm, (long)uid);
    if (e) {
        snprintf(err, cap, "cannot open ring %s: %s", shm,
                 e == -EPROTO ? "not a luatrace ring of this version" : strerror(-e));
        goto fail;
    }
    s->opts = opts;
    if (!opts->no_files && make_dir(s, opts->out, err, cap))
        goto fail_ring;
    if (rd_model_init(&s->m) || rd_stack_init(&s->st, &s->m)) {
        snprintf(err, cap, "out of memory");
        goto fail_model;
    }
    if (uv_thread_create(&s->thread, drainer, s)) {
        snprintf(err, cap, "cannot start a drainer thread");
        goto fail_model;
    }
    /* Mapped and served: the name is no longer needed. Only on success, so
     * that a refused collector removes its own name itself. */
    lt_ring_unlink(shm);
    return s;
fail_model:
    rd_stack_free(&s->st);
    rd_model_free(&s->m);
    rmdir(s->dir);
fail_ring:
    lt_ring_close(&s->ring);
fail:
    free(s);
    return NULL;
}

void rd_session_conn_closed(rd_session *s)
{
    /* release: pairs with the drainer's acquire */
    atomic_store_explicit(&s->conn_closed, 1, memory_order_release);
}

void rd_session_free(rd_session *s)
{
    if (!s)
        return;
    uv_thread_join(&s->thread);
    rd_stack_free(&s->st);
    rd_model_free(&s->m);
    lt_ring_close(&s->ring);
    free(s);
}
