/* co_ftab: the function cache's table: open addressing with linear
 * probing, keyed by a Proto* (a Lua function), a Proto* + 1 (the wraps of
 * a coroutine body) or a lua_CFunction. No Lua here (unit-tested alone). */
#ifndef CO_FTAB_H
#define CO_FTAB_H

#include <stddef.h>
#include <stdint.h>

typedef struct co_fent {
    const void *key; /* NULL: a free slot */
    const void *src; /* Proto.source, to detect a recycled Proto address */
    int line;        /* Proto.linedefined, idem */
    uint32_t shape;  /* co_proto_shape, idem */
    uint32_t fid;
    uint32_t flags; /* LT_FF_* */
} co_fent;

typedef struct co_ftab {
    co_fent *e;
    uint32_t cap; /* power of two */
    uint32_t n;
} co_ftab;

/* Every bit of the address counts: a body's wraps key (its Proto + 1)
 * must not share the Proto's home slot. */
static inline uint32_t co_func_hash(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    return (uint32_t)(x * 0x9E3779B97F4A7C15ull >> 32);
}

/* key's entry if it sits in its home slot, else NULL (then co_ftab_find
 * says): the hot paths' one probe. */
static inline const co_fent *co_ftab_first(const co_ftab *t, const void *key)
{
    const co_fent *e = &t->e[co_func_hash(key) & (t->cap - 1)];
    return e->key == key ? e : NULL;
}

/* k's entry, or NULL if its key is absent or holds another function (a
 * recycled Proto address: src, line or shape differ). */
const co_fent *co_ftab_find(const co_ftab *t, const co_fent *k);
/* Adds k, or replaces the entry of its key. The caller keeps n below
 * cap / 2 (co_ftab_grow). */
void co_ftab_insert(co_ftab *t, co_fent k);
/* Removes key's entry if any; the entries after it in its probe run move
 * back, so that every other key is still found from its home slot. */
void co_ftab_remove(co_ftab *t, const void *key);
/* Doubles the table (e: co_mem_calloc'd). Returns 0, or -1 (out of
 * memory, t unchanged). */
int co_ftab_grow(co_ftab *t);

#endif
