/* lt_split: the blocks of a version 11 trace body (lt_file.h,
 * LT_FILE_SPLIT). Every hot record (a step or a short form) carries a tick
 * delta whose low bits are noise; interleaved with the rest they cost zstd
 * its model of both. So each block holds the records with those deltas
 * taken out (A), then the deltas (B), as they were written (msgpack uints),
 * in order: on luacheck's records, 27% smaller at the same level.
 *
 *   0        4        8        12
 *   +--------+--------+--------+---- A (lenA bytes), then B (lenB bytes)
 *   | lenA   | lenB   | splitA |
 *   +--------+--------+--------+
 *   u32 LE each; 0 < lenA + lenB <= LT_SPLIT_MAX, splitA <= lenA.
 *
 * A[0..splitA) are whole records less the deltas of the hot ones; A past
 * splitA is records as they were (what the splitter could not read as
 * records: never in a trace recorderd wrote, but any bytes split and merge
 * back to themselves). The block's records are A and B merged: lenA + lenB
 * bytes. */
#ifndef LT_SPLIT_H
#define LT_SPLIT_H

#include <stddef.h>
#include <stdint.h>

#define LT_SPLIT_HDR 12u
#define LT_SPLIT_MAX (256u << 10) /* bytes of records a block holds, at most */

/* One block of the records at p[0..n) (n > 0) into out (room for
 * LT_SPLIT_HDR + LT_SPLIT_MAX bytes), its deltas gathered in scratch (room
 * for LT_SPLIT_MAX) first. Returns the bytes of p it holds (1 to
 * LT_SPLIT_MAX: whole records unless those are not records); *outlen: the
 * block's bytes. */
size_t lt_split(const uint8_t *p, size_t n, uint8_t *out, size_t *outlen, uint8_t *scratch);

/* The length of the block at p[0..n) from its header: LT_SPLIT_HDR plus
 * its parts; 0 if n < LT_SPLIT_HDR; -1 if the header is impossible (an
 * empty block included: none is written). */
int64_t lt_split_len(const uint8_t *p, size_t n);

/* The records of the whole block at p[0..n) (n = lt_split_len) into out
 * (room for LT_SPLIT_MAX). Returns their bytes, or -1 if the block does not
 * merge (a corrupt block). */
int64_t lt_merge(const uint8_t *p, size_t n, uint8_t *out);

#endif
