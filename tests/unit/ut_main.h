/* ut_main: the one runner of the Check unit suites (doc/tests.md). A suite
 * of one fixture ends with UT_MAIN(name, setup, teardown, tests...); one of
 * more fixtures calls ut_add_all for each and ut_run in its own main. Each
 * test is a TCase of its own, named after its function. Scratch
 * directories come from ut_tmpdir and go with ut_rmtree. */
#ifndef UT_MAIN_H
#define UT_MAIN_H

#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

/* What runs around a test. setup/teardown run in the test's own process,
 * around each test, so a crash there fails that test alone; once_setup and
 * once_teardown run in the runner's process, around the TCase. timeout is in
 * seconds; 0 keeps CK_DEFAULT_TIMEOUT (tests/unit/meson.build sets it). */
struct ut_fixture {
    SFun setup, teardown;
    SFun once_setup, once_teardown;
    int timeout;
};

/* One test as a TCase of its own, named name, under f (NULL: none). */
static inline void ut_add(Suite *s, const char *name, const TTest *t, const struct ut_fixture *f)
{
    TCase *tc = tcase_create(name);
    if (f && (f->setup || f->teardown))
        tcase_add_checked_fixture(tc, f->setup, f->teardown);
    if (f && (f->once_setup || f->once_teardown))
        tcase_add_unchecked_fixture(tc, f->once_setup, f->once_teardown);
    if (f && f->timeout)
        tcase_set_timeout(tc, f->timeout);
    tcase_add_test(tc, t);
    suite_add_tcase(s, tc);
}

#define UT_N(a) (sizeof(a) / sizeof((a)[0]))

/* Each of the n tests t, under f, in TCases named after their functions. */
static inline void ut_add_all(Suite *s, const TTest *const *t, size_t n,
                              const struct ut_fixture *f)
{
    for (size_t i = 0; i < n; i++)
        ut_add(s, t[i]->name, t[i], f);
}

/* Runs the suite (CK_VERBOSITY chooses the output) and frees it; the exit
 * status main returns. */
static inline int ut_run(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* A suite of one fixture: its whole main. */
static inline int ut_main(const char *name, const TTest *const *t, size_t n,
                          const struct ut_fixture *f)
{
    Suite *s = suite_create(name);
    ut_add_all(s, t, n, f);
    return ut_run(s);
}

/* main() of a suite whose tests (the arguments after teardown) all run
 * under the checked fixture setup/teardown (NULL, NULL: none). */
#define UT_MAIN(name, setup, teardown, ...)                                                        \
    int main(void)                                                                                 \
    {                                                                                              \
        static const struct ut_fixture fx_ = {setup, teardown, NULL, NULL, 0};                     \
        const TTest *tests_[] = {__VA_ARGS__};                                                     \
        return ut_main(name, tests_, UT_N(tests_), &fx_);                                          \
    }

/* A fresh directory /tmp/ck-TAG-XXXXXX in buf; buf is "" when it could not
 * be made (the test's own checks then fail on it). */
static inline void ut_tmpdir(char *buf, size_t n, const char *tag)
{
    snprintf(buf, n, "/tmp/ck-%s-XXXXXX", tag);
    if (!mkdtemp(buf))
        buf[0] = 0;
}

static inline int ut_rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}

/* Removes dir and all below it (links are removed, never followed); 0 or
 * nftw's -1. */
static inline int ut_rmtree(const char *dir)
{
    if (!dir[0])
        return 0;
    return nftw(dir, ut_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
