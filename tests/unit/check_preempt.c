/* check_preempt: what is left of an interval once the thread's wait for a
 * CPU comes off it (collector/co_preempt.h). */
#include <check.h>
#include <stdint.h>

#include "co_preempt.h"
#include "ut_main.h"

/* A wait shorter than the interval comes off whole. */
START_TEST(test_preempt_takes_wait)
{
    ck_assert_uint_eq(co_preempt_left(100000, 60000, 3), 40000);
    ck_assert_uint_eq(co_preempt_left(100000, 0, 3), 100000);
    ck_assert_uint_eq(co_preempt_left(100000, 99997, 3), 3);
}
END_TEST

/* A wait as long as the interval or longer (the kernel's clock, waits
 * read late) leaves a nanosecond: code ran, and a call with no time would
 * be a slice of no length in a timeline. */
START_TEST(test_preempt_keeps_nanosecond)
{
    ck_assert_uint_eq(co_preempt_left(100000, 100000, 3), 3);
    ck_assert_uint_eq(co_preempt_left(100000, 99998, 3), 3);
    ck_assert_uint_eq(co_preempt_left(100000, 5000000, 3), 3);
    ck_assert_uint_eq(co_preempt_left(100000, UINT64_MAX, 3), 3);
}
END_TEST

/* An interval no longer than a nanosecond keeps what it has. */
START_TEST(test_preempt_short_interval)
{
    ck_assert_uint_eq(co_preempt_left(3, 100, 3), 3);
    ck_assert_uint_eq(co_preempt_left(2, 100, 3), 2);
    ck_assert_uint_eq(co_preempt_left(0, 100, 3), 0);
}
END_TEST

UT_MAIN("preempt", NULL, NULL, test_preempt_takes_wait, test_preempt_keeps_nanosecond,
        test_preempt_short_interval)
