/* rd_outdir: every file recorderd writes goes through here. An output
 * directory is opened once (no symlink as its last part) and everything
 * under it is made relative to that descriptor (mkdirat, openat, renameat),
 * never through a path again: another user who can write to a shared --out
 * cannot swap a directory or a symlink in under us between two steps and
 * have us write through it. New directories are 0700 and files 0600 (a
 * trace holds sources' names, command lines and paths); reports appear
 * whole (temporary file, then renamed over the name). Any thread. */
#ifndef RD_OUTDIR_H
#define RD_OUTDIR_H

#include <stdio.h>

/* Opens directory path as an output directory, creating it and its missing
 * parents when create (the parents 0755, path itself 0700). Refuses a
 * symlink in path's last part (-ELOOP), anything but a directory
 * (-ENOTDIR) and a directory that another user may write into and that is
 * not sticky (-EPERM, rd_out_check). Returns the descriptor (O_CLOEXEC) or
 * -errno with a message in err. */
int rd_out_open(const char *path, int create, char *err, size_t cap);

/* Directory name under dfd, made 0700 if absent (excl: it must be new,
 * else -EEXIST), opened without following a symlink; it must be ours and
 * pass rd_out_check. Returns the descriptor or -errno. */
int rd_out_subdir(int dfd, const char *name, int excl);

/* Creates name under dfd for writing, 0600: O_EXCL|O_NOFOLLOW, so that
 * nothing in its place is ever written through. Returns the fd or -errno. */
int rd_out_create(int dfd, const char *name);

/* An unnamed temporary file in dfd (never visible; gone when closed).
 * Returns the fd or -errno. */
int rd_out_tmpfile(int dfd);

/* Writes name under dfd whole: fn writes into a new temporary file (0600)
 * that is then renamed over name (a symlink there is replaced, never
 * followed). Returns 0 or a negative errno: that of the failed write itself
 * (-ENOSPC, -EFBIG) when fn only saw an error on its stream (-EIO). The
 * temporary file is removed on failure. */
int rd_out_write(int dfd, const char *name, int (*fn)(FILE *, void *), void *ud);

/* rd_out_write for a file the user named (report --out FILE): its
 * directory is opened as named (not created; a symlink to it is followed)
 * and must pass rd_out_check. A device, FIFO or socket of ours or root's
 * there (/dev/null, /dev/stdout) is written into, not replaced. Returns 0 or
 * -errno with a message in err. */
int rd_out_write_path(const char *path, int (*fn)(FILE *, void *), void *ud, char *err,
                      size_t cap);

#endif
