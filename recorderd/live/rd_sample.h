/* rd_sample: a live view of a process that never loaded the collector,
 * from samples read from outside (rd_peek). Main thread only. */
#ifndef RD_SAMPLE_H
#define RD_SAMPLE_H

#include <sys/types.h>

typedef struct rd_sample_opts {
    pid_t pid;
    unsigned hz;          /* samples per second, 1..1000 */
    unsigned duration_ms; /* 0: until q, Ctrl-C or SIGTERM */
    int stop;             /* hold the process stopped for each read (exact, costly) */
} rd_sample_opts;

/* `recorderd top PID`: redraws the functions the samples found busiest,
 * every second, until the duration ends, a key or signal stops it or the
 * process exits. Returns the exit code. */
int rd_sample_top(const rd_sample_opts *o);

#endif
