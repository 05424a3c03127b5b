/* rd_replay: feeds record bytes (from a ring or a trace file) through the
 * decoder into the stack rebuilder. */
#ifndef RD_REPLAY_H
#define RD_REPLAY_H

#include <stdint.h>
#include <stdio.h>

#include "rd_stack.h"

/* What records may make recorderd hold: RD_MEM_FLOOR, plus RD_MEM_PER_BYTE
 * bytes per byte of records applied so far (a trace file's or a ring's;
 * LUATRACE_MEM_PER_BYTE sets another figure, for tests). A loop's calls
 * and lines cost nothing new; a program whose every call makes a new
 * stack (mutual recursion: 2^19 distinct stacks from 2.5 MiB of records)
 * needs about 45 bytes a byte, up to twice that just after its tables
 * double. Past the limit the replay stops with -E2BIG and the limit named
 * in err. One record's own share is bounded too: a string by LT_STR_MAX, a
 * label by RD_LABEL_MAX, an id by the ones declared before it, a thread's
 * stack by RD_DEPTH_MAX (rd_stack.h). */
#define RD_MEM_FLOOR (64ull << 20)
#define RD_MEM_PER_BYTE 128u

/* Applies every complete record in p[0..n). Returns the bytes used (a
 * trailing partial record is left for the next call), or -EPROTO / -ENOMEM
 * / -E2BIG (the memory bound above) with a message in err. Any thread, one
 * at a time per stack. */
int64_t rd_replay_feed(rd_stack *s, const uint8_t *p, size_t n, char *err, size_t cap);

/* Replays a trace file (or a session directory holding trace.ltr) into a
 * fresh model+stack the caller initialised. With progress set and stderr a
 * terminal, one line on stderr (events, events/s, share of the file read,
 * time left), redrawn with \r at most once a second (LUATRACE_PROGRESS_MS
 * milliseconds, for tests) and erased at the end; nothing otherwise.
 * Returns 0 or a negative errno with err; 0 with a warning in err when the
 * trace is truncated (cut inside a record, or no STOP at its end);
 * RD_REPLAY_CORRUPT with err when a compressed block or a record is
 * corrupt: the records before it were replayed, and s finished as for a
 * truncated trace (a report of them loses nothing that could be read).
 * Any thread. */
enum { RD_REPLAY_CORRUPT = 1 };
int rd_replay_path(const char *path, rd_stack *s, int progress, char *err, size_t cap);

#endif
