/* check_pprof: recorderd/out/rd_pprof (and rd_pb) over a model built by
 * feeding events through rd_stack. The profile is read back by a small
 * wire-format reader here: the string table starts with "", ids are
 * nonzero and unique, every sample's locations exist, the values add up to
 * the model's totals, names follow profile.txt; the gzipped file inflates
 * to the same bytes; an empty model still gives a valid profile; two
 * coroutines running the same stack give two samples, one labelled for each.
 *
 * The model, dt in ns: main (app.lua) calls a at line 5, a runs line 51
 * and calls print; then main runs line 6.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "rd_pprof.h"
#include "ut_events.h"
#include "ut_main.h"

enum { F_MAIN = 1, F_A, F_PRINT, F_RESUME, F_YIELD };
enum { T_MAIN = 0x1000, T_CO1 = 0x2000, T_CO2 = 0x3000 };

/* Strings 1-4 (app.lua, [C], main, a), and the functions main and a. */
static void main_and_a(void)
{
    ev_str(1, "app.lua");
    ev_str(2, "[C]");
    ev_str(3, "main");
    ev_str(4, "a");
    EV(FUNC, F_MAIN, LT_WHAT_MAIN, 1, 3, 0, 0, 0);
    EV(FUNC, F_A, LT_WHAT_LUA, 1, 4, 50, 55, 0);
}

static void build(void)
{
    main_and_a();
    ev_str(5, "print");
    EV(FUNC, F_PRINT, LT_WHAT_C, 2, 5, 0, 0, 0);
    EV(START, T_MAIN, LT_R_BEGIN);
    EV(FRAME, 1, F_MAIN, 5);
    EV(CALL, 2, 3, F_A);
    EV(LINE, 2, 4, 51);
    EV(CALL, 3, 5, F_PRINT);
    EV(RET, 3, 7);
    EV(RET, 2, 11);
    EV(LINE, 1, 13, 6);
}

/* main resumes T_CO1 then T_CO2 from line 6; each runs a (line 51, once
 * in T_CO1, twice in T_CO2) and yields back. */
static void build_coroutines(void)
{
    main_and_a();
    ev_str(6, "resume");
    ev_str(7, "yield");
    EV(FUNC, F_RESUME, LT_WHAT_C, 2, 6, 0, 0, LT_FF_RESUME);
    EV(FUNC, F_YIELD, LT_WHAT_C, 2, 7, 0, 0, LT_FF_YIELD);
    EV(START, T_MAIN, LT_R_BEGIN);
    EV(FRAME, 1, F_MAIN, 5);
    for (uint64_t co = T_CO1; co <= T_CO2; co += T_CO2 - T_CO1) {
        EV(LINE, 1, 1, 6);
        EV(CALL, 2, 2, F_RESUME);
        EV(RESUME, 3, co, 0);
        EV(CALL, 1, 5, F_A); /* depths restart at 1 in the coroutine */
        EV(LINE, 1, 7, 51);
        if (co == T_CO2) EV(LINE, 1, 11, 51);
        EV(CALL, 2, 13, F_YIELD);
        EV(YIELD, 17, T_MAIN, 2, 0);
        EV(RET, 2, 19); /* resume returns in main */
    }
}

/* ---- a wire-format reader for the test ---- */

typedef struct rd {
    const uint8_t *p, *end;
} rd;

static uint64_t varint(rd *r)
{
    uint64_t v = 0;
    for (int sh = 0; r->p < r->end && sh < 64; sh += 7) {
        uint8_t c = *r->p++;
        v |= (uint64_t)(c & 0x7f) << sh;
        if (!(c & 0x80)) return v;
    }
    ck_abort_msg("truncated varint");
    return 0;
}

/* Next field of r: its number, and either *v (varint) or *sub (bytes). */
static int field(rd *r, uint64_t *v, rd *sub)
{
    if (r->p >= r->end) return 0;
    uint64_t tag = varint(r);
    ck_assert_msg((tag & 7) == 0 || (tag & 7) == 2, "wire type %d", (int)(tag & 7));
    if ((tag & 7) == 0) {
        *v = varint(r);
    } else {
        uint64_t n = varint(r);
        ck_assert_uint_le(n, (uint64_t)(r->end - r->p));
        *sub = (rd){r->p, r->p + n};
        r->p += n;
    }
    return (int)(tag >> 3);
}

typedef struct prof {
    char *str[64];
    uint32_t nstr;
    uint64_t loc_ids[64], fn_ids[64], fn_name[64];
    uint32_t nloc, nfn;
    uint64_t time, lines, nsample, default_type;
    uint64_t sample_locs[64][16];
    uint32_t nsample_locs[64];
    uint64_t sample_time[64], sample_lines[64];
    uint64_t label_key[64], label_str[64]; /* one label per sample at most; 0 none */
} prof;

static uint64_t id_of(rd m)
{
    uint64_t v;
    rd sub;
    for (int f; (f = field(&m, &v, &sub));)
        if (f == 1) return v;
    return 0;
}

static void read_sample(prof *p, rd m)
{
    uint64_t v;
    rd sub;
    uint32_t s = (uint32_t)p->nsample++;
    ck_assert_uint_lt(s, 64);
    for (int f; (f = field(&m, &v, &sub));) {
        if (f == 1)
            while (sub.p < sub.end)
                p->sample_locs[s][p->nsample_locs[s]++] = varint(&sub);
        if (f == 2) {
            p->time += p->sample_time[s] = varint(&sub);
            p->lines += p->sample_lines[s] = varint(&sub);
            ck_assert(sub.p == sub.end);
        }
        if (f == 3) {
            ck_assert_uint_eq(p->label_key[s], 0);
            for (int g; (g = field(&sub, &v, &(rd){0}));) {
                if (g == 1) p->label_key[s] = v;
                if (g == 2) p->label_str[s] = v;
            }
        }
    }
}

static void read_function(prof *p, rd m)
{
    uint64_t v;
    rd sub;
    p->fn_ids[p->nfn] = id_of(m);
    for (int f; (f = field(&m, &v, &sub));)
        if (f == 2) p->fn_name[p->nfn] = v;
    p->nfn++;
}

static void read_profile(prof *p, const uint8_t *b, size_t n)
{
    rd r = {b, b + n}, sub;
    uint64_t v;
    memset(p, 0, sizeof *p);
    for (int f; (f = field(&r, &v, &sub));) {
        if (f == 2)
            read_sample(p, sub);
        else if (f == 4)
            p->loc_ids[p->nloc++] = id_of(sub);
        else if (f == 5)
            read_function(p, sub);
        else if (f == 6)
            p->str[p->nstr++] = strndup((const char *)sub.p, (size_t)(sub.end - sub.p));
        else if (f == 14)
            p->default_type = v;
        ck_assert_uint_lt(p->nstr, 64);
        ck_assert_uint_lt(p->nloc, 64);
    }
}

static void free_profile(prof *p)
{
    for (uint32_t i = 0; i < p->nstr; i++)
        free(p->str[i]);
}

static int has_id(const uint64_t *ids, uint32_t n, uint64_t id)
{
    int k = 0;
    for (uint32_t i = 0; i < n; i++)
        k += ids[i] == id;
    return k;
}

static int has_name(const prof *p, const char *name)
{
    for (uint32_t i = 0; i < p->nfn; i++)
        if (p->fn_name[i] < p->nstr && !strcmp(p->str[p->fn_name[i]], name)) return 1;
    return 0;
}

START_TEST(test_pprof_structure)
{
    build();
    rd_pb b = {0};
    rd_pprof_info info = {"lua5.1 app.lua", "/no/such/dir", 1700000000000000000};
    ck_assert_int_eq(rd_pprof_encode(&M, &info, &b), 0);
    prof p;
    read_profile(&p, b.p, b.n);
    ck_assert_uint_gt(p.nstr, 0);
    ck_assert_str_eq(p.str[0], "");
    ck_assert_str_eq(p.str[p.default_type], "time");
    ck_assert_uint_eq(p.time, M.ticks_total); /* no clock records: 1 ns a tick */
    ck_assert_uint_eq(p.time, 13 + 11 + 7 + 5 + 4 + 3);
    ck_assert_uint_eq(p.lines, 2);
    for (uint32_t i = 0; i < p.nloc; i++)
        ck_assert_int_eq(p.loc_ids[i] && has_id(p.loc_ids, p.nloc, p.loc_ids[i]) == 1, 1);
    for (uint32_t i = 0; i < p.nfn; i++)
        ck_assert_int_eq(p.fn_ids[i] && has_id(p.fn_ids, p.nfn, p.fn_ids[i]) == 1, 1);
    for (uint64_t s = 0; s < p.nsample; s++)
        for (uint32_t j = 0; j < p.nsample_locs[s]; j++)
            ck_assert_int_eq(has_id(p.loc_ids, p.nloc, p.sample_locs[s][j]), 1);
    ck_assert(has_name(&p, "main (app.lua:0)"));
    ck_assert(has_name(&p, "a (app.lua:50)"));
    ck_assert(has_name(&p, "print [C]"));
    free_profile(&p);
    rd_pb_free(&b);
}
END_TEST

/* The sample of stack a <- resume <- main labelled name: its lines. */
static uint64_t co_lines(const prof *p, const char *name)
{
    uint64_t found = 0, lines = 0;
    for (uint32_t s = 0; s < p->nsample; s++) {
        ck_assert_uint_lt(p->label_key[s], p->nstr);
        ck_assert_uint_lt(p->label_str[s], p->nstr);
        ck_assert_str_eq(p->str[p->label_key[s]], "coroutine"); /* every sample has one */
        if (p->nsample_locs[s] == 3 && !strcmp(p->str[p->label_str[s]], name))
            found++, lines = p->sample_lines[s];
    }
    ck_assert_uint_eq(found, 1);
    return lines;
}

START_TEST(test_pprof_coroutines)
{
    build_coroutines();
    rd_pb b = {0};
    ck_assert_int_eq(rd_pprof_encode(&M, NULL, &b), 0);
    prof p;
    read_profile(&p, b.p, b.n);
    ck_assert_uint_eq(p.time, M.ticks_total);
    ck_assert_uint_eq(p.time, 2 * (1 + 2 + 3 + 5 + 7 + 13 + 17 + 19) + 11);
    ck_assert_uint_eq(p.lines, 2 + 3);
    ck_assert_uint_eq(co_lines(&p, "coroutine 1 (a@app.lua:50)"), 1);
    ck_assert_uint_eq(co_lines(&p, "coroutine 2 (a@app.lua:50)"), 2);
    uint64_t main_time = 0, co1_time = 0;
    for (uint32_t s = 0; s < p.nsample; s++) {
        const char *name = p.str[p.label_str[s]];
        if (!strcmp(name, "main")) main_time += p.sample_time[s];
        if (!strcmp(name, "coroutine 1 (a@app.lua:50)")) co1_time += p.sample_time[s];
    }
    /* main: 1, 2, 3 (dt of RESUME: resume on top), 19 (RET), twice; a
     * coroutine: 5 (its first CALL, under resume), 7, 13 on a, 17 on yield */
    ck_assert_uint_eq(main_time, 2 * (1 + 2 + 3 + 19));
    ck_assert_uint_eq(co1_time, 5 + 7 + 13 + 17);
    free_profile(&p);
    rd_pb_free(&b);
}
END_TEST

START_TEST(test_pprof_gzip)
{
    build();
    rd_pb b = {0};
    ck_assert_int_eq(rd_pprof_encode(&M, NULL, &b), 0);
    char *gz = NULL;
    size_t gzlen = 0;
    FILE *f = open_memstream(&gz, &gzlen);
    ck_assert_int_eq(rd_pprof_write(&M, NULL, f), 0);
    fclose(f);
    ck_assert_uint_gt(gzlen, 18);
    ck_assert_int_eq((uint8_t)gz[0], 0x1f);
    ck_assert_int_eq((uint8_t)gz[1], 0x8b);
    uint8_t *raw = malloc(b.n + 16);
    z_stream z = {0};
    ck_assert_int_eq(inflateInit2(&z, 15 + 16), Z_OK);
    z.next_in = (Bytef *)gz;
    z.avail_in = (uInt)gzlen;
    z.next_out = raw;
    z.avail_out = (uInt)b.n + 16;
    ck_assert_int_eq(inflate(&z, Z_FINISH), Z_STREAM_END);
    ck_assert_uint_eq(z.total_out, b.n);
    ck_assert_int_eq(memcmp(raw, b.p, b.n), 0);
    inflateEnd(&z);
    free(raw);
    free(gz);
    rd_pb_free(&b);
}
END_TEST

START_TEST(test_pprof_empty)
{
    rd_pb b = {0};
    ck_assert_int_eq(rd_pprof_encode(&M, NULL, &b), 0);
    prof p;
    read_profile(&p, b.p, b.n);
    ck_assert_str_eq(p.str[0], "");
    ck_assert_uint_eq(p.nsample, 0);
    ck_assert_uint_eq(p.time, 0);
    free_profile(&p);
    rd_pb_free(&b);
}
END_TEST

START_TEST(test_pb_varint)
{
    rd_pb b = {0};
    rd_pb_raw_varint(&b, 0);
    rd_pb_raw_varint(&b, 127);
    rd_pb_raw_varint(&b, 300);
    rd_pb_raw_varint(&b, UINT64_MAX);
    static const uint8_t want[] = {0x00, 0x7f, 0xac, 0x02, 0xff, 0xff, 0xff,
                                   0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    ck_assert_uint_eq(b.n, sizeof want);
    ck_assert_int_eq(memcmp(b.p, want, sizeof want), 0);
    rd_pb_reset(&b);
    rd_pb_bytes(&b, 6, "ab", 2);
    ck_assert_uint_eq(b.n, 4);
    ck_assert_int_eq(memcmp(b.p,
                            "\x32\x02"
                            "ab",
                            4),
                     0);
    rd_pb_free(&b);
}
END_TEST

UT_MAIN("pprof", model_setup, model_teardown, test_pprof_structure, test_pprof_coroutines,
        test_pprof_gzip, test_pprof_empty, test_pb_varint)
