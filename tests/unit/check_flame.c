/* check_flame: flamegraph.svg (recorderd/out/rd_flame) and
 * profile.speedscope.json (recorderd/out/rd_speedscope) over a hand-built
 * call tree. Clock without TSC: one tick is one nanosecond.
 *
 *   main 100 ms ─┬─ work 300 ms ─┬─ a<&"b 100 ms
 *                │               └─ lll...l (200 chars) 50 ms
 *                ├─ print [C] 450 ms ── work 10 ns (under 0.1 px)
 *                └─ idle 0
 *
 * Total 1000 ms + 10 ns; work spans 450 ms (45%).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rd_flame.h"
#include "rd_label.h"
#include "rd_speedscope.h"

#define MS 1000000ull
#define WEIRD "a<&\"b\x01\xff"

enum { F_MAIN = 1, F_WORK, F_WEIRD, F_PRINT, F_IDLE, F_LONG };

static rd_model M;
static char g_long[201];

static void str(uint32_t sid, const char *s)
{
    ck_assert_int_eq(rd_model_add_str(&M, sid, s, (uint32_t)strlen(s)), 0);
}

static void func(uint32_t fid, unsigned what, uint32_t name, uint32_t line)
{
    lt_event ev = {.kind = LT_EV_FUNC, .nargs = 7, .a = {fid, what, 1, name, line, line + 5, 0}};
    ck_assert_int_eq(rd_model_add_func(&M, &ev), 0);
}

static uint32_t node(uint32_t parent, uint32_t fid, uint64_t self)
{
    uint32_t n = rd_model_child(&M, parent, fid);
    ck_assert_uint_ne(n, 0);
    M.node[n].self = self;
    M.ticks_total += self;
    return n;
}

static void setup(void)
{
    ck_assert_int_eq(rd_model_init(&M), 0);
    memset(g_long, 'l', 200);
    const char *s[] = {"app.lua", "main", "work", WEIRD, "print", "idle", g_long};
    for (uint32_t i = 0; i < 7; i++)
        str(i + 1, s[i]);
    func(F_MAIN, LT_WHAT_MAIN, 2, 0);
    func(F_WORK, LT_WHAT_LUA, 3, 7);
    func(F_WEIRD, LT_WHAT_LUA, 4, 9);
    func(F_PRINT, LT_WHAT_C, 5, 0);
    func(F_IDLE, LT_WHAT_LUA, 6, 20);
    func(F_LONG, LT_WHAT_LUA, 7, 30);
    uint32_t main = node(0, F_MAIN, 100 * MS), work = node(main, F_WORK, 300 * MS);
    node(work, F_WEIRD, 100 * MS);
    uint32_t print = node(main, F_PRINT, 450 * MS);
    node(main, F_IDLE, 0);
    node(print, F_WORK, 10);
    node(work, F_LONG, 50 * MS);
}

static void teardown(void)
{
    rd_model_free(&M);
}

/* The output of fn in a heap string (caller frees). */
static char *render(int (*fn)(const rd_model *, const char *, FILE *), const char *title)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fn(&M, title, f), 0);
    fclose(f);
    return buf;
}

static int count(const char *s, const char *sub)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, sub)); p++)
        n++;
    return n;
}

/* The width of the rect that follows the title starting with title. */
static double width_of(const char *svg, const char *title)
{
    char key[512];
    snprintf(key, sizeof key, "<title>%s (", title);
    const char *p = strstr(svg, key);
    ck_assert_msg(p != NULL, "no frame %s", title);
    p = strstr(p, "width=\"");
    ck_assert_ptr_nonnull(p);
    return strtod(p + 7, NULL);
}

/* The text of the frame titled title. */
static void text_of(const char *svg, const char *title, char *buf, size_t cap)
{
    char key[512];
    snprintf(key, sizeof key, "<title>%s (", title);
    const char *p = strstr(svg, key);
    ck_assert_ptr_nonnull(p);
    p = strchr(strstr(p, "<text "), '>') + 1;
    size_t n = (size_t)(strstr(p, "</text>") - p);
    ck_assert_uint_lt(n, cap);
    memcpy(buf, p, n);
    buf[n] = 0;
}

/* Runs python3 code on the file holding text; 77 if python3 is missing. */
static int python_check(const char *text, const char *code)
{
    char path[] = "/tmp/check_flame.XXXXXX", cmd[1024];
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "command -v python3 >/dev/null || exit 77; python3 -c '%s' %s", code,
             path);
    int rc = system(cmd);
    unlink(path);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

START_TEST(test_flame_widths)
{
    char *svg = render(rd_flame_write_svg, "t");
    double all = width_of(svg, "all"), main = width_of(svg, "main (app.lua:0)");
    ck_assert_double_eq_tol(all, 1180.0, 0.01);
    ck_assert_double_eq_tol(main / all, 1.0, 1e-3);
    ck_assert_double_eq_tol(width_of(svg, "work (app.lua:7)") / all, 0.45, 1e-3);
    ck_assert_double_eq_tol(width_of(svg, "print [C]") / all, 0.45, 1e-3);
    ck_assert_double_eq_tol(width_of(svg, "a&lt;&amp;&quot;b?\xEF\xBF\xBD (app.lua:9)") / all, 0.10, 1e-3);
    free(svg);
}
END_TEST

START_TEST(test_flame_titles)
{
    char *svg = render(rd_flame_write_svg, "my <app>");
    ck_assert_ptr_nonnull(strstr(svg, "<title>all (1000.000 ms, 100.00%)</title>"));
    ck_assert_ptr_nonnull(strstr(svg, "<title>main (app.lua:0) (1000.000 ms, 100.00%)</title>"));
    ck_assert_ptr_nonnull(strstr(svg, "<title>work (app.lua:7) (450.000 ms, 45.00%)</title>"));
    ck_assert_ptr_nonnull(strstr(svg, "<title>print [C] (450.000 ms, 45.00%)</title>"));
    ck_assert_ptr_nonnull(strstr(svg, ">my &lt;app&gt;</text>"));
    ck_assert_int_eq(count(svg, "<g class=\"f\""), 6); /* all, main, work, weird, print, long */
    free(svg);
}
END_TEST

START_TEST(test_flame_escaping)
{
    char *svg = render(rd_flame_write_svg, NULL);
    ck_assert_ptr_null(strstr(svg, "a<&"));
    ck_assert_ptr_null(strstr(svg, "\x01"));
    ck_assert_ptr_null(strstr(svg, "\xff"));
    ck_assert_ptr_nonnull(strstr(svg, "<title>a&lt;&amp;&quot;b?\xEF\xBF\xBD (app.lua:9) (100.000 ms"));
    int rc = python_check(svg, "import sys, xml.etree.ElementTree as E; "
                               "r = E.parse(sys.argv[1]).getroot(); "
                               "sys.exit(0 if r.tag.endswith(\"svg\") else 1)");
    ck_assert_msg(rc == 0 || rc == 77, "SVG not well-formed: %d", rc);
    free(svg);
}
END_TEST

START_TEST(test_flame_skipped)
{
    char *svg = render(rd_flame_write_svg, NULL);
    ck_assert_ptr_null(strstr(svg, "idle@"));                   /* no time */
    ck_assert_int_eq(count(svg, "<title>work (app.lua:7) ("), 1); /* 10 ns under print */
    free(svg);
}
END_TEST

START_TEST(test_flame_clipped)
{
    char *svg = render(rd_flame_write_svg, NULL), text[256], title[256];
    snprintf(title, sizeof title, "%s (app.lua:30)", g_long);
    double w = width_of(svg, title); /* 5% of 1180 px: 59 px, 7 characters */
    text_of(svg, title, text, sizeof text);
    ck_assert_double_eq_tol(w, 59.0, 0.01);
    ck_assert_str_eq(text, "lllll..");
    text_of(svg, "main (app.lua:0)", text, sizeof text);
    ck_assert_str_eq(text, "main (app.lua:0)");
    free(svg);
}
END_TEST

/* A frame's label is `name (file:line)`, the file relative to the
 * program's working directory when under it, so that a cut keeps the
 * name: with the whole path first it was "/home/.." */
START_TEST(test_flame_relative)
{
    ck_assert_int_eq(rd_label_set_cwd(&M, "/home/u/proj"), 0);
    str(8, "/home/u/proj/lib/parse.lua");
    str(9, "parse");
    str(10, "/home/u/projX/other.lua");
    str(11, "other");
    lt_event a = {.kind = LT_EV_FUNC, .nargs = 7, .a = {7, LT_WHAT_LUA, 8, 9, 3, 9, 0}};
    lt_event b = {.kind = LT_EV_FUNC, .nargs = 7, .a = {8, LT_WHAT_LUA, 10, 11, 4, 9, 0}};
    ck_assert_int_eq(rd_model_add_func(&M, &a), 0);
    ck_assert_int_eq(rd_model_add_func(&M, &b), 0);
    uint32_t main = rd_model_child(&M, 0, F_MAIN);
    node(main, 7, 50 * MS);
    node(main, 8, 50 * MS);
    char *svg = render(rd_flame_write_svg, NULL), text[256];
    text_of(svg, "parse (lib/parse.lua:3)", text, sizeof text);
    ck_assert_str_eq(text, "pars.."); /* 4.5%: 6 characters */
    text_of(svg, "other (/home/u/projX/other.lua:4)", text, sizeof text); /* not under it */
    ck_assert_str_eq(text, "othe..");
    free(svg);
}
END_TEST

START_TEST(test_flame_empty)
{
    rd_model_free(&M);
    ck_assert_int_eq(rd_model_init(&M), 0);
    char *svg = render(rd_flame_write_svg, NULL);
    ck_assert_ptr_nonnull(strstr(svg, "<title>all (0.000000 ms, 100.00%)</title>"));
    ck_assert_int_eq(count(svg, "<g class=\"f\""), 1);
    ck_assert_ptr_nonnull(strstr(svg, "</svg>\n"));
    free(svg);
}
END_TEST

START_TEST(test_speedscope_structure)
{
    char *js = render(rd_speedscope_write, "sess\"1");
    ck_assert_ptr_nonnull(
        strstr(js, "\"$schema\":\"https://www.speedscope.app/file-format-schema.json\""));
    ck_assert_ptr_nonnull(strstr(js, "\"frames\":[\n"
                                     "{\"name\":\"main\",\"file\":\"app.lua\",\"line\":0},\n"
                                     "{\"name\":\"work\",\"file\":\"app.lua\",\"line\":7},\n"
                                     "{\"name\":\"a<&\\\"b\\u0001\\ufffd\",\"file\":\"app.lua\","
                                     "\"line\":9},\n"
                                     "{\"name\":\"print [C]\"},\n"));
    ck_assert_ptr_nonnull(strstr(js, "\"samples\":[\n[0],\n[0,1],\n[0,1,2],\n[0,3],\n[0,3,1],\n"
                                     "[0,1,5]]"));
    ck_assert_ptr_nonnull(
        strstr(js, "\"weights\":[100000000,300000000,100000000,450000000,10,50000000]"));
    ck_assert_ptr_nonnull(strstr(js, "\"endValue\":1000000010}"));
    ck_assert_ptr_nonnull(strstr(js, "\"type\":\"sampled\",\"name\":\"sess\\\"1\""));
    ck_assert_ptr_nonnull(strstr(js, "\"unit\":\"nanoseconds\",\"startValue\":0"));
    free(js);
}
END_TEST

START_TEST(test_speedscope_parse)
{
    char *js = render(rd_speedscope_write, NULL);
    int rc =
        python_check(js, "import sys, json; d = json.load(open(sys.argv[1], encoding=\"utf-8\")); "
                         "p = d[\"profiles\"][0]; n = len(d[\"shared\"][\"frames\"]); "
                         "ok = len(p[\"samples\"]) == len(p[\"weights\"]) == 6 and "
                         "all(0 <= i < n for s in p[\"samples\"] for i in s) and "
                         "sum(p[\"weights\"]) == p[\"endValue\"] and p[\"name\"] == \"luatrace\"; "
                         "sys.exit(0 if ok else 1)");
    ck_assert_msg(rc == 0 || rc == 77, "speedscope JSON: %d", rc);
    free(js);
}
END_TEST

START_TEST(test_speedscope_empty)
{
    rd_model_free(&M);
    ck_assert_int_eq(rd_model_init(&M), 0);
    char *js = render(rd_speedscope_write, NULL);
    ck_assert_ptr_nonnull(strstr(js, "\"frames\":[]"));
    ck_assert_ptr_nonnull(strstr(js, "\"samples\":[],\n\"weights\":[],\n\"endValue\":0}"));
    free(js);
}
END_TEST

static void add(Suite *s, const char *name, const TTest *t)
{
    TCase *tc = tcase_create(name);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, t);
    suite_add_tcase(s, tc);
}

#define ADD(s, t) add(s, #t, t)

int main(void)
{
    Suite *s = suite_create("flame");
    ADD(s, test_flame_widths);
    ADD(s, test_flame_titles);
    ADD(s, test_flame_escaping);
    ADD(s, test_flame_skipped);
    ADD(s, test_flame_clipped);
    ADD(s, test_flame_relative);
    ADD(s, test_flame_empty);
    ADD(s, test_speedscope_structure);
    ADD(s, test_speedscope_parse);
    ADD(s, test_speedscope_empty);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
