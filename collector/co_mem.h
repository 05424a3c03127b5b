/* co_mem: the collector's own memory, out of the traced program's heap
 * (co_mem.c says why). */
#ifndef CO_MEM_H
#define CO_MEM_H

#include <stddef.h>

/* Zeroed n * size bytes, or NULL. Free with co_mem_free. */
void *co_mem_calloc(size_t n, size_t size);
void co_mem_free(void *p);
/* p (old bytes, from co_mem_calloc) grown to size bytes, the rest zeroed;
 * NULL if out of memory (p is then left as it was). */
void *co_mem_realloc(void *p, size_t old, size_t size);

/* Strings that live as long as the arena: copies in 64 KiB chunks. */
#define CO_ARENA_CHUNK (64u << 10)
typedef struct co_arena {
    char *chunk; /* the newest; its first word points to the one before */
    size_t used; /* bytes of it after that word */
} co_arena;

/* A NUL-terminated copy of s[0..n), or NULL (out of memory, or longer
 * than a chunk). */
char *co_arena_copy(co_arena *a, const char *s, size_t n);
void co_arena_free(co_arena *a);

#endif
