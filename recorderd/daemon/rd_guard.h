/* rd_guard: every access to a ring's shared memory. A producer of the same
 * uid may shrink its shm object at any time (even after it said DONE and
 * saw its ring drained); touching the vanished pages raises SIGBUS. Each
 * access runs inside rd_guard_call, so the fault ends that access (and the
 * caller ends that session), never the daemon and its other sessions. */
#ifndef RD_GUARD_H
#define RD_GUARD_H

/* Installs the SIGBUS handler. Call once, before any ring is mapped. A
 * SIGBUS outside rd_guard_call kills the process as it would have. */
void rd_guard_init(void);

/* Runs fn(ud) and returns what it returns (it must not return -EFAULT), or
 * -EFAULT if it touched a mapping that is gone: fn was cut where it
 * faulted, so it must leave nothing half done that a caller relies on
 * (no lock held, no malloc half made). Nests; any thread. */
int rd_guard_call(int (*fn)(void *ud), void *ud);

#endif
