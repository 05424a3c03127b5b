/* rd_run: `recorderd run -- CMD`: a private recorder around one command. */
#ifndef RD_RUN_H
#define RD_RUN_H

#include <stdint.h>

typedef struct rd_run_opts {
    const char *out;
    int quiet;
    int no_trace; /* --no-trace: reports only */
    const char *ring; /* LUATRACE_RING for the child, or NULL */
    const char *mode; /* LUATRACE_MODE for the child, or NULL */
    const char *const *backends; /* --backend specs */
    unsigned nbackends;
    uint32_t formats; /* --format: rd_session_opts.formats */
} rd_run_opts;

/* Runs argv traced; returns the exit code to exit with (the child's, or
 * 128+signal; 127 if it could not start). Main thread only. */
int rd_run(const rd_run_opts *o, char **argv);

/* Directory holding luatrace.so: next to this binary in a build tree,
 * else the install directory. */
void rd_run_module_dir(char *buf, unsigned long cap);

#endif
