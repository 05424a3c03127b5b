/* co_mem: the collector's own memory, in mappings of its own rather than
 * the traced program's malloc heap. Tables and name copies placed between
 * the program's blocks change how glibc's malloc serves the program
 * (measured on scripts/bench's spawn: 12% more work in _int_malloc and
 * malloc_consolidate), which would be time charged to the program. Under
 * AddressSanitizer it is malloc, so that overflows are still caught.
 * Traced thread only; allocation is rare (tables grow by doubling). */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "co_mem.h"

#if defined(__SANITIZE_ADDRESS__)
#define CO_MEM_MALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CO_MEM_MALLOC 1
#endif
#endif

/* A block: its mapping's length, then the caller's bytes. */
#define CO_MEM_HEAD 16

void *co_mem_calloc(size_t n, size_t size)
{
    if (size && n > ((size_t)-1 - CO_MEM_HEAD) / size)
        return NULL;
#ifdef CO_MEM_MALLOC
    return calloc(n, size);
#else
    size_t len = CO_MEM_HEAD + n * size;
    char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    memcpy(m, &len, sizeof len); /* zero-filled: nothing else to clear */
    return m + CO_MEM_HEAD;
#endif
}

void co_mem_free(void *p)
{
#ifdef CO_MEM_MALLOC
    free(p);
#else
    if (!p)
        return;
    char *m = (char *)p - CO_MEM_HEAD;
    size_t len;
    memcpy(&len, m, sizeof len);
    munmap(m, len);
#endif
}

void *co_mem_realloc(void *p, size_t old, size_t size)
{
    if (size <= old)
        return p;
    char *q = co_mem_calloc(1, size);
    if (q && p)
        memcpy(q, p, old);
    if (q)
        co_mem_free(p);
    return q;
}

char *co_arena_copy(co_arena *a, const char *s, size_t n)
{
    if (!a->chunk || a->used + n + 1 > CO_ARENA_CHUNK - sizeof(void *)) {
        if (n + 1 > CO_ARENA_CHUNK - sizeof(void *))
            return NULL;
        char *c = co_mem_calloc(1, CO_ARENA_CHUNK);
        if (!c)
            return NULL;
        memcpy(c, &a->chunk, sizeof(void *)); /* the chunks form a list */
        a->chunk = c;
        a->used = 0;
    }
    char *d = a->chunk + sizeof(void *) + a->used;
    memcpy(d, s, n);
    d[n] = 0;
    a->used += n + 1;
    return d;
}

void co_arena_free(co_arena *a)
{
    while (a->chunk) {
        char *next;
        memcpy(&next, a->chunk, sizeof next);
        co_mem_free(a->chunk);
        a->chunk = next;
    }
    a->used = 0;
}
