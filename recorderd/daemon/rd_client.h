/* rd_client: `recorderd status` and `recorderd stop`, talking to a running
 * daemon over its socket. Main thread, blocking. */
#ifndef RD_CLIENT_H
#define RD_CLIENT_H

/* Prints the daemon's status (a table, or JSON if json). Returns the exit
 * code: 0, or 1 with a message when nothing answers on path. */
int rd_client_status(const char *path, int json);

/* `recorderd status` with no --socket: prints the status of path's daemon
 * and of each `recorderd run` of this user's in progress (their daemons are
 * private), so that a run is never "no daemon". Returns the exit code: 0 if
 * any answered, else 1 with path's message. */
int rd_client_status_all(const char *path);

/* Asks the daemon to finish its sessions and exit; waits until it has. */
int rd_client_stop(const char *path);

#endif
