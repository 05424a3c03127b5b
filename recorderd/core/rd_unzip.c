/* rd_unzip: zstd decompression ahead of the reader (rd_unzip.h). */
#include "rd_unzip.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "lt_file.h"
#include "lt_split.h"

typedef struct chunk {
    uint8_t *p;
    size_t len;
    uint64_t pos; /* bytes of the file read once it was filled */
    size_t last;  /* ZSTD_decompressStream's last answer then: 0 = a frame just ended */
    int e;        /* -EPROTO: the stream is corrupt after these bytes (err says how) */
    int end;      /* the file ends after these bytes */
    char err[192];
} chunk;

struct rd_unzip {
    /* the decompressor: only the thread that fills chunks touches it */
    FILE *f;
    ZSTD_DCtx *dctx;
    uint8_t *zbuf; /* compressed bytes read, not yet decompressed */
    size_t zlen, zpos, zcap;
    uint64_t pos; /* bytes of the file read */
    size_t last;
    int eof;
    int split;    /* the body is lt_split.h blocks, each merged through blk */
    uint8_t *blk;
    /* shared, under mu: ch[head] and the nready - 1 after it are filled */
    pthread_mutex_t mu;
    pthread_cond_t cv; /* a chunk filled, or one given back, or stop */
    chunk ch[RD_UNZIP_AHEAD];
    unsigned head, nready;
    int stop;
    int threaded;
    pthread_t th;
    /* the reader's */
    int held;   /* it reads ch[head] */
    size_t off; /* bytes of ch[head] read */
    int cut;
};

/* Decompresses into dst until some output comes, the file ends or the
 * stream is found corrupt. */
static int64_t read_zstd(rd_unzip *r, uint8_t *dst, size_t n, char *err, size_t cap)
{
    ZSTD_outBuffer out = {dst, n, 0};
    for (;;) {
        if (r->zpos == r->zlen && !r->eof) {
            r->zlen = fread(r->zbuf, 1, r->zcap, r->f);
            r->zpos = 0;
            r->pos += r->zlen;
            r->eof = r->zlen == 0;
        }
        ZSTD_inBuffer in = {r->zbuf, r->zlen, r->zpos};
        size_t out0 = out.pos;
        size_t k = ZSTD_decompressStream(r->dctx, &out, &in);
        if (ZSTD_isError(k)) {
            snprintf(err, cap, "corrupt compressed trace before byte %llu of the file: %s",
                     (unsigned long long)(r->pos - (r->zlen - r->zpos)), ZSTD_getErrorName(k));
            return -EPROTO;
        }
        /* a call with nothing in or out (at the end) answers for a next
         * frame that never comes: not a cut */
        if (in.pos != r->zpos || out.pos != out0)
            r->last = k;
        r->zpos = in.pos;
        if (out.pos > 0 || (r->eof && r->zpos == r->zlen))
            return (int64_t)out.pos;
    }
}

/* Fills c whole, or up to the end of the file or the corruption. */
static void fill(rd_unzip *u, chunk *c)
{
    c->len = 0;
    c->e = c->end = 0;
    while (c->len < RD_UNZIP_CHUNK) {
        int64_t k = read_zstd(u, c->p + c->len, RD_UNZIP_CHUNK - c->len, c->err, sizeof c->err);
        if (k <= 0) {
            c->e = (int)k;
            c->end = k == 0;
            break;
        }
        c->len += (size_t)k;
    }
    c->pos = u->pos;
    c->last = u->last;
}

/* Decompresses n bytes into dst: how many came before the file's end
 * (n if it did not end), or -EPROTO. */
static int64_t read_exact(rd_unzip *u, uint8_t *dst, size_t n, char *err, size_t cap)
{
    size_t got = 0;
    while (got < n) {
        int64_t k = read_zstd(u, dst + got, n - got, err, cap);
        if (k <= 0)
            return k < 0 ? k : (int64_t)got;
        got += (size_t)k;
    }
    return (int64_t)got;
}

/* Fills c with the records of one block (lt_split.h); a block cut short
 * by the file's end is left out, as a cut zstd block is. */
static void fill_split(rd_unzip *u, chunk *c)
{
    c->len = 0;
    c->e = c->end = 0;
    int64_t k = read_exact(u, u->blk, LT_SPLIT_HDR, c->err, sizeof c->err), len = 0;
    if (k == LT_SPLIT_HDR && (len = lt_split_len(u->blk, LT_SPLIT_HDR)) > 0)
        k = read_exact(u, u->blk + LT_SPLIT_HDR, (size_t)len - LT_SPLIT_HDR, c->err,
                       sizeof c->err);
    int64_t m = k >= 0 && len > 0 && k == len - LT_SPLIT_HDR ? lt_merge(u->blk, (size_t)len, c->p)
                                                              : -1;
    if (k < 0) {
        c->e = (int)k;
    } else if (len < 0 || (len > 0 && k == len - LT_SPLIT_HDR && m < 0)) {
        snprintf(c->err, sizeof c->err, "corrupt compressed trace before byte %llu of the "
                 "file: a block does not merge", (unsigned long long)u->pos);
        c->e = -EPROTO;
    } else if (m < 0) { /* the file ended before the block did */
        c->end = 1;
    } else {
        c->len = (size_t)m;
    }
    c->pos = u->pos;
    c->last = u->last;
}

static void *unzip_main(void *arg)
{
    rd_unzip *u = arg;
    for (;;) {
        pthread_mutex_lock(&u->mu);
        while (u->nready == RD_UNZIP_AHEAD && !u->stop)
            pthread_cond_wait(&u->cv, &u->mu);
        chunk *c = &u->ch[(u->head + u->nready) % RD_UNZIP_AHEAD];
        int stop = u->stop;
        pthread_mutex_unlock(&u->mu);
        if (stop)
            return NULL;
        (u->split ? fill_split : fill)(u, c);
        pthread_mutex_lock(&u->mu);
        u->nready++;
        pthread_cond_broadcast(&u->cv);
        pthread_mutex_unlock(&u->mu);
        if (c->e || c->end)
            return NULL;
    }
}

/* The thread takes no signal: the process's handlers run where they did. */
static int start_thread(rd_unzip *u)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int e = pthread_create(&u->th, NULL, unzip_main, u);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return e;
}

/* The decompressor: its window is bounded so that a header asking for a
 * huge one (garbage, or a hostile file) is refused instead of allocated. */
static int setup(rd_unzip *u)
{
    u->dctx = ZSTD_createDCtx();
    u->zcap = ZSTD_DStreamInSize();
    u->zbuf = malloc(u->zcap);
    if (u->split && !(u->blk = malloc(LT_SPLIT_HDR + LT_SPLIT_MAX)))
        return -ENOMEM;
    for (unsigned i = 0; i < RD_UNZIP_AHEAD; i++)
        if (!(u->ch[i].p = malloc(RD_UNZIP_CHUNK)))
            return -ENOMEM;
    if (!u->dctx || !u->zbuf ||
        ZSTD_isError(ZSTD_DCtx_setParameter(u->dctx, ZSTD_d_windowLogMax,
                                            LT_FILE_ZSTD_WINDOWLOG_MAX)))
        return -ENOMEM;
    return 0;
}

int rd_unzip_start(rd_unzip **up, FILE *f, uint64_t pos, int split, char *err, size_t cap)
{
    rd_unzip *u = calloc(1, sizeof *u);
    *up = NULL;
    if (!u) {
        snprintf(err, cap, "out of memory");
        return -ENOMEM;
    }
    pthread_mutex_init(&u->mu, NULL);
    pthread_cond_init(&u->cv, NULL);
    u->f = f;
    u->pos = pos;
    u->split = split;
    if (setup(u)) {
        rd_unzip_stop(u);
        snprintf(err, cap, "out of memory");
        return -ENOMEM;
    }
    u->threaded = start_thread(u) == 0; /* else rd_unzip_read fills each chunk */
    *up = u;
    return 0;
}

/* ch[head], read whole, goes back to be filled again. */
static void give_back(rd_unzip *u)
{
    pthread_mutex_lock(&u->mu);
    u->head = (u->head + 1) % RD_UNZIP_AHEAD;
    u->nready--;
    pthread_cond_broadcast(&u->cv);
    pthread_mutex_unlock(&u->mu);
    u->held = 0;
    u->off = 0;
}

/* The chunk to read from: ch[head], once filled. */
static chunk *take(rd_unzip *u)
{
    chunk *c = &u->ch[u->head];
    if (u->held && (u->off < c->len || c->e || c->end))
        return c;
    if (u->held)
        give_back(u);
    if (!u->threaded) {
        (u->split ? fill_split : fill)(u, &u->ch[u->head]);
        u->nready = 1;
    }
    pthread_mutex_lock(&u->mu);
    while (!u->nready)
        pthread_cond_wait(&u->cv, &u->mu);
    pthread_mutex_unlock(&u->mu);
    u->held = 1;
    return &u->ch[u->head];
}

int64_t rd_unzip_read(rd_unzip *u, uint8_t *dst, size_t n, uint64_t *pos, char *err,
                      size_t cap)
{
    chunk *c = take(u);
    *pos = c->pos;
    if (u->off == c->len) { /* what comes after its bytes */
        if (c->e)
            snprintf(err, cap, "%s", c->err);
        u->cut = c->end && c->last != 0;
        return c->e;
    }
    size_t k = c->len - u->off < n ? c->len - u->off : n;
    memcpy(dst, c->p + u->off, k);
    u->off += k;
    return (int64_t)k;
}

int rd_unzip_cut(const rd_unzip *u)
{
    return u->cut;
}

void rd_unzip_stop(rd_unzip *u)
{
    if (!u)
        return;
    if (u->threaded) {
        pthread_mutex_lock(&u->mu);
        u->stop = 1;
        pthread_cond_broadcast(&u->cv);
        pthread_mutex_unlock(&u->mu);
        pthread_join(u->th, NULL);
    }
    pthread_cond_destroy(&u->cv);
    pthread_mutex_destroy(&u->mu);
    ZSTD_freeDCtx(u->dctx);
    free(u->zbuf);
    free(u->blk);
    for (unsigned i = 0; i < RD_UNZIP_AHEAD; i++)
        free(u->ch[i].p);
    free(u);
}
