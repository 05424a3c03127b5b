/* check_report: the report writers of recorderd/out/rd_report over models built
 * by feeding events through rd_stack: per-function totals (recursion
 * counted once), profile.txt, folded stacks and annotated sources.
 *
 * The recursion model (build_recursion): main calls a -> b -> a -> b, then
 * the C function print; every dt is a whole number of milliseconds. Self
 * times: main 12, a 14+20, b 17+15, print 13; the outer a spans 66.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rd_annotate.h"
#include "rd_label.h"
#include "rd_outdir.h"
#include "rd_report.h"
#include "rd_stack.h"
#include "ut_events.h"
#include "ut_main.h"

#define MS 1000000ull

enum { F_MAIN = 1, F_A, F_B, F_PRINT };
#define L_MAIN "main@app.lua:0"
#define L_A "a@app.lua:50"
#define L_B "b@app.lua:60"
#define L_PRINT "print@[C]"

static char g_tmp[64]; /* per-tcase scratch directory, made by the runner */

/* ---- feeding events ---- */

static void ev_func(uint32_t fid, unsigned what, uint32_t src, uint32_t name, uint32_t line)
{
    EV(FUNC, fid, what, src, name, line, line + 5, 0);
}


static void build_recursion(void)
{
    ev_str(1, "app.lua");
    ev_str(2, "[C]");
    ev_str(3, "main");
    ev_str(4, "a");
    ev_str(5, "b");
    ev_str(6, "print");
    ev_func(F_MAIN, LT_WHAT_MAIN, 1, 3, 0);
    ev_func(F_A, LT_WHAT_LUA, 1, 4, 50);
    ev_func(F_B, LT_WHAT_LUA, 1, 5, 60);
    ev_func(F_PRINT, LT_WHAT_C, 2, 6, 0);
    EV(CLOCK, 0, 0, 0);
    EV(START, 0x1000, LT_R_BEGIN);
    EV(FRAME, 1, F_MAIN, 5);
    EV(CALL, 2, 0, F_A);
    EV(LINE, 2, 1 * MS, 51);  /* a */
    EV(CALL, 3, 2 * MS, F_B); /* a */
    EV(LINE, 3, 3 * MS, 61);  /* b */
    EV(CALL, 4, 4 * MS, F_A); /* b */
    EV(LINE, 4, 5 * MS, 51);  /* inner a */
    EV(CALL, 5, 6 * MS, F_B); /* inner a */
    EV(LINE, 5, 7 * MS, 61);  /* inner b */
    EV(RET, 5, 8 * MS);       /* inner b */
    EV(RET, 4, 9 * MS);       /* inner a */
    EV(RET, 3, 10 * MS);      /* b */
    EV(RET, 2, 11 * MS);      /* a */
    EV(LINE, 1, 12 * MS, 6);  /* main */
    EV(CALL, 2, 0, F_PRINT);
    EV(RET, 2, 13 * MS); /* print */
    EV(LINE, 1, 0, 7);
}

/* ---- judging ---- */

static char *render(int (*fn)(FILE *, const void *), const void *arg)
{
    /* static: GCC 12 at -O3 takes the stream's buffer for a pointer into
     * this frame (-Wdangling-pointer) when the caller reads it */
    static char *buf;
    static size_t len;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_int_eq(fn(f, arg), 0);
    fclose(f);
    return buf;
}

static int do_folded(FILE *f, const void *w)
{
    return rd_report_folded(&M, *(const enum rd_weight *)w, f, NULL);
}

static void expect_folded(enum rd_weight w, const char *expected)
{
    char *raw = render(do_folded, &w), *got = sorted_lines(raw), *want = sorted_lines(expected);
    ck_assert_msg(strcmp(got, want) == 0, "folded %d:\n--- got\n%s--- want\n%s", w, got, want);
    free(raw);
    free(got);
    free(want);
}

/* ==== totals ==== */

START_TEST(test_report_fstats_recursion)
{
    build_recursion();
    rd_fstat *fs = rd_report_fstats(&M);
    ck_assert_ptr_nonnull(fs);
    ck_assert_uint_eq(fs[F_A].calls, 2);
    ck_assert_uint_eq(fs[F_B].calls, 2);
    ck_assert_uint_eq(fs[F_PRINT].calls, 1);
    ck_assert_uint_eq(fs[F_MAIN].calls, 0); /* running when tracing began */
    ck_assert_uint_eq(fs[F_A].self, 34 * MS);
    ck_assert_uint_eq(fs[F_B].self, 32 * MS);
    ck_assert_uint_eq(fs[F_MAIN].self, 12 * MS);
    ck_assert_uint_eq(fs[F_PRINT].self, 13 * MS);
    /* the outermost frame's inclusive time, not the sum over the recursion */
    ck_assert_uint_eq(fs[F_A].total, 66 * MS);
    ck_assert_uint_eq(fs[F_B].total, (17 + 20 + 15) * MS);
    ck_assert_uint_eq(fs[F_MAIN].total, 91 * MS);
    ck_assert_uint_eq(fs[F_PRINT].total, 13 * MS);
    ck_assert_uint_eq(M.ticks_total, 91 * MS);
    free(fs);
}
END_TEST

/* The same function in two unrelated subtrees adds up. */
START_TEST(test_report_fstats_siblings)
{
    build_recursion();
    EV(CALL, 2, 0, F_B);
    EV(LINE, 2, 0, 61);
    EV(RET, 2, 5 * MS);
    rd_fstat *fs = rd_report_fstats(&M);
    ck_assert_uint_eq(fs[F_B].total, (52 + 5) * MS);
    ck_assert_uint_eq(fs[F_B].self, (32 + 5) * MS);
    ck_assert_uint_eq(fs[F_B].calls, 3);
    free(fs);
}
END_TEST

/* ==== profile.txt ==== */

typedef struct row {
    unsigned long long calls;
    double self, self_pct, total, total_pct, per_call;
    char label[128];
} row;

/* The line after p's, or NULL if p's is the last. */
static const char *next_line(const char *p)
{
    const char *e = p ? strchr(p, '\n') : NULL;
    return e ? e + 1 : NULL;
}

/* Parses the rows of the table whose heading is `title`. */
static int table_rows(const char *text, const char *title, row *rows, int cap)
{
    const char *p = next_line(next_line(strstr(text, title))); /* heading, column names */
    if (!p)
        return -1;
    int n = 0;
    while (*p && *p != '\n' && n < cap) {
        row *r = &rows[n];
        int used = 0;
        if (sscanf(p, "%llu %lf %lf %lf %lf %lf %n", &r->calls, &r->self, &r->self_pct,
                   &r->total, &r->total_pct, &r->per_call, &used) < 6)
            break;
        const char *e = strchr(p, '\n');
        snprintf(r->label, sizeof r->label, "%.*s", (int)(e - p - used), p + used);
        n++;
        p = e + 1;
    }
    return n;
}

static int do_profile(FILE *f, const void *top)
{
    return rd_report_profile(&M, "demo", "lua5.1 app.lua", *(const unsigned *)top, 0, f);
}

#define NEAR(x, y) ck_assert_msg(((x) - (y)) < 0.01 && ((y) - (x)) < 0.01, "%f != %f", x, y)

START_TEST(test_report_profile)
{
    build_recursion();
    unsigned top = 0;
    char *txt = render(do_profile, &top);
    ck_assert_msg(strncmp(txt, "luatrace profile: demo\n", 23) == 0, "%s", txt);
    ck_assert_ptr_nonnull(strstr(txt, "command: lua5.1 app.lua\n"));
    ck_assert_ptr_nonnull(strstr(txt, "traced time: 91.000 ms"));
    ck_assert_ptr_nonnull(strstr(txt, "functions: 4"));
    row r[8];
    ck_assert_int_eq(table_rows(txt, "By self time", r, 8), 4);
    ck_assert_str_eq(r[0].label, "a (app.lua:50)");
    ck_assert_str_eq(r[1].label, "b (app.lua:60)");
    ck_assert_str_eq(r[2].label, "print [C]");
    ck_assert_str_eq(r[3].label, "main (app.lua:0)");
    ck_assert_uint_eq(r[0].calls, 2);
    NEAR(r[0].self, 34.0);
    NEAR(r[0].self_pct, 3400.0 / 91);
    NEAR(r[0].total, 66.0);
    NEAR(r[0].total_pct, 6600.0 / 91);
    NEAR(r[0].per_call, 17000.0);
    NEAR(r[3].per_call, 0.0); /* no calls: no division by zero */
    ck_assert_int_eq(table_rows(txt, "By total time", r, 8), 4);
    ck_assert_str_eq(r[0].label, "main (app.lua:0)");
    ck_assert_str_eq(r[1].label, "a (app.lua:50)");
    ck_assert_str_eq(r[2].label, "b (app.lua:60)");
    ck_assert_str_eq(r[3].label, "print [C]");
    NEAR(r[0].total, 91.0);
    NEAR(r[2].total, 52.0);
    free(txt);
}
END_TEST

/* `top` limits each table (rd_report.h). */
START_TEST(test_report_profile_top)
{
    build_recursion();
    unsigned top = 2;
    char *txt = render(do_profile, &top);
    row r[8];
    ck_assert_int_eq(table_rows(txt, "By self time", r, 8), 2);
    ck_assert_str_eq(r[1].label, "b (app.lua:60)");
    ck_assert_msg(table_rows(txt, "By total time", r, 8) == 2, "no by-total table with top=2:\n%s",
                  txt);
    free(txt);
}
END_TEST

START_TEST(test_report_profile_empty)
{
    unsigned top = 0;
    char *txt = render(do_profile, &top);
    ck_assert_ptr_nonnull(strstr(txt, "traced time: 0.000 ms"));
    row r[2];
    ck_assert_int_eq(table_rows(txt, "By self time", r, 2), 0);
    free(txt);
}
END_TEST

/* ==== folded ==== */

START_TEST(test_report_folded_weights)
{
    build_recursion();
    expect_folded(RD_W_TIME, L_MAIN " 12000000\n" L_MAIN ";" L_A " 14000000\n"
                  L_MAIN ";" L_A ";" L_B " 17000000\n" L_MAIN ";" L_A ";" L_B ";" L_A " 20000000\n"
                  L_MAIN ";" L_A ";" L_B ";" L_A ";" L_B " 15000000\n"
                  L_MAIN ";" L_PRINT " 13000000\n");
    expect_folded(RD_W_CALLS, L_MAIN ";" L_A " 1\n" L_MAIN ";" L_A ";" L_B " 1\n"
                  L_MAIN ";" L_A ";" L_B ";" L_A " 1\n" L_MAIN ";" L_A ";" L_B ";" L_A ";" L_B " 1\n"
                  L_MAIN ";" L_PRINT " 1\n");
    expect_folded(RD_W_LINES, L_MAIN " 2\n" L_MAIN ";" L_A " 1\n" L_MAIN ";" L_A ";" L_B " 1\n"
                  L_MAIN ";" L_A ";" L_B ";" L_A " 1\n" L_MAIN ";" L_A ";" L_B ";" L_A ";" L_B " 1\n");
}
END_TEST

/* With TSC calibration, ticks become ns through the first and last CLOCK
 * pairs (here 0.5 ns per tick); folded weights are whole ns, rounded. */
START_TEST(test_report_folded_tsc)
{
    ev_str(1, "app.lua");
    ev_str(3, "main");
    ev_str(4, "a");
    ev_func(F_MAIN, LT_WHAT_MAIN, 1, 3, 0);
    ev_func(F_A, LT_WHAT_LUA, 1, 4, 50);
    EV(CLOCK, 1000, 5000, 1);
    EV(START, 0x1000, LT_R_BEGIN);
    EV(FRAME, 1, F_MAIN, 5);
    EV(LINE, 1, 4000, 6);
    EV(CALL, 2, 0, F_A);
    EV(LINE, 2, 3, 51);
    EV(RET, 2, 0);
    EV(CLOCK, 3000, 6000, 1);
    ck_assert(rd_model_ns_per_tick(&M) == 0.5);
    expect_folded(RD_W_TIME, L_MAIN " 2000\n" L_MAIN ";" L_A " 2\n");
}
END_TEST

/* Frames name their files as the other reports do (rd_label.h): past a
 * Lua library root, past the working directory or "./", whole when two
 * files would be shown the same. Whole paths in every frame made
 * luacheck's folded stacks pass their 64 MiB bound. */
START_TEST(test_report_folded_short)
{
    static const char *src[] = {"/home/u/proj/lib/parse.lua", "/usr/share/lua/5.1/pl/utils.lua",
                                "/usr/share/lua/5.1/inspect.lua",
                                "/opt/x/share/lua/5.1/inspect.lua", "./mod.lua", "/elsewhere/o.lua"};
    ck_assert_int_eq(rd_label_set_cwd(&M, "/home/u/proj"), 0);
    ev_str(1, "app.lua");
    ev_str(3, "main");
    ev_str(4, "f");
    ev_func(F_MAIN, LT_WHAT_MAIN, 1, 3, 0);
    EV(CLOCK, 0, 0, 0);
    EV(START, 0x1000, LT_R_BEGIN);
    EV(FRAME, 1, F_MAIN, 5);
    for (uint32_t i = 0; i < 6; i++) {
        ev_str(10 + i, src[i]);
        ev_func(10 + i, LT_WHAT_LUA, 10 + i, 4, i + 1);
        EV(CALL, 2, 0, 10 + i);
        EV(LINE, 2, 0, i + 2);
        EV(RET, 2, 0);
    }
    expect_folded(RD_W_LINES, L_MAIN ";f@lib/parse.lua:1 1\n" L_MAIN ";f@pl/utils.lua:2 1\n"
                  L_MAIN ";f@/usr/share/lua/5.1/inspect.lua:3 1\n"
                  L_MAIN ";f@/opt/x/share/lua/5.1/inspect.lua:4 1\n" L_MAIN ";f@mod.lua:5 1\n"
                  L_MAIN ";f@/elsewhere/o.lua:6 1\n");
}
END_TEST

START_TEST(test_report_folded_empty)
{
    enum rd_weight w = RD_W_TIME;
    char *txt = render(do_folded, &w);
    ck_assert_str_eq(txt, "");
    free(txt);
}
END_TEST

/* ==== annotate ==== */

static void tmp_setup(void)
{
    ut_tmpdir(g_tmp, sizeof g_tmp, "report");
}

static void tmp_teardown(void)
{
    ut_rmtree(g_tmp);
}

/* A runaway writer must not fill the disk: files stop at 16 MB. */
static void limit_files(void)
{
    struct rlimit rl = {16u << 20, 16u << 20};
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
    ck_assert_str_ne(g_tmp, "");
}

static void write_file(const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", g_tmp, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    int c;
    while ((c = fgetc(f)) != EOF)
        fputc(c, m);
    fclose(f);
    fclose(m);
    return buf;
}

typedef struct arow {
    int present, has_data;
    unsigned long long hits;
    double ms;
    char text[64];
} arow;

/* Rows of an annotated listing by line number (1..cap-1). */
static void parse_annotation(const char *txt, arow *rows, unsigned cap)
{
    memset(rows, 0, cap * sizeof *rows);
    const char *p = strstr(txt, "source\n");
    ck_assert_ptr_nonnull(p);
    for (p += 7; *p; p = strchr(p, '\n') + 1) {
        unsigned long long hits;
        double ms;
        unsigned line;
        int used = 0;
        arow r = {0};
        if (sscanf(p, "%llu %lf %u%n", &hits, &ms, &line, &used) == 3) {
            r.has_data = 1;
            r.hits = hits;
            r.ms = ms;
        } else if (sscanf(p, "%u%n", &line, &used) != 1) {
            ck_abort_msg("bad annotation row: %.60s", p);
        }
        const char *e = strchr(p, '\n');
        ck_assert_ptr_nonnull(e);
        used += 2; /* two spaces between the line number and the text */
        if (p + used > e)
            used = (int)(e - p);
        snprintf(r.text, sizeof r.text, "%.*s", (int)(e - p - used), p + used);
        r.present = 1;
        if (line < cap) {
            ck_assert_msg(!rows[line].present, "line %u twice", line);
            rows[line] = r;
        }
    }
}

enum { SRC_T = 1, SRC_MISSING, SRC_EVIL, NAME_MAIN, NAME_F, NAME_C, SRC_C, NAME_M2 };

/* t.lua's main chunk calls f twice (lines 2 and 3 of f: 1 ms and 2 ms each
 * time) and print; missing.lua's chunk runs lines 7, 9, 7; ../evil/x.lua
 * has one line. */
static void build_sources(void)
{
    write_file("t.lua", "local function f()\n  local x = 1\n  return x\nend\nf() f() print()\n");
    ev_str(SRC_T, "t.lua");
    ev_str(SRC_MISSING, "missing.lua");
    ev_str(SRC_EVIL, "../evil/x.lua");
    ev_str(NAME_MAIN, "main chunk");
    ev_str(NAME_F, "f");
    ev_str(NAME_C, "print");
    ev_str(SRC_C, "[C]");
    ev_str(NAME_M2, "other");
    ev_func(1, LT_WHAT_MAIN, SRC_T, NAME_MAIN, 0);
    ev_func(2, LT_WHAT_LUA, SRC_T, NAME_F, 1);
    ev_func(3, LT_WHAT_C, SRC_C, NAME_C, 0);
    ev_func(4, LT_WHAT_MAIN, SRC_MISSING, NAME_M2, 0);
    ev_func(5, LT_WHAT_LUA, SRC_EVIL, NAME_F, 1);
    EV(CLOCK, 0, 0, 0);
    EV(START, 0x1000, LT_R_BEGIN);
    EV(FRAME, 1, 1, 5);
    EV(LINE, 1, 0, 5);
    for (int i = 0; i < 2; i++) {
        EV(CALL, 2, 0, 2);
        EV(LINE, 2, 0, 2);
        EV(LINE, 2, 1 * MS, 3);
        EV(RET, 2, 2 * MS);
    }
    EV(CALL, 2, 0, 3);
    EV(RET, 2, 0);
    EV(CALL, 2, 0, 4);
    EV(LINE, 2, 0, 7);
    EV(LINE, 2, 0, 9);
    EV(LINE, 2, 0, 7);
    EV(RET, 2, 0);
    EV(CALL, 2, 0, 5);
    EV(LINE, 2, 0, 2);
    EV(RET, 2, 0);
}

static int count_entries(const char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", dir);
    FILE *p = popen(cmd, "r");
    int n = -1;
    ck_assert_int_eq(fscanf(p, "%d", &n), 1);
    pclose(p);
    return n;
}

/* rd_report_annotate into dir (created), as `report -o dir` does. */
static int annotate_into(const char *dir, char *err, size_t cap)
{
    int fd = rd_out_open(dir, 1, err, cap);
    if (fd < 0)
        return fd;
    int e = rd_report_annotate(&M, NULL, g_tmp, fd, dir, err, cap);
    close(fd);
    return e;
}

START_TEST(test_report_annotate)
{
    limit_files();
    build_sources();
    char dir[128], err[256] = "", path[256];
    snprintf(dir, sizeof dir, "%s/annotate", g_tmp);
    ck_assert_msg(annotate_into(dir, err, sizeof err) == 0, "%s", err);
    /* one file per Lua source, all inside dir; nothing written elsewhere */
    ck_assert_int_eq(count_entries(dir), 3);
    ck_assert_int_eq(count_entries(g_tmp), 2); /* t.lua, annotate/ */

    snprintf(path, sizeof path, "%s/t.lua.txt", dir);
    char *txt = read_file(path), head[256];
    snprintf(head, sizeof head, "== %s/t.lua   (", g_tmp); /* the file's absolute path */
    ck_assert_msg(strncmp(txt, head, strlen(head)) == 0, "%s", txt);
    arow r[8];
    parse_annotation(txt, r, 8);
    for (unsigned l = 1; l <= 5; l++)
        ck_assert_msg(r[l].present, "line %u missing:\n%s", l, txt);
    ck_assert(!r[6].present);
    ck_assert(!r[1].has_data && !r[4].has_data);
    ck_assert_str_eq(r[1].text, "local function f()");
    ck_assert_str_eq(r[2].text, "  local x = 1");
    ck_assert_uint_eq(r[2].hits, 2);
    NEAR(r[2].ms, 2.0);
    ck_assert_uint_eq(r[3].hits, 2);
    NEAR(r[3].ms, 4.0);
    ck_assert(r[5].has_data);
    ck_assert_uint_eq(r[5].hits, 1);
    ck_assert_str_eq(r[5].text, "f() f() print()");
    free(txt);

    /* an unreadable source lists the lines with data only */
    snprintf(path, sizeof path, "%s/missing.lua.txt", dir);
    txt = read_file(path);
    ck_assert_ptr_nonnull(strstr(txt, "source not readable"));
    arow m[12];
    parse_annotation(txt, m, 12);
    ck_assert(m[7].present && m[7].hits == 2);
    ck_assert(m[9].present && m[9].hits == 1);
    for (unsigned l = 0; l < 12; l++)
        ck_assert_msg(m[l].present == (l == 7 || l == 9), "line %u:\n%s", l, txt);
    free(txt);

    snprintf(path, sizeof path, "%s/_._evil_x.lua.txt", dir);
    ck_assert_int_eq(access(path, F_OK), 0);
}
END_TEST

/* "a/b.lua" and "a_b.lua" flatten to one name: the second source seen
 * gets a_b.lua#2.txt, and neither overwrites the other. */
START_TEST(test_report_annotate_collision)
{
    ev_str(1, "a/b.lua");
    ev_str(2, "a_b.lua");
    ev_str(3, "f");
    ev_func(1, LT_WHAT_LUA, 1, 3, 1);
    ev_func(2, LT_WHAT_LUA, 2, 3, 1);
    EV(CLOCK, 0, 0, 0);
    EV(START, 0x1000, LT_R_BEGIN);
    EV(FRAME, 1, 1, 1);
    EV(LINE, 1, 0, 2);
    EV(CALL, 2, 0, 2);
    EV(LINE, 2, 0, 3);
    EV(RET, 2, 0);
    char dir[128], err[256] = "", path[256];
    snprintf(dir, sizeof dir, "%s/annotate", g_tmp);
    ck_assert_msg(annotate_into(dir, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(count_entries(dir), 2);
    snprintf(path, sizeof path, "%s/a_b.lua.txt", dir);
    char *txt = read_file(path);
    ck_assert_msg(strncmp(txt, "== a/b.lua ", 11) == 0, "%s", txt);
    free(txt);
    snprintf(path, sizeof path, "%s/a_b.lua#2.txt", dir);
    txt = read_file(path);
    ck_assert_msg(strncmp(txt, "== a_b.lua ", 11) == 0, "%s", txt);
    free(txt);
}
END_TEST

START_TEST(test_report_annotate_stream)
{
    limit_files();
    build_sources();
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_int_eq(rd_report_annotate_stream(&M, NULL, g_tmp, f), 0);
    fclose(f);
    char head[256];
    snprintf(head, sizeof head, "== %s/t.lua   (", g_tmp);
    ck_assert_ptr_nonnull(strstr(buf, head));
    ck_assert_ptr_nonnull(strstr(buf, "== missing.lua"));
    ck_assert_ptr_nonnull(strstr(buf, "== ../evil/x.lua"));
    ck_assert_ptr_null(strstr(buf, "[C]"));
    ck_assert_ptr_nonnull(strstr(buf, "  local x = 1\n"));
    free(buf);
}
END_TEST

/* Lines longer than any buffer still count as one line each. */
START_TEST(test_report_annotate_long_line)
{
    limit_files();
    static char src[20000];
    memset(src, 'x', 9000);
    memcpy(src + 9000, "\nreturn 2\nend\n", 15);
    write_file("long.lua", src);
    ev_str(1, "long.lua");
    ev_str(2, "main chunk");
    ev_func(1, LT_WHAT_MAIN, 1, 2, 0);
    EV(START, 0x1000, LT_R_BEGIN);
    EV(FRAME, 1, 1, 1);
    EV(LINE, 1, 0, 3);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_int_eq(rd_report_annotate_stream(&M, NULL, g_tmp, f), 0);
    fclose(f);
    arow r[8];
    parse_annotation(buf, r, 8);
    ck_assert(r[3].present && r[3].has_data && r[3].hits == 1);
    ck_assert_str_eq(r[3].text, "end");
    ck_assert(!r[4].present);
    free(buf);
}
END_TEST

/* A source path longer than a file name may be (255 bytes) still gets its
 * annotation, and does not stop the other sources'. */
START_TEST(test_report_annotate_long_name)
{
    limit_files();
    static char name[400];
    memset(name, 'd', sizeof name - 1);
    name[0] = '/';
    memcpy(name + sizeof name - 8, "/x.lua", 7);
    ev_str(1, name);
    ev_str(2, "main chunk");
    ev_str(3, "b.lua");
    ev_func(1, LT_WHAT_MAIN, 1, 2, 0);
    ev_func(2, LT_WHAT_MAIN, 3, 2, 0);
    EV(START, 0x1000, LT_R_BEGIN);
    EV(FRAME, 1, 1, 1);
    EV(LINE, 1, 0, 3);
    EV(CALL, 2, 0, 2);
    EV(LINE, 2, 0, 1);
    char dir[128], err[256] = "";
    snprintf(dir, sizeof dir, "%s/annotate", g_tmp);
    int rc = annotate_into(dir, err, sizeof err);
    ck_assert_msg(rc == 0, "rd_report_annotate: %d %s", rc, err);
    ck_assert_int_eq(count_entries(dir), 2);
}
END_TEST

static int cmp_chars(const void *a, const void *b)
{
    return strcmp(a, b);
}

/* Many sources of one flattened name, some of them named like the
 * numbered names of others: each gets the first free NAME#K in the order
 * of the files (by path, here by name: none is found), as a search
 * through every earlier name would give. The names all differ: one name
 * is one file. */
START_TEST(test_report_annotate_collision_many)
{
    enum { NSRC = 130 };
    static char names[NSRC][32], flats[NSRC][48];
    for (unsigned i = 0; i < NSRC; i++) {
        if (i == 3 || i == 40 || i == 41)
            snprintf(names[i], sizeof names[i], "d________#%u", i == 3 ? 5u : i - 31);
        else
            for (unsigned b = 0; b < 9; b++) /* "d" then 8 of ' ' or '/' */
                names[i][b] = b ? (i >> (b - 1) & 1 ? '/' : ' ') : 'd';
        ev_str(2 + i, names[i]);
        ev_func(1 + i, LT_WHAT_LUA, 2 + i, 1, 1);
    }
    ev_str(1, "f");
    qsort(names, NSRC, sizeof names[0], cmp_chars); /* the order of the files */
    for (unsigned i = 0; i < NSRC; i++) { /* the names, found one by one */
        char flat[48], base[32];
        snprintf(base, sizeof base, "%s", names[i]);
        for (char *c = base; *c; c++)
            *c = *c == ' ' || *c == '/' ? '_' : *c;
        snprintf(flat, sizeof flat, "%.31s.txt", base);
        for (unsigned k = 2, j = 0; j < i; k++) {
            for (j = 0; j < i && strcmp(flats[j], flat); j++)
                ;
            if (j < i)
                snprintf(flat, sizeof flat, "%.31s#%u.txt", base, k);
        }
        snprintf(flats[i], sizeof flats[i], "%s", flat);
    }
    char dir[128], err[256] = "", path[256], head[64];
    snprintf(dir, sizeof dir, "%s/annotate", g_tmp);
    ck_assert_msg(annotate_into(dir, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(count_entries(dir), NSRC);
    for (unsigned i = 0; i < NSRC; i++) {
        snprintf(path, sizeof path, "%.127s/%.47s", dir, flats[i]);
        char *txt = read_file(path);
        snprintf(head, sizeof head, "== %.31s   (", names[i]);
        ck_assert_msg(strncmp(txt, head, strlen(head)) == 0, "%s: %s", flats[i], txt);
        free(txt);
    }
}
END_TEST

/* ==== lines by source ==== */

/* a.lua: main (lines 5, 6) and f (lines 5, 3, 5); b.lua: g (line 9);
 * c.lua: h (line 1). f shares line 5 with main. A "=a.lua" chunk (string
 * id of a.lua, LT_FF_NOFILE) runs line 3: never a.lua's. */
static void build_shared_lines(void)
{
    ev_str(1, "a.lua");
    ev_str(2, "b.lua");
    ev_str(3, "c.lua");
    ev_str(4, "f");
    ev_func(1, LT_WHAT_MAIN, 1, 4, 0);
    ev_func(2, LT_WHAT_LUA, 1, 4, 2);
    ev_func(3, LT_WHAT_LUA, 2, 4, 8);
    ev_func(4, LT_WHAT_LUA, 3, 4, 1);
    EV(CLOCK, 0, 0, 0);
    EV(START, 0x1000, LT_R_BEGIN);
    EV(FRAME, 1, 1, 5);
    EV(LINE, 1, 0, 5);
    EV(CALL, 2, 1 * MS, 2);
    EV(LINE, 2, 0, 5);
    EV(LINE, 2, 2 * MS, 3);
    EV(LINE, 2, 3 * MS, 5);
    EV(RET, 2, 4 * MS);
    EV(CALL, 2, 0, 3);
    EV(LINE, 2, 0, 9);
    EV(RET, 2, 5 * MS);
    EV(LINE, 1, 0, 6);
    EV(CALL, 2, 0, 4);
    EV(LINE, 2, 0, 1);
    EV(RET, 2, 6 * MS);
    EV(FUNC, 5, LT_WHAT_MAIN, 1, 4, 0, 0, LT_FF_NOFILE);
    EV(CALL, 2, 0, 5);
    EV(LINE, 2, 0, 3);
    EV(RET, 2, 7 * MS);
}

/* The sums over the model's lines whose function's source is in group k
 * (by group_of as rd_report_flines_init takes it), at line. */
static rd_fline sum_lines(const uint32_t *group_of, uint32_t k, uint32_t line)
{
    rd_fline s = {line, k, 0, 0, 0};
    for (uint32_t i = 0; i < M.capline; i++) {
        const rd_line *l = &M.line[i];
        uint32_t slot = l->fid ? rd_model_src_slot(&M, l->fid) : UINT32_MAX;
        if (slot != UINT32_MAX && l->line == line &&
            (group_of ? group_of[slot] == k + 1 : slot == k)) {
            s.hits += l->hits;
            s.ticks += l->ticks;
        }
    }
    return s;
}

static void expect_group(const rd_flines *fl, const uint32_t *group_of, uint32_t k,
                         const uint32_t *lines, uint32_t nl)
{
    uint32_t n;
    const rd_fline *v = rd_report_flines_of(fl, k, &n);
    ck_assert_uint_eq(n, nl);
    for (uint32_t i = 0; i < n; i++) {
        rd_fline want = sum_lines(group_of, k, lines[i]);
        ck_assert_uint_eq(v[i].line, lines[i]);
        ck_assert_uint_eq(v[i].group, k);
        ck_assert_uint_eq(v[i].hits, want.hits);
        ck_assert_uint_eq(v[i].ticks, want.ticks);
    }
}

/* Grouped by source slot (2 * sid for files, + 1 for "=name" chunks),
 * sorted by line, a line shared by two functions once with their sums. */
START_TEST(test_report_flines_by_source)
{
    build_shared_lines();
    rd_flines fl;
    ck_assert_int_eq(rd_report_flines_init(&fl, &M, NULL, RD_SLOTS(&M)), 0);
    expect_group(&fl, NULL, 2, (const uint32_t[]){3, 5, 6}, 3);
    expect_group(&fl, NULL, 3, (const uint32_t[]){3}, 1);
    expect_group(&fl, NULL, 4, (const uint32_t[]){9}, 1);
    expect_group(&fl, NULL, 6, (const uint32_t[]){1}, 1);
    expect_group(&fl, NULL, 8, NULL, 0);
    expect_group(&fl, NULL, RD_SLOTS(&M) + 5, NULL, 0);
    ck_assert_uint_ge(rd_report_flines_of(&fl, 2, &(uint32_t){0})[1].hits, 2);
    ck_assert_uint_eq(rd_report_flines_of(&fl, 2, &(uint32_t){0})[0].hits, 1);
    rd_report_flines_close(&fl);
}
END_TEST

/* Sources mapped to one group merge; a source mapped to none is left out. */
START_TEST(test_report_flines_grouped)
{
    build_shared_lines();
    uint32_t *group_of = calloc(RD_SLOTS(&M), sizeof *group_of);
    group_of[2] = group_of[4] = 2; /* a.lua, b.lua: group 1; "=a.lua": none */
    rd_flines fl;
    ck_assert_int_eq(rd_report_flines_init(&fl, &M, group_of, 2), 0);
    expect_group(&fl, group_of, 0, NULL, 0);
    expect_group(&fl, group_of, 1, (const uint32_t[]){3, 5, 6, 9}, 4);
    rd_report_flines_close(&fl);
    ck_assert_int_eq(rd_report_flines_init(&fl, &M, group_of, 1), 0); /* group 1 past ngroup */
    expect_group(&fl, group_of, 0, NULL, 0);
    expect_group(&fl, group_of, 1, NULL, 0);
    rd_report_flines_close(&fl);
    free(group_of);
}
END_TEST

int main(void)
{
    /* scratch: a directory for the tests that write files, made once per TCase */
    static const struct ut_fixture fx = {model_setup, model_teardown, NULL, NULL, 0};
    static const struct ut_fixture scratch = {model_setup, model_teardown, tmp_setup, tmp_teardown,
                                              30};
    const TTest *fx_tests[] = {test_report_fstats_recursion, test_report_fstats_siblings,
                               test_report_profile, test_report_profile_top,
                               test_report_profile_empty, test_report_folded_weights,
                               test_report_folded_tsc, test_report_folded_short, test_report_folded_empty,
                               test_report_flines_by_source, test_report_flines_grouped};
    const TTest *scratch_tests[] = {test_report_annotate, test_report_annotate_stream,
                                    test_report_annotate_collision,
                                    test_report_annotate_collision_many,
                                    test_report_annotate_long_line, test_report_annotate_long_name};
    Suite *s = suite_create("report");
    ut_add_all(s, fx_tests, UT_N(fx_tests), &fx);
    ut_add_all(s, scratch_tests, UT_N(scratch_tests), &scratch);
    return ut_run(s);
}
