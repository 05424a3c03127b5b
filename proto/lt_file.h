/* lt_file: the trace file (trace.ltr) is a 16-byte header followed by the
 * same record stream the ring carries, so a saved trace replays through the
 * same decoder.
 *
 *   0        8        12       16
 *   +--------+--------+--------+---- records (lt_event) ...
 *   | magic  | version| flags  |
 *   +--------+--------+--------+
 *   magic "LUATRACE"; version (u32 LE) = LT_FILE_VERSION, which changes with
 *   LT_EVENT_VERSION; flags (u32 LE) reserved, 0.
 */
#ifndef LT_FILE_H
#define LT_FILE_H

#include <stddef.h>
#include <stdint.h>

#define LT_FILE_MAGIC "LUATRACE"
#define LT_FILE_VERSION 4u     /* follows LT_EVENT_VERSION */
#define LT_FILE_VERSION_MIN 3u /* the oldest read: every record of 3 is one of 4 */
#define LT_FILE_HDR_SIZE 16u

/* Writes the header into buf[LT_FILE_HDR_SIZE]. */
void lt_file_header(uint8_t *buf);

/* Checks a header: versions LT_FILE_VERSION_MIN to LT_FILE_VERSION are
 * read. Returns 0, or -EPROTO with a message in err (not a trace file, or
 * a version this build cannot read). */
int lt_file_check(const uint8_t *buf, size_t n, char *err, size_t cap);

#endif
