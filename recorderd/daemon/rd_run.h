/* rd_run: `recorderd run -- CMD`: a private recorder around one command. */
#ifndef RD_RUN_H
#define RD_RUN_H

#include <stdint.h>

#include "rd_cov.h"
#include "rd_server.h"

typedef struct rd_run_opts {
    const char *out;
    int quiet;
    int no_trace; /* --no-trace: reports only */
    int coverage; /* --coverage: LUATRACE_TIMING=none, no clock read */
    int sample_time; /* --time sample: LUATRACE_TIMING=sample (and the ack's) */
    int lines_asked;   /* --lines as given: 2 sample, 1 exact, 0 none */
    int lines_sampled; /* lines by sample (run's default): LUATRACE_LINES=sample */
    int wall;        /* --clock wall: LUATRACE_TICK_CLOCK=wall */
    int memory;      /* --memory: LUATRACE_MEMORY=1 (doc/memory.md) */
    const char *ring; /* LUATRACE_RING for the child, or NULL */
    const char *mode; /* LUATRACE_MODE for the child, or NULL */
    const char *const *backends; /* --backend specs */
    unsigned nbackends;
    uint32_t formats; /* --format: rd_session_opts.formats */
    unsigned sample_hz; /* --sample: LUATRACE_SAMPLE for the child (LuaJIT), or 0 */
    rd_cov_opts cov;    /* --include, --exclude */
    const rd_outside_ops *outside; /* sampling from outside (Lua 5.1's --sample), or NULL */
} rd_run_opts;

/* Each run's private daemon listens on RD_RUN_DIR "XXXXXX/sock" (a
 * directory of mkdtemp's, the user's own); status finds them there. */
#define RD_RUN_DIR "/tmp/luatrace-run-"

/* The exit status of a command that succeeded with nothing traced: a run
 * meant to trace must not pass silently (a CI job's coverage). */
enum { RD_RUN_UNTRACED = 125 };

/* Runs argv traced; returns the exit code to exit with (the child's, or
 * 128+signal; 127 if it could not start; RD_RUN_UNTRACED if it exited 0
 * and no process of it loaded the collector). Main thread only. */
int rd_run(const rd_run_opts *o, char **argv);

/* `recorderd env`: prints `export LUA_CPATH='...'` (rd_run_cpath) for a
 * shell to eval. Returns the exit code. */
int rd_run_env(void);

/* Directory holding luatrace.so: next to this binary in a build tree,
 * else the install directory (run's LUA_CPATH, attach's injection). */
void rd_run_module_dir(char *buf, unsigned long cap);

#endif
