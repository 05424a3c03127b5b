/* check_flame: flamegraph.svg (recorderd/out/rd_flame) over the call tree
 * of ut_tree.h. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rd_flame.h"
#include "ut_main.h"
#include "ut_tree.h"

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
    empty_model();
    char *svg = render(rd_flame_write_svg, NULL);
    ck_assert_ptr_nonnull(strstr(svg, "<title>all (0.000000 ms, 100.00%)</title>"));
    ck_assert_int_eq(count(svg, "<g class=\"f\""), 1);
    ck_assert_ptr_nonnull(strstr(svg, "</svg>\n"));
    free(svg);
}
END_TEST

/* A recursion 3000 deep (its time at the bottom) is drawn 1000 frames
 * deep, and the head says frames were left out: 500 000 levels had made
 * a 119 MB flamegraph.svg. A 999-deep one is drawn whole, without it. */
START_TEST(test_flame_deep)
{
    uint32_t n = rd_model_child(&M, 0, F_MAIN);
    for (int i = 0; i < 2999; i++)
        n = rd_model_child(&M, n, F_WORK);
    M.node[n].self = 50 * MS;
    M.ticks_total += 50 * MS;
    char *svg = render(rd_flame_write_svg, "deep");
    /* the tree's other frames, and 1000 levels of the chain at most */
    int frames = count(svg, "<g class=\"f\"");
    ck_assert_int_le(frames, 1000 + 8);
    ck_assert_int_ge(frames, 1000);
    ck_assert_ptr_nonnull(strstr(svg, "deep (frames deeper than 1000 not drawn)"));
    free(svg);
    empty_model();
    str(1, "app.lua");
    str(2, "main");
    str(3, "work");
    func(F_MAIN, LT_WHAT_MAIN, 2, 0);
    func(F_WORK, LT_WHAT_LUA, 3, 7);
    n = rd_model_child(&M, 0, F_MAIN);
    for (int i = 0; i < 998; i++)
        n = rd_model_child(&M, n, F_WORK);
    M.node[n].self = 50 * MS;
    M.ticks_total += 50 * MS;
    svg = render(rd_flame_write_svg, "deep");
    ck_assert_int_eq(count(svg, "<g class=\"f\""), 1 + 999);
    ck_assert_ptr_null(strstr(svg, "not drawn"));
    free(svg);
}
END_TEST

UT_MAIN("flame", setup, teardown, test_flame_widths, test_flame_titles, test_flame_escaping,
        test_flame_skipped, test_flame_clipped, test_flame_relative, test_flame_empty,
        test_flame_deep)
