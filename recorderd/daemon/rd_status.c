/* rd_status: what a daemon is serving, for people and for programs. */
#include "rd_status.h"

#include <stdatomic.h>

#include "rd_util.h"

typedef struct srow {
    const char *state;
    unsigned long long events, drops;
    double secs, rate, fill;
} srow;

static srow row_of(const rd_session *s, unsigned long long now)
{
    rd_session *m = (rd_session *)s; /* atomics are read only */
    srow r;
    /* relaxed: statistics, written by the drainer */
    r.events = atomic_load_explicit(&m->stat_events, memory_order_relaxed);
    r.drops = atomic_load_explicit(&m->stat_drops, memory_order_relaxed);
    r.fill = s->ring.size ? (double)atomic_load_explicit(&m->stat_fill, memory_order_relaxed) /
                                (double)s->ring.size
                          : 0.0;
    r.state = atomic_load_explicit(&m->stat_writing, memory_order_relaxed) ? "writing"
              : atomic_load_explicit(&m->conn_closed, memory_order_relaxed) ? "draining"
                                                                             : "tracing";
    r.secs = (double)(now - s->t0) / 1e9;
    r.rate = r.secs > 0 ? (double)r.events / r.secs : 0.0;
    return r;
}

static void text_row(FILE *f, const rd_session *s, const srow *r)
{
    char cmd[4096], name[sizeof s->name];
    fprintf(f, "%-24s %7d %-9s %12llu %10.0f %6.1f %8llu %9.1f  %s\n",
            rd_printable(s->name, name, sizeof name), (int)s->pid,
            r->state, r->events, r->rate, 100.0 * r->fill, r->drops, r->secs,
            rd_printable(s->cmd, cmd, sizeof cmd));
}

static void json_row(FILE *f, const rd_session *s, const srow *r, int first)
{
    fprintf(f, "%s\n    {\"session\": ", first ? "" : ",");
    rd_json_str(f, s->name);
    fprintf(f, ", \"dir\": ");
    rd_json_str(f, s->dir);
    fprintf(f, ", \"pid\": %d, \"command\": ", (int)s->pid);
    rd_json_str(f, s->cmd);
    fprintf(f,
            ", \"state\": \"%s\", \"events\": %llu, \"events_per_s\": %.0f, "
            "\"ring_fill\": %.4f, \"drops\": %llu, \"duration_s\": %.3f}",
            r->state, r->events, r->rate, r->fill, r->drops, r->secs);
}

void rd_status_write(const rd_server *srv, FILE *text, FILE *json)
{
    unsigned long long now = rd_now_ns();
    unsigned n = 0;
    for (const rd_session *s = srv->sessions; s; s = s->next)
        n++;
    char path[sizeof srv->path], out[PATH_MAX], e[sizeof srv->errors[0]];
    fprintf(text, "recorderd on %s: %u session%s, reports in %s/\n",
            rd_printable(srv->path, path, sizeof path), n, n == 1 ? "" : "s",
            rd_printable(srv->opts.out, out, sizeof out));
    if (srv->nofd || srv->nidle)
        fprintf(text, "connections refused out of file descriptors: %u, closed without a "
                      "message: %u\n", srv->nofd, srv->nidle);
    if (n)
        fprintf(text, "%-24s %7s %-9s %12s %10s %6s %8s %9s  %s\n", "SESSION", "PID", "STATE",
                "EVENTS", "EVENTS/S", "RING%", "DROPS", "SECONDS", "COMMAND");
    fprintf(json, "{\n  \"socket\": ");
    rd_json_str(json, srv->path);
    fprintf(json, ",\n  \"out\": ");
    rd_json_str(json, srv->opts.out);
    fprintf(json, ",\n  \"refused_no_fd\": %u,\n  \"closed_no_hello\": %u", srv->nofd,
            srv->nidle);
    fprintf(json, ",\n  \"sessions\": [");
    int first = 1;
    for (const rd_session *s = srv->sessions; s; s = s->next) {
        srow r = row_of(s, now);
        text_row(text, s, &r);
        json_row(json, s, &r, first);
        first = 0;
    }
    fprintf(json, "%s],\n  \"errors\": [", first ? "" : "\n  ");
    unsigned k = srv->nerrors < RD_SERVER_ERRORS ? srv->nerrors : RD_SERVER_ERRORS;
    if (k)
        fprintf(text, "latest problems (%u in all):\n", srv->nerrors);
    for (unsigned i = 0; i < k; i++) {
        const char *raw = srv->errors[(srv->nerrors - k + i) % RD_SERVER_ERRORS];
        fprintf(text, "  %s\n", rd_printable(raw, e, sizeof e));
        fprintf(json, "%s\n    ", i ? "," : "");
        rd_json_str(json, raw);
    }
    fprintf(json, "%s]\n}\n", k ? "\n  " : "");
}
