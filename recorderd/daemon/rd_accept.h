/* rd_accept: recorderd's listening socket, and what happens to a
 * connection when the daemon is out of file descriptors. */
#ifndef RD_ACCEPT_H
#define RD_ACCEPT_H

#include <stddef.h>

#include "rd_server.h"

/* Binds and listens on path (the socket 0600; its directory is checked by
 * the caller), and accepts into srv with rd_server_adopt. Returns 0 or a
 * negative errno with the reason in err. */
int rd_accept_listen(rd_server *srv, const char *path, char *err, size_t cap);

/* A new socket bound on path (its file was removed), accepted from in
 * place of the old one, which is closed. Returns 0 or a negative errno
 * with the reason in err. */
int rd_accept_rebind(rd_server *srv, const char *path, char *err, size_t cap);

/* Stops accepting and closes the socket (its file stays). */
void rd_accept_close(rd_server *srv);

#endif
