/* lt_attach: the rendezvous of live attach, between a dormant collector
 * (a host that called luatrace.listen()) and `recorderd attach|dump|top`.
 *
 * - Listening, the collector writes a marker file LT_ATTACH_DIR/<pid>
 *   (see lt_attach_marker_*) naming the signal it listens on, and installs
 *   a handler for that signal. Nothing else: no thread, no hook.
 * - recorderd listens on LT_ATTACH_DIR/<pid>.sock, then sends the signal
 *   with sigqueue(); its value is an lt_attach_req.
 * - The handler sets the hook on the host's main thread; at its next Lua
 *   event the collector connects to that socket and says hello as any
 *   traced process does (lt_ctl), then streams records into its ring.
 * - To detach, recorderd stores LT_CONTROL_DETACH in the ring's control
 *   word: the collector ends the trace at its next event and goes back to
 *   dormant. It reads the word on its slow path only (once per
 *   LT_RING_BATCH bytes of records), which a program that runs a few
 *   events a second takes minutes later: if the trace has not ended
 *   LT_ATTACH_DETACH_NUDGE_MS after the store, recorderd sends
 *   LT_ATTACH_DETACH, and the handler makes the next event take it.
 *   Likewise `top`, when no record came for a second, sends
 *   LT_ATTACH_FLUSH: the next event publishes the records written so far.
 * - dump of a process blocked in C: if no connection came within
 *   LT_ATTACH_DUMP_NOW_MS of LT_ATTACH_DUMP, recorderd sends
 *   LT_ATTACH_DUMP_NOW. If a DUMP is still pending (no Lua event served
 *   it), the handler reads every thread's stack itself, connects and sends
 *   one lt_ctl "dump" message (lt_ctl_dump_head) followed by its `len`
 *   bytes of START/FRAME/FUNC/STR/RESUME records, the same snapshot a
 *   hook-served dump streams, then removes the hooks DUMP set.
 * LT_ATTACH_DIR is /tmp/luatrace-<uid>/attach, mode 0700: the same for
 * every process of the user, whatever its environment. */
#ifndef LT_ATTACH_H
#define LT_ATTACH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define LT_ATTACH_VERSION 1

/* The value sent with the signal. */
enum lt_attach_req {
    LT_ATTACH_TRACE = 1, /* trace until detached */
    LT_ATTACH_DUMP = 2,  /* send every thread's stack, then detach */
    LT_ATTACH_DUMP_NOW = 3, /* a DUMP still pending: answer from the handler */
    LT_ATTACH_DETACH = 4, /* the control word says detach: look at it at the next event */
    LT_ATTACH_FLUSH = 5, /* publish the records written so far at the next event (top) */
};

#define LT_ATTACH_DUMP_NOW_MS 250 /* recorderd's wait before DUMP_NOW */
#define LT_ATTACH_DETACH_NUDGE_MS 100 /* recorderd's wait before DETACH */

/* Flags of a dump message (lt_ctl_msg.flags). */
enum lt_dump_flag {
    LT_DUMP_IN_C = 1,      /* the running thread's top frame is a C function:
                              the process was blocked in C, stacks exact */
    LT_DUMP_TRUNCATED = 2, /* the records did not fit: stacks cut short */
};

/* The ring's control word (struct lt_ring_hdr.control). */
enum lt_control {
    LT_CONTROL_NONE = 0,
    LT_CONTROL_DETACH = 1,
};

typedef struct lt_attach_marker {
    pid_t pid;
    unsigned long long start; /* process start time, /proc/PID/stat field 22 */
    int signo;
} lt_attach_marker;

/* Creates LT_ATTACH_DIR (and its parent) with mode 0700, checking that an
 * existing one belongs to uid and is private. Returns 0 or -errno. */
int lt_attach_make_dir(uid_t uid);

/* The same for uid's own directory, /tmp/luatrace-UID (the attach
 * directory's parent; the collector's calibration history), its path in
 * buf. Returns 0 or -errno. */
int lt_user_dir(uid_t uid, char *buf, size_t cap);

/* Paths of pid's marker and socket. */
void lt_attach_marker_path(uid_t uid, pid_t pid, char *buf, size_t cap);
void lt_attach_socket_path(uid_t uid, pid_t pid, char *buf, size_t cap);

/* The name of the ring a dormant collector in pid opens for an attach or
 * a dump (lt_ring's name: "attach.PID"). */
void lt_attach_ring_name(pid_t pid, char *buf, size_t cap);

/* pid's start time from /proc (0 if unknown): tells a recycled pid apart. */
unsigned long long lt_attach_start_time(pid_t pid);

/* Writes (atomically) / reads a marker file. Read returns 0, -ENOENT, or
 * -EPROTO for a file that is not a marker of this version. */
int lt_attach_marker_write(const char *path, const lt_attach_marker *m);
int lt_attach_marker_read(const char *path, lt_attach_marker *m);

/* Removes uid's markers of processes that no longer run (a dormant
 * collector removes its own at exit, but a process killed by a signal
 * cannot): the marker's start time is not its pid's; and the PID.sock of
 * a recorderd killed while attached, its process gone and nobody
 * listening. Returns how many, or -errno if the directory cannot be read. */
int lt_attach_sweep(uid_t uid);

#endif
