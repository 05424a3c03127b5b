/* ut_events: feeding hand-written records to a stack rebuilder, shared by
 * the recorderd unit suites. Each suite includes it once and gets its own
 * model M and stack S (file-static), set up by model_setup. */
#ifndef UT_EVENTS_H
#define UT_EVENTS_H

#include <check.h>
#include <string.h>

#include "rd_model.h"
#include "rd_stack.h"

static rd_model M;
static rd_stack S;

static inline void evn(enum lt_kind k, const uint64_t *a, size_t n)
{
    ck_assert_uint_eq(n, lt_event_nargs[k]);
    lt_event ev = {.kind = (uint8_t)k, .nargs = (uint8_t)n};
    memcpy(ev.a, a, n * sizeof *a);
    ck_assert_int_eq(rd_stack_event(&S, &ev), 0);
}

/* EV(CALL, depth, dt, fid): one record of kind LT_EV_CALL. */
#define EV(k, ...)                                                                                 \
    evn(LT_EV_##k, (const uint64_t[]){__VA_ARGS__},                                                \
        sizeof((const uint64_t[]){__VA_ARGS__}) / sizeof(uint64_t))

static inline void ev_str(uint64_t sid, const char *s)
{
    lt_event ev = {.kind = LT_EV_STR, .nargs = 2, .a = {sid, 0}, .str = s,
                   .slen = (uint32_t)strlen(s)};
    ck_assert_int_eq(rd_stack_event(&S, &ev), 0);
}

static inline void model_setup(void)
{
    ck_assert_int_eq(rd_model_init(&M), 0);
    ck_assert_int_eq(rd_stack_init(&S, &M), 0);
}

static inline void model_teardown(void)
{
    rd_stack_free(&S);
    rd_model_free(&M);
}

#endif
