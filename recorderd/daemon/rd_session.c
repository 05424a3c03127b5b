/* rd_session: draining one ring and writing one session's reports. */
#include "rd_session.h"

#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lt_file.h"
#include "rd_backend.h"
#include "rd_cov.h"
#include "rd_formats.h"
#include "rd_guard.h"
#include "rd_label.h"
#include "rd_outdir.h"
#include "rd_progress.h"
#include "rd_replay.h"
#include "rd_tap.h"
#include "rd_report.h"
#include "rd_util.h"

/* {======================================================================
 * The session directory, made under the out directory's descriptor
 * (rd_outdir: no path is followed twice). A session holds a lock (flock)
 * on its directory while it runs, so that another recorder knows it is
 * live. A directory of the same name left by an earlier run (unlocked, not
 * made by this recorder, a session's: is_session) is kept as NAME.prev,
 * replacing the one before (a session's too), and the session takes NAME:
 * reruns do not pile up. A name live elsewhere, used already by this
 * recorder (one command's processes never replace each other), or held by
 * anything but a session gives NAME.PID[.N]. */

/* The directories this recorder made, by name (loop thread only). */
static char **made;
static size_t nmade;

static int made_here(const char *leaf)
{
    for (size_t i = 0; i < nmade; i++)
        if (!strcmp(made[i], leaf))
            return 1;
    return 0;
}

static void remember(const char *leaf)
{
    char **m = realloc(made, (nmade + 1) * sizeof *m);
    if (m && (m[nmade] = strdup(leaf))) /* without memory: forgotten, a rerun may replace it */
        made = m, nmade++;
    else if (m)
        made = m;
}

/* fd, locked; or -EWOULDBLOCK (a live session holds it), fd closed. */
static int lock_fd(int fd)
{
    if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) < 0) {
        int e = -errno;
        close(fd);
        return e;
    }
    return fd < 0 ? -errno : fd;
}

/* Removes leaf under dfd and everything in it, following no symlink (a
 * session directory is two levels deep: annotate/). */
static int remove_tree(int dfd, const char *leaf, int depth)
{
    int fd = openat(dfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? 0 : unlinkat(dfd, leaf, 0) < 0 ? -errno : 0;
    DIR *d = depth < 8 ? fdopendir(fd) : NULL;
    if (!d) {
        close(fd);
        return -ELOOP;
    }
    int e = 0;
    for (struct dirent *de; !e && (de = readdir(d));)
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
            e = de->d_type == DT_DIR ? remove_tree(dirfd(d), de->d_name, depth + 1)
                : unlinkat(dirfd(d), de->d_name, 0) < 0 && errno != ENOENT ? -errno
                                                                           : 0;
    closedir(d);
    return e ? e : unlinkat(dfd, leaf, AT_REMOVEDIR) < 0 && errno != ENOENT ? -errno : 0;
}

/* Whether leaf under dfd is a session's directory (a session.json or a
 * trace.ltr in it, regular files): a directory of the user's that shares
 * the name (a script's package, app.lua beside app/, under -o .) is never
 * moved aside or removed. 0 also where leaf is missing. */
static int is_session(int dfd, const char *leaf)
{
    int fd = openat(dfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct stat st;
    int yes = (fstatat(fd, "session.json", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode)) ||
              (fstatat(fd, "trace.ltr", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode));
    close(fd);
    return yes;
}

/* Moves leaf (an earlier run's, its lock held in fd) to leaf.prev,
 * replacing that if it is a session's. Returns 0 or a negative errno
 * (-EEXIST: leaf.prev is something else). */
static int keep_previous(rd_session *s, const rd_session_opts *o, const char *leaf, int fd)
{
    char prev[sizeof s->name + 40];
    snprintf(prev, sizeof prev, "%s.prev", leaf);
    struct stat st;
    if (fstatat(o->out_fd, prev, &st, AT_SYMLINK_NOFOLLOW) == 0 && !is_session(o->out_fd, prev)) {
        close(fd);
        return -EEXIST;
    }
    int e = remove_tree(o->out_fd, prev, 0);
    if (!e && renameat(o->out_fd, leaf, o->out_fd, prev) < 0)
        e = -errno;
    close(fd);
    if (!e)
        snprintf(s->prev, sizeof s->prev, "%s/%s", o->out, prev);
    return e;
}

/* Makes leaf under the out directory, locked, as s->dirfd. Returns 0 or a
 * negative errno (-EEXIST: taken). */
static int claim(rd_session *s, const rd_session_opts *o, const char *leaf, int may_replace)
{
    int fd = rd_out_subdir(o->out_fd, leaf, 1);
    if (fd == -EEXIST) {
        if (!may_replace || made_here(leaf) || !is_session(o->out_fd, leaf))
            return -EEXIST;
        int old = lock_fd(openat(o->out_fd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (old < 0 || keep_previous(s, o, leaf, old))
            return -EEXIST; /* live, not a directory, or not ours to move */
        fd = rd_out_subdir(o->out_fd, leaf, 1);
    }
    if ((fd = lock_fd(fd)) < 0) {
        if (fd != -EEXIST)
            unlinkat(o->out_fd, leaf, AT_REMOVEDIR);
        return fd;
    }
    s->dirfd = fd;
    remember(leaf);
    return 0;
}

/* Picks out/<shm> (as said above), or out/<shm>.<pid>[.N]; creates it.
 * Choosing is one recorder at a time: they lock the out directory. */
static int make_dir(rd_session *s, const rd_session_opts *o, char *err, size_t cap)
{
    char leaf[sizeof s->name + 32];
    int e = -EEXIST;
    flock(o->out_fd, LOCK_EX);
    for (int i = 0; e == -EEXIST && i < 1000; i++) {
        if (i == 0)
            snprintf(leaf, sizeof leaf, "%s", s->name);
        else
            snprintf(leaf, sizeof leaf, "%s.%d%s%.0d", s->name, (int)s->pid, i > 1 ? "." : "",
                     i > 1 ? i : 0);
        e = claim(s, o, leaf, i == 0);
    }
    flock(o->out_fd, LOCK_UN);
    if (!e) { /* the session is named as its directory */
        snprintf(s->name, sizeof s->name, "%.*s", (int)sizeof s->name - 1, leaf);
        snprintf(s->dir, sizeof s->dir, "%s/%s", o->out, leaf);
        return 0;
    }
    snprintf(err, cap, "cannot create a session directory in %s: %s", o->out, strerror(-e));
    return e;
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

/* Whether s's producer writes no more: its process is gone (or a zombie),
 * or no longer maps the ring, as after an execve, where it lives on as
 * another program (a launcher script that execs its server: the records
 * after the last batch it published were lost, 245 calls of 1000). Its
 * connection closes while it exits, before it is a zombie: up to half a
 * second for that (a process that closed the connection and runs on
 * keeps its ring to itself). */
static int process_gone(const rd_session *s)
{
    char buf[512], st, shm[sizeof s->ring.name + 16];
    pid_t pid = s->pid;
    snprintf(shm, sizeof shm, "/dev/shm%s", s->ring.name);
    for (int i = 0; pid > 0 && i < 100; i++) {
        if (kill(pid, 0) < 0 && errno == ESRCH)
            return 1;
        rd_proc_read(pid, "stat", buf, sizeof buf);
        st = rd_proc_state(buf);
        if (st == 'Z' || st == 'X' || !rd_proc_maps(pid, shm))
            return 1;
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

/* A process gone without its STOP (killed by a signal): the records it
 * wrote but never published (it publishes every LT_RING_BATCH bytes),
 * from the ring's head up to the first fill byte (lt_ring_fill_ahead).
 * Only once it is gone: a live producer could be writing there. A short
 * program killed, or dead of SIGPIPE under `| head`, had no event. */
static void salvage(rd_session *s)
{
    uint64_t at = s->ring.pos;
    /* relaxed: the producer is gone, its stores are all there */
    uint64_t filled = atomic_load_explicit(&s->ring.hdr->filled, memory_order_relaxed);
    if (filled <= at || filled - at > s->ring.size || !process_gone(s))
        return;
    const uint8_t *p = s->ring.data + (at & s->ring.mask); /* mirrored */
    size_t n = (size_t)(filled - at), ok = 0;
    lt_dec d = s->st.dec;
    lt_event ev;
    int k;
    while (ok < n && p[ok] != LT_RING_FILL_BYTE && (k = lt_dec_next(&d, p + ok, n - ok, &ev)) > 0)
        ok += (size_t)k;
    char err[256];
    int64_t used = ok ? rd_replay_feed(&s->st, p, ok, err, sizeof err) : 0;
    if (used <= 0)
        return;
    rd_tracefile_write(&s->trace, p, (size_t)used);
    s->bytes += (uint64_t)used;
    s->unpublished = (uint64_t)used;
    lt_ring_consume(&s->ring, (uint64_t)used);
}

/* A producer of the same uid could shrink its shm object under us: the
 * drainer reads the ring only inside rd_guard_call, so the fault ends this
 * session, not the daemon. */
static void drain_loop(rd_session *s);

static int drain_guarded(void *ud)
{
    drain_loop(ud);
    return 0;
}

static void drain(rd_session *s)
{
    if (rd_guard_call(drain_guarded, s) == -EFAULT) {
        s->ring_lost = 1;
        s->truncated = 1;
        snprintf(s->err, sizeof s->err, "the ring shrank under recorderd (SIGBUS): session cut");
    }
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

/* On a stop, the ring's head then is where the session ends. Drained
 * until found empty, as after the process's end, a session whose process
 * traces on into a ring that is never full (so it never waits, nor sees
 * that the daemon stops) ended only by luck: under AddressSanitizer the
 * drainer, as fast as the program, drained for minutes after a SIGTERM
 * (http-traced: 'draining', 6 M events/s, 35 s on). */
static int stop_reached(rd_session *s, int *stopping, uint64_t *end)
{
    if (!*stopping) {
        /* acquire: pairs with the loop's release in rd_session_stop */
        if (!atomic_load_explicit(&s->stopping, memory_order_acquire))
            return 0;
        *stopping = 1;
        *end = atomic_load_explicit(&s->ring.hdr->head, memory_order_acquire);
    }
    return (int64_t)(s->ring.pos - *end) >= 0;
}

static void drain_loop(rd_session *s)
{
    unsigned long long next_live = rd_now_ns() + (unsigned long long)s->opts->live_ms * 1000000ull;
    int stopping = 0;
    uint64_t end = 0;
    for (unsigned idle = 0;; maybe_live(s, &next_live), rd_tap_poll(s, 0)) {
        uint64_t was = s->ring.pos;
        int r = drain_once(s);
        if (r < 0) {
            s->truncated = 1;
            return;
        }
        if (stop_reached(s, &stopping, &end)) {
            /* acquire: pairs with the producer's release of DONE; a
             * process done writes no more: the rest is bounded */
            if (atomic_load_explicit(&s->ring.hdr->prod_state, memory_order_acquire) !=
                LT_PROD_DONE)
                s->truncated = 1;
            else
                while ((r = drain_once(s)) > 0)
                    ;
            if (r < 0)
                s->truncated = 1;
            return;
        }
        if (r > 0) {
            /* a trickle (a sixteenth of the ring or less: lines by sample,
             * a quiet server) waits as an idle ring does, rather than wake
             * every 50 us on the program's other core; a flood goes on */
            idle = s->ring.pos - was > s->ring.size / 16 ? 0 : idle < 100 ? 100 : idle;
            if (s->drain_pause_us)
                usleep(s->drain_pause_us);
            if (!idle)
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
                salvage(s);
                return;
            }
            continue;
        }
        pause_drain(idle++);
    }
}

/* }====================================================================== */

/* {======================================================================
 * Reports. Each is written on its own: one that fails is named in
 * session.json's error and the others are written all the same. */

/* What the report writers share (rd_formats.h), the coverage's error when
 * it could not be built (rd_render.cov NULL), and how each report went (0
 * or a negative errno, by row of rd_formats). */
typedef struct report_ctx {
    rd_session *s;
    rd_render rr;
    int cov_err;
    int err[RD_FORMATS_MAX];
    uint32_t rows;        /* those to write: bit i for rd_formats[i] */
    rd_progress progress; /* on a terminal, when run prints its summary */
    unsigned done, total; /* reports written, and to write (session.json included) */
    char cut[512];        /* what a report left out at its bound (rd_render.cut), or "" */
} report_ctx;

/* The progress line before the report file, if one is due. */
static void show_progress(report_ctx *r, const char *file)
{
    double secs;
    if (!rd_progress_due(&r->progress, &secs))
        return;
    char line[256], name[64];
    snprintf(line, sizeof line, "recorderd: %s: writing %s (%u of %u), %.0f s",
             rd_printable(r->s->name, name, sizeof name), file, r->done + 1, r->total, secs);
    rd_progress_draw(&r->progress, line);
}

/* When tracing began, on the wall clock: now less the time since t0. */
static int64_t start_wall_ns(const rd_session *s)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    return now - (int64_t)(rd_now_ns() - s->t0);
}

/* 1 if report i is not written in this session. */
static int left_out(const report_ctx *r, unsigned i)
{
    const rd_format *f = &rd_formats[i];
    if (!f->file || !(r->rows & 1u << i))
        return 1; /* report only (none), or not asked for */
    return rd_format_left_out(f, &r->s->m) != NULL;
}

static int write_report(report_ctx *r, unsigned i)
{
    char err[256];
    const rd_format *f = &rd_formats[i];
    if (left_out(r, i))
        return 0;
    if ((f->flags & RD_FMT_COV) && !r->rr.cov)
        return r->cov_err;
    show_progress(r, f->file);
    r->done++;
    return rd_format_write_at(f, &r->rr, r->s->dirfd, r->s->dir, err, sizeof err);
}

/* report.html, the longest to write (it holds a flame graph and the
 * sources), on a thread of its own while this one writes the others: the
 * program has ended, so both CPUs are ours (luacheck: 70 ms of the 180
 * after its end). The writers only read the model and the coverage. */
typedef struct side_report {
    report_ctx r; /* a copy: its own current report, no progress line */
    unsigned i;
    int err;
} side_report;

static void side_main(void *arg)
{
    side_report *sr = arg;
    sr->err = write_report(&sr->r, sr->i);
}

/* The row of html when it and another report are to be written, else -1. */
static int side_row(const report_ctx *r)
{
    int html = -1, others = 0;
    for (unsigned i = 0; i < rd_nformats; i++)
        if (!left_out(r, i) && !strcmp(rd_formats[i].name, "html"))
            html = (int)i;
        else
            others += !left_out(r, i);
    return others ? html : -1;
}

/* Writes every report, or with retry only those that failed before. */
static void write_reports(report_ctx *r, int retry)
{
    side_report sr = {.r = *r, .i = 0, .err = 0};
    int side = retry ? -1 : side_row(r);
    uv_thread_t th;
    rd_progress_init(&sr.r.progress, 0);
    sr.i = (unsigned)side;
    side = side >= 0 && uv_thread_create(&th, side_main, &sr) == 0 ? side : -1;
    if (side >= 0) { /* its progress line first: it starts first */
        show_progress(r, rd_formats[side].file);
        r->done++;
    }
    for (unsigned i = 0; i < rd_nformats; i++)
        if ((!retry || r->err[i]) && (int)i != side)
            r->err[i] = write_report(r, i);
    if (side >= 0) {
        uv_thread_join(&th);
        r->err[side] = sr.err;
    }
}

static int no_space(int e)
{
    return e == -ENOSPC || e == -EDQUOT;
}

/* The reports a retry writes again: those that failed, but for a coverage
 * report whose coverage could not be built (it is not tried). The progress
 * line counts them on top of the first pass, so that "I of N" never passes
 * its N. */
static unsigned to_retry(const report_ctx *r)
{
    unsigned n = 0;
    for (unsigned i = 0; i < rd_nformats; i++)
        n += r->err[i] && !((rd_formats[i].flags & RD_FMT_COV) && !r->rr.cov);
    return n;
}

/* A cut trace.ltr holds space that reports short of it need: they are worth
 * more (they cover the whole run; the cut trace replays only its start). A
 * complete trace stays: every report can be rebuilt from it. Returns 1 if
 * the trace was removed. */
static int make_room(rd_session *s)
{
    if (!s->trace.err || s->trace.size < LT_FILE_HDR_SIZE || s->trace_removed)
        return 0;
    s->trace_removed = rd_tracefile_remove(&s->trace) == 0;
    return s->trace_removed;
}

/* }====================================================================== */

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
    int errs[RD_FORMATS_MAX + 1];
    unsigned n = rd_nformats;
    memcpy(errs, r->err, n * sizeof *errs);
    errs[n] = failed;
    for (unsigned i = 0; i <= n; i++) {
        if (!errs[i])
            continue;
        int e = errs[i];
        append(buf, cap, "%scannot write ", buf[0] ? "; " : "");
        for (unsigned j = i, first = 1; j <= n; j++) {
            if (errs[j] != e)
                continue;
            append(buf, cap, "%s%s", first ? "" : ", ",
                   j < n ? rd_formats[j].file : "session.json");
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
            ",\n  \"events\": %llu,\n  \"bytes\": %llu,\n  \"unpublished_bytes\": %llu,\n"
            "  \"drops\": %llu,\n  \"rehooked\": %llu,\n"
            "  \"traced_ns\": %.0f,\n  \"wall_ns\": %llu,\n  \"functions\": %u,\n"
            "  \"stacks\": %u,\n  \"unwinds\": %llu,\n  \"tail_calls\": %llu,\n"
            "  \"bad_records\": %llu,\n  \"cwd\": ",
            (unsigned long long)s->m.events, (unsigned long long)s->bytes,
            (unsigned long long)s->unpublished, (unsigned long long)s->drops,
            (unsigned long long)s->m.rehooked, ns, s->t1 - s->t0,
            s->m.nfunc - 1, rd_model_stacks(&s->m),
            (unsigned long long)s->st.unwinds, (unsigned long long)s->st.tails,
            (unsigned long long)s->st.bad);
    rd_json_str(f, r->rr.srcdir);
    fprintf(f, ",\n  \"trace\": \"%s\",\n  \"sampled_hz\": %u,\n  \"sampled_dropped\": %llu,\n"
               "  \"sampler\": \"%s\",\n  \"sample_clock\": \"%s\",\n  \"timing\": \"%s\",\n",
            trace_state(s), s->m.sampled_hz, (unsigned long long)s->m.sampled_dropped,
            !s->m.sampled_hz ? "none" : s->m.sampled_jit ? "luajit" : "outside",
            !s->m.sampled_hz ? "none" : s->m.sampled_cpu ? "cpu" : "wall",
            s->m.untimed ? "none" : "timed");
    /* what the calibration found each event costs beyond the hook's
     * measured time (scaled during the run by the HOOK records) */
    double npt = rd_model_ns_per_tick(&s->m);
    if (s->m.has_bias)
        fprintf(f, "  \"bias_ns\": {\"line\": %.1f, \"lua_call\": %.1f, \"c_call\": %.1f, "
                   "\"instruction\": %.2f, \"switch\": %.1f, \"line_step\": %.3f},\n",
                (double)s->m.bias_base[0] * npt, (double)s->m.bias_base[1] * npt,
                (double)s->m.bias_base[2] * npt, (double)s->m.bias_base[3] * npt / 16,
                (double)s->m.bias_switch * npt, (double)s->m.bias_step_base * npt / 16);
    else
        fprintf(f, "  \"bias_ns\": null,\n");
    fprintf(f, "  \"waited_ns\": %.0f,\n  \"ring_waited_ns\": %llu,\n",
            (double)s->m.waited_ticks * npt, (unsigned long long)s->ring_waited_ns);
    /* the time source: sampled (ticks of a timer's), exact or none */
    fprintf(f, "  \"time\": \"%s\",\n", rd_model_time_name(&s->m));
    /* every line counted (coverage), or lines by sample (a sampled session's too) */
    fprintf(f, "  \"lines\": \"%s\",\n", rd_model_lines_counted(&s->m) ? "exact" : "sample");
    if (s->m.tick_clock)
        fprintf(f, "  \"tick\": {\"clock\": \"%s\", \"period_ns\": %llu, \"ticks\": %llu, "
                   "\"samples\": %llu, \"hook_ticks\": %llu, \"ns\": %llu, "
                   "\"hook_ns\": %llu},\n",
                s->m.tick_clock == LT_CLOCK_WALL ? "wall" : "cpu",
                (unsigned long long)s->m.tick_ns, (unsigned long long)s->m.ticks_n,
                (unsigned long long)s->m.ticks_samples, (unsigned long long)s->m.ticks_hook,
                (unsigned long long)s->m.ticks_ns, (unsigned long long)s->m.ticks_hook_ns);
    else
        fprintf(f, "  \"tick\": null,\n");
    /* memory (run --memory): whether the trace has it, and its totals */
    fprintf(f, "  \"memory\": %s,\n", s->m.has_mem ? "true" : "false");
    if (s->m.has_mem) { /* as profile.txt's memory line */
        uint64_t live_b = 0, live_n = 0;
        for (uint32_t n = 0; n < s->m.mem.caprow; n++) {
            live_b += rd_mem_row(&s->m.mem, n)->live_b;
            live_n += rd_mem_row(&s->m.mem, n)->live_n;
        }
        fprintf(f, "  \"memory_records\": %llu,\n  \"memory_live_bytes\": %llu,\n"
                   "  \"memory_live_objects\": %llu,\n  \"memory_after_end\": %llu,\n",
                (unsigned long long)s->m.mem.records, (unsigned long long)live_b,
                (unsigned long long)live_n, (unsigned long long)s->m.mem.after_end);
    }
    fprintf(f, "  \"cut\": ");
    rd_json_str(f, r->cut);
    fprintf(f, ",\n  \"error\": ");
    rd_json_str(f, s->err);
    fprintf(f, "\n}\n");
    return 0;
}

/* session.json, last; its error names what went wrong before. */
static void write_session_json(report_ctx *r, const char *own)
{
    rd_session *s = r->s;
    compose_error(s, r, own, 0);
    show_progress(r, "session.json");
    int e = rd_out_write(s->dirfd, "session.json", write_json, r);
    if (no_space(e) && make_room(s)) {
        compose_error(s, r, own, 0);
        e = rd_out_write(s->dirfd, "session.json", write_json, r);
    }
    if (e)
        compose_error(s, r, own, e); /* for the log and status */
}

/* }====================================================================== */

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

/* The coverage, when a report asked for needs it (annotate/ makes its own
 * otherwise, the same). */
static void make_cov(report_ctx *r, rd_cov *cov, const char *cwd)
{
    const rd_cov_opts *co = &r->s->opts->cov;
    int filtered = co->ninclude || co->nexclude; /* html's and annotate's too */
    r->cov_err = rd_cov_init(cov, co);
    if (r->cov_err || (!filtered && !(r->rows & rd_format_rows(RD_FMT_COV))))
        return;
    if ((r->cov_err = rd_cov_add_model(cov, &r->s->m, cwd)))
        return;
    cov->truncated = r->s->truncated != 0;
    rd_cov_finish(cov);
    r->rr.cov = cov;
}

/* The coverage in one line for the summary, when coverage.lcov was
 * written: a --coverage run's summary listed calls only, and the figure
 * its user ran it for was in the files alone. */
static void say_coverage(rd_session *s, const report_ctx *r, const rd_cov *cov)
{
    s->cov_said[0] = 0;
    for (unsigned i = 0; i < rd_nformats; i++) {
        if (strcmp(rd_formats[i].name, "lcov") || left_out(r, i) || r->err[i] || !r->rr.cov)
            continue;
        rd_cov_total t = rd_cov_total_of(cov);
        snprintf(s->cov_said, sizeof s->cov_said,
                 "coverage: %llu of %llu lines (%.2f%%), %llu of %llu functions (%s)",
                 (unsigned long long)t.hit, (unsigned long long)t.lines,
                 t.lines ? 100.0 * (double)t.hit / (double)t.lines : 0.0,
                 (unsigned long long)t.fns_hit, (unsigned long long)t.fns, rd_formats[i].file);
    }
}

/* Every report asked for, then session.json. When the disk is full, a
 * trace it cut is given up for the reports that did not fit, and they are
 * tried again. */
static void write_all(rd_session *s, const char *cwd)
{
    char own[sizeof s->err];
    rd_cov cov;
    uint32_t rows = s->opts->formats ? s->opts->formats : rd_format_rows(RD_FMT_DEFAULT);
    report_ctx r = {.s = s, .rows = rows};
    r.rr = (rd_render){&s->m, NULL, s->name, s->cmd, cwd, s->t1 - s->t0, start_wall_ns(s),
                       s->truncated, RD_W_TIME, 1, r.cut, sizeof r.cut};
    snprintf(own, sizeof own, "%s", s->err);
    rd_progress_init(&r.progress, s->opts->summary);
    r.total = 1; /* session.json */
    for (unsigned i = 0; i < rd_nformats; i++)
        r.total += !left_out(&r, i);
    make_cov(&r, &cov, cwd);
    write_reports(&r, 0);
    int short_of_space = 0;
    for (unsigned i = 0; i < rd_nformats; i++)
        short_of_space |= no_space(r.err[i]);
    if (short_of_space && make_room(s)) {
        r.total += to_retry(&r);
        write_reports(&r, 1);
    }
    write_session_json(&r, own);
    rd_progress_clear(&r.progress);
    say_coverage(s, &r, &cov);
    if (r.cut[0]) { /* with --quiet too: a report is not what it seems */
        char shown[sizeof r.cut + 128];
        fprintf(stderr, "luatrace: %s: %s\n", rd_printable(s->name, shown, sizeof shown), r.cut);
    }
    rd_cov_free(&cov);
}

/* Prints the summary of a finished model (rd_report_summary), whether
 * its trace ended early, and where the previous run's reports went (prev:
 * NULL or "" for none). */
static void rd_session_summary(const rd_model *m, const char *dir, const char *prev,
                               int cut_short, const char *cov, FILE *out)
{
    rd_report_summary(m, dir, out);
    if (cov[0])
        fprintf(out, "%s\n", cov);
    if (cut_short)
        fprintf(out, "luatrace: %s\n", RD_REPORT_CUT_SHORT);
    char shown[PATH_MAX];
    if (prev && prev[0])
        fprintf(out, "previous run: %s/\n", rd_printable(prev, shown, sizeof shown));
}

/* When the program waited for room in the ring for over a tenth of the
 * session, why it was slow and what to do: recorderd did not keep up
 * (two busy CPUs, a program making events faster than one core drains). */
static void waited_note(const rd_session *s, FILE *out)
{
    uint64_t wall = s->t1 - s->t0;
    if (!wall || s->ring_waited_ns * 10 < wall)
        return;
    fprintf(out, "luatrace: the program waited %.2f s of its %.2f s for recorderd to make room "
                 "in the ring: recorderd could not keep up (no free CPU for it?); give it a "
                 "free core, a bigger ring (--ring 64M), or trace with no clock (--coverage)\n",
            (double)s->ring_waited_ns / 1e9, (double)wall / 1e9);
}

/* The drops the producer counted, and tells it we are gone. */
static int ring_goodbye(void *ud)
{
    rd_session *s = ud;
    /* relaxed: a statistic */
    s->drops = atomic_load_explicit(&s->ring.hdr->drops, memory_order_relaxed);
    s->ring_waited_ns = atomic_load_explicit(&s->ring.hdr->waited_ns, memory_order_relaxed);
    /* release: the producer may stop waiting for space */
    atomic_store_explicit(&s->ring.hdr->cons_state, LT_CONS_GONE, memory_order_release);
    return 0;
}

static void drainer(void *arg)
{
    rd_session *s = arg;
    char cwd[PATH_MAX];
    if (s->cwd[0])
        snprintf(cwd, sizeof cwd, "%s", s->cwd);
    else
        program_cwd(s->pid, cwd, sizeof cwd);
    rd_label_set_cwd(&s->m, cwd); /* out of memory: labels show whole paths */
    if (!s->opts->no_files && !s->opts->no_trace)
        rd_tracefile_open(&s->trace, s->dirfd, s->dir); /* an error is told with the reports' */
    if (s->opts->memory)
        rd_tracefile_memory(&s->trace);
    rd_backends bk;
    char err[256] = "";
    if (rd_backends_open(&bk, s->backends, s->nbackends, &s->m, err, sizeof err)) {
        char shown[sizeof err]; /* e.g. a lua: error, which may quote names */
        fprintf(stderr, "recorderd: session %s: %s\n", s->name,
                rd_printable(err, shown, sizeof shown));
        if (!s->err[0])
            snprintf(s->err, sizeof s->err, "%s", err); /* traced all the same, without them */
    }
    rd_backend_info info = {s->name, s->cmd, (long)s->pid, s->dir, s->dirfd};
    rd_backends_info(&bk, &info);
    rd_backends_attach(&bk, &s->st);
    drain(s);
    rd_stack_finish(&s->st);
    rd_tap_poll(s, 1); /* the windows still open end here */
    if (rd_backends_finish(&bk, &s->m, s->dir, NULL, err, sizeof err) && !s->err[0])
        snprintf(s->err, sizeof s->err, "%s", err);
    rd_backends_close(&bk);
    s->st.ls = NULL;
    rd_tracefile_close(&s->trace);
    /* The ring may be gone by now (shrunk once drained): then the drops
     * are the last ones the drainer read. */
    s->drops = atomic_load_explicit(&s->stat_drops, memory_order_relaxed);
    if (!s->ring_lost && rd_guard_call(ring_goodbye, s) == -EFAULT)
        s->ring_lost = 1;
    s->drops = s->st.dropped > s->drops ? s->st.dropped : s->drops;
    s->t1 = rd_now_ns();
    atomic_store_explicit(&s->stat_events, s->m.events, memory_order_relaxed);
    atomic_store_explicit(&s->stat_writing, 1, memory_order_relaxed);
    if (s->opts->live)
        s->opts->live(s, s->opts->live_ud, 1);
    if (!s->opts->no_files)
        write_all(s, cwd);
    if (s->summary) {
        rd_session_summary(&s->m, s->dir, s->prev, s->truncated, s->cov_said, stderr);
        waited_note(s, stderr);
    }
    atomic_store_explicit(&s->done, 1, memory_order_release);
    uv_async_send(s->wake);
}

typedef struct open_args {
    rd_session *s;
    const char *shm;
    uid_t uid;
} open_args;

static int open_guarded(void *ud)
{
    open_args *a = ud;
    return lt_ring_open(&a->s->ring, a->shm, (long)a->uid);
}

/* lt_ring_open reads the header: a producer may shrink the object between
 * its size check and that read. */
static int open_ring(rd_session *s, const char *shm, uid_t uid)
{
    open_args a = {s, shm, uid};
    int e = rd_guard_call(open_guarded, &a);
    if (e == -EFAULT) {
        lt_ring_close(&s->ring);
        e = -EPROTO;
    }
    return e;
}

rd_session *rd_session_start(const rd_session_opts *opts, const char *shm, uid_t uid,
                             pid_t pid, const char *cmd, const char *cwd, unsigned sample_hz,
                             uv_async_t *wake, char *err, size_t cap)
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
    s->dirfd = -1;
    s->summary = opts->summary;
    s->backends = opts->backends;
    s->nbackends = opts->nbackends;
    s->t0 = rd_now_ns();
    int e = open_ring(s, shm, uid);
    if (e) {
        snprintf(err, cap, "cannot open ring %s: %s", shm,
                 e == -EPROTO ? "not a luatrace ring of this version" : strerror(-e));
        goto fail;
    }
    s->opts = opts;
    const char *pause = getenv("LUATRACE_TEST_DRAIN_PAUSE_US"); /* tests only */
    s->drain_pause_us = pause ? (unsigned)strtoul(pause, NULL, 10) : 0;
    if (!opts->no_files && make_dir(s, opts, err, cap))
        goto fail_ring;
    if (rd_model_init(&s->m) || rd_stack_init(&s->st, &s->m)) {
        snprintf(err, cap, "out of memory");
        goto fail_model;
    }
    s->m.sampled_hz = sample_hz ? sample_hz : opts->sample_hz;
    s->m.sampled_jit = sample_hz != 0;
    s->m.sampled_cpu = sample_hz != 0 || opts->sample_cpu; /* LuaJIT's profiler counts CPU time */
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
    if (s->dirfd >= 0) {
        close(s->dirfd);
        unlinkat(opts->out_fd, s->name, AT_REMOVEDIR);
    }
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

void rd_session_stop(rd_session *s)
{
    /* release: pairs with the drainer's acquire */
    atomic_store_explicit(&s->stopping, 1, memory_order_release);
    rd_session_conn_closed(s);
}

void rd_session_free(rd_session *s)
{
    if (!s)
        return;
    uv_thread_join(&s->thread);
    rd_tap_poll(s, 1); /* a tap added after the drainer's last look */
    rd_stack_free(&s->st);
    rd_model_free(&s->m);
    lt_ring_close(&s->ring);
    if (s->dirfd >= 0)
        close(s->dirfd);
    free(s);
#ifdef __GLIBC__
    /* a session's model is tens of MB, freed here: the free pages inside
     * glibc's arenas go back too (rd_session_malloc_opts: their tops) */
    malloc_trim(0);
#endif
}

void rd_session_malloc_opts(void)
{
#ifdef __GLIBC__
    /* fixed thresholds, as glibc's dynamic ones grow to 32 MB (mmap) and
     * 64 MB (trim) after one big block, and each drainer thread's arena
     * then keeps that much free at its top for good (malloc_trim leaves
     * the top of a thread's arena alone): 70 MB resident after 4 sessions
     * of luacheck over Penlight, 9.5 MB with these */
    mallopt(M_MMAP_THRESHOLD, 4 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 20);
#endif
}

/* }====================================================================== */
