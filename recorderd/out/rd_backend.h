/* rd_backend: streaming backends. They watch the rebuilt stacks through an
 * rd_listener while a trace is drained or replayed (on the drainer thread,
 * never the traced program's), and write their output when it ends. Chosen
 * by spec strings on the command line (`--backend SPEC`): see the table in
 * rd_backend.c. */
#ifndef RD_BACKEND_H
#define RD_BACKEND_H

#include <stddef.h>

#include "rd_model.h"
#include "rd_stack.h"

#define RD_MAX_BACKENDS 16

/* What a backend may want to know of the trace besides its records. */
typedef struct rd_backend_info {
    const char *session; /* session name, or the trace's path for a report */
    const char *command; /* the traced command line; NULL if unknown */
    long pid;            /* the traced process; 0 if unknown */
    const char *dir;     /* the output directory: also for large temporary files */
    int dirfd;           /* dir, open (rd_outdir.h): write through it; -1 if none */
} rd_backend_info;

typedef struct rd_backend rd_backend;
struct rd_backend {
    const char *name; /* for messages */
    const rd_backend_info *info; /* NULL unless rd_backends_info was called */
    rd_listener ls;   /* its callbacks; ls.ud is its own state */
    /* The trace ended: write the output into dir, under the backend's own
     * file name, or to `file` when not NULL. Returns 0, or -errno with a
     * message in err. */
    int (*finish)(rd_backend *b, const rd_model *m, const char *dir, const char *file,
                  char *err, size_t cap);
    void (*destroy)(rd_backend *b);
};

/* Makes a backend for arg (the spec after its prefix). The model is the
 * one the listener's frames refer to. NULL with a message in err. */
typedef rd_backend *rd_backend_create_fn(const char *arg, const rd_model *m, char *err,
                                         size_t cap);

typedef struct rd_backends {
    rd_backend *b[RD_MAX_BACKENDS];
    unsigned n;
    rd_listener fan; /* calls every backend's listener in turn */
} rd_backends;

/* 1 if spec names a known backend kind (arguments are checked at open). */
int rd_backend_known(const char *spec);

/* The file a backend of spec writes in its directory: NULL if it chooses
 * (a Lua backend) or spec is none. */
const char *rd_backend_file(const char *spec);

/* Opens the backends of specs[0..n). On failure nothing stays open and err
 * says which spec failed and why. */
int rd_backends_open(rd_backends *set, const char *const *specs, unsigned n, const rd_model *m,
                     char *err, size_t cap);

/* Tells every backend of the set about the trace (before it is read; info
 * must outlive the set). */
void rd_backends_info(rd_backends *set, const rd_backend_info *info);

/* Installs the set as s's listener (none if the set is empty). */
void rd_backends_attach(rd_backends *set, rd_stack *s);

/* Finishes every backend into dir (file: for a set of one, its output
 * file). Returns 0 or the first error, with its message in err; every
 * backend is finished regardless. */
int rd_backends_finish(rd_backends *set, const rd_model *m, const char *dir, const char *file,
                       char *err, size_t cap);

void rd_backends_close(rd_backends *set);

#endif
