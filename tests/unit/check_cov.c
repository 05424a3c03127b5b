/* check_cov: the bytecode line reader (recorderd/core/rd_lines) and the coverage
 * model and writers (recorderd/out/rd_cov).
 *
 * The sample source (SAMPLE) and what luac5.1 -l -l lists for it:
 *   main <0,0>: lines 3 4 7 10     f <1,3>: lines 2 3     g <5,7>: lines 6 7
 * so its executable lines are 2 3 4 6 7 10, and it has three prototypes.
 */
#include <check.h>
#include <errno.h>
#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rd_cov.h"
#include "rd_sessfile.h"
#include "rd_lines.h"
#include "ut_main.h"

#define SAMPLE                                                                                     \
    "local function f(x)\n"                                                                        \
    "  return x + 1\n"                                                                             \
    "end\n"                                                                                        \
    "local t = {\n"                                                                                \
    "  g = function()\n"                                                                           \
    "    return 2\n"                                                                               \
    "  end,\n"                                                                                     \
    "}\n"                                                                                          \
    "-- comment\n"                                                                                 \
    "return f(1)\n"

static const uint32_t sample_lines[] = {2, 3, 4, 6, 7, 10};
static char g_tmp[64]; /* per-tcase scratch directory */

/* {====================================================================
 * Helpers */

static void tmp_setup(void)
{
    ut_tmpdir(g_tmp, sizeof g_tmp, "cov");
}

static void tmp_teardown(void)
{
    ut_rmtree(g_tmp);
}

static void write_file(const char *name, const char *text)
{
    char path[256];
    ck_assert_str_ne(g_tmp, "");
    snprintf(path, sizeof path, "%s/%s", g_tmp, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

typedef struct dump {
    uint8_t *p;
    size_t n, cap;
} dump;

static int dump_writer(lua_State *L, const void *p, size_t sz, void *ud)
{
    dump *d = ud;
    (void)L;
    if (d->n + sz > d->cap) {
        d->cap = (d->n + sz) * 2;
        d->p = realloc(d->p, d->cap);
    }
    memcpy(d->p + d->n, p, sz);
    d->n += sz;
    return 0;
}

/* lua_dump of a chunk compiled from text. */
static dump compile_dump(const char *text)
{
    dump d = {0};
    lua_State *L = luaL_newstate();
    ck_assert_int_eq(luaL_loadbuffer(L, text, strlen(text), "@sample.lua"), 0);
    ck_assert_int_eq(lua_dump(L, dump_writer, &d), 0);
    lua_close(L);
    return d;
}

static void assert_sample(const rd_lines *l)
{
    ck_assert_uint_eq(l->nline, 6);
    for (unsigned i = 0; i < 6; i++)
        ck_assert_uint_eq(l->line[i], sample_lines[i]);
    ck_assert_uint_eq(l->nproto, 3);
    ck_assert(l->proto[0].linedefined == 0 && l->proto[0].lastlinedefined == 0);
    ck_assert(l->proto[1].linedefined == 1 && l->proto[1].lastlinedefined == 3);
    ck_assert(l->proto[2].linedefined == 5 && l->proto[2].lastlinedefined == 7);
}

/* ---- a synthetic Lua 5.1 dump of any byte order and sizes ---- */

typedef struct builder {
    uint8_t b[1 << 16];
    size_t n;
    int big, intsz, sizetsz;
} builder;

static void put_n(builder *d, uint64_t v, int sz)
{
    for (int i = 0; i < sz; i++)
        d->b[d->n + (size_t)(d->big ? sz - 1 - i : i)] = (uint8_t)(v >> (8 * i));
    d->n += (size_t)sz;
}

static void put_str(builder *d, const char *s)
{
    size_t len = s ? strlen(s) + 1 : 0;
    put_n(d, len, d->sizetsz);
    memcpy(d->b + d->n, s ? s : "", len);
    d->n += len;
}

static void put_header(builder *d, int big, int intsz, int sizetsz)
{
    *d = (builder){.big = big, .intsz = intsz, .sizetsz = sizetsz};
    const uint8_t h[12] = {27, 'L', 'u', 'a', 0x51, 0, (uint8_t)!big, (uint8_t)intsz,
                           (uint8_t)sizetsz, 4, 8, 0};
    memcpy(d->b, h, sizeof h);
    d->n = sizeof h;
}

/* A function on lines first..first+2 with `depth` nested functions below
 * it, one per level, each one line further down. */
static void put_function(builder *d, int first, int depth)
{
    put_str(d, depth % 2 ? NULL : "@synthetic.lua");
    put_n(d, (uint64_t)first, d->intsz);
    put_n(d, (uint64_t)first + 2, d->intsz);
    memcpy(d->b + d->n, "\0\1\0\2", 4);
    d->n += 4;
    put_n(d, 2, d->intsz); /* two instructions */
    memset(d->b + d->n, 0, 8);
    d->n += 8;
    put_n(d, 4, d->intsz); /* constants: nil, true, 1.0, "k" */
    d->b[d->n++] = 0;
    d->b[d->n++] = 1;
    d->b[d->n++] = 1;
    d->b[d->n++] = 3;
    memset(d->b + d->n, 0, 8);
    d->n += 8;
    d->b[d->n++] = 4;
    put_str(d, "k");
    put_n(d, depth > 0, d->intsz);
    if (depth > 0)
        put_function(d, first + 1, depth - 1);
    put_n(d, 2, d->intsz); /* line info */
    put_n(d, (uint64_t)first, d->intsz);
    put_n(d, (uint64_t)first + 2, d->intsz);
    put_n(d, 1, d->intsz); /* one local */
    put_str(d, "v");
    put_n(d, 0, d->intsz);
    put_n(d, 1, d->intsz);
    put_n(d, 1, d->intsz); /* one upvalue name */
    put_str(d, "u");
}

/* }==================================================================== */

/* {====================================================================
 * rd_lines */

START_TEST(test_lines_parse_real)
{
    dump d = compile_dump(SAMPLE);
    rd_lines l;
    ck_assert_int_eq(rd_lines_parse(d.p, d.n, &l), 0);
    assert_sample(&l);
    rd_lines_free(&l);
    rd_lines_free(&l); /* twice is harmless */
    free(d.p);
}
END_TEST

START_TEST(test_lines_parse_truncated)
{
    dump d = compile_dump(SAMPLE);
    for (size_t n = 0; n < d.n; n++) {
        rd_lines l;
        uint8_t *copy = malloc(n + 1); /* exact size: ASan/valgrind see overreads */
        memcpy(copy, d.p, n);
        ck_assert_int_eq(rd_lines_parse(copy, n, &l), -EPROTO);
        ck_assert(l.line == NULL && l.nline == 0 && l.proto == NULL);
        free(copy);
    }
    free(d.p);
}
END_TEST

START_TEST(test_lines_parse_corrupt)
{
    dump d = compile_dump(SAMPLE);
    uint8_t *copy = malloc(d.n);
    uint32_t seed = 12345;
    for (int round = 0; round < 5000; round++) {
        memcpy(copy, d.p, d.n);
        for (int k = 0; k < 1 + round % 4; k++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % d.n;
            seed = seed * 1103515245u + 12345u;
            copy[at] = round % 3 ? (uint8_t)(seed >> 16) : 0xff;
        }
        rd_lines l;
        int e = rd_lines_parse(copy, d.n, &l);
        ck_assert(e == 0 || e == -EPROTO);
        for (uint32_t i = 1; e == 0 && i < l.nline; i++)
            ck_assert_uint_lt(l.line[i - 1], l.line[i]);
        rd_lines_free(&l);
    }
    free(copy);
    free(d.p);
}
END_TEST

START_TEST(test_lines_parse_layouts)
{
    static const int layouts[][3] = {{0, 4, 8}, {1, 4, 8}, {1, 8, 4}, {0, 8, 8}, {1, 4, 4}};
    builder *d = malloc(sizeof *d);
    for (unsigned k = 0; k < sizeof layouts / sizeof *layouts; k++) {
        rd_lines l;
        put_header(d, layouts[k][0], layouts[k][1], layouts[k][2]);
        put_function(d, 10, 2);
        ck_assert_int_eq(rd_lines_parse(d->b, d->n, &l), 0);
        /* functions on 10-12, 11-13, 12-14: lines 10 12 11 13 12 14 */
        ck_assert_uint_eq(l.nline, 5);
        for (uint32_t i = 0; i < 5; i++)
            ck_assert_uint_eq(l.line[i], 10 + i);
        ck_assert_uint_eq(l.nproto, 3);
        ck_assert(l.proto[2].linedefined == 12 && l.proto[2].lastlinedefined == 14);
        rd_lines_free(&l);
    }
    free(d);
}
END_TEST

START_TEST(test_lines_parse_bad)
{
    builder *d = malloc(sizeof *d);
    rd_lines l;
    put_header(d, 0, 4, 8);
    put_function(d, 1, 0);
    ck_assert_int_eq(rd_lines_parse(d->b, d->n, &l), 0);
    rd_lines_free(&l);
    d->b[d->n] = 0; /* a byte after the main function */
    ck_assert_int_eq(rd_lines_parse(d->b, d->n + 1, &l), -EPROTO);
    static const struct { size_t at; uint8_t v; } bad[] = {
        {0, 'X'}, {4, 0x52}, {5, 1}, {6, 2}, {7, 2}, {8, 16}, {9, 8}, {10, 2},
        {12, 0xff},                /* a source string longer than the input */
        {12 + 8 + 15 + 8 + 4 + 3, 0x7f}, /* a huge instruction count */
        {12 + 8 + 15 + 8 + 4 + 4 + 8 + 4, 9}, /* a constant of an unknown type */
    };
    for (unsigned k = 0; k < sizeof bad / sizeof *bad; k++) {
        builder *c = malloc(sizeof *c);
        memcpy(c, d, sizeof *c);
        c->b[bad[k].at] = bad[k].v;
        ck_assert_msg(rd_lines_parse(c->b, c->n, &l) == -EPROTO, "corruption %u accepted", k);
        free(c);
    }
    free(d);
}
END_TEST

START_TEST(test_lines_parse_depth)
{
    builder *d = malloc(sizeof *d);
    rd_lines l;
    put_header(d, 0, 4, 8);
    put_function(d, 1, 200);
    ck_assert_int_eq(rd_lines_parse(d->b, d->n, &l), 0);
    ck_assert_uint_eq(l.nproto, 201);
    rd_lines_free(&l);
    put_header(d, 0, 4, 8);
    put_function(d, 1, 300); /* deeper than the compiler ever nests */
    ck_assert_int_eq(rd_lines_parse(d->b, d->n, &l), -EPROTO);
    free(d);
}
END_TEST

START_TEST(test_lines_file)
{
    char path[128], err[512];
    rd_lines l;
    lua_State *L = rd_lines_state();
    ck_assert_ptr_nonnull(L);
    write_file("s.lua", "#!/usr/bin/env lua5.1\n" SAMPLE);
    snprintf(path, sizeof path, "%s/s.lua", g_tmp);
    ck_assert_int_eq(rd_lines_file(L, path, &l, err, sizeof err), 0);
    ck_assert_uint_eq(l.nline, 6);
    ck_assert_uint_eq(l.line[0], 3); /* the #! line still counts as line 1 */
    rd_lines_free(&l);
    dump d = compile_dump(SAMPLE); /* a precompiled chunk behind a #! line */
    snprintf(path, sizeof path, "%s/bin.lua", g_tmp);
    FILE *f = fopen(path, "wb");
    fputs("#!/usr/bin/env lua5.1\n", f);
    fwrite(d.p, 1, d.n, f);
    fclose(f);
    free(d.p);
    ck_assert_int_eq(rd_lines_file(L, path, &l, err, sizeof err), 0);
    assert_sample(&l);
    rd_lines_free(&l);
    write_file("bad.lua", "local x = \nreturn +\n");
    snprintf(path, sizeof path, "%s/bad.lua", g_tmp);
    ck_assert_int_eq(rd_lines_file(L, path, &l, err, sizeof err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "bad.lua:2:"));
    snprintf(path, sizeof path, "%s/missing.lua", g_tmp);
    ck_assert_int_eq(rd_lines_file(L, path, &l, err, sizeof err), -ENOENT);
    ck_assert_ptr_nonnull(strstr(err, "No such file"));
    ck_assert_int_eq(rd_lines_file(L, g_tmp, &l, err, sizeof err), -EISDIR);
    snprintf(path, sizeof path, "%s/fifo.lua", g_tmp);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    ck_assert_int_eq(rd_lines_file(L, path, &l, err, sizeof err), -EISDIR); /* never blocks */
    lua_close(L);
}
END_TEST

/* }==================================================================== */

/* {====================================================================
 * rd_cov over hand-built models */

static void mstr(rd_model *m, uint32_t sid, const char *s)
{
    ck_assert_int_eq(rd_model_add_str(m, sid, s, (uint32_t)strlen(s)), 0);
}

static void mfunc(rd_model *m, uint32_t fid, unsigned what, uint32_t src, uint32_t name,
                  uint32_t line, uint32_t last, uint64_t calls)
{
    lt_event ev = {.kind = LT_EV_FUNC, .nargs = 7, .a = {fid, what, src, name, line, last, 0}};
    ck_assert_int_eq(rd_model_add_func(m, &ev), 0);
    m->func[fid].calls = calls;
}

static void mhit(rd_model *m, uint32_t fid, uint32_t line, uint64_t hits)
{
    rd_line *l = rd_model_line(m, fid, line);
    ck_assert_ptr_nonnull(l);
    l->hits += hits;
}

/* SAMPLE run as app.lua: main once, f three times, g never; plus a
 * loadstring chunk and the C function print. */
static void sample_model(rd_model *m, const char *src)
{
    ck_assert_int_eq(rd_model_init(m), 0);
    mstr(m, 1, src);
    mstr(m, 2, "main chunk");
    mstr(m, 3, "f");
    mstr(m, 4, "[C]");
    mstr(m, 5, "print");
    mstr(m, 6, "[string \"return 1\"]");
    mfunc(m, 1, LT_WHAT_MAIN, 1, 2, 0, 0, 1);
    mfunc(m, 2, LT_WHAT_LUA, 1, 3, 1, 3, 3);
    mfunc(m, 3, LT_WHAT_C, 4, 5, 0, 0, 7);
    mfunc(m, 4, LT_WHAT_MAIN, 6, 2, 0, 0, 1);
    mhit(m, 1, 3, 1);
    mhit(m, 1, 4, 1);
    mhit(m, 1, 7, 1);
    mhit(m, 1, 10, 1);
    mhit(m, 2, 2, 3);
    mhit(m, 4, 1, 2);
}

/* Runs a writer into a string the caller frees. */
/* noinline: inlined, GCC 12 takes its result for a pointer to its local */
__attribute__((noinline)) static char *written(int (*w)(const rd_cov *, FILE *), const rd_cov *c)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_int_eq(w(c, f), 0);
    fclose(f);
    return buf;
}

static int write_text(const rd_cov *c, FILE *f)
{
    return rd_cov_write_text(c, "t", f);
}

static void cov_of(rd_cov *c, const rd_cov_opts *o, const char *src, int times)
{
    rd_model m;
    ck_assert_int_eq(rd_cov_init(c, o), 0);
    sample_model(&m, src);
    for (int i = 0; i < times; i++)
        ck_assert_int_eq(rd_cov_add_model(c, &m, g_tmp), 0);
    rd_model_free(&m);
    rd_cov_finish(c);
}

START_TEST(test_cov_lcov)
{
    rd_cov c;
    char want[2048];
    write_file("app.lua", SAMPLE);
    cov_of(&c, NULL, "app.lua", 1);
    char *got = written(rd_cov_write_lcov, &c);
    snprintf(want, sizeof want,
             "TN:\nSF:app.lua\n" /* under the working directory: relative to it */
             "FN:1,main chunk\nFN:1,f\nFN:5,function@5\n"
             "FNDA:1,main chunk\nFNDA:3,f\nFNDA:0,function@5\nFNF:3\nFNH:2\n"
             "DA:2,3\nDA:3,1\nDA:4,1\nDA:6,0\nDA:7,1\nDA:10,1\nLF:6\nLH:5\nend_of_record\n");
    ck_assert_str_eq(got, want);
    rd_cov_total t = rd_cov_total_of(&c);
    ck_assert(t.lines == 6 && t.hit == 5 && t.fns == 3 && t.fns_hit == 2);
    free(got);
    rd_cov_free(&c);
}
END_TEST

START_TEST(test_cov_luacov)
{
    rd_cov c;
    write_file("app.lua", SAMPLE);
    cov_of(&c, NULL, "./app.lua", 1);
    char *got = written(rd_cov_write_luacov, &c);
    ck_assert_str_eq(got, "10:app.lua\n0 3 1 1 0 0 1 0 0 1 \n");
    free(got);
    rd_cov_free(&c);
}
END_TEST

START_TEST(test_cov_text)
{
    rd_cov c;
    write_file("app.lua", SAMPLE);
    cov_of(&c, NULL, "app.lua", 1);
    char *got = written(write_text, &c);
    ck_assert_ptr_nonnull(strstr(got, "luatrace coverage: t\n"));
    ck_assert_msg(strstr(got, "\nTotal ") &&
                      strstr(got, "       5        1    83.33%           2/3"),
                  "%s", got);
    ck_assert_ptr_nonnull(strstr(got, "\n 3   return x + 1\n"));
    ck_assert_ptr_nonnull(strstr(got, "\n*0     return 2\n")); /* g never ran */
    ck_assert_ptr_nonnull(strstr(got, "\n   -- comment\n"));   /* no bytecode */
    ck_assert_ptr_nonnull(strstr(got, "  [string \"return 1\"]: 1 line hit; a chunk loaded "
                                      "from a string"));
    ck_assert_ptr_nonnull(strstr(got, "\n 2 (line 1)\n"));
    free(got);
    rd_cov_free(&c);
}
END_TEST

START_TEST(test_cov_merge)
{
    rd_cov c;
    rd_model m;
    char sub[128];
    write_file("app.lua", SAMPLE);
    snprintf(sub, sizeof sub, "%s/sub", g_tmp);
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    ck_assert_int_eq(rd_cov_init(&c, NULL), 0);
    sample_model(&m, "app.lua");
    ck_assert_int_eq(rd_cov_add_model(&c, &m, g_tmp), 0);
    rd_model_free(&m);
    sample_model(&m, "./sub/../app.lua"); /* the same file by another name */
    ck_assert_int_eq(rd_cov_add_model(&c, &m, g_tmp), 0);
    rd_model_free(&m);
    rd_cov_finish(&c);
    char *got = written(rd_cov_write_lcov, &c);
    ck_assert_msg(strstr(got, "FNDA:2,main chunk\nFNDA:6,f\nFNDA:0,function@5\n") &&
                      strstr(got, "DA:2,6\nDA:3,2\nDA:4,2\nDA:6,0\nDA:7,2\nDA:10,2\n") &&
                      strstr(got, "LF:6\nLH:5\n") && !strstr(got + 1, "TN:"),
                  "%s", got);
    free(got);
    got = written(rd_cov_write_luacov, &c);
    ck_assert_str_eq(got, "10:app.lua\n0 6 2 2 0 0 2 0 0 2 \n");
    free(got);
    rd_cov_free(&c);
}
END_TEST

START_TEST(test_cov_names)
{
    rd_cov c;
    rd_model m;
    write_file("n.lua", "local a = function() end\nlocal b = function() end\n"
                        "local c = function() end\nlocal d = function() end\n");
    ck_assert_int_eq(rd_model_init(&m), 0);
    mstr(&m, 1, "n.lua");
    mstr(&m, 2, "x");
    mstr(&m, 3, "M.f, (anon)");
    mstr(&m, 4, "?");
    mfunc(&m, 1, LT_WHAT_LUA, 1, 2, 1, 1, 1);
    mfunc(&m, 2, LT_WHAT_LUA, 1, 2, 2, 2, 1);
    mfunc(&m, 3, LT_WHAT_LUA, 1, 3, 3, 3, 1);
    mfunc(&m, 4, LT_WHAT_LUA, 1, 4, 4, 4, 0);
    mhit(&m, 4, 4, 1); /* running when tracing began: no call, yet it ran */
    ck_assert_int_eq(rd_cov_init(&c, NULL), 0);
    ck_assert_int_eq(rd_cov_add_model(&c, &m, g_tmp), 0);
    rd_cov_finish(&c);
    char *got = written(rd_cov_write_lcov, &c);
    ck_assert_msg(strstr(got, "FN:1,main chunk\nFN:1,x@1\nFN:2,x@2\nFN:3,M.f_ (anon)\n"
                              "FN:4,function@4\n") &&
                      strstr(got, "FNDA:1,function@4\nFNF:5\nFNH:4\n"),
                  "%s", got);
    free(got);
    rd_cov_free(&c);
    rd_model_free(&m);
}
END_TEST

START_TEST(test_cov_changed)
{
    rd_cov c;
    write_file("app.lua", "\n\n" SAMPLE); /* edited after the trace */
    cov_of(&c, NULL, "app.lua", 1);
    ck_assert_uint_eq(c.nf, 2);
    ck_assert(c.f[0].exact);
    ck_assert_uint_ge(c.f[0].changed, 1);
    rd_cov_total t = rd_cov_total_of(&c);
    ck_assert_uint_le(t.hit, t.lines); /* every hit kept, and counted */
    char *got = written(write_text, &c);
    ck_assert_ptr_nonnull(strstr(got, "carry no bytecode now"));
    free(got);
    rd_cov_free(&c);
}
END_TEST

START_TEST(test_cov_missing)
{
    rd_cov c;
    cov_of(&c, NULL, "gone.lua", 1); /* never written */
    ck_assert_uint_eq(c.nf, 2);
    char *got = written(rd_cov_write_lcov, &c);
    ck_assert_str_eq(got, ""); /* genhtml must be able to read every SF */
    free(got);
    got = written(rd_cov_write_luacov, &c);
    ck_assert_str_eq(got, "");
    free(got);
    got = written(write_text, &c);
    ck_assert_ptr_nonnull(strstr(got, "  gone.lua: 5 lines hit; no source file: "));
    ck_assert_ptr_nonnull(strstr(got, "No such file or directory"));
    ck_assert_ptr_nonnull(strstr(got, "\n 3 (line 2)\n"));
    free(got);
    rd_cov_free(&c);
}
END_TEST

/* One relative name read in two directories (DIR records): two files,
 * each with its own hits; the one under the session's directory named
 * from it, one elsewhere by its absolute path; an absolute source after a
 * DIR is itself. */
START_TEST(test_cov_dir)
{
    char sub[128], other[128];
    rd_model m;
    rd_cov c;
    write_file("app.lua", SAMPLE);
    snprintf(sub, sizeof sub, "%s/sub", g_tmp);
    snprintf(other, sizeof other, "%s/other", g_tmp);
    ck_assert_int_eq(mkdir(sub, 0700) | mkdir(other, 0700), 0);
    write_file("sub/app.lua", "local x = 1\nreturn x\n");
    write_file("other/app.lua", "return 1\n");
    ck_assert_int_eq(rd_model_init(&m), 0);
    mstr(&m, 1, "app.lua");
    mstr(&m, 2, "main chunk");
    mstr(&m, 3, sub);
    mstr(&m, 4, other);
    mfunc(&m, 1, LT_WHAT_MAIN, 1, 2, 0, 0, 1); /* before any DIR: the session's */
    rd_model_add_dir(&m, 3);
    mfunc(&m, 2, LT_WHAT_MAIN, 1, 2, 0, 0, 1);
    mfunc(&m, 5, LT_WHAT_LUA, 3, 2, 1, 3, 1); /* an absolute source: no directory */
    rd_model_add_dir(&m, 0);
    mfunc(&m, 3, LT_WHAT_MAIN, 1, 2, 0, 0, 2); /* the session's again */
    rd_model_add_dir(&m, 4);
    mfunc(&m, 4, LT_WHAT_MAIN, 1, 2, 0, 0, 1);
    ck_assert_uint_eq(rd_model_src_slot(&m, 1), rd_model_src_slot(&m, 3));
    ck_assert_uint_ne(rd_model_src_slot(&m, 1), rd_model_src_slot(&m, 2));
    ck_assert_uint_eq(rd_model_src_slot(&m, 5), 2 * 3);
    ck_assert_str_eq(rd_model_slot_dir(&m, rd_model_src_slot(&m, 2)), sub);
    ck_assert_ptr_null(rd_model_slot_dir(&m, rd_model_src_slot(&m, 1)));
    mhit(&m, 1, 3, 1);
    mhit(&m, 3, 3, 2);
    mhit(&m, 2, 2, 5);
    mhit(&m, 4, 1, 7);
    ck_assert_int_eq(rd_cov_init(&c, NULL), 0);
    ck_assert_int_eq(rd_cov_add_model(&c, &m, g_tmp), 0);
    rd_cov_finish(&c);
    char *got = written(rd_cov_write_lcov, &c), want[512];
    ck_assert_ptr_nonnull(strstr(got, "SF:app.lua\n"));
    ck_assert_ptr_nonnull(strstr(got, "DA:3,3\n"));
    /* (the profile's names: three main chunks of app.lua, two more numbered) */
    snprintf(want, sizeof want, "SF:sub/app.lua\nFN:1,main chunk#2\nFNDA:1,main chunk#2\n"
             "FNF:1\nFNH:1\nDA:1,0\nDA:2,5\nLF:2\nLH:1\nend_of_record\n");
    ck_assert_ptr_nonnull(strstr(got, want));
    snprintf(want, sizeof want, "SF:other/app.lua\nFN:1,main chunk#4\nFNDA:1,main chunk#4\n"
             "FNF:1\nFNH:1\nDA:1,7\nLF:1\nLH:1\nend_of_record\n");
    ck_assert_ptr_nonnull(strstr(got, want));
    free(got);
    got = written(write_text, &c);
    snprintf(want, sizeof want, "\n%s/app.lua ", sub);
    ck_assert_ptr_nonnull(strstr(got, want));
    ck_assert_ptr_null(strstr(got, "no source file"));
    free(got);
    uint32_t *files = rd_cov_files_of(&c, &m, g_tmp);
    ck_assert_ptr_nonnull(files);
    uint32_t f1 = files[rd_model_src_slot(&m, 1)], f2 = files[rd_model_src_slot(&m, 2)],
             f4 = files[rd_model_src_slot(&m, 4)];
    ck_assert(f1 && f2 && f4 && f1 != f2 && f2 != f4 && f1 != f4);
    free(files);
    rd_cov_free(&c);
    rd_model_free(&m);
}
END_TEST

START_TEST(test_cov_patterns)
{
    static const char *const lib[] = {"*/lib"}, *const app[] = {"app.lua"},
                             *const str[] = {"\\[string*"};
    struct { rd_cov_opts o; uint32_t nf; } cases[] = {
        {{lib, 1, NULL, 0}, 0},    /* include: nothing under lib */
        {{NULL, 0, app, 1}, 1},    /* exclude the file by its name */
        {{app, 1, str, 1}, 1},     /* include the file, exclude the chunk */
        {{NULL, 0, str, 1}, 1},
        {{NULL, 0, NULL, 0}, 2},
    };
    write_file("app.lua", SAMPLE);
    for (unsigned k = 0; k < sizeof cases / sizeof *cases; k++) {
        rd_cov c;
        cov_of(&c, &cases[k].o, "./app.lua", 1);
        ck_assert_msg(c.nf == cases[k].nf, "case %u: %u files", k, c.nf);
        rd_cov_free(&c);
    }
    rd_cov c; /* a directory pattern matches the absolute path */
    const char *dir[] = {g_tmp};
    rd_cov_opts o = {NULL, 0, dir, 1};
    cov_of(&c, &o, "app.lua", 1);
    ck_assert_uint_eq(c.nf, 1);
    ck_assert_ptr_null(c.f[0].path);
    rd_cov_free(&c);
}
END_TEST

/* A file outside the working directory keeps its absolute SF; one whose
 * path only starts with the directory's name (app.lua against "ap") too. */
START_TEST(test_cov_lcov_outside)
{
    char dir[128], src[160];
    rd_cov c;
    rd_model m;
    write_file("app.lua", SAMPLE);
    snprintf(dir, sizeof dir, "%s/sub", g_tmp);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    snprintf(src, sizeof src, "%s/app.lua", g_tmp);
    for (int i = 0; i < 2; i++) {
        if (i)
            snprintf(dir, sizeof dir, "%s/ap", g_tmp);
        ck_assert_int_eq(rd_cov_init(&c, NULL), 0);
        sample_model(&m, src);
        ck_assert_int_eq(rd_cov_add_model(&c, &m, dir), 0);
        rd_model_free(&m);
        rd_cov_finish(&c);
        char *got = written(rd_cov_write_lcov, &c), want[256];
        snprintf(want, sizeof want, "TN:\nSF:%s\nFN:1,main chunk\n", src);
        ck_assert_msg(!strncmp(got, want, strlen(want)), "%s", got);
        free(got);
        rd_cov_free(&c);
    }
}
END_TEST

START_TEST(test_cov_untested)
{
    char dir[128], err[256];
    rd_cov c;
    write_file("app.lua", SAMPLE);
    snprintf(dir, sizeof dir, "%s/lib", g_tmp);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    snprintf(dir, sizeof dir, "%s/lib/deep", g_tmp);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    write_file("lib/deep/u.lua", "return 1\n");
    write_file("lib/notes.txt", "x\n");
    write_file("lib/broken.lua", "return +\n");
    ck_assert_int_eq(rd_cov_init(&c, NULL), 0);
    rd_model m;
    sample_model(&m, "app.lua");
    ck_assert_int_eq(rd_cov_add_model(&c, &m, g_tmp), 0);
    rd_model_free(&m);
    ck_assert_int_eq(rd_cov_add_untested(&c, g_tmp, err, sizeof err), 0); /* app.lua once */
    rd_cov_finish(&c);
    char *got = written(rd_cov_write_lcov, &c);
    ck_assert_msg(strstr(got, "SF:lib/deep/u.lua\nFN:1,main chunk\nFNDA:0,main chunk\nFNF:1\n"
                              "FNH:0\nDA:1,0\nLF:1\nLH:0\n") &&
                      !strstr(got, "broken") && !strstr(got, "notes"),
                  "%s", got);
    const char *first = strstr(got, "SF:app.lua\n");
    ck_assert_msg(first && !strstr(first + 4, "app.lua\n"), "app.lua not once: %s", got);
    free(got);
    got = written(write_text, &c);
    ck_assert_ptr_nonnull(strstr(got, "broken.lua:1: unexpected symbol"));
    free(got);
    snprintf(dir, sizeof dir, "%s/none", g_tmp);
    ck_assert_int_eq(rd_cov_add_untested(&c, dir, err, sizeof err), -ENOENT);
    ck_assert_ptr_nonnull(strstr(err, "none"));
    rd_cov_free(&c);
}
END_TEST

static int write_cobertura(const rd_cov *c, FILE *f)
{
    return rd_cov_write_cobertura(c, "t & v", 42, f);
}

/* Two directories whose names share a prefix (ab, abc): the source is
 * their parent, a package each; methods hold their range's lines. */
START_TEST(test_cov_cobertura)
{
    char dir[128], want[512];
    rd_cov c;
    rd_model m;
    for (int i = 0; i < 2; i++) {
        snprintf(dir, sizeof dir, "%s/%s", g_tmp, i ? "abc" : "ab");
        ck_assert_int_eq(mkdir(dir, 0700), 0);
    }
    write_file("ab/x.lua", SAMPLE);
    write_file("abc/y.lua", SAMPLE);
    ck_assert_int_eq(rd_cov_init(&c, NULL), 0);
    sample_model(&m, "abc/y.lua");
    ck_assert_int_eq(rd_cov_add_model(&c, &m, g_tmp), 0);
    rd_model_free(&m);
    sample_model(&m, "ab/x.lua");
    ck_assert_int_eq(rd_cov_add_model(&c, &m, g_tmp), 0);
    rd_model_free(&m);
    rd_cov_finish(&c);
    char *got = written(write_cobertura, &c);
    snprintf(want, sizeof want, "<source>%s</source>", g_tmp);
    ck_assert_msg(strstr(got, want), "%s", got);
    ck_assert_msg(strstr(got, "line-rate=\"0.8333\" branch-rate=\"0\" lines-covered=\"10\" "
                              "lines-valid=\"12\"") && strstr(got, "version=\"t &amp; v\" "
                                                                     "timestamp=\"42\""),
                  "%s", got);
    ck_assert_msg(strstr(got, "<package name=\"ab\"") &&
                      strstr(strstr(got, "<package name=\"ab\""), "<package name=\"abc\""),
                  "packages: %s", got); /* sorted */
    ck_assert(NULL != strstr(got, "<class name=\"x.lua\" filename=\"ab/x.lua\" "
                                      "line-rate=\"0.8333\""));
    ck_assert(NULL != strstr(got, "<method name=\"f\" signature=\"\" line-rate=\"1.0000\" "
                                      "branch-rate=\"0\" complexity=\"0\">\n<lines>\n"
                                      "<line number=\"2\" hits=\"3\" branch=\"false\"/>\n"
                                      "<line number=\"3\" hits=\"1\" branch=\"false\"/>\n"
                                      "</lines>\n</method>"));
    ck_assert(NULL != strstr(got, "<method name=\"function@5\" signature=\"\" "
                                      "line-rate=\"0.5000\""));
    free(got);
    rd_cov_free(&c);
}
END_TEST

/* A LINES record: lines line + i for the bits i of mask. */
static int mlines(rd_model *m, uint32_t fid, uint32_t line, uint64_t mask)
{
    lt_event ev = {.kind = LT_EV_LINES, .nargs = 3, .a = {fid, line, mask}};
    return rd_model_add_lines(m, &ev);
}

static uint64_t bits(const uint32_t *lines, size_t n, uint32_t from)
{
    uint64_t mask = 0;
    for (size_t i = 0; i < n; i++)
        mask |= 1ull << (lines[i] - from);
    return mask;
}

/* The DA lines of one file's LCOV, as "2,3,4,". */
static void da_lines(const char *lcov, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = 0;
    for (const char *p = lcov; (p = strstr(p, "\nDA:")); p += 4)
        n += (size_t)snprintf(out + n, cap - n, "%d,", atoi(p + 4));
}

/* m's coverage as lcov (the caller frees it; m is freed), its DA lines
 * in got. */
static char *model_lcov(rd_model *m, char *got, size_t cap)
{
    rd_cov c;
    ck_assert_int_eq(rd_cov_init(&c, NULL), 0);
    ck_assert_int_eq(rd_cov_add_model(&c, m, g_tmp), 0);
    rd_model_free(m);
    rd_cov_finish(&c);
    char *lcov = written(rd_cov_write_lcov, &c);
    da_lines(lcov, got, cap);
    rd_cov_free(&c);
    return lcov;
}

/* Under LuaJIT (LINES records): within the range of each function they
 * came for (a main chunk's: the whole file) LuaJIT's lines replace Lua
 * 5.1's; records out of order, of C functions or of unknown ones are
 * ignored; a file only LuaJIT compiles is exact with a main chunk's. */
START_TEST(test_cov_jit_lines)
{
    static const uint32_t jit_main[] = {1, 2, 3, 4, 5, 7, 10}; /* not 6; 1 and 5 */
    static const uint32_t jit_g[] = {5, 7};                    /* g's: not 6 */
    rd_model m;
    char got[256];
    write_file("app.lua", SAMPLE);
    sample_model(&m, "app.lua");
    ck_assert_int_eq(mlines(&m, 1, 0, bits(jit_main, 7, 0)), 0);
    ck_assert_int_eq(mlines(&m, 1, 1, 1), 0);  /* not 64 lines further: ignored */
    ck_assert_int_eq(mlines(&m, 3, 0, 1), 0);  /* a C function's */
    ck_assert_int_eq(mlines(&m, 9, 0, 1), 0);  /* unknown */
    ck_assert_int_eq(mlines(&m, 2, 64, 1), 0); /* past f's range (1-3) */
    ck_assert_uint_eq(m.njl, 1);
    char *lcov = model_lcov(&m, got, sizeof got);
    ck_assert_str_eq(got, "1,2,3,4,5,7,10,");
    ck_assert_msg(strstr(lcov, "FNF:3\n"), "%s", lcov); /* the prototypes stay */
    free(lcov);
    /* g's alone: 6, strictly inside its range, leaves; 5 comes */
    sample_model(&m, "app.lua");
    mstr(&m, 7, "g");
    mfunc(&m, 5, LT_WHAT_LUA, 1, 7, 5, 7, 0);
    ck_assert_int_eq(mlines(&m, 5, 5, bits(jit_g, 2, 5)), 0);
    ck_assert_int_eq(mlines(&m, 1, 0, 1), 0);  /* another's in between: */
    ck_assert_int_eq(mlines(&m, 5, 70, 1), 0); /* g's list is over */
    ck_assert_uint_eq(m.njl, 2);
    lcov = model_lcov(&m, got, sizeof got);
    ck_assert_str_eq(got, "2,3,4,5,7,10,"); /* main's line 1 is not sent (bit 0 only) */
    free(lcov);
    /* LuaJIT's syntax (goto): Lua 5.1 cannot compile it */
    write_file("app.lua", "goto x\n::x::\nreturn 1\n");
    ck_assert_int_eq(rd_model_init(&m), 0);
    mstr(&m, 1, "app.lua");
    mstr(&m, 2, "main chunk");
    mfunc(&m, 1, LT_WHAT_MAIN, 1, 2, 0, 0, 1);
    mhit(&m, 1, 3, 1);
    ck_assert_int_eq(mlines(&m, 1, 0, 1u << 1 | 1u << 3), 0);
    lcov = model_lcov(&m, got, sizeof got);
    ck_assert_str_eq(got, "1,3,");
    ck_assert_msg(strstr(lcov, "DA:3,1\n") && strstr(lcov, "LF:2\nLH:1\n"), "%s", lcov);
    free(lcov);
}
END_TEST

static int mnest(rd_model *m, uint32_t fid, uint32_t line, uint32_t last)
{
    lt_event ev = {.kind = LT_EV_NEST, .nargs = 3, .a = {fid, line, last}};
    return rd_model_add_nest(m, &ev);
}

/* Under Lua 5.4 (NEST records): a file Lua 5.1 cannot compile lists the
 * functions nested in those that came, called or not, two of one range
 * twice, none outside its parent's range, of a C or unknown function. */
START_TEST(test_cov_nest)
{
    rd_model m;
    char got[256];
    write_file("app.lua", "local a <const> = 1\n"
                          "local function f() return a end\n"
                          "local g, h = function() end, function() end\n"
                          "return f\n");
    ck_assert_int_eq(rd_model_init(&m), 0);
    mstr(&m, 1, "app.lua");
    mstr(&m, 2, "main chunk");
    mfunc(&m, 1, LT_WHAT_MAIN, 1, 2, 0, 0, 1);
    mhit(&m, 1, 1, 1);
    ck_assert_int_eq(mlines(&m, 1, 0, 0x1e), 0);
    ck_assert_int_eq(mnest(&m, 1, 2, 2), 0);
    ck_assert_int_eq(mnest(&m, 1, 3, 3), 0);
    ck_assert_int_eq(mnest(&m, 1, 3, 3), 0);
    ck_assert_int_eq(mnest(&m, 1, 0, 3), 0); /* no line: ignored */
    ck_assert_int_eq(mnest(&m, 1, 4, 3), 0); /* ends before it starts */
    ck_assert_int_eq(mnest(&m, 9, 2, 2), 0); /* unknown function */
    ck_assert_uint_eq(m.nnest, 3);
    char *lcov = model_lcov(&m, got, sizeof got);
    ck_assert_msg(strstr(lcov, "FN:2,function@2\n") && strstr(lcov, "FN:3,function@3\n") &&
                      strstr(lcov, "FNDA:0,function@2\n") && strstr(lcov, "FNF:4\nFNH:1\n"),
                  "%s", lcov);
    free(lcov);
    /* a nested function called (its own FUNC) takes its range's prototype */
    ck_assert_int_eq(rd_model_init(&m), 0);
    mstr(&m, 1, "app.lua");
    mstr(&m, 2, "main chunk");
    mstr(&m, 3, "f");
    mfunc(&m, 1, LT_WHAT_MAIN, 1, 2, 0, 0, 1);
    mfunc(&m, 2, LT_WHAT_LUA, 1, 3, 2, 2, 1);
    mhit(&m, 1, 1, 1);
    mhit(&m, 2, 2, 1);
    ck_assert_int_eq(mlines(&m, 1, 0, 0x1e), 0);
    ck_assert_int_eq(mnest(&m, 1, 2, 2), 0);
    ck_assert_int_eq(mnest(&m, 1, 3, 3), 0);
    ck_assert_int_eq(mnest(&m, 2, 3, 3), 0); /* outside f's range: ignored */
    lcov = model_lcov(&m, got, sizeof got);
    ck_assert_msg(strstr(lcov, "FN:2,f\n") && !strstr(lcov, "function@2") &&
                      strstr(lcov, "FNF:3\nFNH:2\n"),
                  "%s", lcov);
    free(lcov);
}
END_TEST

START_TEST(test_cov_session_cwd)
{
    char buf[256];
    write_file("session.json", "{\n  \"session\": \"x\",\n"
                               "  \"cwd\": \"/srv/a \\\"q\\\"\\\\b\\u0001\",\n"
                               "  \"error\": \"\"\n}\n");
    ck_assert_int_eq(rd_sessfile_cwd(g_tmp, buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "/srv/a \"q\"\\b\x01");
    write_file("session.json", "{\n  \"cwd\": \"/unterminated\n");
    ck_assert_int_eq(rd_sessfile_cwd(g_tmp, buf, sizeof buf), -ENOENT);
    write_file("session.json", "{\n  \"session\": \"x\"\n}\n");
    ck_assert_int_eq(rd_sessfile_cwd(g_tmp, buf, sizeof buf), -ENOENT);
    ck_assert_int_eq(rd_sessfile_cwd("/nonexistent-dir", buf, sizeof buf), -ENOENT);
}
END_TEST

int main(void)
{
    static const struct ut_fixture fx = {tmp_setup, tmp_teardown, NULL, NULL, 60};
    const TTest *tests[] = {test_lines_parse_real, test_lines_parse_truncated,
                            test_lines_parse_corrupt, test_lines_parse_layouts,
                            test_lines_parse_bad, test_lines_parse_depth, test_lines_file,
                            test_cov_lcov, test_cov_luacov, test_cov_text, test_cov_merge,
                            test_cov_names, test_cov_changed, test_cov_missing, test_cov_dir,
                            test_cov_patterns, test_cov_lcov_outside, test_cov_untested, test_cov_session_cwd,
                            test_cov_cobertura, test_cov_jit_lines, test_cov_nest};
    return ut_main("cov", tests, UT_N(tests), &fx);
}

/* }==================================================================== */
