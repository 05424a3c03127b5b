/* fuzz_event: libFuzzer target for the record stream, as recorderd takes it
 * from a ring: arbitrary bytes through the decoder, the stack rebuilder and
 * the call tree (ended coroutines folded as soon as can be), then every
 * report writer over the model that results.
 * It also checks that the decoder finds the same records whether the bytes
 * arrive at once or a few at a time (a drainer sees the ring in pieces). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "lt_event.h"
#include "rd_replay.h"
#include "rd_flame.h"
#include "rd_pprof.h"
#include "rd_report.h"
#include "rd_speedscope.h"

static ssize_t sink_write(void *cookie, const char *buf, size_t n)
{
    (void)cookie;
    (void)buf;
    return (ssize_t)n;
}

/* A FILE that takes everything and keeps nothing: the writers run their
 * whole formatting path without touching the disk. Opened once per process. */
static FILE *sink(void)
{
    static FILE *f;
    if (!f) {
        cookie_io_functions_t io = {.write = sink_write};
        f = fopencookie(NULL, "w", io);
        if (!f)
            abort();
    }
    return f;
}

typedef struct scan {
    size_t off;  /* where decoding stopped */
    size_t nrec; /* records decoded before that */
    int bad;     /* stopped on a malformed record, not an incomplete one */
} scan;

/* Decodes p[0..n) with `step` more bytes visible at each round, as a
 * drainer reading a ring that fills while it reads. */
static scan scan_in_steps(const uint8_t *p, size_t n, size_t step)
{
    scan r = {0, 0, 0};
    size_t seen = 0;
    lt_event ev;
    lt_dec d = {0};
    char line[256];
    while (seen < n && !r.bad) {
        seen = n - seen > step ? seen + step : n;
        while (r.off < seen) {
            int k = lt_dec_next(&d, p + r.off, seen - r.off, &ev);
            if (k <= 0) {
                r.bad = k < 0;
                break;
            }
            if ((size_t)k > seen - r.off)
                abort(); /* the decoder used bytes it was not given */
            lt_event_format(&ev, line, sizeof line);
            r.off += (size_t)k;
            r.nrec++;
        }
    }
    return r;
}

static void check_steps(const uint8_t *p, size_t n)
{
    scan whole = scan_in_steps(p, n, n ? n : 1);
    scan parts = scan_in_steps(p, n, 1 + n % 13);
    if (whole.off != parts.off || whole.nrec != parts.nrec || whole.bad != parts.bad) {
        fprintf(stderr,
                "fuzz_event: decoder depends on chunking: whole %zu bytes %zu records bad %d, "
                "in steps of %zu: %zu bytes %zu records bad %d\n",
                whole.off, whole.nrec, whole.bad, 1 + n % 13, parts.off, parts.nrec, parts.bad);
        abort();
    }
}

static void write_reports(const rd_model *m)
{
    FILE *out = sink();
    rd_report_profile(m, "fuzz", "lua5.1 fuzz.lua", 0, 1, out);
    rd_report_profile(m, NULL, NULL, 20, 0, out);
    rd_report_folded(m, RD_W_TIME, out, NULL);
    rd_report_folded(m, RD_W_LINES, out, NULL);
    rd_report_folded(m, RD_W_CALLS, out, NULL);
    rd_flame_write_svg(m, "fuzz", out);
    rd_speedscope_write(m, "fuzz", out);
    rd_pb pb = {0};
    rd_pprof_encode(m, NULL, &pb);
    rd_pb_free(&pb);
    free(rd_report_fstats(m));
    fflush(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rd_model m;
    rd_stack s;
    char err[256];
    check_steps(data, size);
    if (rd_model_init(&m))
        return 0;
    m.keep_tracks = 1; /* fold ended coroutines at once: the fold's paths too */
    m.fold_min = 1;
    if (rd_stack_init(&s, &m)) {
        rd_model_free(&m);
        return 0;
    }
    rd_replay_feed(&s, data, size, err, sizeof err); /* stops at a bad record, like a session */
    rd_stack_finish(&s);
    write_reports(&m);
    rd_stack_free(&s);
    rd_model_free(&m);
    return 0;
}
