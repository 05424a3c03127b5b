/* rd_heap: `recorderd heap PID`: what the heap of a running Lua 5.1
 * process holds, by type, and what keeps it alive (the paths from the
 * roots to the largest groups), read from outside; --diff of two
 * snapshots. Main thread. */
#ifndef RD_HEAP_H
#define RD_HEAP_H

#include <stdio.h>
#include <sys/types.h>

typedef struct rd_heap_opts {
    pid_t pid;
    unsigned diff_s;       /* --diff SECONDS: a second snapshot that long after; 0: one */
    unsigned timeout_s;    /* each snapshot's bound */
    unsigned long max_objects; /* objects walked at most (memory: about 56 bytes each) */
    int stop;              /* hold the process stopped while it is read (an exact snapshot) */
    unsigned top;          /* rows of each table */
} rd_heap_opts;

/* Writes the report to out (errors on stderr). Returns the exit code. */
int rd_heap(const rd_heap_opts *o, FILE *out);

#endif
