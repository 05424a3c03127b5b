/* check_tracefile: trace.ltr as recorderd/rd_tracefile writes it: whole, and
 * cut back to its last complete record when a write fails (RLIMIT_FSIZE with
 * SIGXFSZ ignored: write() fails with EFBIG part-way), with records whose
 * length only the stream's decoder state tells (steps after a LINE). */
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

#include "lt_file.h"
#include "rd_tracefile.h"

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

/* Writes the stream in chunks of about `chunk` bytes, whole records each. */
static int write_chunks(rd_tracefile *t, const stream *s, size_t chunk)
{
    size_t r = 0, from = 0;
    int e = 0;
    while (r < s->nrec) {
        size_t first = r;
        while (r < s->nrec && s->ends[r] - from < chunk)
            r++;
        r += r == first; /* at least one record */
        int k = rd_tracefile_write(t, s->p + from, s->ends[r - 1] - from, &s->at[first]);
        e = e ? e : k;
        from = s->ends[r - 1];
    }
    return e;
}

static char *read_all(size_t *n)
{
    FILE *f = fopen(g_path, "rb");
    ck_assert_ptr_nonnull(f);
    char *buf = malloc(8u << 20);
    *n = fread(buf, 1, 8u << 20, f);
    fclose(f);
    return buf;
}

static void check_prefix(const stream *s, size_t max)
{
    size_t n, want = 0;
    char *buf = read_all(&n);
    for (size_t r = 0; r < s->nrec && s->ends[r] <= max; r++)
        want = s->ends[r];
    ck_assert_uint_eq(n, LT_FILE_HDR_SIZE + want); /* the last whole record */
    ck_assert_int_eq(memcmp(buf, LT_FILE_MAGIC, 8), 0);
    ck_assert_int_eq(memcmp(buf + LT_FILE_HDR_SIZE, s->p, want), 0);
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
    if (write_chunks(&t, a->s, a->chunk) != -EFBIG || t.fd != -1)
        return 2;
    if (rd_tracefile_write(&t, a->s->p, a->s->ends[0], &a->s->at[0]) != -EFBIG)
        return 3;
    return rd_tracefile_close(&t) == -EFBIG ? 0 : 4;
}

static void cut_case(size_t bytes, size_t chunk, size_t max)
{
    stream s;
    make_stream(&s, bytes);
    cut_args a = {&s, chunk};
    ck_assert_int_eq(limited(cut_child, &a, LT_FILE_HDR_SIZE + max), 0);
    check_prefix(&s, max);
    free_stream(&s);
}

START_TEST(test_tracefile_whole)
{
    stream s;
    rd_tracefile t;
    make_stream(&s, 3u << 20);
    ck_assert_int_eq(rd_tracefile_open(&t, g_tmpfd, g_tmp), 0);
    ck_assert_int_eq(write_chunks(&t, &s, 5000), 0);
    ck_assert_int_eq(rd_tracefile_close(&t), 0);
    ck_assert_int_eq(t.err, 0);
    check_prefix(&s, s.n);
    free_stream(&s);
}
END_TEST

START_TEST(test_tracefile_exists)
{
    rd_tracefile t;
    fclose(fopen(g_path, "w"));
    ck_assert_int_eq(rd_tracefile_open(&t, g_tmpfd, g_tmp), -EEXIST);
    ck_assert_int_eq(rd_tracefile_write(&t, (const uint8_t *)"\x01", 1, &(lt_dec){0}), -EEXIST);
    ck_assert_int_eq(rd_tracefile_close(&t), -EEXIST);
    ck_assert_int_eq(access(g_path, F_OK), 0); /* not ours: left alone */
}
END_TEST

/* small chunks gathered in the buffer: the flush fails part-way */
START_TEST(test_tracefile_cut_buffered)
{
    for (size_t max = 300001; max < 300008; max++) {
        cut_case(2u << 20, 3000, max);
        unlink(g_path);
    }
}
END_TEST

/* one chunk over the buffer's size goes straight to the file */
START_TEST(test_tracefile_cut_direct)
{
    cut_case(3u << 20, 2u << 20, 1500003);
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

int main(void)
{
    Suite *s = suite_create("tracefile");
    const struct {
        const char *name;
        const TTest *t;
    } cases[] = {
        {"whole", test_tracefile_whole},
        {"exists", test_tracefile_exists},
        {"cut_buffered", test_tracefile_cut_buffered},
        {"cut_direct", test_tracefile_cut_direct},
        {"cut_header", test_tracefile_cut_header},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TCase *tc = tcase_create(cases[i].name);
        tcase_add_checked_fixture(tc, tmp_setup, tmp_teardown);
        tcase_add_test(tc, cases[i].t);
        suite_add_tcase(s, tc);
    }
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
