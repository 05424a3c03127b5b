/* rd_tracefile: trace.ltr, buffered, cut at its last whole record on a
 * write error. stdio would not do: after a failed write it keeps some of
 * the buffer and may write it later, past a hole, if space comes back; the
 * file must stay a prefix of the stream to be replayable. */
#include "rd_tracefile.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lt_file.h"
#include "rd_outdir.h"

#define BUF_CAP (1u << 20)

/* The bytes of the whole records at the start of p[0..n), decoded from
 * state dec: how much of a short write may stay in the file. */
static size_t whole_records(lt_dec dec, const uint8_t *p, size_t n)
{
    size_t off = 0;
    lt_event ev;
    for (int k; off < n && (k = lt_dec_next(&dec, p + off, n - off, &ev)) > 0;)
        off += (size_t)k;
    return off;
}

/* Gives the file up after a failed write of p (from state dec) of which
 * done bytes reached it: cuts it back to its last whole record. */
static int give_up(rd_tracefile *t, int e, const uint8_t *p, size_t done, const lt_dec *dec)
{
    t->size += dec ? whole_records(*dec, p, done) : 0;
    /* if even the cut fails, a replay still stops at the partial record */
    int cut = ftruncate(t->fd, (off_t)t->size);
    (void)cut;
    close(t->fd);
    if (t->size < LT_FILE_HDR_SIZE) /* not a trace: not even its header */
        rd_tracefile_remove(t);
    t->fd = -1;
    t->err = e;
    free(t->buf);
    t->buf = NULL;
    t->len = 0;
    return e;
}

/* Writes p[0..n) (whole records from state dec, or the header: dec NULL). */
static int put(rd_tracefile *t, const uint8_t *p, size_t n, const lt_dec *dec)
{
    size_t done = 0;
    while (done < n) {
        ssize_t k = write(t->fd, p + done, n - done);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return give_up(t, k < 0 ? -errno : -EIO, p, done, dec);
        done += (size_t)k;
    }
    t->size += n;
    return 0;
}

static int flush(rd_tracefile *t)
{
    int e = t->len ? put(t, t->buf, t->len, &t->dec) : 0;
    t->len = 0;
    return e;
}

int rd_tracefile_remove(rd_tracefile *t)
{
    return unlinkat(t->dirfd, "trace.ltr", 0) < 0 ? -errno : 0;
}

int rd_tracefile_open(rd_tracefile *t, int dirfd, const char *dir)
{
    uint8_t hdr[LT_FILE_HDR_SIZE];
    *t = (rd_tracefile){.fd = -1, .dirfd = dirfd};
    if (snprintf(t->path, sizeof t->path, "%s/trace.ltr", dir) >= (int)sizeof t->path)
        return t->err = -ENAMETOOLONG;
    t->buf = malloc(BUF_CAP);
    if (!t->buf)
        return t->err = -ENOMEM;
    t->cap = BUF_CAP;
    t->fd = rd_out_create(dirfd, "trace.ltr");
    if (t->fd < 0) {
        free(t->buf);
        t->buf = NULL;
        return t->err = t->fd;
    }
    lt_file_header(hdr);
    return put(t, hdr, sizeof hdr, NULL);
}

int rd_tracefile_write(rd_tracefile *t, const uint8_t *p, size_t n, const lt_dec *dec)
{
    if (t->fd < 0)
        return t->err;
    if (t->len + n > t->cap && flush(t))
        return t->err;
    if (n >= t->cap) /* more than the buffer holds: straight to the file */
        return put(t, p, n, dec);
    if (!t->len)
        t->dec = *dec;
    memcpy(t->buf + t->len, p, n);
    t->len += n;
    return 0;
}

int rd_tracefile_close(rd_tracefile *t)
{
    if (t->fd < 0)
        return t->err;
    int e = flush(t);
    if (!e && close(t->fd) < 0)
        e = t->err = -errno;
    t->fd = -1;
    free(t->buf);
    t->buf = NULL;
    return e;
}
