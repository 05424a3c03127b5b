/* ut_tree: the hand-built call tree of the flamegraph and speedscope
 * suites (check_flame, check_speedscope), in a model M of the suite's own,
 * and the helpers both use. Clock without TSC: one tick is one nanosecond.
 *
 *   main 100 ms ─┬─ work 300 ms ─┬─ a<&"b 100 ms
 *                │               └─ lll...l (200 chars) 50 ms
 *                ├─ print [C] 450 ms ── work 10 ns (under 0.1 px)
 *                └─ idle 0
 *
 * Total 1000 ms + 10 ns; work spans 450 ms (45%).
 */
#ifndef UT_TREE_H
#define UT_TREE_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rd_label.h"
#include "rd_model.h"

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

/* M emptied: no strings, functions nor nodes. */
static void empty_model(void)
{
    rd_model_free(&M);
    ck_assert_int_eq(rd_model_init(&M), 0);
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

#endif
