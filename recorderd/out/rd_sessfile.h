/* rd_sessfile: reading a session directory (or a trace file) back:
 * session.json's fields, written by rd_session.c, and the trace replayed
 * for the coverage or any report of rd_formats. Any thread. */
#ifndef RD_SESSFILE_H
#define RD_SESSFILE_H

#include <limits.h>

#include "rd_cov.h"
#include "rd_formats.h"
#include "rd_model.h"

/* Replays a session directory or trace file (rd_replay_path) and adds it;
 * relative sources are resolved against the working directory its
 * session.json records, else ours. Returns 0, with a warning in err for a
 * truncated trace, or a negative errno with a message in err. */
int rd_sessfile_add_cov(rd_cov *c, const char *path, char *err, size_t cap);

/* The working directory a session recorded in its session.json ("cwd"),
 * into buf. Returns 0, or -ENOENT when there is none. */
int rd_sessfile_cwd(const char *session_dir, char *buf, size_t cap);

/* How the session of path (a session directory or its trace.ltr) was
 * sampled, as its session.json says: "sampler" luajit (LuaJIT's profiler)
 * or outside (record, top), at "sampled_hz". The trace does not say: a
 * replay would show samples as an exact trace. Sets m's sampled_hz and
 * sampled_jit (0 for an exact trace, or no session.json); returns hz. */
unsigned rd_sessfile_sampling(const char *path, rd_model *m);

/* What session.json says of the traced program, kept for an rd_render. */
typedef struct rd_sessfile_meta {
    char cwd[PATH_MAX], command[4096], name[256];
} rd_sessfile_meta;

/* The render context of a replayed model m of path (a session directory or
 * a trace file): its title is the session's name (profile.txt then names
 * it and its command, as the session's own does), else path; relative
 * sources resolve against the
 * cwd session.json records (else ours), its command and whether it was cut
 * short come from there too (unknown for a trace file on its own), and its
 * start from the trace file's time. t holds the strings r points to. */
void rd_sessfile_render(const char *path, const rd_model *m, rd_sessfile_meta *t,
                        rd_render *r);

#endif
