/* check_ring: the shm ring of proto/lt_ring: names, sizes, the header
 * checks a consumer makes, the mirror mapping, full/empty accounting, and
 * a two-thread run of 100M records with every byte checked.
 *
 * Ring names carry the test runner's pid; an unchecked fixture (run in the
 * runner, not the forked test) unlinks them, so a failing test leaves no
 * segment behind.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lt_ring.h"
#include "ut_main.h"

#define SMALL LT_RING_MIN_SIZE

static const char *const tags[] = {"rt", "eperm", "hdr", "wrap", "full", "big", "late", "head",
                                   "mt", "small", "mode"};
static char g_base[32];

static const char *ring_name(const char *tag)
{
    static char buf[LT_RING_NAME_MAX + 1];
    snprintf(buf, sizeof buf, "%s-%s", g_base, tag);
    return buf;
}

static void unlink_all(void)
{
    for (size_t i = 0; i < sizeof tags / sizeof *tags; i++)
        lt_ring_unlink(ring_name(tags[i]));
}

static void names_setup(void)
{
    snprintf(g_base, sizeof g_base, "ck-ring-%ld", (long)getpid());
    unlink_all();
}

static void names_teardown(void)
{
    unlink_all();
}

/* Creates ring `tag` as producer and opens it as consumer. */
static void pair(const char *tag, uint64_t size, lt_ring *prod, lt_ring *cons)
{
    ck_assert_int_eq(lt_ring_create(prod, ring_name(tag), size), 0);
    ck_assert_int_eq(lt_ring_open(cons, ring_name(tag), (long)getuid()), 0);
}

static void fill(uint8_t *p, uint64_t n, unsigned seed)
{
    for (uint64_t i = 0; i < n; i++)
        p[i] = (uint8_t)(i * 7 + seed);
}

static int filled(const uint8_t *p, uint64_t n, unsigned seed)
{
    for (uint64_t i = 0; i < n; i++)
        if (p[i] != (uint8_t)(i * 7 + seed))
            return 0;
    return 1;
}

/* Producer: writes n bytes as one record and publishes it. */
static void put(lt_ring *r, uint64_t n, unsigned seed)
{
    uint8_t *p = lt_ring_reserve(r, n);
    ck_assert_ptr_nonnull(p);
    fill(p, n, seed);
    lt_ring_commit(r, n);
    lt_ring_publish(r);
}

START_TEST(test_ring_name_check)
{
    char longest[LT_RING_NAME_MAX + 2];
    memset(longest, 'a', sizeof longest);
    longest[LT_RING_NAME_MAX] = 0;
    ck_assert_int_eq(lt_ring_name_check(longest), 0);
    longest[LT_RING_NAME_MAX] = 'a';
    longest[LT_RING_NAME_MAX + 1] = 0;
    ck_assert_int_eq(lt_ring_name_check(longest), -EINVAL);

    const char *good[] = {"a", "ring-1", "A.b_c-9", "x..y", "0"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        ck_assert_msg(lt_ring_name_check(good[i]) == 0, "rejected %s", good[i]);
    const char *bad[] = {"", "..", ".", ".hidden", "a/b", "/abs", "../x", "a b",
                         "a\nb", "ü", "a:b", "a*"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_msg(lt_ring_name_check(bad[i]) == -EINVAL, "accepted \"%s\"", bad[i]);
    ck_assert_int_eq(lt_ring_name_check(NULL), -EINVAL);
    ck_assert_int_eq(lt_ring_name_check(LT_RING_NAME_SCRIPT), -EINVAL); /* no ring's name */
}
END_TEST

/* argv (NULL-terminated) -> the ring name lt_ring_name_of_args gives */
static void expect_name(const char *want, const char *const *argv)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    char buf[LT_RING_NAME_MAX + 1];
    lt_ring_name_of_args(argc, (char *const *)argv, buf, sizeof buf);
    ck_assert_msg(!strcmp(buf, want), "%s: got %s, want %s", argv[0] ? argv[0] : "()", buf,
                  want);
    ck_assert_int_eq(lt_ring_name_check(buf), 0);
}

START_TEST(test_ring_name_of_args)
{
    expect_name("app", (const char *[]){"lua5.1", "app.lua", "x.lua", NULL});
    expect_name("app", (const char *[]){"/usr/bin/lua5.1", "-lluatrace", "dir/app.lua", NULL});
    expect_name("app", (const char *[]){"lua", "-l", "luatrace", "-e", "x=1", "app.lua", NULL});
    expect_name("tool", (const char *[]){"lua5.1", "tool", "data.lua", NULL}); /* the script */
    expect_name("app", (const char *[]){"lua5.1", "-i", "--", "app.lua", NULL});
    expect_name("lua", (const char *[]){"lua5.1", "-", "app.lua", NULL}); /* stdin */
    expect_name("lua", (const char *[]){"lua5.1", "-e", "print(1)", NULL});
    expect_name("lua", (const char *[]){"lua5.1", NULL});
    expect_name("host", (const char *[]){"./build/host", "app.lua", NULL}); /* a C host */
    expect_name("a_b_c", (const char *[]){"luajit", "a b.c.lua", NULL});
    expect_name("_____", (const char *[]){"lua5.1", "\xd0\xb9\xd0\xb9\x01.lua", NULL});
    expect_name("_lua", (const char *[]){"lua5.1", ".lua", NULL}); /* "." is no name byte */
    expect_name("lua", (const char *[]){NULL});
    char long_name[100];
    memset(long_name, 'n', sizeof long_name);
    memcpy(long_name + 90, ".lua", 5);
    char want[41];
    memset(want, 'n', 40);
    want[40] = 0;
    expect_name(want, (const char *[]){"lua5.1", long_name, NULL});
}
END_TEST

static int loads(const char *const *argv)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    return lt_args_loads(argc, (char *const *)argv, "luatrace");
}

/* -l before the script, joined or not, in a Lua interpreter only */
START_TEST(test_args_loads)
{
    ck_assert(loads((const char *[]){"lua5.1", "-lluatrace", "app.lua", NULL}));
    ck_assert(loads((const char *[]){"/usr/bin/lua5.1", "-l", "luatrace", "app.lua", NULL}));
    ck_assert(loads((const char *[]){"lua", "-e", "x=1", "-lfoo", "-lluatrace", NULL}));
    ck_assert(!loads((const char *[]){"lua5.1", "app.lua", "-lluatrace", NULL})); /* app's */
    ck_assert(!loads((const char *[]){"lua5.1", "-lluatrace.profile", "app.lua", NULL}));
    ck_assert(!loads((const char *[]){"lua5.1", "-e", "-lluatrace", "app.lua", NULL}));
    ck_assert(!loads((const char *[]){"lua5.1", "--", "-lluatrace", NULL}));
    ck_assert(!loads((const char *[]){"lua5.1", "-l", NULL}));
    ck_assert(!loads((const char *[]){"./host", "-lluatrace", "app.lua", NULL}));
    ck_assert(!loads((const char *[]){NULL}));
}
END_TEST

START_TEST(test_ring_parse_size)
{
    static const struct {
        const char *s;
        uint64_t v;
    } good[] = {{"64K", 65536},       {"64k", 65536},        {"16M", 16u << 20},
                {"1G", 1u << 30},     {"65536", 65536},      {"1024M", 1u << 30},
                {"512K", 512u << 10}, {"1073741824", 1u << 30}};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        uint64_t v = 0;
        ck_assert_msg(lt_ring_parse_size(good[i].s, &v) == 0, "rejected %s", good[i].s);
        ck_assert_uint_eq(v, good[i].v);
    }
    const char *bad[] = {"0", "0K", "3M", "96K", "2G", "2048M", "32K", "abc", "-1", "-64K",
                         "", "K", "16MM", "16Q", "64K ", "18446744073709551616",
                         "4294967296G", "2147483648"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        uint64_t v = 12345;
        ck_assert_msg(lt_ring_parse_size(bad[i], &v) == -EINVAL, "accepted \"%s\"", bad[i]);
        ck_assert_uint_eq(v, 12345); /* untouched on error */
    }
    uint64_t v;
    ck_assert_int_eq(lt_ring_parse_size(NULL, &v), -EINVAL);
}
END_TEST

START_TEST(test_ring_round_trip)
{
    lt_ring p, c, again;
    const char *name = ring_name("rt");
    pair("rt", SMALL, &p, &c);
    ck_assert_int_eq(lt_ring_create(&again, name, SMALL), -EEXIST);
    ck_assert_uint_eq(c.size, SMALL);
    ck_assert_uint_eq(c.hdr->producer_pid, (uint32_t)getpid());
    ck_assert_uint_eq(atomic_load(&p.hdr->cons_state), LT_CONS_ATTACHED);

    put(&p, 100, 1);
    const uint8_t *q;
    ck_assert_int_eq(lt_ring_peek(&c, &q), 100);
    ck_assert(filled(q, 100, 1));
    lt_ring_consume(&c, 100);
    ck_assert_uint_eq(atomic_load(&p.hdr->tail), 100);
    ck_assert_int_eq(lt_ring_peek(&c, &q), 0);

    /* mappings outlive the name */
    ck_assert_int_eq(lt_ring_unlink(name), 0);
    ck_assert_int_eq(lt_ring_unlink(name), -ENOENT);
    put(&p, 10, 2);
    ck_assert_int_eq(lt_ring_peek(&c, &q), 10);
    ck_assert(filled(q, 10, 2));
    lt_ring_close(&c);
    lt_ring_close(&c); /* idempotent */
    lt_ring_close(&p);

    ck_assert_int_eq(lt_ring_create(&p, "bad/name", SMALL), -EINVAL);
    ck_assert_int_eq(lt_ring_create(&p, name, SMALL + 1), -EINVAL);
    ck_assert_int_eq(lt_ring_create(&p, name, SMALL / 2), -EINVAL);
    ck_assert_int_eq(lt_ring_create(&p, name, LT_RING_MAX_SIZE * 2), -EINVAL);
    ck_assert_int_eq(lt_ring_open(&c, "..", -1), -EINVAL);
    ck_assert_int_eq(lt_ring_unlink("a/b"), -EINVAL);
}
END_TEST

START_TEST(test_ring_open_missing)
{
    lt_ring c;
    ck_assert_int_eq(lt_ring_open(&c, ring_name("never-created"), (long)getuid()), -ENOENT);
    ck_assert_ptr_null(c.map);
    lt_ring_close(&c);
}
END_TEST

START_TEST(test_ring_open_wrong_uid)
{
    lt_ring p, c;
    const char *name = ring_name("eperm");
    ck_assert_int_eq(lt_ring_create(&p, name, SMALL), 0);
    ck_assert_int_eq(lt_ring_open(&c, name, (long)getuid() + 1), -EPERM);
    ck_assert_int_eq(lt_ring_open(&c, name, (long)getuid()), 0);
    lt_ring_close(&c);
    ck_assert_int_eq(lt_ring_open(&c, name, -1), 0); /* no owner check asked */
    lt_ring_close(&c);
    lt_ring_close(&p);
}
END_TEST

/* A segment readable by group or others is refused like a foreign one. */
START_TEST(test_ring_open_wrong_mode)
{
    lt_ring p, c;
    const char *name = ring_name("mode");
    ck_assert_int_eq(lt_ring_create(&p, name, SMALL), 0);
    char full[128];
    snprintf(full, sizeof full, "%s%s", LT_RING_PREFIX, name);
    int fd = shm_open(full, O_RDWR, 0);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(fchmod(fd, 0640), 0);
    close(fd);
    ck_assert_int_eq(lt_ring_open(&c, name, (long)getuid()), -EPERM);
    lt_ring_close(&p);
}
END_TEST

static void expect_bad_header(const char *name)
{
    lt_ring c;
    ck_assert_int_eq(lt_ring_open(&c, name, (long)getuid()), -EPROTO);
    ck_assert_ptr_null(c.map);
}

START_TEST(test_ring_corrupt_header)
{
    lt_ring p;
    const char *name = ring_name("hdr");
    ck_assert_int_eq(lt_ring_create(&p, name, SMALL), 0);
    struct lt_ring_hdr *h = p.hdr, saved = *h;

    memcpy(&h->magic, "garbage!", 8);
    expect_bad_header(name);
    h->magic = saved.magic;
    h->size = SMALL * 2; /* claims more than the object holds */
    expect_bad_header(name);
    h->size = SMALL / 2;
    expect_bad_header(name);
    h->size = SMALL + 4096; /* not a power of two */
    expect_bad_header(name);
    h->size = 0;
    expect_bad_header(name);
    h->size = saved.size;
    h->version = LT_RING_VERSION + 1;
    expect_bad_header(name);
    h->version = saved.version;
    h->hdr_size = 64;
    expect_bad_header(name);
    h->hdr_size = saved.hdr_size;

    lt_ring c;
    ck_assert_int_eq(lt_ring_open(&c, name, (long)getuid()), 0);
    lt_ring_close(&c);
    lt_ring_close(&p);
}
END_TEST

/* An object too small to hold a header and the smallest ring. */
START_TEST(test_ring_open_too_small)
{
    char full[128];
    snprintf(full, sizeof full, "%s%s", LT_RING_PREFIX, ring_name("small"));
    int fd = shm_open(full, O_RDWR | O_CREAT | O_EXCL, 0600);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(ftruncate(fd, 100), 0);
    close(fd);
    expect_bad_header(ring_name("small"));
}
END_TEST

START_TEST(test_ring_wrap_around)
{
    lt_ring p, c;
    pair("wrap", SMALL, &p, &c);
    const uint8_t *q;
    uint64_t rec = 1000, n = SMALL / rec; /* n records end 536 bytes short */
    for (uint64_t i = 0; i < n; i++) {
        put(&p, rec, (unsigned)i);
        ck_assert_int_eq(lt_ring_peek(&c, &q), (int64_t)rec);
        ck_assert(filled(q, rec, (unsigned)i));
        lt_ring_consume(&c, rec);
    }
    uint64_t before_end = SMALL - n * rec;
    ck_assert_uint_lt(before_end, rec);
    uint8_t *w = lt_ring_reserve(&p, rec);
    ck_assert_ptr_eq(w, p.data + SMALL - before_end); /* one piece, across the end */
    fill(w, rec, 77);
    lt_ring_commit(&p, rec);
    lt_ring_publish(&p);

    ck_assert_int_eq(lt_ring_peek(&c, &q), (int64_t)rec);
    ck_assert_ptr_eq(q, c.data + SMALL - before_end);
    ck_assert(filled(q, rec, 77));
    /* the part past the end landed at the start of the ring itself */
    ck_assert_mem_eq(c.data, q + before_end, rec - before_end);
    lt_ring_consume(&c, rec);
    ck_assert_int_eq(lt_ring_peek(&c, &q), 0);
    ck_assert_ptr_eq(q, c.data + rec - before_end);
    lt_ring_close(&c);
    lt_ring_close(&p);
}
END_TEST

START_TEST(test_ring_full)
{
    lt_ring p, c;
    pair("full", SMALL, &p, &c);
    const uint8_t *q;
    put(&p, SMALL, 3); /* exactly the whole ring */
    ck_assert_ptr_null(lt_ring_reserve(&p, 1));
    ck_assert_int_eq(lt_ring_peek(&c, &q), (int64_t)SMALL);
    ck_assert(filled(q, SMALL, 3));
    lt_ring_consume(&c, 10);
    ck_assert_ptr_null(lt_ring_reserve(&p, 11));
    ck_assert_ptr_nonnull(lt_ring_reserve(&p, 10));
    lt_ring_consume(&c, SMALL - 10);
    ck_assert_ptr_nonnull(lt_ring_reserve(&p, SMALL));
    lt_ring_close(&c);
    lt_ring_close(&p);
}
END_TEST

START_TEST(test_ring_record_larger_than_space)
{
    lt_ring p, c;
    pair("big", SMALL, &p, &c);
    const uint8_t *q;
    put(&p, SMALL - 100, 4);
    ck_assert_ptr_null(lt_ring_reserve(&p, 101));
    ck_assert_ptr_null(lt_ring_reserve(&p, SMALL));
    ck_assert_ptr_nonnull(lt_ring_reserve(&p, 100));
    put(&p, 100, 5);
    ck_assert_ptr_null(lt_ring_reserve(&p, 1));
    ck_assert_int_eq(lt_ring_peek(&c, &q), (int64_t)SMALL);
    ck_assert(filled(q, SMALL - 100, 4));
    ck_assert(filled(q + SMALL - 100, 100, 5));
    lt_ring_consume(&c, SMALL - 100);
    ck_assert_ptr_null(lt_ring_reserve(&p, SMALL - 99));
    ck_assert_ptr_nonnull(lt_ring_reserve(&p, SMALL - 100));
    lt_ring_close(&c);
    lt_ring_close(&p);
}
END_TEST

/* A consumer that attaches late reads everything written before. */
START_TEST(test_ring_late_consumer)
{
    lt_ring p, c;
    const char *name = ring_name("late");
    ck_assert_int_eq(lt_ring_create(&p, name, SMALL), 0);
    uint64_t total = 0;
    for (unsigned i = 0; i < 50; i++) {
        uint64_t n = 1 + i * 13;
        uint8_t *w = lt_ring_reserve(&p, n);
        ck_assert_ptr_nonnull(w);
        fill(w, n, i);
        lt_ring_commit(&p, n); /* publishes by itself in batches */
        total += n;
    }
    lt_ring_publish(&p);
    ck_assert_uint_eq(atomic_load(&p.hdr->cons_state), LT_CONS_NONE);
    ck_assert_int_eq(lt_ring_open(&c, name, (long)getuid()), 0);
    const uint8_t *q;
    ck_assert_int_eq(lt_ring_peek(&c, &q), (int64_t)total);
    for (unsigned i = 0; i < 50; i++) {
        uint64_t n = 1 + i * 13;
        ck_assert_msg(filled(q, n, i), "record %u", i);
        q += n;
    }
    lt_ring_consume(&c, total);
    lt_ring_close(&c);

    /* a second consumer resumes where the first one stopped */
    put(&p, 33, 9);
    ck_assert_int_eq(lt_ring_open(&c, name, (long)getuid()), 0);
    ck_assert_int_eq(lt_ring_peek(&c, &q), 33);
    ck_assert(filled(q, 33, 9));
    lt_ring_close(&c);
    lt_ring_close(&p);
}
END_TEST

START_TEST(test_ring_impossible_head)
{
    lt_ring p, c;
    pair("head", SMALL, &p, &c);
    const uint8_t *q;
    put(&p, 500, 1);
    ck_assert_int_eq(lt_ring_peek(&c, &q), 500);
    lt_ring_consume(&c, 200);
    atomic_store(&p.hdr->head, 200 + SMALL + 1); /* more than a ring ahead */
    ck_assert_int_eq(lt_ring_peek(&c, &q), -EPROTO);
    atomic_store(&p.hdr->head, 199); /* behind the consumer */
    ck_assert_int_eq(lt_ring_peek(&c, &q), -EPROTO);
    atomic_store(&p.hdr->head, UINT64_MAX);
    ck_assert_int_eq(lt_ring_peek(&c, &q), -EPROTO);
    atomic_store(&p.hdr->head, 200 + SMALL); /* exactly full is possible */
    ck_assert_int_eq(lt_ring_peek(&c, &q), (int64_t)SMALL);
    /* the consumer keeps its own tail: a producer scribbling on it is ignored */
    atomic_store(&p.hdr->head, 500);
    atomic_store(&p.hdr->tail, 12345678);
    ck_assert_int_eq(lt_ring_peek(&c, &q), 300);
    lt_ring_close(&c);
    lt_ring_close(&p);
}
END_TEST

/* ---- two threads, 100M records ---- */

#define MT_RECORDS 100000000ull
#define MT_SIZE (1u << 20)

static const uint64_t mt_key[8] = {
    0x0123456789abcdefull, 0xfedcba9876543210ull, 0x0f1e2d3c4b5a6978ull, 0x8796a5b4c3d2e1f0ull,
    0x55aa55aa33cc33ccull, 0xc3a5c3a5f00ff00full, 0x1122334455667788ull, 0x99aabbccddeeff00ull,
};

static inline uint64_t mt_mix(uint64_t seq)
{
    return seq * 0x9E3779B97F4A7C15ull;
}

static inline unsigned mt_len(uint64_t seq)
{
    return 1 + (unsigned)(mt_mix(seq) >> 58); /* 1..64 */
}

/* The 64-byte image of record seq; a record is its first mt_len bytes. */
static inline void mt_image(uint64_t seq, uint64_t w[8])
{
    uint64_t x = mt_mix(seq) ^ seq;
    for (int i = 0; i < 8; i++)
        w[i] = x ^ mt_key[i];
}

static inline void mt_relax(unsigned *spins)
{
    if (++*spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        return;
    }
    *spins = 0;
    sched_yield();
}

typedef struct mt_ctx {
    lt_ring *r;
    uint64_t done;
    uint64_t bad_seq; /* first record that read back wrong, or UINT64_MAX */
    int err;
} mt_ctx;

static void *mt_producer(void *arg)
{
    mt_ctx *x = arg;
    lt_ring *r = x->r;
    uint64_t w[8];
    for (uint64_t seq = 0; seq < MT_RECORDS; seq++) {
        unsigned n = mt_len(seq), spins = 0;
        uint8_t *p;
        while (!(p = lt_ring_reserve(r, n))) {
            lt_ring_publish(r); /* full: make sure the consumer sees everything */
            mt_relax(&spins);
        }
        mt_image(seq, w);
        memcpy(p, w, n);
        lt_ring_commit(r, n);
    }
    lt_ring_publish(r);
    x->done = MT_RECORDS;
    return NULL;
}

static void *mt_consumer(void *arg)
{
    mt_ctx *x = arg;
    lt_ring *r = x->r;
    uint64_t seq = 0, w[8];
    unsigned spins = 0;
    while (seq < MT_RECORDS) {
        const uint8_t *p;
        int64_t avail = lt_ring_peek(r, &p);
        if (avail < 0) {
            x->err = (int)avail;
            break;
        }
        uint64_t off = 0;
        for (unsigned n; seq < MT_RECORDS && off + (n = mt_len(seq)) <= (uint64_t)avail; seq++) {
            mt_image(seq, w);
            if (memcmp(p + off, w, n) != 0 && x->bad_seq == UINT64_MAX)
                x->bad_seq = seq;
            off += n;
        }
        if (off)
            lt_ring_consume(r, off);
        else
            mt_relax(&spins);
    }
    x->done = seq;
    return NULL;
}

START_TEST(test_ring_threads_100m)
{
    lt_ring p, c;
    pair("mt", MT_SIZE, &p, &c);
    mt_ctx px = {&p, 0, UINT64_MAX, 0}, cx = {&c, 0, UINT64_MAX, 0};
    pthread_t tp, tc;
    ck_assert_int_eq(pthread_create(&tc, NULL, mt_consumer, &cx), 0);
    ck_assert_int_eq(pthread_create(&tp, NULL, mt_producer, &px), 0);
    pthread_join(tp, NULL);
    pthread_join(tc, NULL);
    ck_assert_int_eq(cx.err, 0);
    ck_assert_msg(cx.bad_seq == UINT64_MAX, "record %llu read back wrong",
                  (unsigned long long)cx.bad_seq);
    ck_assert_uint_eq(px.done, MT_RECORDS);
    ck_assert_uint_eq(cx.done, MT_RECORDS);
    ck_assert_uint_eq(atomic_load(&p.hdr->head), atomic_load(&p.hdr->tail));
    const uint8_t *q;
    ck_assert_int_eq(lt_ring_peek(&c, &q), 0);
    lt_ring_close(&c);
    lt_ring_close(&p);
}
END_TEST

/* ---- suite ---- */

int main(void)
{
    static const struct ut_fixture fx = {NULL, NULL, names_setup, names_teardown, 0};
    static const struct ut_fixture long_run = {NULL, NULL, names_setup, names_teardown, 240};
    const TTest *fx_tests[] = {test_ring_name_check, test_ring_name_of_args, test_args_loads,
                               test_ring_parse_size, test_ring_round_trip, test_ring_open_missing,
                               test_ring_open_wrong_uid, test_ring_open_wrong_mode,
                               test_ring_corrupt_header, test_ring_open_too_small,
                               test_ring_wrap_around, test_ring_full,
                               test_ring_record_larger_than_space, test_ring_late_consumer,
                               test_ring_impossible_head};
    const TTest *long_run_tests[] = {test_ring_threads_100m};
    Suite *s = suite_create("ring");
    ut_add_all(s, fx_tests, UT_N(fx_tests), &fx);
    ut_add_all(s, long_run_tests, UT_N(long_run_tests), &long_run);
    return ut_run(s);
}
