/* rd_attach: `recorderd attach|dump|top PID` (live attach to a process
 * whose collector listens; see proto/lt_attach.h). */
#ifndef RD_ATTACH_H
#define RD_ATTACH_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "rd_session.h"

typedef struct rd_attach_opts {
    pid_t pid;
    unsigned duration_ms; /* 0: until Ctrl-C (or q) */
    unsigned timeout_ms;  /* give up if the process does not answer */
    int window;           /* attach -d without --timeout: the duration is the whole
                             window from the request, the wait for an answer in it */
    unsigned grace_ms;    /* after a detach request, before giving up */
    int dump;             /* ask for the stacks only */
    int keys;             /* q on a terminal detaches (top) */
    unsigned hz;          /* top of a process without the collector: samples per second */
    int stop;             /* and whether each read holds it stopped */
    rd_session_opts so;   /* where and what the session writes */
} rd_attach_opts;

/* Runs one attach to completion. Returns the exit code. Main thread. */
int rd_attach(const rd_attach_opts *o);

/* Prints the stacks of a dump's records (p, n: STR, FUNC, THREAD, START,
 * FRAME, RESUME) as rd_attach_print_stacks does. */
void rd_attach_print_records(FILE *out, pid_t pid, const char *cmd, const uint8_t *p, size_t n,
                             const char *note);

/* Session callbacks (drainer thread): dump prints every thread's stack
 * once the trace ended; top redraws the busiest functions every second. */
void rd_attach_dump_view(rd_session *s, void *ud, int last);
void rd_attach_top_view(rd_session *s, void *ud, int last);

/* Any thread: the top view's rows by total time (key t), else by self
 * time (key s, the default); it shows at its next turn. */
void rd_attach_top_sort(int by_total);

#endif
