/* rd_sockdiag: the uid owning one TCP socket, asked of the kernel by the
 * socket's four ends (netlink's sock_diag, as ss does), which finds it in
 * its hash table: no table is read whole. /proc/net/tcp, which
 * rd_http_auth reads when this cannot answer, costs a read of every TCP
 * socket of the machine for each client: 30 ms of the daemon's loop with
 * 6000 of them, during which no traced process is served. */
#ifndef RD_SOCKDIAG_H
#define RD_SOCKDIAG_H

#include <sys/socket.h>

enum { RD_SOCKDIAG_UNKNOWN = -1, RD_SOCKDIAG_UNAVAILABLE = -2 };

/* The uid owning the TCP socket whose own end is at (an AF_INET or
 * AF_INET6 address, a v4-mapped one asked as IPv4) and whose other end is
 * to: RD_SOCKDIAG_UNKNOWN when there is no such socket or it has no owner
 * any more (time-wait, orphaned), RD_SOCKDIAG_UNAVAILABLE when the kernel
 * does not answer such questions (no netlink, no tcp_diag): then ask
 * /proc/net/tcp. */
long rd_sockdiag_uid(const struct sockaddr *at, const struct sockaddr *to);

#endif
