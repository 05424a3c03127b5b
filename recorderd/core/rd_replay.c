/* rd_replay: decode loop and trace-file reading. */
#include "rd_replay.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lt_file.h"
#include "rd_progress.h"
#include "rd_tracein.h"

/* RD_MEM_PER_BYTE, or LUATRACE_MEM_PER_BYTE's figure (tests lower it).
 * Read each time (once per 64 KiB of records): sessions replay on
 * several threads, and nothing sets it while recorderd runs. */
static unsigned per_byte(void)
{
    const char *e = getenv("LUATRACE_MEM_PER_BYTE");
    long v = e ? strtol(e, NULL, 10) : 0;
    return v > 0 && v <= 1 << 20 ? (unsigned)v : RD_MEM_PER_BYTE;
}

/* The memory bound (rd_replay.h): 0, or -E2BIG with err. */
static int within_bound(const rd_stack *s, char *err, size_t cap)
{
    uint64_t held = rd_model_bytes(s->m) + rd_stack_bytes(s);
    if (held <= RD_MEM_FLOOR + per_byte() * s->fed)
        return 0;
    snprintf(err, cap,
             "the trace would need more memory than its size allows: %llu MiB for %llu KiB of "
             "records, over the limit of %llu MiB + %u bytes per byte of trace (a forged or "
             "corrupt trace)",
             (unsigned long long)(held >> 20), (unsigned long long)(s->fed >> 10),
             RD_MEM_FLOOR >> 20, per_byte());
    return -E2BIG;
}

/* rd_stack_feed, 64 KiB at a time, the memory bound checked after each
 * (a ring hands over up to 1 GiB at once); a malformed record's offset in
 * p goes to *at. */
static int64_t feed(rd_stack *s, const uint8_t *p, size_t n, size_t *at, char *err, size_t cap)
{
    size_t off = 0;
    for (;;) {
        size_t part = n - off < (64u << 10) ? n - off : (64u << 10), used = 0;
        int64_t k = rd_stack_feed(s, p + off, part, &used);
        *at = off + used;
        if (k == -E2BIG)
            snprintf(err, cap,
                     "a stack of more than %u frames, deeper than any Lua allows (a forged or "
                     "corrupt trace)",
                     RD_DEPTH_MAX);
        else if (k < 0 && k != -EPROTO)
            snprintf(err, cap, "out of memory");
        if (k < 0)
            return k;
        off += (size_t)k;
        s->fed += (uint64_t)k;
        int e = within_bound(s, err, cap);
        if (e)
            return e;
        /* a record cut by the 64 KiB is read whole by the next part */
        if (k == 0 || off == n || ((size_t)k < part && off + part - (size_t)k == n))
            return (int64_t)off;
    }
}

int64_t rd_replay_feed(rd_stack *s, const uint8_t *p, size_t n, char *err, size_t cap)
{
    size_t at;
    int64_t k = feed(s, p, n, &at, err, cap);
    if (k == -EPROTO)
        snprintf(err, cap, "malformed record at byte %zu of this chunk (0x%02x)", at, p[at]);
    return k;
}

/* {======================================================================
 * Progress on a terminal (rd_progress.h). */

typedef struct progress {
    rd_progress line;
    uint64_t size; /* of the file, bytes */
} progress;

static void progress_init(progress *p, int want, FILE *f)
{
    struct stat st;
    rd_progress_init(&p->line, want && fstat(fileno(f), &st) == 0);
    p->size = p->line.on && st.st_size > 0 ? (uint64_t)st.st_size : 0;
}

/* Redraws the line if the interval has passed; done = bytes read. */
static void progress_show(progress *p, const rd_model *m, uint64_t done)
{
    double secs;
    if (!rd_progress_due(&p->line, &secs))
        return;
    double rate = secs > 0 ? (double)m->events / secs : 0;
    double pct = p->size ? 100.0 * (double)done / (double)p->size : 100.0;
    double left = done && p->size > done ? secs * (double)(p->size - done) / (double)done : 0;
    char line[160];
    snprintf(line, sizeof line,
             "recorderd: replaying: %llu events, %.1f M events/s, %.0f%% read, %.0f s left",
             (unsigned long long)m->events, rate / 1e6, pct, left);
    rd_progress_draw(&p->line, line);
}

static void progress_clear(progress *p)
{
    rd_progress_clear(&p->line);
}

/* The warning for a trace that ended early, if it did: after the loop. */
static void end_warning(const rd_stack *s, const rd_tracein *in, size_t have, char *err,
                        size_t cap)
{
    if (have)
        snprintf(err, cap, "trace ends inside a record (%zu bytes left): truncated", have);
    /* every trace ends with STOP (troff, exit, lua_close): without one the
     * process died while tracing, or the recorder writing the file did
     * (recorderd run killed), or the file was cut */
    else if (!s->stopped)
        snprintf(err, cap, "no end record: truncated (the traced process or its recorder was "
                           "killed while tracing, or the file was cut)");
    else if (rd_tracein_cut(in)) /* all the records, not the frame's end */
        snprintf(err, cap, "trace ends inside a compressed frame: truncated");
}

static void malformed(const rd_tracein *in, uint64_t off, uint8_t byte, char *err, size_t cap)
{
    if (rd_tracein_compressed(in))
        snprintf(err, cap, "malformed record at byte %llu of the decompressed records (0x%02x)",
                 (unsigned long long)off, byte);
    else
        snprintf(err, cap, "malformed record at byte %llu of the file (0x%02x)",
                 (unsigned long long)(LT_FILE_HDR_SIZE + off), byte);
}

int rd_replay_path(const char *path, rd_stack *s, int want_progress, char *err, size_t cap)
{
    err[0] = 0;
    rd_tracein in;
    int e = rd_tracein_open(&in, path, err, cap);
    if (e == -ENOENT)
        return e;
    progress pr;
    progress_init(&pr, !e && want_progress, in.f);
    uint64_t done = 0; /* bytes of records read */
    size_t bufcap = 1u << 20, have = 0;
    uint8_t *buf = e ? NULL : malloc(bufcap);
    if (!e && !buf)
        e = -ENOMEM;
    while (!e) {
        /* at most 256 KiB at a time: the progress line moves on big files */
        size_t want = bufcap - have < (256u << 10) ? bufcap - have : (256u << 10);
        int64_t k = rd_tracein_read(&in, buf + have, want, err, cap);
        if (k < 0) {
            e = (int)k;
            break;
        }
        have += (size_t)k;
        done += (uint64_t)k;
        size_t at;
        int64_t used = feed(s, buf, have, &at, err, cap);
        if (used == -EPROTO) /* buf[0] is at done - have in the records */
            malformed(&in, done - have + at, buf[at], err, cap);
        if (used < 0) {
            e = (int)used;
            break;
        }
        memmove(buf, buf + used, have - (size_t)used);
        have -= (size_t)used;
        progress_show(&pr, s->m, in.pos);
        if (k == 0) {
            end_warning(s, &in, have, err, cap);
            break;
        }
    }
    free(buf);
    rd_tracein_close(&in);
    progress_clear(&pr);
    rd_stack_finish(s);
    /* corrupt after the records read (a bad zstd block, junk after the
     * last frame, a malformed record): those stand, as a cut trace's do */
    return e == -EPROTO && s->fed ? RD_REPLAY_CORRUPT : e;
}

/* }====================================================================== */
