/* check_tracefile: trace.ltr as recorderd/out/rd_tracefile writes it (zstd) and
 * rd_tracein reads it back: whole, and cut back to its last flush, which
 * ends on a complete record, when a write fails (RLIMIT_FSIZE with SIGXFSZ
 * ignored: write() fails with EFBIG part-way); old uncompressed traces,
 * corrupt or cut compressed ones, and reads in small pieces or stopped
 * part-way (rd_unzip decompresses ahead on a thread). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>

#include "lt_event.h"
#include "lt_file.h"
#include "rd_tracefile.h"
#include "rd_tracein.h"
#include "ut_main.h"

static char g_tmp[64];
static int g_tmpfd = -1; /* g_tmp, open: trace.ltr is made under it */
static char g_path[96];

/* The stream: a LINE, then steps (2..6 bytes each), over and over. */
typedef struct stream {
    uint8_t *p;
    size_t n;
    size_t *ends; /* every record's end */
    lt_dec *at;   /* the decoder's state before each record */
    size_t nrec;
} stream;

static void make_stream(stream *s, size_t bytes)
{
    s->p = malloc(bytes + 32);
    s->ends = malloc(bytes * sizeof *s->ends);
    s->at = malloc(bytes * sizeof *s->at);
    s->n = s->nrec = 0;
    lt_dec d = {0};
    int bad = 0; /* asserted once: Check logs every assertion to a file the limit bounds */
    for (uint64_t i = 0; s->n < bytes; i++) {
        uint8_t *q = s->p + s->n;
        if (i % 6 == 0) {
            q = lt_put_head(q, LT_EV_LINE, 3);
            q = lt_put_uint(lt_put_uint(lt_put_uint(q, 1), i * 977), 10);
        } else {
            q = lt_put_step(q, 1, (i * 7919) % 70000);
        }
        lt_event ev;
        s->at[s->nrec] = d;
        int k = lt_dec_next(&d, s->p + s->n, (size_t)(q - (s->p + s->n)), &ev);
        bad |= k != q - (s->p + s->n);
        s->n += (size_t)(q - (s->p + s->n));
        s->ends[s->nrec++] = s->n;
    }
    ck_assert(!bad);
}

static void free_stream(stream *s)
{
    free(s->p);
    free(s->ends);
    free(s->at);
}

/* The file's length and the records it decodes to after each write: the
 * places where a failed write may cut it. */
typedef struct safe {
    uint64_t size[4096], raw[4096];
    size_t n;
} safe;

/* Writes the stream in chunks of about `chunk` bytes, whole records each;
 * notes the safe points in sp if given. */
static int write_chunks(rd_tracefile *t, const stream *s, size_t chunk, safe *sp)
{
    size_t r = 0, from = 0;
    int e = 0;
    while (r < s->nrec) {
        size_t first = r;
        while (r < s->nrec && s->ends[r] - from < chunk)
            r++;
        r += r == first; /* at least one record */
        int k = rd_tracefile_write(t, s->p + from, s->ends[r - 1] - from);
        e = e ? e : k;
        from = s->ends[r - 1];
        if (sp && sp->n < 4096 && (!sp->n || sp->size[sp->n - 1] != t->size)) {
            sp->size[sp->n] = t->size;
            sp->raw[sp->n++] = t->raw;
        }
    }
    return e;
}

/* Reads path back through rd_tracein: the records, their count in *n, and
 * whether it was cut inside a frame in *cut. */
static uint8_t *decode(const char *path, size_t *n, int *cut)
{
    rd_tracein in;
    char err[256];
    size_t cap = 8u << 20;
    uint8_t *buf = malloc(cap);
    ck_assert_int_eq(rd_tracein_open(&in, path, err, sizeof err), 0);
    int64_t k;
    *n = 0;
    while ((k = rd_tracein_read(&in, buf + *n, cap - *n, err, sizeof err)) > 0)
        *n += (size_t)k;
    ck_assert_int_eq(k, 0);
    *cut = rd_tracein_cut(&in);
    rd_tracein_close(&in);
    return buf;
}

/* The file decodes to the first `want` bytes of the stream. */
static void check_decodes(const stream *s, size_t want, int cut)
{
    size_t n;
    int was_cut;
    uint8_t *buf = decode(g_path, &n, &was_cut);
    ck_assert_uint_eq(n, want);
    ck_assert_int_eq(memcmp(buf, s->p, want), 0);
    ck_assert_int_eq(was_cut, cut);
    free(buf);
}

/* The file decodes to the stream's first records, at least `least`
 * bytes of them, and says it was cut. */
static void check_prefix(const stream *s, size_t least)
{
    size_t n, r = 0;
    int was_cut;
    uint8_t *buf = decode(g_path, &n, &was_cut);
    while (r < s->nrec && s->ends[r] < n)
        r++;
    ck_assert(n == 0 || (r < s->nrec && s->ends[r] == n));
    ck_assert_uint_ge(n, least);
    ck_assert_int_eq(memcmp(buf, s->p, n), 0);
    ck_assert_int_eq(was_cut, 1);
    free(buf);
}

/* Runs fn(arg) in a child process whose files may grow to max bytes (a
 * write past that fails with EFBIG: SIGXFSZ ignored). Check logs every
 * assertion to a file, which the limit would bound too: the child asserts
 * nothing and says how it went by its exit status (0: as expected). */
static int limited(int (*fn)(const void *), const void *arg, rlim_t max)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        struct rlimit rl;
        getrlimit(RLIMIT_FSIZE, &rl);
        rl.rlim_cur = max; /* the soft limit: the hard one cannot come back */
        signal(SIGXFSZ, SIG_IGN);
        _exit(setrlimit(RLIMIT_FSIZE, &rl) ? 100 : fn(arg));
    }
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert(WIFEXITED(st));
    return WEXITSTATUS(st);
}

typedef struct cut_args {
    const stream *s;
    size_t chunk;
} cut_args;

/* A write fails, the file stays ended, close says why. */
static int cut_child(const void *arg)
{
    const cut_args *a = arg;
    rd_tracefile t;
    if (rd_tracefile_open(&t, g_tmpfd, g_tmp))
        return 1;
    if (write_chunks(&t, a->s, a->chunk, NULL) != -EFBIG || t.fd != -1)
        return 2;
    if (rd_tracefile_write(&t, a->s->p, a->s->ends[0]) != -EFBIG)
        return 3;
    return rd_tracefile_close(&t) == -EFBIG ? 0 : 4;
}

static uint8_t *read_file(size_t *n)
{
    FILE *f = fopen(g_path, "rb");
    ck_assert_ptr_nonnull(f);
    uint8_t *buf = malloc(8u << 20);
    *n = fread(buf, 1, 8u << 20, f);
    fclose(f);
    return buf;
}

/* The writer is deterministic: the stream is written whole once, noting
 * its safe points after each write; then a file limited to the k-th safe
 * point's length (plus `extra` bytes, less than the next one) must be
 * exactly the whole file's first bytes up to it or to a block flushed
 * within the next write, and decode to the records before that. */
static void cut_case(size_t bytes, size_t chunk)
{
    stream s;
    safe *sp = calloc(1, sizeof *sp);
    rd_tracefile t;
    size_t whole_n, n;
    make_stream(&s, bytes);
    ck_assert_int_eq(rd_tracefile_open(&t, g_tmpfd, g_tmp), 0);
    ck_assert_int_eq(write_chunks(&t, &s, chunk, sp), 0);
    ck_assert_int_eq(rd_tracefile_close(&t), 0);
    uint8_t *whole = read_file(&whole_n);
    ck_assert_uint_ge(sp->n, 3);
    for (size_t k = 1; k + 1 < sp->n; k++) {
        uint64_t room = sp->size[k + 1] - sp->size[k];
        for (uint64_t extra = 0; extra < room; extra += room - 1 > 1 ? room - 1 : 1) {
            unlink(g_path);
            cut_args a = {&s, chunk};
            ck_assert_int_eq(limited(cut_child, &a, sp->size[k] + extra), 0);
            uint8_t *got = read_file(&n);
            /* a write of more than a block flushes each of its blocks */
            ck_assert_uint_ge(n, sp->size[k]);
            ck_assert_uint_le(n, sp->size[k] + extra);
            ck_assert_int_eq(memcmp(got, whole, n), 0);
            free(got);
            check_prefix(&s, sp->raw[k]); /* no frame end: cut */
        }
    }
    free(whole);
    free(sp);
    free_stream(&s);
}

START_TEST(test_tracefile_whole)
{
    stream s;
    rd_tracefile t;
    size_t n;
    make_stream(&s, 3u << 20);
    ck_assert_int_eq(rd_tracefile_open(&t, g_tmpfd, g_tmp), 0);
    ck_assert_int_eq(write_chunks(&t, &s, 5000, NULL), 0);
    ck_assert_int_eq(rd_tracefile_close(&t), 0);
    ck_assert_int_eq(t.err, 0);
    uint8_t *buf = read_file(&n);
    ck_assert_int_eq(memcmp(buf, LT_FILE_MAGIC, 8), 0);
    ck_assert_uint_eq(buf[8], LT_FILE_VERSION);
    ck_assert_uint_eq(buf[12], LT_FILE_ZSTD | LT_FILE_SPLIT);
    ck_assert_uint_lt(n, s.n); /* compressed (random-ish steps: not much) */
    free(buf);
    check_decodes(&s, s.n, 0);
    free_stream(&s);
}
END_TEST

START_TEST(test_tracefile_exists)
{
    rd_tracefile t;
    fclose(fopen(g_path, "w"));
    ck_assert_int_eq(rd_tracefile_open(&t, g_tmpfd, g_tmp), -EEXIST);
    ck_assert_int_eq(rd_tracefile_write(&t, (const uint8_t *)"\x01", 1), -EEXIST);
    ck_assert_int_eq(rd_tracefile_close(&t), -EEXIST);
    ck_assert_int_eq(access(g_path, F_OK), 0); /* not ours: left alone */
}
END_TEST

/* small chunks gathered in the buffer: a flush fails part-way */
START_TEST(test_tracefile_cut_buffered)
{
    cut_case(2u << 20, 3000);
}
END_TEST

/* chunks over the buffer's size are compressed straight from the caller's */
START_TEST(test_tracefile_cut_direct)
{
    cut_case(3u << 20, 700u << 10);
}
END_TEST

/* Writes a trace file: a header (version, flags), then body[0..n). */
static void write_trace(uint8_t version, uint32_t flags, const void *body, size_t n)
{
    uint8_t h[LT_FILE_HDR_SIZE];
    lt_file_header(h, flags);
    h[8] = version;
    FILE *f = fopen(g_path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(h, 1, sizeof h, f), sizeof h);
    ck_assert_uint_eq(fwrite(body, 1, n, f), n);
    fclose(f);
}

/* versions 3 and 4, and 5 and 6 without the flag: the records as they are */
START_TEST(test_tracefile_plain)
{
    stream s;
    make_stream(&s, 100000);
    for (uint8_t v = 3; v <= 6; v++) {
        write_trace(v, 0, s.p, s.n);
        check_decodes(&s, s.n, 0);
    }
    free_stream(&s);
}
END_TEST

/* The error rd_tracein gives for path's body, after reading what it can. */
static int64_t read_error(char *err, size_t cap)
{
    rd_tracein in;
    uint8_t buf[4096];
    ck_assert_int_eq(rd_tracein_open(&in, g_path, err, cap), 0);
    int64_t k;
    while ((k = rd_tracein_read(&in, buf, sizeof buf, err, cap)) > 0)
        ;
    rd_tracein_close(&in);
    return k;
}

/* garbage where the zstd frames should be, a frame that asks for a 1 GiB
 * window (refused, not allocated), a cut frame, junk after a whole frame */
START_TEST(test_tracefile_corrupt)
{
    char err[256];
    write_trace(5, LT_FILE_ZSTD, "this is not zstd at all", 23);
    ck_assert_int_eq(read_error(err, sizeof err), -EPROTO);
    ck_assert_ptr_nonnull(strstr(err, "corrupt compressed trace before byte 16 of the file"));
    const uint8_t huge[] = {0x28, 0xb5, 0x2f, 0xfd, 0x00, 20 << 3, 0x01, 0x00, 0x00};
    write_trace(5, LT_FILE_ZSTD, huge, sizeof huge);
    ck_assert_int_eq(read_error(err, sizeof err), -EPROTO);
    ck_assert_ptr_nonnull(strstr(err, "memory"));
    stream s;
    rd_tracefile t;
    size_t n;
    make_stream(&s, 1u << 20);
    unlink(g_path);
    ck_assert_int_eq(rd_tracefile_open(&t, g_tmpfd, g_tmp), 0);
    ck_assert_int_eq(write_chunks(&t, &s, 5000, NULL), 0);
    ck_assert_int_eq(rd_tracefile_close(&t), 0);
    uint8_t *whole = read_file(&n);
    const uint32_t split = LT_FILE_ZSTD | LT_FILE_SPLIT;
    write_trace(11, split, whole + LT_FILE_HDR_SIZE, n - LT_FILE_HDR_SIZE - 3);
    size_t got;
    int cut;
    free(decode(g_path, &got, &cut));
    ck_assert(cut);
    ck_assert_uint_gt(got, 0);
    memcpy(whole + n, "junk", 4);
    write_trace(11, split, whole + LT_FILE_HDR_SIZE, n + 4 - LT_FILE_HDR_SIZE);
    ck_assert_int_eq(read_error(err, sizeof err), -EPROTO);
    ck_assert_ptr_nonnull(strstr(err, "corrupt compressed trace"));
    free(whole);
    /* blocks whose parts do not merge (a delta missing, an empty block), or
     * whose header is cut: a clear error, or the end of a cut file */
    static const uint8_t bad[][16] = {
        {1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0x7f},  /* a step, no delta for it */
        {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},        /* empty */
        {1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0x95},  /* a record cut short */
    };
    uint8_t z[64];
    for (size_t i = 0; i < 3; i++) {
        size_t zn = ZSTD_compress(z, sizeof z, bad[i], 13, 3);
        ck_assert(!ZSTD_isError(zn));
        write_trace(11, split, z, zn);
        ck_assert_int_eq(read_error(err, sizeof err), -EPROTO);
        ck_assert_ptr_nonnull(strstr(err, "a block does not merge"));
    }
    size_t zn = ZSTD_compress(z, sizeof z, bad[0], 7, 3); /* the header cut */
    write_trace(11, split, z, zn);
    size_t got0;
    free(decode(g_path, &got0, &cut));
    ck_assert_uint_eq(got0, 0);
    free_stream(&s);
}
END_TEST

/* Read in pieces of odd sizes, across the chunks decompressed ahead on
 * rd_unzip's thread; then closed part-way, while that thread waits for
 * room (it must stop, not hang or leak). */
START_TEST(test_tracefile_pieces)
{
    stream s;
    rd_tracefile t;
    rd_tracein in;
    char err[256];
    make_stream(&s, 3u << 20); /* a dozen chunks: more than wait ahead */
    ck_assert_int_eq(rd_tracefile_open(&t, g_tmpfd, g_tmp), 0);
    ck_assert_int_eq(write_chunks(&t, &s, 5000, NULL), 0);
    ck_assert_int_eq(rd_tracefile_close(&t), 0);
    uint8_t *buf = malloc(s.n + 4096);
    size_t n = 0, piece = 1;
    int64_t k;
    ck_assert_int_eq(rd_tracein_open(&in, g_path, err, sizeof err), 0);
    while ((k = rd_tracein_read(&in, buf + n, piece, err, sizeof err)) > 0) {
        ck_assert_uint_le((size_t)k, piece);
        n += (size_t)k;
        piece = piece % 4000 + 977;
    }
    ck_assert_int_eq(k, 0);
    ck_assert_int_eq(rd_tracein_cut(&in), 0);
    rd_tracein_close(&in);
    ck_assert_uint_eq(n, s.n);
    ck_assert_int_eq(memcmp(buf, s.p, n), 0);
    ck_assert_int_eq(rd_tracein_open(&in, g_path, err, sizeof err), 0);
    ck_assert_int_eq(rd_tracein_read(&in, buf, 100, err, sizeof err), 100);
    rd_tracein_close(&in);
    free(buf);
    free_stream(&s);
}
END_TEST

/* not even the header fits */
static int header_child(const void *arg)
{
    rd_tracefile t;
    (void)arg;
    if (rd_tracefile_open(&t, g_tmpfd, g_tmp) != -EFBIG)
        return 1;
    return rd_tracefile_close(&t) == -EFBIG ? 0 : 2;
}

START_TEST(test_tracefile_cut_header)
{
    ck_assert_int_eq(limited(header_child, NULL, 10), 0);
    ck_assert_int_eq(access(g_path, F_OK), -1); /* a file that is no trace is removed */
}
END_TEST

static void tmp_setup(void)
{
    snprintf(g_tmp, sizeof g_tmp, "/tmp/check_tracefile.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(g_tmp));
    snprintf(g_path, sizeof g_path, "%s/trace.ltr", g_tmp);
    g_tmpfd = open(g_tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ck_assert_int_ge(g_tmpfd, 0);
}

static void tmp_teardown(void)
{
    close(g_tmpfd);
    unlink(g_path);
    rmdir(g_tmp);
}

UT_MAIN("tracefile", tmp_setup, tmp_teardown, test_tracefile_whole, test_tracefile_exists,
        test_tracefile_cut_buffered, test_tracefile_cut_direct, test_tracefile_cut_header,
        test_tracefile_plain, test_tracefile_corrupt, test_tracefile_pieces)
