/* lt_trust: whom a client of recorderd's socket talks to. A socket path is
 * a name anyone may have taken first: before anything is sent on it (a
 * traced program's pid, command line and working directory, a status or
 * stop request), the client checks
 *   - the directory holding the socket: a directory (not a symlink), owned
 *     by this user (the effective uid) and writable by nobody else. The
 *     per-user directories that luatrace picks itself (/tmp/luatrace-UID,
 *     its attach/ and $XDG_RUNTIME_DIR/luatrace) must have no group or
 *     other permission bits at all, as recorderd makes them (0700);
 *   - the listening process (SO_PEERCRED): its uid is this user's. Root's
 *     daemon is no exception: it refuses other users' hellos anyway.
 * recorderd listen applies the same directory rule to the socket it
 * creates (rd_server.c). */
#ifndef LT_TRUST_H
#define LT_TRUST_H

#include <stddef.h>
#include <sys/types.h>

/* The directory of socket path is one uid may trust. Returns 0, or -EPERM
 * (or the lstat error) with the reason in why. */
int lt_trust_dir(const char *path, uid_t uid, char *why, size_t cap);

/* The process on the other end of connected socket fd runs as uid.
 * Returns 0 or -EPERM with the reason in why. */
int lt_trust_peer(int fd, uid_t uid, char *why, size_t cap);

/* lt_ctl_connect after lt_trust_dir, then lt_trust_peer (the connection is
 * closed if it fails). Returns the fd or a negative errno; why says what
 * failed (the path included). */
int lt_trust_connect(const char *path, char *why, size_t cap);

/* Copies text of length n into buf (cap bytes, always terminated) with
 * every control byte but newline and tab, and DEL, written as \xNN: text
 * that came from a peer never reaches a terminal raw. Returns buf. */
char *lt_trust_printable(const char *text, size_t n, char *buf, size_t cap);

#endif
