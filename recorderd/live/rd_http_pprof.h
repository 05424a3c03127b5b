/* rd_http_pprof: what `recorderd listen --http` serves (rd_http carries the
 * requests): GET /debug/pprof/profile?seconds=N&pid=PID, a gzipped pprof
 * profile of the process over the next N seconds, from its trace when the
 * daemon serves it (rd_tap), else from samples read from outside
 * (rd_record); GET /sessions, `recorderd status --json`'s answer. Loop
 * thread. */
#ifndef RD_HTTP_PPROF_H
#define RD_HTTP_PPROF_H

#include "rd_http.h"
#include "rd_server.h"

enum { RD_HTTP_SECONDS_MAX = 300, RD_HTTP_SECONDS_DEFAULT = 30, RD_HTTP_HZ = 100 };

typedef struct rd_http_pprof {
    rd_server *srv;
    rd_http http;
    uv_async_t wake; /* a tap is done */
    struct pjob *jobs;
    struct sampler *samplers; /* processes sampled from outside, one each */
    int open;
} rd_http_pprof;

/* Serves on spec (rd_http_listen's) for srv, on srv's loop, each request
 * bounded by timeout_ms; token (or NULL) as rd_http_listen's. Returns 0,
 * or a negative errno with err. */
int rd_http_pprof_start(rd_http_pprof *hp, rd_server *srv, const char *spec,
                        unsigned timeout_ms, const char *token, char *err, size_t cap);

/* Stops serving: waiting profiles are given up, samplers stopped. */
void rd_http_pprof_close(rd_http_pprof *hp);

#endif
