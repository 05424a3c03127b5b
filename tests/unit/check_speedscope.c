/* check_speedscope: profile.speedscope.json (recorderd/out/rd_speedscope)
 * over the call tree of ut_tree.h. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "rd_speedscope.h"
#include "ut_main.h"
#include "ut_tree.h"

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
    empty_model();
    char *js = render(rd_speedscope_write, NULL);
    ck_assert_ptr_nonnull(strstr(js, "\"frames\":[]"));
    ck_assert_ptr_nonnull(strstr(js, "\"samples\":[],\n\"weights\":[],\n\"endValue\":0}"));
    free(js);
}
END_TEST

UT_MAIN("speedscope", setup, teardown, test_speedscope_structure, test_speedscope_parse,
        test_speedscope_empty)
