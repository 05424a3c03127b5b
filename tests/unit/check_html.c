/* check_html: recorderd/out/rd_html over a model whose function name and
 * source name hold markup: everything from the trace is escaped, the only
 * script is the flame graph's, nothing refers outside the page, and the
 * summary and the top table carry the model's totals. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rd_html.h"
#include "ut_events.h"
#include "ut_main.h"

static void build(void)
{
    ev_str(1, "<b>&\"'.lua");
    ev_str(2, "main");
    ev_str(3, "<script>x</script>");
    EV(FUNC, 1, LT_WHAT_MAIN, 1, 2, 0, 0, 0);
    EV(FUNC, 2, LT_WHAT_LUA, 1, 3, 3, 4, 0);
    EV(START, 0x1000, LT_R_BEGIN);
    EV(FRAME, 1, 1, 1);
    EV(CALL, 2, 1000, 2);
    EV(LINE, 2, 2000, 3);
    EV(RET, 2, 3000000);
}

static char *render(const rd_html_info *info)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_int_eq(rd_html_write(&M, info, f), 0);
    fclose(f);
    return buf;
}

static int count(const char *s, const char *what)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, what)); p++)
        n++;
    return n;
}

START_TEST(test_html_escaped)
{
    build();
    rd_html_info info = {"t<i>tle", "lua5.1 <b>&\"'.lua", "/no/such/dir", 0, NULL, 0};
    char *page = render(&info);
    ck_assert_ptr_null(strstr(page, "<script>x"));
    ck_assert_ptr_null(strstr(page, "<b>&"));
    ck_assert_ptr_null(strstr(page, "t<i>tle"));
    ck_assert_ptr_nonnull(
        strstr(page, "&lt;script&gt;x&lt;/script&gt; (&lt;b&gt;&amp;&quot;&apos;.lua:3)"));
    ck_assert_ptr_nonnull(strstr(page, "lua5.1 &lt;b&gt;&amp;&quot;&apos;.lua"));
    ck_assert_int_eq(count(page, "<script"), 1);
    ck_assert_int_eq(count(page, "http"), 0);
    ck_assert_int_eq(count(page, " src="), 0);
    free(page);
}
END_TEST

START_TEST(test_html_totals)
{
    build();
    rd_html_info info = {"s", NULL, NULL, 5000000, NULL, 0};
    char *page = render(&info);
    char want[128];
    snprintf(want, sizeof want, "<td>%.3f ms</td>", (double)M.ticks_total / 1e6);
    ck_assert_msg(strstr(page, want) != NULL, "no %s", want);
    ck_assert_ptr_nonnull(strstr(page, "<td>5.000 ms</td>")); /* wall time */
    snprintf(want, sizeof want, "<td>%llu</td>", (unsigned long long)M.events);
    ck_assert_ptr_nonnull(strstr(page, want));
    /* the top row: the callee, 3 ms of its own */
    ck_assert_ptr_nonnull(strstr(page, "<tr><td>1</td><td>3.002</td>"));
    ck_assert_ptr_nonnull(strstr(page, "(not recorded in the trace)"));
    ck_assert_ptr_nonnull(strstr(page, "</html>\n"));
    free(page);
}
END_TEST

START_TEST(test_html_empty)
{
    rd_html_info info = {NULL, NULL, NULL, 0, NULL, 0};
    char *page = render(&info);
    ck_assert_ptr_nonnull(strstr(page, "<td>0 of 0 lines (0.00%), 0 of 0 functions</td>"));
    free(page);
}
END_TEST

UT_MAIN("html", model_setup, model_teardown, test_html_escaped, test_html_totals, test_html_empty)
