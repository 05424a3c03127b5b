/* rd_gcwalk: the threads on a Lua 5.1 state's list of GC objects, walked
 * from outside while the process runs (dump), bounded in objects and time,
 * with a check for a list that loops. */
#ifndef RD_GCWALK_H
#define RD_GCWALK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum {
    RD_GCWALK_MAX_THREADS = 1024, /* lr_stackread's MAX_THREADS */
    RD_GCWALK_BLOCK = 1 << 16,    /* bytes copied at once: neighbours on the list */
    RD_GCWALK_BLOCKS = 64         /* blocks kept */
};

/* How a walk ended. */
enum {
    RD_GCWALK_END = 0, /* at the main thread: every thread made before the walk seen */
    RD_GCWALK_LOOP,    /* the list came back to an object it had passed */
    RD_GCWALK_BAD,     /* an object that cannot be read, or is no GC object */
    RD_GCWALK_TIME,    /* out of time */
    RD_GCWALK_COUNT    /* past max_objects */
};

typedef struct rd_gcwalk {
    pid_t pid;
    uint64_t deadline_us; /* CLOCK_MONOTONIC, as rd_gcwalk_now_us */
    size_t max_objects;
    /* what the walk found */
    const void *th[RD_GCWALK_MAX_THREADS];
    size_t nth;
    size_t objects; /* walked, in the last try */
    int end;        /* RD_GCWALK_* */
    int tries;
    /* blocks of the process's memory, copied as the walk met them */
    uintptr_t blk_at[RD_GCWALK_BLOCKS];
    size_t blk_len[RD_GCWALK_BLOCKS];
    uint8_t blk[RD_GCWALK_BLOCKS][RD_GCWALK_BLOCK];
} rd_gcwalk;

/* Walks the GC list of the state whose main thread is main (its
 * global_State g) in w->pid as it runs, keeping the threads on it but main
 * in w->th. A walk that ends anywhere but at main (the collector freed what
 * it was about to read, or the list is not what it should be) is tried
 * again from the start, a few times, until w->deadline_us. Returns w->end.
 * Any thread; w is large (4 MiB of blocks): allocate it. */
int rd_gcwalk_threads(rd_gcwalk *w, const void *g, const void *main);

/* One walk of the same list while w->pid is stopped (the list cannot
 * change, so one try tells), for when the walks as it ran all failed: a
 * program freeing objects fast, or a walker slowed down, can fail them
 * all. Counts a try more in w->tries. Returns w->end. */
int rd_gcwalk_threads_stopped(rd_gcwalk *w, const void *g, const void *main);

/* A one-line reason for w->end (not RD_GCWALK_END), for after "process N:". */
void rd_gcwalk_why(const rd_gcwalk *w, char *buf, size_t cap);

uint64_t rd_gcwalk_now_us(void);

#endif
