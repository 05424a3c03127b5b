/* ut_events: feeding hand-written records to a stack rebuilder, shared by
 * the recorderd unit suites. Each suite includes it once and gets its own
 * model M and stack S (file-static), set up by model_setup. */
#ifndef UT_EVENTS_H
#define UT_EVENTS_H

#include <check.h>
#include <stdlib.h>
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

static inline int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lines of text, sorted, each ending in '\n' (folded stacks compared
 * whatever their order). Caller frees. */
static inline char *sorted_lines(const char *text)
{
    size_t len = strlen(text), n = 0;
    char *copy = strdup(text), **v = calloc(len + 1, sizeof *v);
    for (char *save = NULL, *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
        v[n++] = l;
    qsort(v, n, sizeof *v, cmp_str);
    char *out = calloc(len + n + 1, 1);
    for (size_t i = 0; i < n; i++)
        strcat(strcat(out, v[i]), "\n");
    free(v);
    free(copy);
    return out;
}

#endif
