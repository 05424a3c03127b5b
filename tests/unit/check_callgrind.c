/* check_callgrind: recorderd/out/rd_callgrind over models built by feeding
 * events through rd_stack: the exact text of a small profile (self costs
 * per line, call sites, recursion counted once, two functions named alike
 * in two files, C functions), exact totals under a fractional clock, an
 * empty model and source paths made absolute.
 *
 * The model (build_calls), dt in ns: main (app.lua) at line 5 calls a ->
 * b -> a -> b, then print at line 6, then lib.lua's own `a` at line 7.
 * Self: main 12 (line 5), a 6 before its first line + 28 on line 51,
 * b 10 + 22 on line 61, print 13, lib.lua's a 14 + 15 on line 2.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rd_callgrind.h"
#include "rd_stack.h"
#include "ut_events.h"
#include "ut_main.h"

enum { F_MAIN = 1, F_A, F_B, F_PRINT, F_LIBA };


static void ev_func(uint32_t fid, unsigned what, uint32_t src, uint32_t name, uint32_t line)
{
    EV(FUNC, fid, what, src, name, line, line + 5, 0);
}


static void define_funcs(const char *app_src)
{
    ev_str(1, app_src);
    ev_str(2, "[C]");
    ev_str(3, "main");
    ev_str(4, "a");
    ev_str(5, "b");
    ev_str(6, "print");
    ev_str(7, "lib.lua");
    ev_func(F_MAIN, LT_WHAT_MAIN, 1, 3, 0);
    ev_func(F_A, LT_WHAT_LUA, 1, 4, 50);
    ev_func(F_B, LT_WHAT_LUA, 1, 5, 60);
    ev_func(F_PRINT, LT_WHAT_C, 2, 6, 0);
    ev_func(F_LIBA, LT_WHAT_LUA, 7, 4, 1);
}

/* dt is multiplied by `u` (ticks). */
static void build_calls(const char *app_src, uint64_t u)
{
    define_funcs(app_src);
    EV(START, 0x1000, LT_R_BEGIN);
    EV(FRAME, 1, F_MAIN, 5);
    EV(CALL, 2, 0, F_A);
    EV(LINE, 2, 1 * u, 51);
    EV(CALL, 3, 2 * u, F_B);
    EV(LINE, 3, 3 * u, 61);
    EV(CALL, 4, 4 * u, F_A);
    EV(LINE, 4, 5 * u, 51);
    EV(CALL, 5, 6 * u, F_B);
    EV(LINE, 5, 7 * u, 61);
    EV(RET, 5, 8 * u);
    EV(RET, 4, 9 * u);
    EV(RET, 3, 10 * u);
    EV(RET, 2, 11 * u);
    EV(LINE, 1, 12 * u, 6);
    EV(CALL, 2, 0, F_PRINT);
    EV(RET, 2, 13 * u);
    EV(LINE, 1, 0, 7);
    EV(CALL, 2, 0, F_LIBA);
    EV(LINE, 2, 14 * u, 2);
    EV(RET, 2, 15 * u);
}

static char *render(const char *cmd, const char *srcdir)
{
    /* static: GCC 12 at -O3 takes the stream's buffer for a pointer into
     * this frame (-Wdangling-pointer) when the caller reads it */
    static char *buf;
    static size_t len;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_int_eq(rd_callgrind_write(&M, cmd, srcdir, f), 0);
    fclose(f);
    return buf;
}

static const char EXPECTED[] = "# callgrind format\n"
                               "version: 1\n"
                               "creator: recorderd-0.1\n"
                               "cmd: lua5.1 app.lua\n"
                               "positions: line\n"
                               "event: ns : Wall time (ns)\n"
                               "event: lines : Line events\n"
                               "events: ns lines\n"
                               "summary: 120 7\n"
                               "\n"
                               "fl=(1) no/such/app.lua\n"
                               "fn=(1) main (no/such/app.lua:0)\n"
                               "5 12 0\n"
                               "6 0 1\n"
                               "7 0 1\n"
                               "cfn=(2) a (no/such/app.lua:50)\n"
                               "calls=1 50\n"
                               "5 66 4\n"
                               "cfl=(2) [C]\n"
                               "cfn=(3) print [C]\n"
                               "calls=1 0\n"
                               "6 13 0\n"
                               "cfl=(3) lib.lua\n"
                               "cfn=(4) a (lib.lua:1)\n"
                               "calls=1 1\n"
                               "7 29 1\n"
                               "\n"
                               "fn=(2)\n"
                               "50 6 0\n"
                               "51 28 2\n"
                               "cfn=(5) b (no/such/app.lua:60)\n"
                               "calls=2 60\n"
                               "51 52 3\n"
                               "\n"
                               "fn=(5)\n"
                               "60 10 0\n"
                               "61 22 2\n"
                               "cfn=(2)\n"
                               "calls=1 50\n"
                               "61 0 0\n"
                               "\n"
                               "fl=(2)\n"
                               "fn=(3)\n"
                               "0 13 0\n"
                               "\n"
                               "fl=(3)\n"
                               "fn=(4)\n"
                               "1 14 0\n"
                               "2 15 1\n"
                               "\n";

/* Every number above by hand. Recursion counted once: the calls into a
 * function hold its outermost frames only (a 66, b 17 + 20 + 15 = 52, as
 * in profile.txt); b -> a under a costs 0. */
START_TEST(test_callgrind_text)
{
    build_calls("no/such/app.lua", 1);
    char *got = render("lua5.1 app.lua", "/nonexistent");
    ck_assert_msg(strcmp(got, EXPECTED) == 0, "--- got\n%s--- want\n%s", got, EXPECTED);
    free(got);
}
END_TEST

/* Sums the self cost lines (those not right after a calls= line). */
static void self_sums(const char *text, unsigned long long *ns, unsigned long long *lines)
{
    *ns = *lines = 0;
    int after_calls = 0;
    for (const char *l = text; *l; l = strchr(l, '\n') + 1) {
        unsigned line;
        unsigned long long a, b;
        if (!after_calls && l[0] >= '0' && l[0] <= '9' &&
            sscanf(l, "%u %llu %llu", &line, &a, &b) == 3) {
            *ns += a;
            *lines += b;
        }
        after_calls = !strncmp(l, "calls=", 6);
    }
}

/* 1/3 ns per tick: each line rounds, the printed self costs still add up
 * to the rounded traced time, and the summary says the same. */
START_TEST(test_callgrind_rounding)
{
    EV(CLOCK, 0, 0, 1);
    EV(CLOCK, 3000, 1000, 1);
    build_calls("app.lua", 1);
    char *got = render(NULL, NULL);
    unsigned long long ns, lines, sum_ns, sum_lines;
    self_sums(got, &ns, &lines);
    ck_assert_ptr_nonnull(strstr(got, "summary: "));
    ck_assert_int_eq(sscanf(strstr(got, "summary: "), "summary: %llu %llu", &sum_ns, &sum_lines),
                     2);
    ck_assert_uint_eq(sum_ns, llround((double)M.ticks_total / 3.0));
    ck_assert_uint_eq(sum_ns, 40);
    ck_assert_uint_eq(ns, sum_ns);
    ck_assert_uint_eq(lines, 7);
    ck_assert_uint_eq(sum_lines, 7);
    ck_assert_ptr_null(strstr(got, "cmd:"));
    free(got);
}
END_TEST

START_TEST(test_callgrind_empty)
{
    char *got = render(NULL, NULL);
    ck_assert_str_eq(got, "# callgrind format\nversion: 1\ncreator: recorderd-0.1\n"
                          "positions: line\nevent: ns : Wall time (ns)\n"
                          "event: lines : Line events\nevents: ns lines\nsummary: 0 0\n\n");
    free(got);
}
END_TEST

/* Sampled time of the CPU clock is CPU time in kcachegrind's event list;
 * of the wall clock (--clock wall) and exact time, wall time. */
START_TEST(test_callgrind_cpu_time)
{
    M.tick_clock = LT_CLOCK_CPU;
    char *got = render(NULL, NULL);
    ck_assert_ptr_nonnull(strstr(got, "\nevent: ns : CPU time (ns)\n"));
    free(got);
    M.tick_clock = LT_CLOCK_WALL;
    got = render(NULL, NULL);
    ck_assert_ptr_nonnull(strstr(got, "\nevent: ns : Wall time (ns)\n"));
    free(got);
    M.tick_clock = 0;
}
END_TEST

/* A source that resolves against srcdir is named by its absolute path. */
START_TEST(test_callgrind_paths)
{
    char dir[] = "/tmp/check_callgrind.XXXXXX", file[64], real[4096], want[4200];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(file, sizeof file, "%s/app.lua", dir);
    FILE *f = fopen(file, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    ck_assert_ptr_nonnull(realpath(file, real));
    build_calls("app.lua", 1);
    char *got = render(NULL, dir);
    unlink(file);
    rmdir(dir);
    snprintf(want, sizeof want, "\nfl=(1) %s\nfn=(1) main (app.lua:0)\n", real);
    ck_assert_msg(strstr(got, want) != NULL, "no %s in\n%s", want, got);
    ck_assert_ptr_nonnull(strstr(got, "\ncfl=(3) lib.lua\n")); /* does not resolve */
    free(got);
}
END_TEST

/* main (line 6) calls a, whose `return b()` on line 51 is a tail call: b
 * replaces a, and its call is main's, from line 6. The a -> b node left
 * behind (no calls, no cost) is no call. */
START_TEST(test_callgrind_tail_call)
{
    define_funcs("app.lua");
    EV(START, 0x1000, LT_R_BEGIN);
    EV(FRAME, 1, F_MAIN, 5);
    EV(LINE, 1, 1, 6);
    EV(CALL, 2, 1, F_A);
    EV(LINE, 2, 1, 51);
    EV(CALL, 3, 1, F_B);
    EV(LINE, 2, 1, 61);
    EV(RET, 2, 1);
    EV(LINE, 1, 1, 7);
    char *got = render(NULL, NULL);
    const char *want = "fn=(1) main (app.lua:0)\n"
                       "5 1 0\n"
                       "6 2 1\n" /* the call's dt, and the first after it returned */
                       "7 0 1\n"
                       "cfn=(2) a (app.lua:50)\n"
                       "calls=1 50\n"
                       "6 2 1\n"
                       "cfn=(3) b (app.lua:60)\n"
                       "calls=1 60\n"
                       "6 2 1\n"
                       "\n";
    ck_assert_msg(strstr(got, want) != NULL, "no\n%s\nin\n%s", want, got);
    ck_assert_ptr_null(strstr(got, "calls=0"));
    free(got);
}
END_TEST

UT_MAIN("callgrind", model_setup, model_teardown, test_callgrind_text, test_callgrind_rounding,
        test_callgrind_empty, test_callgrind_cpu_time, test_callgrind_paths,
        test_callgrind_tail_call)
