/* check_ftab: the collector's function table (collector/co_ftab): inserts,
 * removals and growth checked against a plain list of the keys that should
 * be there, with keys chosen to collide and runs that wrap around the end;
 * and the memory it lives in (collector/co_mem). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "co_ftab.h"
#include "co_mem.h"
#include "ut_main.h"

#define MAXK 4096

/* What the table should hold. */
typedef struct model {
    const void *key[MAXK];
    uint32_t fid[MAXK];
    uint32_t n;
} model;

static co_ftab new_table(uint32_t cap)
{
    co_ftab t = {co_mem_calloc(cap, sizeof(co_fent)), cap, 0};
    ck_assert_ptr_nonnull(t.e);
    return t;
}

static co_fent entry(const void *key, uint32_t fid)
{
    return (co_fent){key, (const char *)key + 8, 1, 2, fid, 0};
}

static int model_find(const model *m, const void *key)
{
    for (uint32_t i = 0; i < m->n; i++)
        if (m->key[i] == key)
            return (int)i;
    return -1;
}

/* Every key of the model is found with its fid, nothing else is in the
 * table, and no entry sits past a free slot of its probe run. Returns
 * what is wrong, or NULL (few ck_asserts: each costs a write to Check's
 * pipe). */
static const char *differs(const co_ftab *t, const model *m)
{
    if (t->n != m->n)
        return "n differs";
    for (uint32_t i = 0; i < m->n; i++) {
        co_fent k = entry(m->key[i], 0);
        const co_fent *e = co_ftab_find(t, &k);
        if (!e || e->fid != m->fid[i])
            return e ? "a key has another fid" : "a key is not found";
    }
    uint32_t used = 0, mask = t->cap - 1;
    for (uint32_t i = 0; i < t->cap; i++) {
        if (!t->e[i].key)
            continue;
        used++; /* every model key found, as many entries: no other key */
        for (uint32_t j = co_func_hash(t->e[i].key) & mask; j != i; j = (j + 1) & mask)
            if (!t->e[j].key)
                return "an entry past a free slot of its run";
    }
    return used == m->n ? NULL : "more entries than keys";
}

static void check_same(const co_ftab *t, const model *m)
{
    const char *why = differs(t, m);
    ck_assert_msg(why == NULL, "%s", why);
}

/* Keys from a small pool, so that removals hit and inserts replace; many
 * share a home slot in a small table. */
static const void *pool_key(uint32_t r, uint32_t pool)
{
    uintptr_t k = 0x10000 + (uintptr_t)(r % pool) * 8;
    return (const void *)(k + (r & 0x100 ? 1 : 0)); /* odd: a wraps' key */
}

/* check_same every check_every steps and at the end */
static void random_run(uint32_t cap, uint32_t pool, uint32_t steps, uint32_t check_every,
                       unsigned seed)
{
    static model m;
    m.n = 0;
    co_ftab t = new_table(cap);
    srand(seed);
    for (uint32_t s = 0; s < steps; s++) {
        uint32_t r = (uint32_t)rand();
        const void *key = pool_key(r >> 4, pool);
        int at = model_find(&m, key);
        if (r % 3 == 0) {
            co_ftab_remove(&t, key);
            if (at >= 0)
                m.key[at] = m.key[m.n - 1], m.fid[at] = m.fid[m.n - 1], m.n--;
        } else if ((t.n + 1) * 2 <= t.cap || co_ftab_grow(&t) == 0) {
            co_ftab_insert(&t, entry(key, s + 1));
            if (at < 0)
                at = (int)m.n++, m.key[at] = key;
            m.fid[at] = s + 1;
        }
        if (s % check_every == 0)
            check_same(&t, &m);
    }
    check_same(&t, &m);
    co_mem_free(t.e);
}

START_TEST(test_ftab_random_small)
{
    for (unsigned seed = 1; seed <= 20; seed++)
        random_run(16, 24, 3000, 1, seed);
}
END_TEST

START_TEST(test_ftab_random_growing)
{
    random_run(16, 3000, 20000, 997, 7);
}
END_TEST

/* Keys that all hash to the last slots: their run wraps around to slot 0,
 * and removing one in the middle must pull the wrapped ones back. */
START_TEST(test_ftab_wrap_around)
{
    co_ftab t = new_table(64);
    static model m;
    m.n = 0;
    for (uintptr_t k = 8; m.n < 12 && k < (1u << 24); k += 8) {
        uint32_t home = co_func_hash((const void *)k) & 63;
        if (home >= 61) {
            m.key[m.n] = (const void *)k;
            m.fid[m.n] = m.n + 1;
            co_ftab_insert(&t, entry(m.key[m.n], m.fid[m.n]));
            m.n++;
        }
    }
    ck_assert_uint_eq(m.n, 12);
    check_same(&t, &m);
    while (m.n) {
        uint32_t i = m.n / 2;
        co_ftab_remove(&t, m.key[i]);
        m.key[i] = m.key[m.n - 1], m.fid[i] = m.fid[m.n - 1], m.n--;
        check_same(&t, &m);
    }
    co_mem_free(t.e);
}
END_TEST

/* A key whose entry holds another function (a recycled Proto address
 * where the allocator is not watched) is not found. */
START_TEST(test_ftab_recycled_entry)
{
    co_ftab t = new_table(16);
    const void *key = (const void *)0x4000;
    co_ftab_insert(&t, entry(key, 5));
    co_fent k = entry(key, 0);
    ck_assert_ptr_nonnull(co_ftab_find(&t, &k));
    k.shape++;
    ck_assert_ptr_null(co_ftab_find(&t, &k));
    co_ftab_remove(&t, NULL);
    co_ftab_remove(&t, (const void *)0x4008);
    ck_assert_uint_eq(t.n, 1);
    co_mem_free(t.e);
}
END_TEST

/* A grown block keeps its bytes and is zero past them. */
START_TEST(test_mem_realloc)
{
    unsigned char *p = co_mem_calloc(100, 1);
    ck_assert_ptr_nonnull(p);
    int bad = 0;
    for (int i = 0; i < 100; i++) {
        bad += p[i] != 0;
        p[i] = (unsigned char)(i + 1);
    }
    ck_assert_int_eq(bad, 0);
    ck_assert_ptr_eq(co_mem_realloc(p, 100, 50), p);
    unsigned char *q = co_mem_realloc(p, 100, 100000);
    ck_assert_ptr_nonnull(q);
    for (int i = 0; i < 100000; i++)
        bad += q[i] != (i < 100 ? i + 1 : 0);
    ck_assert_int_eq(bad, 0);
    co_mem_free(q);
    co_mem_free(NULL);
    ck_assert_ptr_null(co_mem_calloc((size_t)-1 / 2, 4));
}
END_TEST

/* Copies across many chunks stay intact; one longer than a chunk is
 * refused. */
START_TEST(test_mem_arena)
{
    co_arena a = {0};
    static char *copy[3000];
    char text[200];
    for (int i = 0; i < 3000; i++) {
        int n = snprintf(text, sizeof text, "%d:%0*d", i, i % 150, 7);
        copy[i] = co_arena_copy(&a, text, (size_t)n);
        ck_assert_ptr_nonnull(copy[i]);
    }
    int bad = 0;
    for (int i = 0; i < 3000; i++) {
        snprintf(text, sizeof text, "%d:%0*d", i, i % 150, 7);
        bad += strcmp(copy[i], text) != 0;
    }
    ck_assert_int_eq(bad, 0);
    static char big[CO_ARENA_CHUNK];
    memset(big, 'x', sizeof big);
    ck_assert_ptr_null(co_arena_copy(&a, big, sizeof big));
    ck_assert_ptr_nonnull(co_arena_copy(&a, big, 4096));
    co_arena_free(&a);
    ck_assert_ptr_null(a.chunk);
}
END_TEST

UT_MAIN("ftab", NULL, NULL, test_ftab_random_small, test_ftab_random_growing, test_ftab_wrap_around,
        test_ftab_recycled_entry, test_mem_realloc, test_mem_arena)
