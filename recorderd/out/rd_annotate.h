/* rd_annotate: the annotate report, every source file's lines with their
 * line events and time. Runs on the thread that owns the model. */
#ifndef RD_ANNOTATE_H
#define RD_ANNOTATE_H

#include <stdio.h>

#include "rd_cov.h"
#include "rd_model.h"

/* annotate/: one file in the directory dirfd (dir: its name, for
 * messages) per source file, each written whole (rd_out_write), grouped as the
 * coverage reports group them (by device and inode: a file reached as
 * a.lua, ./a.lua and by its absolute path is one file, its counts added).
 * cov is the finished coverage of m made with basedir (the program's
 * working directory, NULL: ours), or NULL to make it here. Chunks that
 * are no file get none. Returns 0, or the negative errno of the first file
 * it could not write (-ENOSPC when the disk is full) with a message in
 * err; stops there. */
int rd_report_annotate(const rd_model *m, const rd_cov *cov, const char *basedir, int dirfd,
                       const char *dir, char *err, size_t cap);

/* Same listing for every file, on one stream. */
int rd_report_annotate_stream(const rd_model *m, const rd_cov *cov, const char *basedir,
                              FILE *out);

#endif
