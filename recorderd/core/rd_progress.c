/* rd_progress: a progress line on a terminal (rd_progress.h). */
#include "rd_progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rd_util.h"

void rd_progress_init(rd_progress *p, int want)
{
    memset(p, 0, sizeof *p);
    p->on = want && isatty(STDERR_FILENO);
    if (!p->on)
        return;
    const char *ms = getenv("LUATRACE_PROGRESS_MS"); /* tests only */
    p->every = (ms && *ms ? strtoull(ms, NULL, 10) : 1000) * 1000000u;
    p->t0 = p->last = rd_now_ns();
}

int rd_progress_due(rd_progress *p, double *secs)
{
    uint64_t t = p->on ? rd_now_ns() : 0;
    if (!p->on || t - p->last < p->every)
        return 0;
    p->last = t;
    *secs = (double)(t - p->t0) / 1e9;
    return 1;
}

void rd_progress_draw(rd_progress *p, const char *line)
{
    int n = (int)strlen(line);
    fprintf(stderr, "\r%s%*s", line, p->width > n ? p->width - n : 0, "");
    fflush(stderr);
    p->width = n;
}

void rd_progress_clear(rd_progress *p)
{
    if (p->on && p->width) {
        fprintf(stderr, "\r%*s\r", p->width, "");
        fflush(stderr);
    }
    p->width = 0;
}
