/* rd_http_pprof: the pprof endpoint's answers (rd_http_pprof.h). A profile
 * request is a job: a window onto a served session (rd_tap) closed by a
 * timer after N seconds, or a sampled session without files (rd_record)
 * that encodes its model when it ends. The job answers when its profile is
 * ready, or is dropped if its client leaves first. */
#include "rd_http_pprof.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rd_pprof.h"
#include "rd_record.h"
#include "rd_status.h"
#include "rd_tap.h"
#include "rd_util.h"

typedef struct pjob {
    rd_http_pprof *hp;
    rd_http_req *req; /* NULL once its client left */
    uv_timer_t timer; /* a tap's window */
    rd_tap *tap;
    struct sampler *smp; /* a window onto a process sampled from outside */
    long secs;
    int64_t wall0;
    struct pjob *next, **prevp;
} pjob;

static void sampler_release(struct sampler *m);

static int64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void job_freed(uv_handle_t *h)
{
    pjob *j = h->data;
    rd_tap_free(j->tap);
    free(j);
}

static void job_free(pjob *j)
{
    if ((*j->prevp = j->next))
        j->next->prevp = j->prevp;
    uv_close((uv_handle_t *)&j->timer, job_freed);
}

static pjob *job_new(rd_http_pprof *hp, rd_http_req *r)
{
    pjob *j = calloc(1, sizeof *j);
    if (!j)
        return NULL;
    j->hp = hp;
    j->req = r;
    j->wall0 = wall_ns();
    uv_timer_init(hp->srv->loop, &j->timer);
    j->timer.data = j;
    if ((j->next = hp->jobs))
        j->next->prevp = &j->next;
    hp->jobs = j;
    j->prevp = &hp->jobs;
    return j;
}

/* The answer: the profile, or why there is none. */
static void answer(pjob *j, const rd_pb *gz, int e, const char *msg)
{
    rd_http_req *r = j->req;
    j->req = NULL;
    if (!r)
        return;
    r->on_gone = NULL;
    if (!e && gz->n)
        rd_http_reply(r, 200, "application/octet-stream", gz->p, gz->n);
    else if (e == -EPERM)
        rd_http_error(r, 403, "%s", msg);
    else if (e == -EBUSY)
        rd_http_error(r, 409, "%s", msg);
    else if (e == -ESRCH || e == -ENOENT || e == -ENOEXEC)
        rd_http_error(r, 404, "%s", msg);
    else
        rd_http_error(r, 500, "%s", msg && *msg ? msg : e ? strerror(-e) : "no profile");
}

/* {====== served sessions: a tap */

static void on_window(uv_timer_t *t)
{
    pjob *j = t->data;
    rd_tap_end(j->tap);
}

static void on_tap_done(uv_async_t *a)
{
    rd_http_pprof *hp = a->data;
    for (pjob *j = hp->jobs, *next; j; j = next) {
        next = j->next;
        if (!j->tap || atomic_load(&j->tap->state) != RD_TAP_DONE)
            continue;
        uv_timer_stop(&j->timer);
        answer(j, &j->tap->gz, j->tap->err, j->tap->err ? strerror(-j->tap->err) : "");
        struct sampler *m = j->smp;
        j->smp = NULL;
        job_free(j);
        sampler_release(m);
    }
}

static void tap_gone(rd_http_req *r, void *ud)
{
    (void)r;
    pjob *j = ud;
    j->req = NULL;
    rd_tap_cancel(j->tap);
    job_free(j);
}

static void profile_session(rd_http_pprof *hp, rd_http_req *r, rd_session *s, long secs)
{
    pjob *j = job_new(hp, r);
    if (!j || !(j->tap = calloc(1, sizeof *j->tap))) {
        if (j)
            job_free(j);
        return rd_http_error(r, 500, "out of memory");
    }
    j->tap->wake = &hp->wake;
    j->tap->wall0 = j->wall0;
    rd_tap_add(s, j->tap);
    r->on_gone = tap_gone;
    r->gone_ud = j;
    uv_timer_start(&j->timer, on_window, (uint64_t)secs * 1000, 0);
}

/* }====== */

/* {====== untouched processes: one sampler a process, shared */

/* A process profiled from outside: a sampled session without files
 * (rd_record), for as long as a request wants it; each request is a
 * window onto it (a tap), as onto a served session. A second request for
 * the same process shares the sampler: one reader, whatever the number of
 * clients (two readers would each stop the process to find its state, and
 * the second be refused). A request that comes while its sampler ends
 * starts the next one. */
typedef struct sampler {
    rd_http_pprof *hp;
    rd_record_opts o;
    rd_recording *rec;
    rd_session *s; /* once sampling began */
    int quitting;  /* asked to end: takes no new window */
    struct sampler *next, **prevp;
} sampler;

static void tap_start(pjob *j, rd_session *s)
{
    if (!(j->tap = calloc(1, sizeof *j->tap))) {
        answer(j, NULL, -ENOMEM, "out of memory");
        return job_free(j);
    }
    j->tap->wake = &j->hp->wake;
    j->tap->wall0 = j->wall0 = wall_ns();
    rd_tap_add(s, j->tap);
    uv_timer_start(&j->timer, on_window, (uint64_t)j->secs * 1000, 0);
}

static int sampler_jobs(sampler *m)
{
    int n = 0;
    for (pjob *j = m->hp->jobs; j; j = j->next)
        n += j->smp == m;
    return n;
}

/* A window of m's ended (or was given up): with none left, m ends. */
static void sampler_release(sampler *m)
{
    if (m && !m->quitting && !sampler_jobs(m)) {
        m->quitting = 1;
        rd_record_quit(m->rec); /* sampler_end frees it */
    }
}

static void sampler_started(rd_session *s, void *ud)
{
    sampler *m = ud;
    m->s = s;
    for (pjob *j = m->hp->jobs, *next; j; j = next) {
        next = j->next;
        if (j->smp == m && !j->tap)
            tap_start(j, s);
    }
    sampler_release(m); /* every client may have left meanwhile */
}

/* The recording is over: its windows were ended with what they had (their
 * taps answer); a request still waiting for sampling to begin gets why it
 * never did. */
static void sampler_end(rd_recording *rec, void *ud)
{
    sampler *m = ud;
    char msg[1024];
    int e = rd_record_free(rec, msg, sizeof msg);
    if ((*m->prevp = m->next))
        m->next->prevp = m->prevp;
    for (pjob *j = m->hp->jobs, *next; j; j = next) {
        next = j->next;
        if (j->smp != m)
            continue;
        j->smp = NULL;
        if (j->tap)
            continue;
        answer(j, NULL, e ? e : -ESRCH, e || msg[0] ? msg : "no samples");
        job_free(j);
    }
    free(m);
}

static sampler *sampler_new(rd_http_pprof *hp, pid_t pid)
{
    sampler *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->hp = hp;
    m->o = (rd_record_opts){.pid = pid, .hz = RD_HTTP_HZ, .started = sampler_started};
    m->o.so = (rd_session_opts){.no_files = 1, .sample_hz = RD_HTTP_HZ};
    if (rd_record_start(&m->o, hp->srv->loop, sampler_end, m, &m->rec)) {
        free(m);
        return NULL;
    }
    if ((m->next = hp->samplers))
        m->next->prevp = &m->next;
    hp->samplers = m;
    m->prevp = &hp->samplers;
    return m;
}

static void outside_gone(rd_http_req *r, void *ud)
{
    (void)r;
    pjob *j = ud;
    sampler *m = j->smp;
    j->req = NULL;
    j->smp = NULL;
    if (j->tap)
        rd_tap_cancel(j->tap);
    job_free(j);
    if (m && m->s)
        sampler_release(m);
}

static void profile_outside(rd_http_pprof *hp, rd_http_req *r, pid_t pid, long secs)
{
    sampler *m = hp->samplers;
    while (m && (m->o.pid != pid || m->quitting))
        m = m->next;
    pjob *j = job_new(hp, r);
    if (!j || (!m && !(m = sampler_new(hp, pid)))) {
        if (j)
            job_free(j);
        return rd_http_error(r, 500, "out of memory");
    }
    j->smp = m;
    j->secs = secs;
    r->on_gone = outside_gone;
    r->gone_ud = j;
    if (m->s)
        tap_start(j, m->s);
}

/* }====== */

/* v as a whole number from min to max, or -1. */
static long whole(const char *v, long min, long max)
{
    char *end;
    errno = 0;
    long n = *v >= '0' && *v <= '9' ? strtol(v, &end, 10) : -1;
    return n >= 0 && !errno && !*end && n >= min && n <= max ? n : -1;
}

/* The value of key in query into buf: 1, or 0 if absent. */
static int param(const char *query, const char *key, char *buf, size_t cap)
{
    size_t k = strlen(key);
    for (const char *p = query; p && *p; p = strchr(p, '&') ? strchr(p, '&') + 1 : NULL) {
        if (strncmp(p, key, k) || (p[k] != '=' && p[k] != '&' && p[k]))
            continue;
        /* a key with no '=' is given with an empty value, as with one:
         * ?seconds&pid=N is refused as ?seconds=&pid=N is, not 30 s */
        const char *v = p + k + (p[k] == '='), *end = strchr(v, '&');
        size_t n = end ? (size_t)(end - v) : strlen(v);
        snprintf(buf, cap, "%.*s", (int)(n < cap ? n : cap - 1), v);
        return 1;
    }
    return 0;
}

/* 0 if pid is ours (its real, effective, saved and file uids are our
 * euid), -ESRCH if there is no such process, -EPERM if it is another
 * user's. */
static int owned(pid_t pid)
{
    char buf[4096];
    size_t n = rd_proc_read(pid, "status", buf, sizeof buf - 1);
    buf[n] = 0;
    const char *u = strstr(buf, "\nUid:");
    unsigned long id[4];
    if (!n || !u)
        return -ESRCH;
    if (sscanf(u + 5, "%lu %lu %lu %lu", &id[0], &id[1], &id[2], &id[3]) != 4)
        return -EPERM;
    for (int i = 0; i < 4; i++)
        if (id[i] != (unsigned long)geteuid())
            return -EPERM;
    return 0;
}

static rd_session *served(rd_server *srv, pid_t pid)
{
    for (rd_session *s = srv->sessions; s; s = s->next)
        if (s->pid == pid && !atomic_load(&s->done) && !atomic_load(&s->conn_closed))
            return s;
    return NULL;
}

static void on_profile(rd_http_pprof *hp, rd_http_req *r)
{
    char v[32];
    long secs = RD_HTTP_SECONDS_DEFAULT, pid;
    if (param(r->query, "seconds", v, sizeof v) &&
        (secs = whole(v, 1, RD_HTTP_SECONDS_MAX)) < 0)
        return rd_http_error(r, 400, "seconds: a whole number of seconds, 1 to %d",
                             RD_HTTP_SECONDS_MAX);
    if (!param(r->query, "pid", v, sizeof v))
        return rd_http_error(r, 400, "pid: give the process id (?seconds=N&pid=PID)");
    if ((pid = whole(v, 1, INT_MAX)) < 0)
        return rd_http_error(r, 400, "pid: not a process id");
    int e = owned((pid_t)pid);
    if (e == -ESRCH)
        return rd_http_error(r, 404, "no process %ld", pid);
    if (e)
        return rd_http_error(r, 403, "process %ld is another user's: refused", pid);
    rd_session *s = served(hp->srv, (pid_t)pid);
    if (s)
        profile_session(hp, r, s, secs);
    else
        profile_outside(hp, r, (pid_t)pid, secs);
}

static void on_sessions(rd_http_pprof *hp, rd_http_req *r)
{
    char *text = NULL, *json = NULL;
    size_t nt = 0, nj = 0;
    FILE *t = open_memstream(&text, &nt), *f = open_memstream(&json, &nj);
    if (t && f)
        rd_status_write(hp->srv, t, f);
    int bad = !t || !f || fclose(f);
    if (t)
        fclose(t);
    if (bad)
        rd_http_error(r, 500, "out of memory");
    else
        rd_http_reply(r, 200, "application/json", json, nj);
    free(text);
    free(json);
}

static void on_request(rd_http_req *r, void *ud)
{
    rd_http_pprof *hp = ud;
    if (!strcmp(r->path, "/debug/pprof/profile"))
        on_profile(hp, r);
    else if (!strcmp(r->path, "/sessions"))
        on_sessions(hp, r);
    else
        rd_http_error(r, 404, "not found: /debug/pprof/profile?seconds=N&pid=PID and "
                              "/sessions are served");
}

int rd_http_pprof_start(rd_http_pprof *hp, rd_server *srv, const char *spec,
                        unsigned timeout_ms, const char *token, char *err, size_t cap)
{
    memset(hp, 0, sizeof *hp);
    hp->srv = srv;
    int e = rd_http_listen(&hp->http, srv->loop, spec, timeout_ms, token, on_request, hp, err,
                           cap);
    if (e)
        return e;
    uv_async_init(srv->loop, &hp->wake, on_tap_done);
    hp->wake.data = hp;
    hp->open = 1;
    return 0;
}

void rd_http_pprof_close(rd_http_pprof *hp)
{
    if (!hp->open)
        return;
    hp->open = 0;
    rd_http_close(&hp->http); /* every waiting job hears of it (on_gone) */
    uv_close((uv_handle_t *)&hp->wake, NULL);
}
