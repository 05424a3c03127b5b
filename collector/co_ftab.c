/* co_ftab: see co_ftab.h. */
#include "co_ftab.h"
#include "co_mem.h"

const co_fent *co_ftab_find(const co_ftab *t, const co_fent *k)
{
    uint32_t m = t->cap - 1;
    for (uint32_t i = co_func_hash(k->key) & m; t->e[i].key; i = (i + 1) & m) {
        const co_fent *e = &t->e[i];
        if (e->key == k->key)
            return e->src == k->src && e->line == k->line && e->shape == k->shape ? e : NULL;
    }
    return NULL;
}

void co_ftab_insert(co_ftab *t, co_fent k)
{
    uint32_t m = t->cap - 1, i = co_func_hash(k.key) & m;
    while (t->e[i].key && t->e[i].key != k.key)
        i = (i + 1) & m;
    if (!t->e[i].key)
        t->n++;
    t->e[i] = k;
}

void co_ftab_remove(co_ftab *t, const void *key)
{
    uint32_t m = t->cap - 1, i = co_func_hash(key) & m;
    if (!key)
        return;
    while (t->e[i].key != key)
        if (!t->e[i].key)
            return;
        else
            i = (i + 1) & m;
    for (uint32_t j = i;;) { /* slot i is the hole */
        t->e[i] = (co_fent){0};
        uint32_t home;
        do {
            j = (j + 1) & m;
            if (!t->e[j].key) {
                t->n--;
                return;
            }
            home = co_func_hash(t->e[j].key) & m;
        } while (((j - home) & m) < ((j - i) & m)); /* home in (i, j]: it stays */
        t->e[i] = t->e[j];
        i = j;
    }
}

int co_ftab_grow(co_ftab *t)
{
    uint32_t cap = t->cap * 2;
    co_fent *e = co_mem_calloc(cap, sizeof *e);
    if (!e)
        return -1;
    for (uint32_t i = 0; i < t->cap; i++) {
        if (!t->e[i].key)
            continue;
        uint32_t j = co_func_hash(t->e[i].key) & (cap - 1);
        while (e[j].key)
            j = (j + 1) & (cap - 1);
        e[j] = t->e[i];
    }
    co_mem_free(t->e);
    t->e = e;
    t->cap = cap;
    return 0;
}
