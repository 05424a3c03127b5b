/* check_event: the record codec of proto/lt_event: the inline encoders at
 * every integer width, the decoder on valid, truncated, malformed and
 * random input, and msgpack-c reading the same stream.
 */
#include <check.h>
#include <errno.h>
#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lt_event.h"
#include "lt_file.h"
#include "lt_split.h"
#include "ut_main.h"

static const uint64_t bounds[] = {0,      127,         128,           255,
                                  256,    65535,       65536,         0xffffffffull,
                                  1ull << 32, UINT64_MAX};
#define NB (sizeof bounds / sizeof *bounds)
static const uint32_t str_lens[] = {0, 1, 31, 32, 255, 256, 4095, LT_STR_MAX};
#define NS (sizeof str_lens / sizeof *str_lens)

/* One record as the test meant it. */
typedef struct rec {
    uint8_t kind;
    uint64_t a[LT_EVENT_MAX_ARGS];
    uint32_t slen;
    size_t off, len; /* where it sits in the stream */
} rec;

typedef struct stream {
    uint8_t *buf;
    size_t n;
    rec *recs;
    size_t nrec;
} stream;

static char g_text[LT_STR_MAX + 1];

static int is_str_arg(unsigned kind, unsigned i)
{
    return kind == LT_EV_STR && i == 1;
}

static void put_rec(stream *st, const rec *r)
{
    uint8_t *p = st->buf + st->n;
    uint8_t *q = lt_put_head(p, (enum lt_kind)r->kind, lt_event_nargs[r->kind]);
    for (unsigned i = 0; i < lt_event_nargs[r->kind]; i++)
        q = is_str_arg(r->kind, i) ? lt_put_str(q, g_text, r->slen) : lt_put_uint(q, r->a[i]);
    rec *d = &st->recs[st->nrec++];
    *d = *r;
    d->off = st->n;
    d->len = (size_t)(q - p);
    st->n += d->len;
}

/* Every kind, every boundary value at every argument position, and (STR)
 * every string length class. */
static void build(stream *st)
{
    for (size_t i = 0; i < sizeof g_text - 1; i++)
        g_text[i] = (char)('a' + i % 26);
    st->buf = malloc(1u << 20);
    st->recs = calloc(LT_EV_COUNT * NB * 2, sizeof *st->recs);
    ck_assert(st->buf && st->recs);
    st->n = st->nrec = 0;
    for (unsigned k = 0; k < LT_EV_COUNT; k++) {
        for (size_t j = 0; j < NB; j++) {
            rec r = {.kind = (uint8_t)k, .slen = str_lens[j % NS]};
            for (unsigned i = 0; i < lt_event_nargs[k]; i++)
                r.a[i] = is_str_arg(k, i) ? 0 : bounds[(j + i) % NB];
            put_rec(st, &r);
        }
    }
}

static void check_decoded(const rec *r, const lt_event *ev, const uint8_t *base)
{
    ck_assert_uint_eq(ev->kind, r->kind);
    ck_assert_uint_eq(ev->nargs, lt_event_nargs[r->kind]);
    for (unsigned i = 0; i < ev->nargs; i++)
        ck_assert_uint_eq(ev->a[i], r->a[i]);
    if (r->kind == LT_EV_STR) {
        ck_assert_uint_eq(ev->slen, r->slen);
        ck_assert_ptr_eq(ev->str, (const char *)base + r->off + r->len - r->slen);
        ck_assert(memcmp(ev->str, g_text, r->slen) == 0);
    } else {
        ck_assert_ptr_null(ev->str);
    }
}

/* A trace file of version 3 (before DIR) or 4 is still read, flags
 * ignored; 17 is written (5 to 16 are still read: BIAS and CODE came with
 * 7, LINES with 8, WAIT with 9, LBIAS and LHOOK with 10, split blocks with
 * 11, TICK with 12, MEM with 13, MEM's short forms with 14, CLOCK's
 * LT_CLOCK_BIAS_AFTER with 15, SBIAS with 16, WBIAS and WALK with 17), its flags say zstd, zstd and split, or nothing; split without zstd,
 * split before 11, unknown flags and other versions are refused with a
 * message. */
START_TEST(test_file_versions)
{
    uint8_t h[LT_FILE_HDR_SIZE];
    char err[160];
    uint32_t flags;
    lt_file_header(h, LT_FILE_ZSTD | LT_FILE_SPLIT);
    ck_assert_uint_eq(h[8], 17);
    ck_assert_int_eq(lt_file_check(h, sizeof h, &flags, err, sizeof err), 0);
    ck_assert_uint_eq(flags, LT_FILE_ZSTD | LT_FILE_SPLIT);
    lt_file_header(h, 0);
    ck_assert_int_eq(lt_file_check(h, sizeof h, &flags, err, sizeof err), 0);
    ck_assert_uint_eq(flags, 0);
    h[12] = LT_FILE_SPLIT; /* split blocks are zstd's */
    ck_assert_int_eq(lt_file_check(h, sizeof h, &flags, err, sizeof err), -EPROTO);
    ck_assert_ptr_nonnull(strstr(err, "flags 0x2"));
    h[12] = 4; /* a flag this build does not know */
    ck_assert_int_eq(lt_file_check(h, sizeof h, &flags, err, sizeof err), -EPROTO);
    ck_assert_ptr_nonnull(strstr(err, "flags 0x4"));
    h[12] = LT_FILE_ZSTD; /* versions 5 to 10: zstd, never split */
    for (uint8_t v = 5; v <= 10; v++) {
        h[8] = v;
        h[12] = LT_FILE_ZSTD;
        ck_assert_int_eq(lt_file_check(h, sizeof h, &flags, err, sizeof err), 0);
        ck_assert_uint_eq(flags, LT_FILE_ZSTD);
        h[12] = LT_FILE_ZSTD | LT_FILE_SPLIT;
        ck_assert_int_eq(lt_file_check(h, sizeof h, &flags, err, sizeof err), -EPROTO);
    }
    for (uint8_t v = 3; v <= 4; v++) { /* reserved flags then: not looked at */
        h[8] = v;
        ck_assert_int_eq(lt_file_check(h, sizeof h, &flags, err, sizeof err), 0);
        ck_assert_uint_eq(flags, 0);
    }
    for (uint8_t v = 0; v < 19; v++) {
        h[8] = v;
        if (v >= 3 && v <= 17)
            continue;
        ck_assert_int_eq(lt_file_check(h, sizeof h, &flags, err, sizeof err), -EPROTO);
        ck_assert_ptr_nonnull(strstr(err, "this build reads versions 3 to 17"));
    }
}
END_TEST

START_TEST(test_event_tables)
{
    ck_assert_uint_eq(LT_EV_COUNT, 27);
    for (unsigned k = 0; k < LT_EV_COUNT; k++) {
        ck_assert(lt_event_name[k] && lt_event_name[k][0]);
        ck_assert_uint_le(lt_event_nargs[k], LT_EVENT_MAX_ARGS);
        ck_assert_uint_le(lt_event_nargs[k] + 1, 15); /* fits a fixarray */
        for (unsigned j = 0; j < k; j++)
            ck_assert_msg(lt_event_letter[j] != lt_event_letter[k], "letter %c twice",
                          lt_event_letter[k]);
    }
    ck_assert_str_eq(lt_event_name[LT_EV_CALL], "CALL");
    ck_assert_int_eq(lt_event_letter[LT_EV_RET], '<');
}
END_TEST

START_TEST(test_event_uint_widths)
{
    static const struct {
        uint64_t v;
        size_t len;
        uint8_t first;
    } w[] = {{0, 1, 0x00},          {127, 1, 0x7f},       {128, 2, 0xcc},
             {255, 2, 0xcc},        {256, 3, 0xcd},       {65535, 3, 0xcd},
             {65536, 5, 0xce},      {0xffffffffull, 5, 0xce}, {1ull << 32, 9, 0xcf},
             {UINT64_MAX, 9, 0xcf}};
    uint8_t b[16];
    for (size_t i = 0; i < sizeof w / sizeof *w; i++) {
        ck_assert_uint_eq((size_t)(lt_put_uint(b, w[i].v) - b), w[i].len);
        ck_assert_uint_eq(b[0], w[i].first);
    }
    uint8_t *q = lt_put_uint(b, 0x0102030405060708ull);
    ck_assert_uint_eq((size_t)(q - b), 9);
    ck_assert_mem_eq(b, "\xcf\x01\x02\x03\x04\x05\x06\x07\x08", 9);
    ck_assert_uint_eq((size_t)(lt_put_str(b, "", 0) - b), 1);
    ck_assert_uint_eq(b[0], 0xa0);
    ck_assert(LT_EVENT_HOT_MAX >= 2 + 3 * 9); /* any record without a string */
}
END_TEST

START_TEST(test_event_round_trip)
{
    stream st;
    build(&st);
    lt_event ev;
    size_t off = 0;
    for (size_t i = 0; i < st.nrec; i++) {
        const rec *r = &st.recs[i];
        ck_assert_uint_eq(off, r->off);
        int k = lt_event_decode(st.buf + off, st.n - off, &ev); /* more bytes follow */
        ck_assert_msg(k == (int)r->len, "record %zu (%s): %d != %zu", i,
                      lt_event_name[r->kind], k, r->len);
        check_decoded(r, &ev, st.buf);
        ck_assert_int_eq(lt_event_decode(st.buf + off, r->len, &ev), (int)r->len);
        off += (size_t)k;
    }
    ck_assert_uint_eq(off, st.n);
    free(st.buf);
    free(st.recs);
}
END_TEST

static void check_msgpack_obj(const rec *r, const msgpack_object *o)
{
    unsigned nargs = lt_event_nargs[r->kind];
    ck_assert_int_eq(o->type, MSGPACK_OBJECT_ARRAY);
    ck_assert_uint_eq(o->via.array.size, nargs + 1);
    const msgpack_object *a = o->via.array.ptr;
    ck_assert_int_eq(a[0].type, MSGPACK_OBJECT_POSITIVE_INTEGER);
    ck_assert_uint_eq(a[0].via.u64, r->kind);
    for (unsigned i = 0; i < nargs; i++) {
        if (is_str_arg(r->kind, i)) {
            ck_assert_int_eq(a[i + 1].type, MSGPACK_OBJECT_STR);
            ck_assert_uint_eq(a[i + 1].via.str.size, r->slen);
            /* msgpack-c gives a NULL body for an empty string */
            ck_assert(r->slen == 0 || memcmp(a[i + 1].via.str.ptr, g_text, r->slen) == 0);
        } else {
            ck_assert_int_eq(a[i + 1].type, MSGPACK_OBJECT_POSITIVE_INTEGER);
            ck_assert_uint_eq(a[i + 1].via.u64, r->a[i]);
        }
    }
}

/* The stream is plain msgpack: msgpack-c's streaming unpacker, fed in odd
 * chunk sizes, finds the same records. */
START_TEST(test_event_msgpack_compat)
{
    static const size_t chunks[] = {1, 3, 7, 13, 29, 61, 127, 509, 2003};
    stream st;
    build(&st);
    msgpack_unpacker up;
    msgpack_unpacked res;
    ck_assert(msgpack_unpacker_init(&up, 64));
    msgpack_unpacked_init(&res);
    size_t off = 0, got = 0, c = 0;
    while (off < st.n) {
        size_t len = chunks[c++ % (sizeof chunks / sizeof *chunks)];
        if (len > st.n - off)
            len = st.n - off;
        ck_assert(msgpack_unpacker_reserve_buffer(&up, len));
        memcpy(msgpack_unpacker_buffer(&up), st.buf + off, len);
        msgpack_unpacker_buffer_consumed(&up, len);
        off += len;
        msgpack_unpack_return ret;
        while ((ret = msgpack_unpacker_next(&up, &res)) == MSGPACK_UNPACK_SUCCESS) {
            ck_assert_uint_lt(got, st.nrec);
            check_msgpack_obj(&st.recs[got++], &res.data);
        }
        ck_assert_int_eq(ret, MSGPACK_UNPACK_CONTINUE);
    }
    ck_assert_uint_eq(got, st.nrec);
    msgpack_unpacked_destroy(&res);
    msgpack_unpacker_destroy(&up);
    free(st.buf);
    free(st.recs);
}
END_TEST

/* Every proper prefix of a record is "incomplete", never an error. */
START_TEST(test_event_truncated)
{
    stream st;
    build(&st);
    lt_event ev;
    for (size_t i = 0; i < st.nrec; i++) {
        const rec *r = &st.recs[i];
        /* a copy of exactly `cut` bytes, so reading past it is a memory error */
        uint8_t *copy = malloc(r->len);
        for (size_t cut = 0; cut < r->len; cut++) {
            memcpy(copy, st.buf + r->off, cut);
            uint8_t *p = copy + r->len - cut;
            memmove(p, copy, cut);
            ck_assert_msg(lt_event_decode(p, cut, &ev) == 0, "record %zu (%s) cut at %zu", i,
                          lt_event_name[r->kind], cut);
        }
        free(copy);
    }
    free(st.buf);
    free(st.recs);
}
END_TEST

static int decode_bytes(const char *bytes, size_t n)
{
    lt_event ev;
    return lt_event_decode((const uint8_t *)bytes, n, &ev);
}

#define REJECT(lit)                                                                                \
    ck_assert_msg(decode_bytes(lit, sizeof(lit) - 1) == -EPROTO, "accepted %s", #lit)
#define ACCEPT(lit)                                                                                \
    ck_assert_msg(decode_bytes(lit, sizeof(lit) - 1) == (int)sizeof(lit) - 1, "rejected %s", #lit)

/* Kinds are 0..12: STR=0 FUNC=1 CLOCK=2 START=3 FRAME=4 CALL=5 RET=6 LINE=7
 * RESUME=8 YIELD=9 GAP=10 STOP=11 THREAD=12. */
START_TEST(test_event_malformed)
{
    ck_assert_uint_eq(LT_EV_CALL, 5);
    ck_assert_uint_eq(LT_EV_STR, 0);
    ACCEPT("\x94\x05\x01\x02\x03");         /* CALL 1 2 3 */
    ACCEPT("\x93\x00\x01\xa2hi");           /* STR 1 "hi" */
    /* wrong kinds */
    ACCEPT("\x93\x0c\x01\x02");             /* THREAD 1 2 */
    REJECT("\x94\x0c\x01\x02\x03");         /* THREAD with 3 args */
    REJECT("\x94\x0d\x01\x02\x03");         /* kind 13 */
    REJECT("\x93\x08\x01\x02");             /* RESUME without its depth (version 2) */
    REJECT("\x94\x7f\x01\x02\x03");
    REJECT("\x94\xff\x01\x02\x03");         /* negative fixint */
    REJECT("\x94\xcc\x05\x01\x02\x03");     /* kind as uint8 */
    REJECT("\x94\xa1" "C\x01\x02\x03");     /* kind as string */
    /* wrong argument counts */
    REJECT("\x90\x05");
    REJECT("\x91\x05");
    REJECT("\x93\x05\x01\x02");
    REJECT("\x95\x05\x01\x02\x03\x04");
    REJECT("\x9f\x05\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e");
    /* not a fixarray */
    REJECT("\x84\x05\x01\x02\x03");         /* map */
    REJECT("\x05\x05\x01\x02\x03");         /* int */
    REJECT("\xdc\x00\x04\x05\x01\x02\x03"); /* array16 */
    REJECT("\xc0\x05");                     /* nil */
    REJECT("\xa4\x05\x01\x02\x03");         /* str */
    /* strings where integers are expected, and the reverse */
    REJECT("\x94\x05\xa1x\x02\x03");
    REJECT("\x94\x05\x01\x02\xa0");
    REJECT("\x93\x00\xa1x\xa2hi");          /* STR sid as string */
    REJECT("\x93\x00\x01\x02");             /* STR text as int */
    REJECT("\x93\x00\x01\xc4\x02hi");       /* STR text as bin */
    /* negative integers, signed encodings, floats, other types */
    REJECT("\x94\x05\xff\x02\x03");
    REJECT("\x94\x05\xd0\x01\x02\x03");     /* int8 1 */
    REJECT("\x94\x05\xd3\x00\x00\x00\x00\x00\x00\x00\x01\x02\x03");
    REJECT("\x94\x05\xca\x3f\x80\x00\x00\x02\x03");
    REJECT("\x94\x05\xcb\x3f\xf0\x00\x00\x00\x00\x00\x00\x02\x03");
    REJECT("\x94\x05\xc0\x02\x03");
    REJECT("\x94\x05\xc3\x02\x03");
    REJECT("\x94\x05\xc1\x02\x03");         /* never used */
    REJECT("\x94\x05\xd4\x01\x01\x02\x03"); /* fixext */
    /* nested containers */
    REJECT("\x94\x05\x91\x01\x02\x03");
    REJECT("\x94\x05\x81\x01\x01\x02\x03");
    REJECT("\x92\x0a\x92\x05\x01");
    /* over-long strings: rejected from the header, before the bytes arrive */
    REJECT("\x93\x00\x01\xda\x10\x01");                 /* 4097 */
    REJECT("\x93\x00\x01\xda\xff\xff");                 /* 65535 */
    REJECT("\x93\x00\x01\xdb\x00\x00\x00\x03" "abc");   /* str32 */
}
END_TEST

/* A STR of exactly LT_STR_MAX bytes passes, one more does not. */
START_TEST(test_event_string_limit)
{
    static uint8_t b[LT_STR_MAX + 64];
    static char s[LT_STR_MAX + 1];
    memset(s, 'x', sizeof s);
    lt_event ev;
    uint8_t *q = lt_put_str(lt_put_uint(lt_put_head(b, LT_EV_STR, 2), 7), s, LT_STR_MAX);
    ck_assert_int_eq(lt_event_decode(b, (size_t)(q - b), &ev), (int)(q - b));
    ck_assert_uint_eq(ev.slen, LT_STR_MAX);
    ck_assert_uint_eq(ev.a[0], 7);
    q = lt_put_str(lt_put_uint(lt_put_head(b, LT_EV_STR, 2), 7), s, LT_STR_MAX + 1);
    ck_assert_int_eq(lt_event_decode(b, (size_t)(q - b), &ev), -EPROTO);
}
END_TEST

static uint64_t rng_next(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* Random bytes never crash the decoder or make it claim bytes it was not
 * given. Half the buffers start like a record, so the argument parser is
 * reached; each buffer ends at the end of its allocation so an overread is
 * a memory error (valgrind, ASan). */
START_TEST(test_event_random_bytes)
{
    enum { CAP = 48 };
    uint8_t *block = malloc(CAP);
    uint64_t x = 0x9E3779B97F4A7C15ull;
    unsigned ok = 0, incomplete = 0, bad = 0;
    static const uint8_t markers[] = {0xcc, 0xcd, 0xce, 0xcf, 0xa3, 0xd9, 0xda, 0xdb, 0x05};
    for (unsigned it = 0; it < 1000000; it++) {
        size_t n = rng_next(&x) % (CAP + 1);
        uint8_t *p = block + CAP - n;
        for (size_t i = 0; i < n; i++) {
            uint64_t r = rng_next(&x);
            p[i] = (r & 3) == 0 ? markers[(r >> 8) % sizeof markers] : (uint8_t)(r >> 16);
        }
        if ((it & 1) && n >= 2) {
            p[0] = (uint8_t)(0x90 | (1 + rng_next(&x) % 8));
            p[1] = (uint8_t)(rng_next(&x) % (LT_EV_COUNT + 2));
        }
        lt_event ev;
        int k = lt_event_decode(p, n, &ev);
        if (k == -EPROTO) {
            bad++;
        } else if (k == 0) {
            incomplete++;
        } else {
            ck_assert_msg(k > 0 && (size_t)k <= n, "decode returned %d for %zu bytes", k, n);
            ck_assert_uint_lt(ev.kind, LT_EV_COUNT);
            ck_assert_uint_eq(ev.nargs, lt_event_nargs[ev.kind]);
            if (ev.str)
                ck_assert((const uint8_t *)ev.str >= p && (const uint8_t *)ev.str + ev.slen <= p + k);
            ok++;
        }
    }
    free(block);
    ck_assert_uint_gt(ok, 1000); /* the generator does reach valid records */
    ck_assert_uint_gt(incomplete, 1000);
    ck_assert_uint_gt(bad, 1000);
}
END_TEST

START_TEST(test_event_format)
{
    lt_event ev = {.kind = LT_EV_CALL, .nargs = 3, .a = {3, 10, 7}};
    char buf[64];
    int n = lt_event_format(&ev, buf, sizeof buf);
    ck_assert_str_eq(buf, "> CALL 3 10 7");
    ck_assert_int_eq(n, (int)strlen(buf));
    lt_event s = {.kind = LT_EV_STR, .nargs = 2, .a = {4, 0}, .str = "app.luaXX", .slen = 7};
    lt_event_format(&s, buf, sizeof buf);
    ck_assert_str_eq(buf, "N STR 4 \"app.lua\"");
    n = lt_event_format(&ev, buf, 5);
    ck_assert_int_eq(n, 4);
    ck_assert_str_eq(buf, "> CA");
}
END_TEST

/* LINE steps: a stream mixing full LINEs, steps (every change of line in
 * range, both ends included), and other records decodes, in any chunking,
 * to the LINEs written; msgpack-c sees two valid objects per step. */
START_TEST(test_event_line_steps)
{
    static uint8_t b[1 << 16];
    static uint64_t want[4096][3];
    uint8_t *q = b;
    size_t nw = 0;
    uint64_t line = 5000; /* the negative steps go down 2080 */
    q = lt_put_uint(lt_put_uint(lt_put_uint(lt_put_head(q, LT_EV_LINE, 3), 9), 5), line);
    want[nw][0] = 9, want[nw][1] = 5, want[nw++][2] = line;
    for (int d = -LT_STEP_BIAS; d <= LT_STEP_MAX; d++) {
        uint64_t dt = (uint64_t)(d + 64) * 1021u; /* every uint width up to 3 bytes */
        q = lt_put_step(q, d, dt);
        line = (uint64_t)((int64_t)line + d);
        want[nw][0] = 9, want[nw][1] = dt, want[nw++][2] = line;
        if (d == 0) { /* another record between: a step cannot follow it */
            q = lt_put_uint(lt_put_uint(lt_put_head(q, LT_EV_RET, 2), 10), 1);
            q = lt_put_uint(lt_put_uint(lt_put_uint(lt_put_head(q, LT_EV_LINE, 3), 9), 2), 7);
            want[nw][0] = 9, want[nw][1] = 2, want[nw++][2] = line = 7;
        }
    }
    size_t n = (size_t)(q - b);
    for (size_t chunk = 1; chunk <= 7; chunk++) {
        lt_dec d = {0};
        lt_event ev;
        size_t off = 0, seen = 0, got = 0;
        while (off < n) {
            seen = seen + chunk < n ? seen + chunk : n;
            int k = 0;
            while (off < seen && (k = lt_dec_next(&d, b + off, seen - off, &ev)) > 0) {
                off += (size_t)k;
                if (ev.kind != LT_EV_LINE)
                    continue;
                ck_assert_uint_lt(got, nw);
                ck_assert_uint_eq(ev.nargs, 3);
                for (int i = 0; i < 3; i++)
                    ck_assert_uint_eq(ev.a[i], want[got][i]);
                got++;
            }
            ck_assert_int_ge(k, 0);
        }
        ck_assert_uint_eq(got, nw);
    }
    msgpack_unpacker up;
    msgpack_unpacked res;
    ck_assert(msgpack_unpacker_init(&up, n));
    msgpack_unpacked_init(&res);
    ck_assert(msgpack_unpacker_reserve_buffer(&up, n));
    memcpy(msgpack_unpacker_buffer(&up), b, n);
    msgpack_unpacker_buffer_consumed(&up, n);
    size_t objs = 0;
    while (msgpack_unpacker_next(&up, &res) == MSGPACK_UNPACK_SUCCESS)
        objs++;
    ck_assert_uint_eq(objs, 2 * (nw - 2) + 3); /* 2 per step; LINE, RET, LINE */
    msgpack_unpacked_destroy(&res);
    msgpack_unpacker_destroy(&up);
}
END_TEST

/* A step needs a LINE just before it; a step to a line below 0, or with a
 * string for dt, is malformed; a step cut short is incomplete. */
START_TEST(test_event_line_step_errors)
{
    uint8_t b[64];
    lt_event ev;
    lt_dec d = {0};
    uint8_t *q = lt_put_step(b, 1, 5);
    ck_assert_int_eq(lt_dec_next(&d, b, (size_t)(q - b), &ev), -EPROTO); /* nothing before */
    q = lt_put_uint(lt_put_uint(lt_put_uint(lt_put_head(b, LT_EV_LINE, 3), 2), 0), 3);
    ck_assert_int_eq(lt_dec_next(&d, b, (size_t)(q - b), &ev), (int)(q - b));
    q = lt_put_step(b, -4, 5);
    ck_assert_int_eq(lt_dec_next(&d, b, (size_t)(q - b), &ev), -EPROTO); /* line -1 */
    q = lt_put_step(b, -3, 200);
    ck_assert_int_eq(lt_dec_next(&d, b, 1, &ev), 0);
    ck_assert_int_eq(lt_dec_next(&d, b, 2, &ev), 0);
    ck_assert_int_eq(lt_dec_next(&d, b, (size_t)(q - b), &ev), 3);
    ck_assert_uint_eq(ev.a[2], 0);
    ck_assert_uint_eq(ev.a[1], 200);
    b[0] = LT_STEP_BIAS;
    b[1] = 0xa1, b[2] = 'x';
    ck_assert_int_eq(lt_dec_next(&d, b, 3, &ev), -EPROTO); /* dt is a string */
    q = lt_put_uint(lt_put_head(b, LT_EV_GAP, 1), 4);
    ck_assert_int_eq(lt_dec_next(&d, b, (size_t)(q - b), &ev), (int)(q - b));
    q = lt_put_step(b, 0, 1);
    ck_assert_int_eq(lt_dec_next(&d, b, (size_t)(q - b), &ev), -EPROTO); /* after a GAP */
}
END_TEST

/* A RESUME or YIELD implies its depth: a short RET, LINE or CALL may
 * follow it (the collector writes one after each switch). A START or a
 * THREAD implies nothing. */
START_TEST(test_event_switch_depth)
{
    uint8_t b[256];
    uint8_t *q = b;
    q = lt_put_head(q, LT_EV_THREAD, 2);
    q = lt_put_uint(lt_put_uint(q, 2), 0x55e66d1212d0ull);
    q = lt_put_head(q, LT_EV_RESUME, 3);
    q = lt_put_uint(lt_put_uint(lt_put_uint(q, 300), 2), 0); /* a new coroutine: none */
    q = lt_put_uint(lt_put_short(q, LT_SHORT_CALL, 0), 9);    /* its body, at depth 1 */
    q = lt_put_head(q, LT_EV_YIELD, 4);
    q = lt_put_uint(lt_put_uint(lt_put_uint(lt_put_uint(q, 7), 1), 4), 0);
    q = lt_put_short(q, LT_SHORT_RET, 0);                      /* resume returns, depth 4 */
    q = lt_put_uint(lt_put_short(q, LT_SHORT_LINE, 1), 33);   /* at depth 3 */
    size_t n = (size_t)(q - b);
    static const uint64_t want[][5] = {
        {LT_EV_THREAD, 2, 0x55e66d1212d0ull}, {LT_EV_RESUME, 300, 2, 0}, {LT_EV_CALL, 1, 0, 9},
        {LT_EV_YIELD, 7, 1, 4, 0},           {LT_EV_RET, 4, 0},         {LT_EV_LINE, 3, 1, 33}};
    lt_dec d = {0};
    lt_event ev;
    size_t off = 0;
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        int k = lt_dec_next(&d, b + off, n - off, &ev);
        ck_assert_int_gt(k, 0);
        off += (size_t)k;
        ck_assert_uint_eq(ev.kind, want[i][0]);
        for (unsigned j = 0; j < ev.nargs; j++)
            ck_assert_uint_eq(ev.a[j], want[i][j + 1]);
    }
    ck_assert_uint_eq(off, n);
    q = lt_put_uint(lt_put_uint(lt_put_head(b, LT_EV_START, 2), 2), 0);
    ck_assert_int_eq(lt_dec_next(&d, b, (size_t)(q - b), &ev), (int)(q - b));
    q = lt_put_short(b, LT_SHORT_RET, 0);
    ck_assert_int_eq(lt_dec_next(&d, b, (size_t)(q - b), &ev), -EPROTO); /* after a START */
}
END_TEST

/* A full LINE, CALL (depth, dt, x) or RET (depth, dt). */
static uint8_t *put_full(uint8_t *q, enum lt_kind kind, uint64_t depth, uint64_t dt, uint64_t x)
{
    q = lt_put_uint(lt_put_uint(lt_put_head(q, kind, kind == LT_EV_RET ? 2 : 3), depth), dt);
    return kind == LT_EV_RET ? q : lt_put_uint(q, x);
}

/* lt_dec_hot, the replay's inline decoder, makes of every record what
 * lt_dec_next makes of it, or leaves it to lt_dec_next: random streams of
 * LINE, CALL and RET records (full, steps, short forms), switches, other
 * records and damaged bytes, through both decoders side by side. */
START_TEST(test_event_hot_decoder)
{
    enum { N = 1 << 14 };
    static uint8_t b[N + LT_HOT_SPAN];
    uint64_t x = 0x2545F4914F6CDD1Dull;
    static const uint64_t vals[] = {0, 1, 63, 127, 128, 255, 256, 65535, 65536,
                                    0xffffffffull, 1ull << 32, UINT64_MAX};
    unsigned hot = 0;
    for (int round = 0; round < 16; round++) {
        uint8_t *q = b;
        while (q < b + N - 64) {
            uint64_t r = rng_next(&x), v[3];
            for (int i = 0; i < 3; i++)
                v[i] = vals[(r >> (8 * i)) % (sizeof vals / sizeof *vals)] + (r >> 40) % 3;
            switch ((r >> 32) % 11) {
            case 0: q = put_full(q, LT_EV_LINE, v[0] % 40, v[1], v[2]); break;
            case 1: q = put_full(q, LT_EV_CALL, v[0] % 40, v[1], v[2]); break;
            case 2: q = put_full(q, LT_EV_RET, v[0] % 3, v[1], 0); break;
            case 3: q = lt_put_step(q, (int)((r >> 24) % 128) - LT_STEP_BIAS, v[1]); break;
            case 4: q = lt_put_uint(lt_put_short(q, LT_SHORT_LINE, v[1]), v[2]); break;
            case 5: q = lt_put_uint(lt_put_short(q, LT_SHORT_CALL, v[1]), v[2]); break;
            case 6: q = lt_put_short(q, LT_SHORT_RET, v[1]); break;
            case 7: q = lt_put_uint(lt_put_head(q, LT_EV_GAP, 1), v[0]); break;
            case 8: /* a switch implies the depth it carries */
                q = lt_put_uint(lt_put_uint(lt_put_head(q, LT_EV_RESUME, 3), v[1]), v[2] % 300);
                q = lt_put_uint(q, v[0] % 40);
                break;
            case 9:
                q = lt_put_uint(lt_put_uint(lt_put_head(q, LT_EV_YIELD, 4), v[1]), v[2] % 300);
                q = lt_put_uint(lt_put_uint(q, v[0] % 40), r >> 63);
                break;
            default: *q++ = (uint8_t)(r >> 48); break; /* a damaged byte */
            }
        }
        size_t n = (size_t)(q - b);
        memset(q, 0xc1, LT_HOT_SPAN); /* never a record: the tail stays in bounds */
        lt_dec d1 = {0}, d2 = {0};
        size_t off = 0;
        while (off < n) {
            lt_event ev;
            lt_hot h;
            lt_dec before = d2;
            int k1 = lt_dec_next(&d1, b + off, n - off, &ev);
            int k2 = lt_dec_hot(&d2, b + off, &h);
            if (k2 == 0) {
                ck_assert_mem_eq(&d2, &before, sizeof d2);
                d2 = d1;
            } else {
                hot++;
                ck_assert_int_eq(k1, k2);
                ck_assert_uint_eq(ev.kind, h.kind);
                ck_assert_uint_eq(ev.a[0], h.depth);
                ck_assert_uint_eq(ev.a[1], h.dt);
                ck_assert_uint_eq(ev.kind == LT_EV_RET ? 0 : ev.a[2], h.x);
                ck_assert_mem_eq(&d1, &d2, sizeof d1);
            }
            if (k1 <= 0) { /* damaged or cut: start over past it, as a fresh stream */
                off++;
                d1 = d2 = (lt_dec){0};
            } else {
                off += (size_t)k1;
            }
        }
    }
    ck_assert_uint_gt(hot, 3000);
}
END_TEST

/* Where split_stream's records start (a byte per offset). */
static uint8_t g_starts[3 * LT_SPLIT_MAX];

/* A record stream as the collector writes it: STR and FUNC records among
 * steps and short forms whose deltas take every msgpack width. */
static size_t split_stream(uint8_t *buf, size_t cap, unsigned seed)
{
    uint8_t *p = buf, *end = buf + cap - 64;
    char s[40];
    memset(g_starts, 0, sizeof g_starts);
    for (unsigned i = 0; p < end; i++) {
        if ((size_t)(p - buf) < sizeof g_starts)
            g_starts[p - buf] = 1;
        seed = seed * 1103515245u + 12345u;
        uint64_t dt = (seed >> 8) % 5 == 0 ? (uint64_t)seed << 9 : (seed >> 4) % 400;
        switch ((seed >> 20) % 8) {
        case 0: p = lt_put_short(p, LT_SHORT_CALL, dt), p = lt_put_uint(p, i % 300); break;
        case 1: p = lt_put_short(p, LT_SHORT_RET, dt); break;
        case 2: p = lt_put_short(p, LT_SHORT_LINE, dt), p = lt_put_uint(p, i % 70000); break;
        case 3:
            snprintf(s, sizeof s, "@file%u.lua", i);
            p = lt_put_head(p, LT_EV_STR, 2), p = lt_put_uint(p, i);
            p = lt_put_str(p, s, (uint32_t)strlen(s));
            p = lt_put_func(p, i, LT_WHAT_LUA, i, i, 3, 9, 0);
            break;
        case 4: /* a short MEM: kept whole in A, as any record without a delta */
            *p = (uint8_t)(LT_SHORT_MNEW + i % 3);
            p = lt_put_uint(p + 1, dt);
            if (i % 3 == 2)
                p = lt_put_uint(lt_put_uint(p, dt / 2), dt % 9);
            p = lt_put_adelta(p, 0, (uint64_t)seed << (i % 40));
            break;
        default: p = lt_put_step(p, (int)(seed >> 28) % 5 - 2, dt); break;
        }
    }
    return (size_t)(p - buf);
}

/* bytes split into blocks and merged back: themselves. Returns the blocks. */
static unsigned split_round_trip(const uint8_t *in, size_t n, int whole_records)
{
    static uint8_t blk[LT_SPLIT_HDR + LT_SPLIT_MAX], scratch[LT_SPLIT_MAX], out[LT_SPLIT_MAX];
    size_t at = 0;
    unsigned blocks = 0;
    while (at < n) {
        size_t blen, took = lt_split(in + at, n - at, blk, &blen, scratch);
        ck_assert_uint_gt(took, 0);
        ck_assert_uint_le(took, LT_SPLIT_MAX);
        ck_assert_uint_eq(blen, LT_SPLIT_HDR + took);
        ck_assert_int_eq(lt_split_len(blk, blen), (int64_t)blen);
        ck_assert_int_eq(lt_split_len(blk, LT_SPLIT_HDR - 1), 0);
        ck_assert_int_eq(lt_merge(blk, blen, out), (int64_t)took);
        ck_assert_mem_eq(out, in + at, took);
        if (whole_records) /* a block ends where a record starts, or at the end */
            ck_assert(at + took == n || g_starts[at + took]);
        at += took;
        blocks++;
    }
    return blocks;
}

/* Records split into blocks of at most LT_SPLIT_MAX, each of whole
 * records, merge back to the same bytes; so do bytes that are not records
 * (garbage, a record cut short at the end). */
START_TEST(test_split_round_trip)
{
    size_t cap = 3 * LT_SPLIT_MAX;
    uint8_t *buf = malloc(cap);
    ck_assert_ptr_nonnull(buf);
    size_t n = split_stream(buf, cap, 7);
    ck_assert_uint_ge(split_round_trip(buf, n, 1), 3);
    ck_assert_uint_eq(split_round_trip(buf, n - 1, 0) > 0, 1); /* cut inside the last */
    ck_assert_uint_eq(split_round_trip(buf + 1, 5000, 0), 1);  /* starting mid-record */
    unsigned seed = 99;
    for (int round = 0; round < 200; round++) { /* garbage, and records with garbage */
        size_t len = 1 + (size_t)(round * 977) % 9000;
        for (size_t i = 0; i < len; i++)
            buf[i] = (uint8_t)((seed = seed * 1103515245u + 12345u) >> 16);
        if (round % 2)
            split_stream(buf, len / 2 + 64, seed);
        split_round_trip(buf, len, 0);
    }
    free(buf);
}
END_TEST

/* A block whose header or parts are wrong is refused, never read past. */
START_TEST(test_split_corrupt)
{
    static uint8_t in[20000], blk[LT_SPLIT_HDR + LT_SPLIT_MAX], scratch[LT_SPLIT_MAX],
        out[LT_SPLIT_MAX];
    size_t n = split_stream(in, sizeof in, 3), blen;
    ck_assert_uint_eq(lt_split(in, n, blk, &blen, scratch), n);
    ck_assert_int_eq(lt_merge(blk, blen - 1, out), -1); /* cut short */
    for (int field = 0; field < 3; field++) {
        for (int delta = -2; delta <= 2; delta += 4) {
            uint8_t *b = malloc(blen);
            memcpy(b, blk, blen);
            b[4 * field] = (uint8_t)(b[4 * field] + delta); /* lenA, lenB, splitA */
            ck_assert_int_eq(lt_merge(b, blen, out), -1);
            free(b);
        }
    }
    uint8_t big[LT_SPLIT_HDR] = {0, 0, 4, 0, 1, 0, 0, 0, 0, 0, 0, 0}; /* lenA + lenB > MAX */
    ck_assert_int_eq(lt_split_len(big, sizeof big), -1);
    uint8_t over[LT_SPLIT_HDR] = {1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0}; /* splitA > lenA */
    ck_assert_int_eq(lt_split_len(over, sizeof over), -1);
    uint8_t empty[LT_SPLIT_HDR] = {0};
    ck_assert_int_eq(lt_split_len(empty, sizeof empty), -1);
}
END_TEST

/* A TICK (sampled time) as the collector writes it: three uints, the last
 * record of the list; the short forms' state is left as it was. */
START_TEST(test_event_tick)
{
    uint8_t buf[LT_EVENT_HOT_MAX], *q = lt_put_head(buf, LT_EV_TICK, 3);
    q = lt_put_uint(q, 4);
    q = lt_put_uint(q, 70000);
    q = lt_put_uint(q, 1000000);
    lt_dec d = {.depth = 3, .line = 9, .depth_ok = 1, .line_ok = 1};
    lt_event ev;
    ck_assert_int_eq(lt_dec_next(&d, buf, (size_t)(q - buf), &ev), (int)(q - buf));
    ck_assert_uint_eq(ev.kind, LT_EV_TICK);
    ck_assert_uint_eq(ev.nargs, 3);
    ck_assert_uint_eq(ev.a[0], 4);
    ck_assert_uint_eq(ev.a[1], 70000);
    ck_assert_uint_eq(ev.a[2], 1000000);
    ck_assert_str_eq(lt_event_name[LT_EV_TICK], "TICK");
    ck_assert_int_eq(lt_event_letter[LT_EV_TICK], 't');
    ck_assert_int_eq(lt_dec_next(&d, buf, (size_t)(q - buf) - 1, &ev), 0); /* cut short */
}
END_TEST

/* A MEM (memory) as the collector writes it: its widest form, a
 * reallocation of 32-bit sizes between two 64-bit addresses, fits a hot
 * record's bound; it decodes to its four fields. */
START_TEST(test_event_mem)
{
    uint8_t buf[LT_EVENT_HOT_MAX], *q = lt_put_head(buf, LT_EV_MEM, 4);
    q = lt_put_uint(q, 0xffffffffu);
    q = lt_put_uint(q, 0xfffffffeu);
    q = lt_put_uint(q, 0xffffffffffffff00ull);
    q = lt_put_uint(q, 0x7fff12345678ull);
    ck_assert_uint_le((size_t)(q - buf), LT_EVENT_HOT_MAX);
    lt_dec d = {0};
    lt_event ev;
    ck_assert_int_eq(lt_dec_next(&d, buf, (size_t)(q - buf), &ev), (int)(q - buf));
    ck_assert_uint_eq(ev.kind, LT_EV_MEM);
    ck_assert_uint_eq(ev.nargs, 4);
    ck_assert_uint_eq(ev.a[0], 0xffffffffu);
    ck_assert_uint_eq(ev.a[1], 0xfffffffeu);
    ck_assert_uint_eq(ev.a[2], 0xffffffffffffff00ull);
    ck_assert_uint_eq(ev.a[3], 0x7fff12345678ull);
    ck_assert_str_eq(lt_event_name[LT_EV_MEM], "MEM");
    ck_assert_int_eq(lt_event_letter[LT_EV_MEM], 'm');
}
END_TEST

/* Bytes of short MEMs into q: kind LT_SHORT_M*, sizes, addresses as
 * deltas from *base (the collector's put_mem), *base moved on. */
static uint8_t *put_mshort(uint8_t *q, uint8_t form, uint64_t size, uint64_t osize, uint64_t addr,
                           uint64_t oaddr, uint64_t *base)
{
    *q++ = form;
    if (form != LT_SHORT_MFREE)
        q = lt_put_uint(q, size);
    if (form != LT_SHORT_MNEW)
        q = lt_put_uint(q, osize);
    q = lt_put_adelta(q, *base, form == LT_SHORT_MNEW ? addr : oaddr);
    if (form == LT_SHORT_MRE)
        q = lt_put_adelta(q, oaddr, addr);
    *base = addr ? addr : oaddr;
    return q;
}

static void check_mem(const lt_event *ev, uint64_t size, uint64_t osize, uint64_t addr,
                      uint64_t oaddr)
{
    ck_assert_uint_eq(ev->kind, LT_EV_MEM);
    ck_assert_uint_eq(ev->nargs, 4);
    ck_assert_uint_eq(ev->a[0], size);
    ck_assert_uint_eq(ev->a[1], osize);
    ck_assert_uint_eq(ev->a[2], addr);
    ck_assert_uint_eq(ev->a[3], oaddr);
}

/* Short MEMs (version 12): a new block, a free and a reallocation, their
 * addresses deltas from the last MEM's (a full one's too), back and forth,
 * aligned or not, decode to the full records; what a LINE implies holds
 * across them (the step after), and nearby blocks take few bytes. */
START_TEST(test_event_mem_short)
{
    uint8_t buf[256], *q = buf;
    uint64_t base = 0;
    q = lt_put_head(q, LT_EV_LINE, 3), q = lt_put_uint(q, 4), q = lt_put_uint(q, 1);
    q = lt_put_uint(q, 10);
    q = put_mshort(q, LT_SHORT_MNEW, 40, 0, 0x7f0012345670ull, 0, &base);
    uint8_t *m = q;
    q = put_mshort(q, LT_SHORT_MNEW, 24, 0, 0x7f00123456a0ull, 0, &base);
    ck_assert_uint_eq((size_t)(q - m), 3); /* 48 bytes on: a byte of delta */
    q = put_mshort(q, LT_SHORT_MFREE, 0, 40, 0, 0x7f0012345670ull, &base);
    q = put_mshort(q, LT_SHORT_MRE, 100, 24, 0x7f00123456a0ull, 0x7f00123456a0ull, &base);
    q = put_mshort(q, LT_SHORT_MRE, 3000, 100, 0x10003ull, 0x7f00123456a0ull, &base);
    q = lt_put_step(q, 1, 5); /* the LINE's implied depth and line hold */
    q = lt_put_head(q, LT_EV_MEM, 4), q = lt_put_uint(q, 0), q = lt_put_uint(q, 8);
    q = lt_put_uint(q, 0), q = lt_put_uint(q, 0xffffffffffffff00ull); /* full: a new base */
    base = 0xffffffffffffff00ull;
    q = put_mshort(q, LT_SHORT_MNEW, 8, 0, 0xffffffffffffff10ull, 0, &base);
    q = put_mshort(q, LT_SHORT_MFREE, 0, 8, 0, 0x20ull, &base); /* wraps around */
    ck_assert_ptr_null(lt_put_adelta(q, 0x11, 0x4000000000000018ull)); /* does not fit */
    lt_dec d = {0};
    lt_event ev;
    size_t off = 0, n = (size_t)(q - buf);
    static const uint64_t want[][4] = {
        {40, 0, 0x7f0012345670ull, 0},         {24, 0, 0x7f00123456a0ull, 0},
        {0, 40, 0, 0x7f0012345670ull},         {100, 24, 0x7f00123456a0ull, 0x7f00123456a0ull},
        {3000, 100, 0x10003ull, 0x7f00123456a0ull}};
    int k = lt_dec_next(&d, buf, n, &ev);
    ck_assert_int_gt(k, 0);
    off += (size_t)k;
    for (int i = 0; i < 5; i++) {
        lt_dec before = d;
        k = lt_dec_next(&d, buf + off, n - off, &ev);
        for (int cut = 1; cut < k; cut++) { /* cut short: incomplete, d untouched */
            lt_dec again = before;
            ck_assert_int_eq(lt_dec_next(&again, buf + off, (size_t)cut, &ev), 0);
            ck_assert_mem_eq(&again, &before, sizeof before);
        }
        k = lt_dec_next(&before, buf + off, n - off, &ev);
        ck_assert_int_gt(k, 0);
        check_mem(&ev, want[i][0], want[i][1], want[i][2], want[i][3]);
        off += (size_t)k;
    }
    k = lt_dec_next(&d, buf + off, n - off, &ev);
    ck_assert_int_gt(k, 0);
    ck_assert_uint_eq(ev.kind, LT_EV_LINE);
    ck_assert_uint_eq(ev.a[0], 4);
    ck_assert_uint_eq(ev.a[2], 11);
    off += (size_t)k;
    off += (size_t)lt_dec_next(&d, buf + off, n - off, &ev);
    check_mem(&ev, 0, 8, 0, 0xffffffffffffff00ull);
    off += (size_t)lt_dec_next(&d, buf + off, n - off, &ev);
    check_mem(&ev, 8, 0, 0xffffffffffffff10ull, 0);
    off += (size_t)lt_dec_next(&d, buf + off, n - off, &ev);
    check_mem(&ev, 0, 8, 0, 0x20ull);
    ck_assert_uint_eq(off, n);
    uint8_t bad[] = {0xe6, 1, 1}, str[] = {LT_SHORT_MNEW, 0xa1, 'x', 1};
    ck_assert_int_eq(lt_dec_next(&d, bad, sizeof bad, &ev), -EPROTO); /* past the forms */
    ck_assert_int_eq(lt_dec_next(&d, str, sizeof str, &ev), -EPROTO); /* not a uint */
    lt_hot h;
    uint8_t hot[LT_HOT_SPAN] = {LT_SHORT_MNEW, 1, 2};
    ck_assert_int_eq(lt_dec_hot(&d, hot, &h), 0); /* not a hot record */
}
END_TEST

/* Any delta decodes to some address (a forged one included), and every
 * one the writer takes comes back as it was. */
START_TEST(test_event_adelta)
{
    static const uint64_t v[] = {0, 1, 15, 16, 17, 0x7f0012345670ull, 0xffffffffffffffffull,
                                 0x8000000000000000ull, 0x3fffffffffffffffull, 0x4000000000000000ull,
                                 0xc000000000000000ull, 0xc000000000000001ull};
    uint8_t buf[16];
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        for (size_t j = 0; j < sizeof v / sizeof *v; j++) {
            uint8_t *q = lt_put_adelta(buf, v[i], v[j]);
            int64_t d = (int64_t)(v[j] - v[i]);
            if (!q) { /* only unaligned deltas of 2^62 or more are refused */
                ck_assert(d & 15);
                ck_assert(d >= INT64_C(1) << 62 || d < -(INT64_C(1) << 62));
                continue;
            }
            uint64_t x;
            ck_assert_int_eq(lt_get_uint9(buf, &x), (int)(q - buf));
            ck_assert_uint_eq(lt_adelta_apply(v[i], x), v[j]);
        }
        uint64_t x = v[i]; /* any uint decodes, wrapping, without undefined behaviour */
        (void)lt_adelta_apply(v[(i + 3) % (sizeof v / sizeof *v)], x);
    }
}
END_TEST

UT_MAIN("event", NULL, NULL, test_event_tables, test_file_versions, test_event_uint_widths,
        test_event_round_trip, test_event_msgpack_compat, test_event_truncated,
        test_event_malformed, test_event_string_limit, test_event_random_bytes,
        test_event_line_steps, test_event_line_step_errors, test_event_switch_depth,
        test_event_hot_decoder, test_event_format, test_split_round_trip, test_split_corrupt, test_event_tick,
        test_event_mem, test_event_mem_short, test_event_adelta)
