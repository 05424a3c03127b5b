/* rd_timeline: per-coroutine event lists in a temporary file (see
 * rd_timeline.h). A block on file is [next offset u64][length u32][records];
 * a record is varint(fid << 4 | how << 1 | leave), varint(dt ticks). */
#include "rd_timeline.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rd_outdir.h"
#include "rd_util.h"

#define BLOCK_HDR 12
#define BUF_MIN 256
#define BUF_MAX 16384
#define REC_MAX 20 /* two varints */

int rd_timeline_init(rd_timeline *tl, const rd_backend_info *const *info)
{
    memset(tl, 0, sizeof *tl);
    tl->info = info;
    tl->fd = -1;
    tl->capix = 16;
    tl->ix = calloc(tl->capix, sizeof *tl->ix);
    return tl->ix ? 0 : -ENOMEM;
}

void rd_timeline_free(rd_timeline *tl)
{
    for (uint32_t k = 0; k < tl->ntr; k++) {
        free(tl->tr[k].open);
        free(tl->tr[k].buf);
    }
    free(tl->tr);
    free(tl->ix);
    if (tl->fd >= 0)
        close(tl->fd);
    tl->fd = -1;
}

/* {====================================================================
 * live thread id -> track (tracks of dead coroutines are not in it) */

static uint32_t *ix_slot(rd_timeline *tl, uint64_t id)
{
    uint32_t mask = tl->capix - 1, i = rd_model_hash_id(id) & mask;
    while (tl->ix[i] && tl->tr[tl->ix[i] - 1].thread != id)
        i = (i + 1) & mask;
    return &tl->ix[i];
}

static int ix_grow(rd_timeline *tl)
{
    uint32_t *old = tl->ix, oldcap = tl->capix;
    tl->ix = calloc(oldcap * 2, sizeof *tl->ix);
    if (!tl->ix) {
        tl->ix = old;
        return -ENOMEM;
    }
    tl->capix = oldcap * 2;
    for (uint32_t i = 0; i < oldcap; i++)
        if (old[i])
            *ix_slot(tl, tl->tr[old[i] - 1].thread) = old[i];
    free(old);
    return 0;
}

/* Backward-shift deletion keeps probe chains intact without tombstones. */
static void ix_remove(rd_timeline *tl, uint64_t id)
{
    uint32_t mask = tl->capix - 1, *p = ix_slot(tl, id);
    if (!*p)
        return;
    uint32_t i = (uint32_t)(p - tl->ix);
    tl->ix[i] = 0;
    tl->nix--;
    for (uint32_t j = (i + 1) & mask; tl->ix[j]; j = (j + 1) & mask) {
        uint32_t home = rd_model_hash_id(tl->tr[tl->ix[j] - 1].thread) & mask;
        if (((j - home) & mask) >= ((j - i) & mask)) {
            tl->ix[i] = tl->ix[j];
            tl->ix[j] = 0;
            i = j;
        }
    }
}

/* The live track of thread id, made on first use. NULL: out of memory. */
static rd_tl_track *track_of(rd_timeline *tl, uint64_t id)
{
    if (tl->cur && tl->tr[tl->cur - 1].thread == id && !tl->tr[tl->cur - 1].ended)
        return &tl->tr[tl->cur - 1];
    if ((tl->nix + 1) * 2 > tl->capix && ix_grow(tl))
        return NULL;
    uint32_t *p = ix_slot(tl, id);
    if (!*p) {
        if (rd_grow((void **)&tl->tr, &tl->captr, tl->ntr, sizeof *tl->tr))
            return NULL;
        tl->tr[tl->ntr] = (rd_tl_track){.thread = id, .head = -1, .tail = -1};
        *p = ++tl->ntr;
        tl->nix++;
    }
    tl->cur = *p;
    return &tl->tr[*p - 1];
}

/* }==================================================================== */

/* {====================================================================
 * blocks */

static int open_file(rd_timeline *tl)
{
    char path[4096];
    const rd_backend_info *info = tl->info ? *tl->info : NULL;
    if (info && info->dirfd >= 0) /* the session's directory, by its descriptor */
        return (tl->fd = rd_out_tmpfile(info->dirfd)) < 0 ? tl->fd : 0;
    const char *dir = info && info->dir ? info->dir : getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/.luatrace-timeline-XXXXXX", dir && *dir ? dir : "/tmp");
    tl->fd = mkostemp(path, O_CLOEXEC);
    if (tl->fd < 0)
        return -errno;
    unlink(path); /* nothing is left behind, whatever happens to us */
    return 0;
}

static int pwrite_all(int fd, const void *p, size_t n, int64_t off)
{
    for (const char *c = p; n;) {
        ssize_t k = pwrite(fd, c, n, off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return k < 0 ? -errno : -EIO;
        c += k, n -= (size_t)k, off += k;
    }
    return 0;
}

/* Moves t's buffer into a new block at the end of the file. */
static int flush(rd_timeline *tl, rd_tl_track *t)
{
    uint8_t hdr[BLOCK_HDR];
    int64_t none = -1, at = tl->fsize;
    int e = tl->fd < 0 ? open_file(tl) : 0;
    if (e || !t->nbuf)
        return e;
    memcpy(hdr, &none, 8);
    memcpy(hdr + 8, &t->nbuf, 4);
    e = pwrite_all(tl->fd, hdr, BLOCK_HDR, at);
    if (!e)
        e = pwrite_all(tl->fd, t->buf, t->nbuf, at + BLOCK_HDR);
    if (!e && t->tail >= 0)
        e = pwrite_all(tl->fd, &at, 8, t->tail);
    if (e)
        return e;
    tl->fsize = at + BLOCK_HDR + t->nbuf;
    if (t->head < 0)
        t->head = at;
    t->tail = at;
    t->nbuf = 0;
    return 0;
}

static uint8_t *put_varint(uint8_t *p, uint64_t v)
{
    for (; v >= 0x80; v >>= 7)
        *p++ = (uint8_t)(v | 0x80);
    *p++ = (uint8_t)v;
    return p;
}

/* Appends a record to t's buffer, which doubles (to BUF_MAX) when it is
 * flushed: a busy track gets big blocks, an idle one stays small. */
static int put(rd_timeline *tl, rd_tl_track *t, uint32_t fid, enum rd_how how, int leave,
               uint64_t at)
{
    if (t->nbuf + REC_MAX > t->capbuf) {
        int e = flush(tl, t);
        uint32_t cap = t->capbuf ? t->capbuf * 2 : BUF_MIN;
        cap = cap > BUF_MAX ? BUF_MAX : cap;
        uint8_t *b = e ? NULL : realloc(t->buf, cap);
        if (!b)
            return e ? e : -ENOMEM;
        t->buf = b;
        t->capbuf = cap;
    }
    uint8_t *p = put_varint(t->buf + t->nbuf, (uint64_t)fid << 4 | (unsigned)how << 1 | !!leave);
    p = put_varint(p, at - t->last_t);
    t->nbuf = (uint32_t)(p - t->buf);
    t->last_t = at;
    tl->t_last = at;
    tl->records++;
    return 0;
}

/* A dead coroutine's track keeps only its blocks. */
static void end_track(rd_timeline *tl, rd_tl_track *t)
{
    int e = flush(tl, t);
    tl->err = tl->err ? tl->err : e;
    free(t->buf);
    free(t->open);
    t->buf = NULL;
    t->open = NULL;
    t->nbuf = t->capbuf = t->nopen = t->capopen = 0;
    t->ended = 1;
    ix_remove(tl, t->thread);
    tl->cur = 0;
}

/* }==================================================================== */

/* {====================================================================
 * the listener */

static void on_enter(void *ud, uint64_t thread, const rd_frame *f, uint32_t level,
                     enum rd_how how, uint64_t at)
{
    rd_timeline *tl = ud;
    rd_tl_track *t = tl->err ? NULL : track_of(tl, thread);
    int e = t ? 0 : -ENOMEM;
    (void)level; /* == t->nopen: the listener's frames nest (check_stack.c) */
    if (t && rd_grow((void **)&t->open, &t->capopen, t->nopen, sizeof *t->open))
        e = -ENOMEM;
    if (!e && t->head < 0 && !t->nbuf)
        t->first_fid = f->fid; /* the track's first record */
    if (!e && !(e = put(tl, t, f->fid, how, 0, at)))
        t->open[t->nopen++] = f->fid;
    tl->err = tl->err ? tl->err : e;
}

static void on_leave(void *ud, uint64_t thread, const rd_frame *f, uint32_t level,
                     enum rd_how how, uint64_t at)
{
    rd_timeline *tl = ud;
    rd_tl_track *t = tl->err ? NULL : track_of(tl, thread);
    (void)level;
    if (!t || !t->nopen) {
        tl->err = tl->err ? tl->err : t ? 0 : -ENOMEM;
        return;
    }
    int e = put(tl, t, f->fid, how, 1, at);
    tl->err = tl->err ? tl->err : e;
    t->nopen--;
}

/* A thread runs now: its track, made now if new, so that tracks come in
 * the order the threads first ran (the first, `main`, may have no frame
 * yet: a host's main thread when a coroutine it resumed from C was
 * attached). */
static void on_thread(void *ud, uint64_t thread, uint64_t at)
{
    rd_timeline *tl = ud;
    (void)at;
    if (!tl->err && !track_of(tl, thread))
        tl->err = -ENOMEM;
}

/* A coroutine died or was collected. Not when a stack merely empties: the
 * main thread of a host that calls into Lua from C keeps one track. */
static void on_end(void *ud, uint64_t thread, uint64_t at)
{
    rd_timeline *tl = ud;
    (void)at;
    uint32_t *p = tl->err ? NULL : ix_slot(tl, thread);
    if (p && *p)
        end_track(tl, &tl->tr[*p - 1]);
}

rd_listener rd_timeline_listener(rd_timeline *tl)
{
    return (rd_listener){tl, on_enter, on_leave, NULL, on_thread, on_end};
}

int rd_timeline_end(rd_timeline *tl, uint64_t t_end)
{
    t_end = t_end > tl->t_last ? t_end : tl->t_last;
    for (uint32_t k = 0; k < tl->ntr && !tl->err; k++) {
        rd_tl_track *t = &tl->tr[k];
        while (t->nopen && !tl->err) {
            int e = put(tl, t, t->open[t->nopen - 1], RD_STOP, 1, t_end);
            tl->err = e;
            t->nopen -= !e;
        }
        if (!t->ended && !tl->err)
            end_track(tl, t);
    }
    return tl->err;
}

/* }==================================================================== */

/* {====================================================================
 * reading back */

static int read_all(int fd, void *p, size_t n, int64_t off)
{
    ssize_t k = pread(fd, p, n, off);
    return k == (ssize_t)n ? 0 : k < 0 ? -errno : -EIO;
}

static const uint8_t *get_varint(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
    *v = 0;
    for (int s = 0; p < end && s < 64; s += 7) {
        *v |= (uint64_t)(*p & 0x7f) << s;
        if (!(*p++ & 0x80))
            return p;
    }
    return NULL;
}

/* The records of one block. */
static int each_record(const uint8_t *p, const uint8_t *end, uint64_t *t,
                       int (*fn)(void *, const rd_tl_event *), void *ud)
{
    while (p < end) {
        uint64_t a, dt;
        if (!(p = get_varint(p, end, &a)) || !(p = get_varint(p, end, &dt)))
            return -EIO;
        *t += dt;
        rd_tl_event ev = {(uint32_t)(a >> 4), (uint8_t)(a & 1), (enum rd_how)(a >> 1 & 7), *t};
        int r = fn(ud, &ev);
        if (r)
            return r;
    }
    return 0;
}

int rd_timeline_each(rd_timeline *tl, uint32_t k, int (*fn)(void *ud, const rd_tl_event *ev),
                     void *ud)
{
    uint8_t *buf = malloc(BUF_MAX);
    uint64_t t = 0;
    int e = buf ? 0 : -ENOMEM;
    for (int64_t at = tl->tr[k].head; at >= 0 && !e;) {
        uint8_t hdr[BLOCK_HDR];
        uint32_t n;
        int64_t next;
        if ((e = read_all(tl->fd, hdr, BLOCK_HDR, at)))
            break;
        memcpy(&next, hdr, 8);
        memcpy(&n, hdr + 8, 4);
        e = n > BUF_MAX ? -EIO : read_all(tl->fd, buf, n, at + BLOCK_HDR);
        if (!e)
            e = each_record(buf, buf + n, &t, fn, ud);
        at = next;
    }
    free(buf);
    return e;
}

/* }==================================================================== */

/* {====================================================================
 * for the writers */

uint64_t rd_timeline_ns(double k, uint64_t ticks)
{
    double ns = (double)ticks * k + 0.5;
    return ns < 0x1p64 ? (uint64_t)ns : UINT64_MAX;
}

void rd_timeline_track_name(const rd_timeline *tl, const rd_model *m, uint32_t k, char *buf,
                            size_t cap)
{
    char label[RD_LABEL_MAX];
    if (k == 0) {
        snprintf(buf, cap, "main");
        return;
    }
    rd_model_label(m, tl->tr[k].first_fid, label, sizeof label);
    snprintf(buf, cap, "coroutine %u (%s)", k, label);
}

int rd_timeline_write(const char *dir, int dirfd, const char *file, const char *name,
                      int (*fn)(FILE *, void *), void *ud, char *err, size_t cap)
{
    char path[4096];
    if (file || dirfd < 0) {
        if (!file)
            snprintf(path, sizeof path, "%s/%s", dir, name);
        return rd_out_write_path(file ? file : path, fn, ud, err, cap);
    }
    int e = rd_out_write(dirfd, name, fn, ud);
    if (e)
        snprintf(err, cap, "cannot write %s/%s: %s", dir, name, strerror(-e));
    return e;
}

/* }==================================================================== */
