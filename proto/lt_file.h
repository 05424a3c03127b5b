/* lt_file: the trace file (trace.ltr) is a 16-byte header followed by the
 * same record stream the ring carries, so a saved trace replays through the
 * same decoder.
 *
 *   0        8        12       16
 *   +--------+--------+--------+---- body ...
 *   | magic  | version| flags  |
 *   +--------+--------+--------+
 *   magic "LUATRACE"; version (u32 LE); flags (u32 LE).
 *
 *   Version 17 (written): as 16, the records of LT_EVENT_VERSION 15 (WBIAS
 *   and WALK: Lua 5.4's cost of finding a line); a build that reads 16
 *   refuses it by its version (it would take them for bad records).
 *   Version 16 (read): as 15, the records of LT_EVENT_VERSION 14 (SBIAS:
 *   a coroutine switch's cost under LuaJIT's sampled time); a build that
 *   reads 15 refuses it by its version (it would take SBIAS for a bad record).
 *   Version 15 (read): as 14, the records of LT_EVENT_VERSION 13 (CLOCK's
 *   LT_CLOCK_BIAS_AFTER, LuaJIT's sampled time); a build that reads 14
 *   refuses it by its version (it would take such a CLOCK for no clock).
 *   Version 14 (read): as 13, the records of LT_EVENT_VERSION 12 (MEM's
 *   short forms, their addresses deltas); a build that reads 13 refuses it
 *   by its version (it would misread the short MEMs as bad records).
 *   Version 13 (read): as 12, the records of LT_EVENT_VERSION 11 (MEM:
 *   the allocator's calls, recorderd run --memory; every MEM full, which a
 *   build that reads 14 reads as before); a build that reads 12 refuses it
 *   by its version.
 *   Version 12 (read): as 11, the records of LT_EVENT_VERSION 10 (TICK,
 *   LT_CLOCK_CPU, LT_CLOCK_WALL: sampled time); a build that reads 11
 *   refuses it by its version.
 *   Version 11 (read): flags bit 1 (LT_FILE_SPLIT), with LT_FILE_ZSTD,
 *   says the decompressed body is blocks of lt_split.h (each a header, the
 *   records less their hot deltas, then the deltas) instead of the records
 *   themselves; each block ends on a zstd flush. The records are those of
 *   version 10; a build that reads 10 refuses 11 by its version.
 *   Version 10 (read): as 9, the records of LT_EVENT_VERSION 9 (LBIAS
 *   and LHOOK: the line hooks' measured cost, which scales the
 *   compensation); a build that reads 9 refuses it by its version.
 *   Version 9 (read): as 8, the records of LT_EVENT_VERSION 8 (WAIT:
 *   the time the program waited for a CPU, taken off its dts); a build that
 *   reads 8 refuses it by its version.
 *   Version 8 (read): as 7, the records of LT_EVENT_VERSION 7 (LINES:
 *   LuaJIT's executable lines); a build that reads 7 refuses it by its
 *   version.
 *   Version 7 (read): as 6, the records of LT_EVENT_VERSION 6 (BIAS
 *   and CODE records: what each hook costs the program beyond its measured
 *   time); a build that reads 6 refuses it by its version.
 *   Version 6 (read): as 5, the records of LT_EVENT_VERSION 5 (a CLOCK
 *   may say the trace has no clock: LT_CLOCK_NONE).
 *   Version 5 (read): flags bit 0 (LT_FILE_ZSTD) set says the body is
 *   the record stream (LT_EVENT_VERSION 4) compressed as zstd frames
 *   (RFC 8878), back to back; clear, the body is the records as they are.
 *   Any other flag is refused. The writer flushes a zstd block at a record
 *   boundary at least every LT_FILE_ZSTD_FLUSH bytes of records, so a file
 *   cut short still decodes up to its last flushed block; a reader needs a
 *   window of at most 2^LT_FILE_ZSTD_WINDOWLOG_MAX bytes and refuses more.
 *   Version 5 exists so that builds which read 3 and 4 refuse a compressed
 *   body by its version instead of misreading it as records.
 *   Versions 3 and 4 (still read): the body is the records uncompressed
 *   (a version 3 stream has no DIR record); their flags were 0 and are
 *   ignored.
 */
#ifndef LT_FILE_H
#define LT_FILE_H

#include <stddef.h>
#include <stdint.h>

#define LT_FILE_MAGIC "LUATRACE"
#define LT_FILE_VERSION 17u /* 5: the body may be zstd (LT_FILE_ZSTD); 6: LT_CLOCK_NONE; 7: BIAS;
                            * 8: LINES; 9: WAIT; 10: LBIAS, LHOOK; 11: LT_FILE_SPLIT;
                            * 12: TICK; 13: MEM; 14: MEM's short forms;
                            * 15: LT_CLOCK_BIAS_AFTER; 16: SBIAS; 17: WBIAS, WALK */
#define LT_FILE_VERSION_MIN 3u /* the oldest read: every record of 3 is one of 4 */
#define LT_FILE_HDR_SIZE 16u

#define LT_FILE_ZSTD 1u                  /* flags: the body is zstd frames */
#define LT_FILE_SPLIT 2u                 /* flags (11, with ZSTD): of lt_split.h blocks */
#define LT_FILE_ZSTD_FLUSH (256u << 10)  /* bytes of records between flushes, at most */
#define LT_FILE_ZSTD_WINDOWLOG_MAX 24    /* 16 MiB: what a reader allocates, at most */

/* Writes a version LT_FILE_VERSION header with flags into
 * buf[LT_FILE_HDR_SIZE]. */
void lt_file_header(uint8_t *buf, uint32_t flags);

/* Checks a header: versions LT_FILE_VERSION_MIN to LT_FILE_VERSION are
 * read. Returns 0 with the body's flags in *flags (0 for versions before
 * 5; LT_FILE_SPLIT from 11, only with LT_FILE_ZSTD), or -EPROTO with a message in err
 * (not a trace file, a version this build cannot read, or flags it does
 * not know). */
int lt_file_check(const uint8_t *buf, size_t n, uint32_t *flags, char *err, size_t cap);

#endif
