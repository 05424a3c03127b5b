/* rd_http_auth: who is asking the pprof endpoint. A client on a loopback
 * address is a user of this machine: the kernel's socket table (asked
 * through sock_diag, rd_sockdiag.h; else /proc/net/tcp, tcp6) names the
 * uid that owns the client's end of the connection, as identd reads it. A client from elsewhere proves itself
 * with a bearer token, the content of a file only the daemon's user can
 * read (--http-token-file). */
#ifndef RD_HTTP_AUTH_H
#define RD_HTTP_AUTH_H

#include <stddef.h>
#include <sys/socket.h>

enum { RD_HTTP_TOKEN_MAX = 256 }; /* bytes of a token, at most */

/* Whether a is a loopback address (127.0.0.0/8, ::1, ::ffff:127.x.y.z). */
int rd_http_is_loopback(const struct sockaddr *a);

/* The uid owning the socket at peer connected to local (the client's end
 * of a TCP connection whose server end is local), from the kernel's table
 * of the daemon's network namespace; -1 if it is not there, or if it has
 * no owner any more (closed: time-wait, orphaned). */
long rd_http_peer_uid(const struct sockaddr *peer, const struct sockaddr *local);

/* Reads the token in path into tok (a NUL-terminated string, its trailing
 * newline dropped): a regular file of the daemon's user that no other user
 * may read or write, holding 16 to RD_HTTP_TOKEN_MAX - 1 printable bytes.
 * 0, or -1 with a one-line reason in err. */
int rd_http_token_load(const char *path, char *tok, size_t cap, char *err, size_t errcap);

/* Whether the n bytes at given are the token, in a time that does not
 * depend on where they differ. */
int rd_http_token_eq(const char *tok, const char *given, size_t n);

#endif
