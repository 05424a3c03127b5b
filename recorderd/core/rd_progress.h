/* rd_progress: one line of progress on stderr, for long work on a
 * terminal (a replay, a session's reports): redrawn in place with \r at
 * most once an interval, erased when the work ends; nothing at all when
 * stderr is not a terminal, nor for work shorter than the interval. */
#ifndef RD_PROGRESS_H
#define RD_PROGRESS_H

#include <stdint.h>

typedef struct rd_progress {
    int on;                   /* asked for, and stderr is a terminal */
    uint64_t t0, last, every; /* ns */
    int width;                /* of the line on screen; 0 = none */
} rd_progress;

/* Starts the clock. The interval is 1 s (LUATRACE_PROGRESS_MS, for tests). */
void rd_progress_init(rd_progress *p, int want);

/* 1 if a line is due now (the interval has passed since the last one,
 * or since the start); *secs: the time since the start. */
int rd_progress_due(rd_progress *p, double *secs);

/* Draws line over the one on screen. */
void rd_progress_draw(rd_progress *p, const char *line);

/* Erases the line, if one was drawn. */
void rd_progress_clear(rd_progress *p);

#endif
